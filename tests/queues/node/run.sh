#!/usr/bin/env bash
# BullMQ for Node (ojs-retry/bullmq) on a real Redis with real workers.
#
#   tests/queues/node/run.sh            (scripts/test-queues runs it with REDIS_URL set)
#
# 1-2. install.sh: npm ci here against the committed lock (bullmq pinned;
#    ojs-retry installed from bindings-node as a package, not a link, so its
#    `files` and `exports` are what a user gets; the native addon when
#    bindings-node has one, else the wasm fallback);
# 3. Redis: REDIS_URL when set, else Debian's redis-server started here on a
#    free loopback port (scripts/ensure/redis.sh) and stopped by pid on exit;
# 4. tsc --strict on types-usage.ts against bindings-node/bullmq.d.ts and the
#    real bullmq declarations;
# 5. node --test test/*.test.mjs (worker processes forked where it matters);
# 4-5 again against BullMQ 6 (tests/queues/node6/package.json and its lock: the tests
#    copied into target/queues-node6/n, installed there).
#
# Exits non-zero on any failure; the last line is "N passed, N failed".
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
export CI="${CI:-true}"

log() { printf 'bullmq-node: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; printf '0 passed, 1 failed\n'; exit 1; }

command -v node >/dev/null && command -v npm >/dev/null || die "node and npm are required"

# --- packages ---------------------------------------------------------------------
cd "$HERE" || die "no $HERE"
"$HERE/install.sh" || die "install.sh failed"
node -e "require('ojs-retry/bullmq')" || die "ojs-retry/bullmq does not load"

# --- redis ------------------------------------------------------------------------
if [ -z "${REDIS_URL:-}" ]; then
    # shellcheck source=../../../scripts/ensure/redis.sh
    . "$ROOT/scripts/ensure/redis.sh"
    trap 'redis_stop NODEQ' EXIT
    trap 'redis_stop NODEQ; exit 130' INT TERM
    bin="$(redis_binary 7.0)" || die "no redis-server"
    redis_start "$bin" NODEQ || die "redis-server did not start"
    export REDIS_URL="$NODEQ_URL"
fi
log "redis: $REDIS_URL"

passed=0
failed=0

# --- the suite, once per BullMQ major -------------------------------------------------
tap="$(mktemp)"
trap 'rm -f "$tap"; [ -n "${NODEQ_PID:-}" ] && redis_stop NODEQ' EXIT

# suite DIR LABEL: tsc on types-usage.ts, then node --test test/*.test.mjs, in DIR.
suite() {
    local dir="$1" label="$2" node_rc p f c s
    cd "$dir" || { failed=$((failed + 1)); return; }
    log "$label: bullmq $(node -p "require('bullmq/package.json').version"), ojs-retry backend $(node -p "require('ojs-retry').backend")"
    log "$label: tsc --strict types-usage.ts (bindings-node/bullmq.d.ts with bullmq's declarations)"
    if ./node_modules/.bin/tsc -p tsconfig.json; then
        passed=$((passed + 1)); echo "ok - $label: tsc --strict types-usage.ts"
    else
        failed=$((failed + 1)); echo "not ok - $label: tsc --strict types-usage.ts"
    fi
    node --test --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=tap --test-reporter-destination="$tap" \
        test/*.test.mjs
    node_rc=$?
    p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tap" | tail -n1)
    f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tap" | tail -n1)
    c=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$tap" | tail -n1)
    s=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$tap" | tail -n1)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0} + ${c:-0} + ${s:-0}))
    if [ "$node_rc" -ne 0 ] && [ "${f:-0}" -eq 0 ] && [ "${c:-0}" -eq 0 ]; then
        failed=$((failed + 1)) # node --test itself failed (a file did not load, a crash)
    fi
    if [ "${p:-0}" -eq 0 ]; then
        failed=$((failed + 1)) # no test ran: never a pass
    fi
    log "$label: ${p:-0} passed, $(( ${f:-0} + ${c:-0} + ${s:-0} )) failed"
}

suite "$HERE" "bullmq 5"

# BullMQ 6: the same tests with tests/queues/node6/package.json and its lock, in a
# scratch copy at the
# same depth under the root (so their relative paths hold).
V6="$ROOT/target/queues-node6/n"
rm -rf "$V6/lib" "$V6/test"
mkdir -p "$V6"
cp -r "$HERE/lib" "$HERE/test" "$HERE/types-usage.ts" "$HERE/tsconfig.json" "$HERE/.npmrc" "$V6/"
cp "$ROOT/tests/queues/node6/package.json" "$ROOT/tests/queues/node6/package-lock.json" "$V6/"
if "$HERE/install.sh" "$V6"; then
    suite "$V6" "bullmq 6"
else
    failed=$((failed + 1)); echo "not ok - bullmq 6: install.sh failed"
fi

printf '%s passed, %s failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
