#!/usr/bin/env bash
# The queue integrations' benchmarks (issue 17), one table. Information only:
# nothing here fails on a slow figure; a bench that cannot run is "not
# measured" in the table and the exit status is 1.
#
#   bench/queues/run.sh [--quick]
#
# 1. Redis: Debian's redis-server (7.0) and a redis >= 8.6 (ChasquiMQ) on
#    free loopback ports (scripts/ensure/redis.sh), stopped by pid on exit.
# 2. The pinned queue packages in the sites scripts/test-queues uses
#    (target/queues/site, target/queues/site-chasquimq), installed the same
#    way when missing or stale; the engine module from the dev venv (.venv,
#    OJS_VENV; scripts/test-python sets it up).
# 3. bench_bullmq_py, bench_chasquimq, bench_celery, bench_rq,
#    bench_dramatiq and, when present, bullmq_node.mjs (after
#    tests/queues/node/install.sh); each prints a JSON document, kept in
#    target/bench/queues/<queue>.json; table.py joins them with the load
#    average at the start and the end into target/bench/queues/results.md.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
export CI="${CI:-true}" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

VENV="${OJS_VENV:-$ROOT/.venv}"
WORK="$ROOT/target/queues"
OUT="$ROOT/target/bench/queues"
PYDIR="$ROOT/tests/queues/python"
HERE="$ROOT/bench/queues"
JOBS=(); SMALL=()
if [ "${1:-}" = "--quick" ]; then JOBS=(--jobs 100 --rounds 1); SMALL=(--jobs 100 --rounds 1); fi
log() { printf '\n== bench/queues: %s\n' "$*" >&2; }
die() { printf 'bench/queues: ERROR: %s\n' "$*" >&2; exit 1; }
[ -x "$VENV/bin/python" ] || die "no dev venv at $VENV: run scripts/test-python first"
"$VENV/bin/python" -c 'import ojs_retry' 2>/dev/null || die "ojs_retry is not built into $VENV (maturin develop)"
# A module built before its sources changed would measure old code: refuse it.
stale() { # BUILT SOURCE_DIRS...: a source file newer than BUILT, if any
    local built="$1"; shift
    find "$@" Cargo.lock -newer "$built" -type f \( -name '*.rs' -o -name 'Cargo.*' \) -print -quit
}
so="$("$VENV/bin/python" -c 'import ojs_retry._ojs_retry as m; print(m.__file__)')"
newer="$(stale "$so" core bindings-python)"
[ -z "$newer" ] || die "$so is older than $newer: rebuild it (maturin develop --release -m bindings-python/Cargo.toml)"
for addon in bindings-node/ojs-retry.*.node; do
    [ -f "$addon" ] || continue
    newer="$(stale "$addon" core bindings-wasm)"
    [ -z "$newer" ] || die "$addon is older than $newer: rebuild it (scripts/test-node builds it)"
done
mkdir -p "$OUT" "$WORK/logs"
rm -f "$OUT"/*.json
cut -d' ' -f1-3 /proc/loadavg >"$OUT/load-start" 2>/dev/null || echo unknown >"$OUT/load-start"

# shellcheck source=../../scripts/ensure/redis.sh
. "$ROOT/scripts/ensure/redis.sh"
cleanup() { redis_stop BQ7; redis_stop BQ86; }
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM
bin7="$(redis_binary 7.0)" || die "no redis-server"
bin86="$(redis_binary 8.6)" || die "no redis-server >= 8.6"
redis_start "$bin7" BQ7 || die "redis-server did not start"
redis_start "$bin86" BQ86 || die "redis-server >= 8.6 did not start"

install_site() { # REQUIREMENTS DIR (as scripts/test-queues does)
    local req="$1" site="$2"
    if ! cmp -s "$req" "$site/.requirements" 2>/dev/null; then
        log "pip install $(basename "$req") into $site"
        rm -rf "$site"
        "$VENV/bin/python" -m pip install -q --target "$site" -r "$req" || return 1
        cp "$req" "$site/.requirements"
    fi
}
install_site "$PYDIR/requirements.txt" "$WORK/site" || die "pip install of the queue packages failed"
install_site "$PYDIR/requirements-chasquimq.txt" "$WORK/site-chasquimq" || die "pip install of chasquimq failed"

FAILED=()
bench() { # NAME SITE URL ARGS...
    local name="$1" site="$2" url="$3"
    shift 3
    log "$name"
    # Unbuffered: bench_chasquimq ends with os._exit, which flushes nothing.
    if (cd "$WORK" && OJS_BENCH_LOGS="$WORK/logs" PYTHONUNBUFFERED=1 PYTHONPATH="$site:$HERE" \
            "$VENV/bin/python" "$@" --redis "$url" >"$OUT/$name.json.tmp"); then
        mv "$OUT/$name.json.tmp" "$OUT/$name.json"
    else
        FAILED+=("$name"); rm -f "$OUT/$name.json.tmp"
    fi
}
bench bullmq-python "$WORK/site" "$BQ7_URL" "$HERE/bench_bullmq_py.py" "${JOBS[@]}"
bench chasquimq "$WORK/site-chasquimq" "$BQ86_URL" "$HERE/bench_chasquimq.py" "${JOBS[@]}"
bench celery "$WORK/site" "$BQ7_URL" "$HERE/bench_celery.py" "${SMALL[@]}"
bench rq "$WORK/site" "$BQ7_URL" "$HERE/bench_rq.py" "${SMALL[@]}"
bench dramatiq "$WORK/site" "$BQ7_URL" "$HERE/bench_dramatiq.py" "${SMALL[@]}"

if [ -f "$HERE/bullmq_node.mjs" ]; then
    log "bullmq-node"
    if "$ROOT/tests/queues/node/install.sh" >&2 \
            && node "$HERE/bullmq_node.mjs" --redis "$BQ7_URL" "${JOBS[@]}" >"$OUT/bullmq-node.json.tmp"; then
        mv "$OUT/bullmq-node.json.tmp" "$OUT/bullmq-node.json"
    else
        FAILED+=(bullmq-node); rm -f "$OUT/bullmq-node.json.tmp"
    fi
fi

cut -d' ' -f1-3 /proc/loadavg >"$OUT/load-end" 2>/dev/null || echo unknown >"$OUT/load-end"
"$VENV/bin/python" "$HERE/table.py" "$OUT" "$(cat "$OUT/load-start")" "$(cat "$OUT/load-end")"
for f in "${FAILED[@]}"; do echo "bench/queues: $f did not run to the end (not measured)" >&2; done
[ "${#FAILED[@]}" -eq 0 ]
