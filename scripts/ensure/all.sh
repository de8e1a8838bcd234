#!/usr/bin/env bash
# Ensures everything the test command needs, skipping what is present:
#   wasm route (sourced wasm.sh), wasm-bindgen + wasm-opt, chromium,
#   Python venv (maturin, pytest, mypy), ruby + ruby-dev + libclang-dev,
#   node >= 20 + npm.
# OJS_ENSURE_VERIFY=1 also runs the slower end-to-end checks
# (node.sh --verify: playwright-core + miniflare in /tmp/nodecheck).
# Prints the exports a caller may want at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start="$(date +%s.%N)"

# shellcheck source=wasm.sh
. "$here/wasm.sh"             # chooses + caches the wasm route, sets WASM_TARGET_DIR
"$here/wasm-tools.sh" >/dev/null
"$here/chromium.sh"
venv="$("$here/python.sh")"
"$here/ruby.sh"
if [ "${OJS_ENSURE_VERIFY:-0}" = 1 ]; then
    "$here/node.sh" --verify
else
    "$here/node.sh"
fi

# shellcheck source=wasm-opt-flags
. "$here/wasm-opt-flags"
ensure_log "all done in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }')"
echo "OJS_WASM_ROUTE_RESOLVED=$OJS_WASM_ROUTE_RESOLVED"
echo "WASM_TARGET_DIR=$WASM_TARGET_DIR"
echo "WASM_OPT=$WASM_OPT"
echo "WASM_OPT_FLAGS=\"$WASM_OPT_FLAGS\""
echo "OJS_VENV=$venv"
