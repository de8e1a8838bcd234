#!/usr/bin/env bash
# Installs what tests/queues/node needs, from the committed lock: bullmq
# (pinned) and ojs-retry as a package built from bindings-node (.npmrc
# install-links: a copy, as a user gets it, not a link). Skips npm ci when
# node_modules was installed from the same lock and the same bindings-node
# files (a stamp of their hashes); never rewrites the lock.
#
#   tests/queues/node/install.sh [DIR]   (run.sh and timeline.mjs call it)
#
# DIR (default: this directory) is where package.json and package-lock.json
# are: run.sh installs BullMQ 6's copy of the tests in target/queues-node6/n.
#
# Needs bindings-wasm/pkg (the ojs-retry-wasm dependency): builds it with
# scripts/build-wasm when missing. The native addon is used when
# bindings-node has one (scripts/test-node builds it); otherwise ojs-retry
# loads its wasm fallback.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
log() { printf 'bullmq-node install: %s\n' "$*" >&2; }

if [ ! -f "$ROOT/bindings-wasm/pkg/package.json" ] || [ ! -f "$ROOT/bindings-wasm/pkg/ojs_retry_wasm_bg.wasm" ]; then
    log "bindings-wasm/pkg is missing: scripts/build-wasm"
    "$ROOT/scripts/build-wasm" >&2 || { log "scripts/build-wasm failed"; exit 1; }
fi

DIR="${1:-$HERE}"
cd "$DIR" || exit 1
stamp() {
    # What the installed copy is made of: the lock and every file ojs-retry ships.
    (cd "$ROOT/bindings-node" && sha256sum package.json index.js index.mjs index.d.ts bullmq*.js bullmq.mjs bullmq.d.ts \
        README.md ojs-retry.*.node 2>/dev/null)
    sha256sum "$DIR/package-lock.json" "$ROOT/bindings-wasm/pkg/package.json" "$ROOT/bindings-wasm/pkg/ojs_retry_wasm_bg.wasm"
}
want="$(stamp | sha256sum | cut -d' ' -f1)"
if [ -f node_modules/.ojs-stamp ] && [ "$(cat node_modules/.ojs-stamp)" = "$want" ]; then
    log "node_modules is up to date"
    exit 0
fi
log "npm ci in $DIR"
# Never `npm install` here: it would rewrite package-lock.json.
npm ci --no-audit --no-fund --loglevel=error >&2 \
    || { log "npm ci failed (regenerate the lock with: npm install --package-lock-only)"; exit 1; }
printf '%s\n' "$want" > node_modules/.ojs-stamp
