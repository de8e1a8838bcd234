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
# 5. node --test test/*.test.mjs (worker processes forked where it matters).
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
backend="$(node -p "require('ojs-retry').backend")" || die "ojs-retry does not load"
log "ojs-retry backend: $backend; bullmq $(node -p "require('bullmq/package.json').version")"

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

# --- types --------------------------------------------------------------------------
log "tsc --strict types-usage.ts (bindings-node/bullmq.d.ts with bullmq's declarations)"
if ./node_modules/.bin/tsc -p tsconfig.json; then
    passed=$((passed + 1)); echo "ok - tsc --strict tests/queues/node/types-usage.ts"
else
    failed=$((failed + 1)); echo "not ok - tsc --strict tests/queues/node/types-usage.ts"
fi

# --- node --test ----------------------------------------------------------------------
tap="$(mktemp)"
trap 'rm -f "$tap"; [ -n "${NODEQ_PID:-}" ] && redis_stop NODEQ' EXIT
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

printf '%s passed, %s failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
