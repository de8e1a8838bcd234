#!/usr/bin/env bash
# Ensures the wasm post-processing tools:
#   - wasm-bindgen CLI, exactly the version of the wasm-bindgen crate
#     (WASM_BINDGEN_VERSION, else the one in Cargo.lock, else 0.2.130);
#   - a wasm-opt that does not corrupt wasm-bindgen's externref table
#     (binaryen >= 110; Debian bookworm has 108, so the npm `binaryen`
#     package is used then). See scripts/ensure/wasm-opt-flags.
# Prints WASM_OPT=... and WASM_OPT_FLAGS=... at the end.
#
#   scripts/ensure/wasm-tools.sh                    ensure + print
#   scripts/ensure/wasm-tools.sh --verify X.wasm    also run wasm-bindgen
#       (--target nodejs) and wasm-opt -Oz on the cdylib X.wasm and load the
#       result in Node (checks the externref table survived).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=wasm-opt-flags
. "$here/wasm-opt-flags"

verify_wasm=""
if [ "${1:-}" = "--verify" ]; then
    verify_wasm="${2:?--verify needs a path to a wasm-bindgen cdylib .wasm}"
fi

# ---- wasm-bindgen CLI -------------------------------------------------------
wbg_version="${WASM_BINDGEN_VERSION:-}"
if [ -z "$wbg_version" ] && [ -f "$OJS_ROOT/Cargo.lock" ]; then
    wbg_version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$OJS_ROOT/Cargo.lock")"
fi
wbg_version="${wbg_version:-0.2.130}"

cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
have_wbg() {
    local exe
    exe="$(command -v wasm-bindgen 2>/dev/null || true)"
    [ -n "$exe" ] || exe="$cargo_bin/wasm-bindgen"
    [ -x "$exe" ] && [ "$("$exe" --version 2>/dev/null | awk '{print $2}')" = "$wbg_version" ]
}

if have_wbg; then
    ensure_log "wasm-bindgen-cli $wbg_version already present"
else
    cargo_exe="$(command -v cargo 2>/dev/null || true)"
    [ -n "$cargo_exe" ] || { [ -x /usr/bin/cargo ] && cargo_exe=/usr/bin/cargo; } || true
    [ -n "$cargo_exe" ] || ensure_die "cargo not found; cannot install wasm-bindgen-cli $wbg_version"
    ensure_log "installing wasm-bindgen-cli $wbg_version (cargo install, takes ~4-5 min)"
    log="$(mktemp /tmp/ojs-ensure-wbg.XXXXXX)"
    # --locked first; its lockfile can pin a crate version the registry index
    # does not have (seen here: webpki-roots 1.0.11 for 0.2.130), then retry
    # unlocked (newest semver-compatible deps).
    if ! "$cargo_exe" install wasm-bindgen-cli --version "$wbg_version" --locked --force >"$log" 2>&1; then
        ensure_log "cargo install --locked failed ($(grep -m1 '^error' "$log" || echo 'see log')); retrying without --locked"
        if ! "$cargo_exe" install wasm-bindgen-cli --version "$wbg_version" --force >>"$log" 2>&1; then
            tail -n 30 "$log" >&2
            ensure_die "cargo install wasm-bindgen-cli $wbg_version failed (log: $log)"
        fi
    fi
    rm -f "$log"
    have_wbg || ensure_die "wasm-bindgen $wbg_version still not found after install"
fi
if ! command -v wasm-bindgen >/dev/null 2>&1 || [ "$(wasm-bindgen --version | awk '{print $2}')" != "$wbg_version" ]; then
    ensure_log "WARNING: the wasm-bindgen first on PATH is not $wbg_version; put $cargo_bin first on PATH"
fi

# ---- wasm-opt ---------------------------------------------------------------
sys_opt="$(command -v wasm-opt 2>/dev/null || true)"
if WASM_OPT="$(ojs_find_wasm_opt)"; then
    case "$WASM_OPT" in
        "$OJS_BINARYEN_NPM_DIR"/*) ensure_log "wasm-opt (npm binaryen@$OJS_BINARYEN_NPM_VERSION) already present ($WASM_OPT)" ;;
        *) ensure_log "wasm-opt $(ojs_wasm_opt_version "$WASM_OPT") already present ($WASM_OPT)" ;;
    esac
else
    if [ -n "$sys_opt" ]; then
        ensure_log "system wasm-opt $(ojs_wasm_opt_version "$sys_opt") is < 110 (corrupts the externref table export); not using it"
    fi
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        ensure_die "node and npm are needed to install wasm-opt (npm binaryen@$OJS_BINARYEN_NPM_VERSION)"
    fi
    ensure_log "installing wasm-opt: npm binaryen@$OJS_BINARYEN_NPM_VERSION into $OJS_BINARYEN_NPM_DIR"
    mkdir -p "$OJS_BINARYEN_NPM_DIR"
    log="$(mktemp /tmp/ojs-ensure-binaryen.XXXXXX)"
    if ! npm install --prefix "$OJS_BINARYEN_NPM_DIR" --no-audit --no-fund --no-save \
            "binaryen@$OJS_BINARYEN_NPM_VERSION" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        ensure_die "npm install binaryen@$OJS_BINARYEN_NPM_VERSION failed (log: $log)"
    fi
    rm -f "$log"
    WASM_OPT="$(ojs_find_wasm_opt)" || ensure_die "wasm-opt not found after installing npm binaryen"
fi
export WASM_OPT

# ---- optional end-to-end check ---------------------------------------------
if [ -n "$verify_wasm" ]; then
    [ -f "$verify_wasm" ] || ensure_die "no such file: $verify_wasm"
    out="$(mktemp -d /tmp/ojs-ensure-wasmcheck.XXXXXX)"
    wasm-bindgen --target nodejs --out-dir "$out" "$verify_wasm" \
        || ensure_die "wasm-bindgen failed on $verify_wasm"
    name="$(basename "$verify_wasm" .wasm)"
    bg="$out/${name}_bg.wasm"
    js="$out/$name.js"
    before="$(wc -c <"$bg")"
    # shellcheck disable=SC2086
    "$WASM_OPT" -Oz $WASM_OPT_FLAGS "$bg" -o "$bg" || ensure_die "wasm-opt -Oz failed"
    after="$(wc -c <"$bg")"
    node -e 'require(process.argv[1])' "$js" \
        || ensure_die "optimized module fails to load in Node (wasm-opt broke it?)"
    ensure_log "verified: wasm-bindgen + wasm-opt -Oz on $(basename "$verify_wasm"): $before -> $after bytes, loads in Node ($out)"
fi

echo "WASM_OPT=$WASM_OPT"
echo "WASM_OPT_FLAGS=\"$WASM_OPT_FLAGS\""
