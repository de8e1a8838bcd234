#!/usr/bin/env bash
# Builds the wasm floor as scripts/build-wasm builds bindings-wasm: cargo
# (profile wasm-release, wasm32-unknown-unknown, either route of
# scripts/ensure/wasm.sh), wasm-bindgen --target web (the workspace's pinned
# version, which build-wasm installs), wasm-opt -Oz with the same flags.
#   bench/wasmfloor/build.sh OUT_DIR    # writes OUT_DIR/floor.js, floor_bg.wasm, node.mjs
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT="$1"
# shellcheck source=../../scripts/ensure/wasm.sh
. scripts/ensure/wasm.sh
# shellcheck source=../../scripts/ensure/wasm-opt-flags
. scripts/ensure/wasm-opt-flags
[ -n "$WASM_OPT" ] || { bash scripts/ensure/wasm-tools.sh >&2; . scripts/ensure/wasm-opt-flags; }
[ -n "$WASM_OPT" ] || { echo "wasmfloor: no usable wasm-opt" >&2; exit 1; }
read -r -a FLAGS <<<"$WASM_OPT_FLAGS"
export CARGO_PROFILE_WASM_RELEASE_STRIP=false # as build-wasm: keep target_features for wasm-bindgen
wasm_cargo build --profile wasm-release -p ojs-retry-bench-wasm-floor >&2
RAW="$WASM_TARGET_DIR/wasm32-unknown-unknown/wasm-release/ojs_retry_bench_wasm_floor.wasm"
mkdir -p "$OUT"
wasm-bindgen --target web --out-dir "$OUT" --out-name floor \
    --remove-name-section --remove-producers-section "$RAW"
# The same wasm-opt options as scripts/build-wasm.
"$WASM_OPT" -Oz --strip-debug --strip-producers "${FLAGS[@]}" \
    "$OUT/floor_bg.wasm" -o "$OUT/floor_bg.wasm"
# As bindings-wasm/js/node.js: read the module next to the glue, initSync.
cat >"$OUT/node.mjs" <<'JS'
import { readFileSync } from "node:fs";
import { initSync } from "./floor.js";
initSync({ module: readFileSync(new URL("./floor_bg.wasm", import.meta.url)) });
export * from "./floor.js";
JS
printf 'wasmfloor: %s B after wasm-opt -Oz\n' "$(stat -c %s "$OUT/floor_bg.wasm")" >&2
