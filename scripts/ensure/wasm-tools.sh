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
#   scripts/ensure/wasm-tools.sh --wasm-bindgen-only   the CLI only
#
# wasm-bindgen-cli has two install routes, each logged: `cargo install
# --locked` (the CLI's own lock file), then, if that fails, the same
# without --locked (the newest semver-compatible dependencies; the locked
# route failed once on a dependency version the registry no longer
# served). Nothing is installed when the right version is present.
# scripts/ensure/test-wasm-tools.sh tests both routes.
# Env: OJS_WBG_ROOT (cargo install --root; default $CARGO_HOME or
# ~/.cargo), OJS_CARGO (the cargo to run), OJS_WBG_FORCE_LOCKED_FAIL=1
# (treat the --locked route as failed, to exercise the fallback).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=wasm-opt-flags
. "$here/wasm-opt-flags"

verify_wasm=""
wbg_only=""
case "${1:-}" in
    --verify) verify_wasm="${2:?--verify needs a path to a wasm-bindgen cdylib .wasm}" ;;
    --wasm-bindgen-only) wbg_only=1 ;;
esac

# ---- wasm-bindgen CLI -------------------------------------------------------
wbg_version="${WASM_BINDGEN_VERSION:-}"
if [ -z "$wbg_version" ] && [ -f "$OJS_ROOT/Cargo.lock" ]; then
    wbg_version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$OJS_ROOT/Cargo.lock")"
fi
wbg_version="${wbg_version:-0.2.130}"

wbg_root="${OJS_WBG_ROOT:-${CARGO_HOME:-$HOME/.cargo}}"
cargo_bin="$wbg_root/bin"
# The wasm-bindgen of the install root, else the one on PATH (with
# OJS_WBG_ROOT set, only the root's: a test must not find the machine's).
wbg_exe() {
    if [ -x "$cargo_bin/wasm-bindgen" ] || [ -n "${OJS_WBG_ROOT:-}" ]; then
        printf '%s\n' "$cargo_bin/wasm-bindgen"
    else
        command -v wasm-bindgen 2>/dev/null || printf '%s\n' "$cargo_bin/wasm-bindgen"
    fi
}
have_wbg() {
    local exe
    exe="$(wbg_exe)"
    [ -x "$exe" ] && [ "$("$exe" --version 2>/dev/null | awk '{print $2}')" = "$wbg_version" ]
}

# install_wbg ROUTE: one `cargo install` (ROUTE: locked | unlocked); logs
# the route and, on failure, its first error line.
install_wbg() {
    local route="$1" log flags=(--force --root "$wbg_root")
    [ "$route" = locked ] && flags+=(--locked)
    ensure_log "wasm-bindgen-cli $wbg_version, route $route: cargo install wasm-bindgen-cli --version $wbg_version ${flags[*]}"
    if [ "$route" = locked ] && [ "${OJS_WBG_FORCE_LOCKED_FAIL:-0}" = 1 ]; then
        ensure_log "route locked: failed (forced by OJS_WBG_FORCE_LOCKED_FAIL=1)"
        return 1
    fi
    log="$(mktemp /tmp/ojs-ensure-wbg.XXXXXX)"
    if "$cargo_exe" install wasm-bindgen-cli --version "$wbg_version" "${flags[@]}" >"$log" 2>&1 && have_wbg; then
        ensure_log "route $route: installed $(wbg_exe)"
        rm -f "$log"
        return 0
    fi
    ensure_log "route $route: failed: $(grep -m1 '^error' "$log" || tail -n 1 "$log") (log: $log)"
    return 1
}

if have_wbg; then
    ensure_log "wasm-bindgen-cli $wbg_version already present ($(wbg_exe))"
else
    cargo_exe="${OJS_CARGO:-$(command -v cargo 2>/dev/null || true)}"
    [ -n "$cargo_exe" ] || { [ -x /usr/bin/cargo ] && cargo_exe=/usr/bin/cargo; } || true
    [ -n "$cargo_exe" ] || ensure_die "cargo not found; cannot install wasm-bindgen-cli $wbg_version"
    ensure_log "installing wasm-bindgen-cli $wbg_version into $wbg_root (cargo install, ~4-5 min)"
    install_wbg locked || install_wbg unlocked \
        || ensure_die "cargo install wasm-bindgen-cli $wbg_version failed by both routes"
fi
if [ "$(wbg_exe)" != "$(command -v wasm-bindgen 2>/dev/null || true)" ]; then
    ensure_log "NOTE: $cargo_bin is not first on PATH for wasm-bindgen; callers use WASM_BINDGEN=$(wbg_exe)"
fi
WASM_BINDGEN="$(wbg_exe)"
export WASM_BINDGEN
if [ -n "$wbg_only" ]; then
    echo "WASM_BINDGEN=$WASM_BINDGEN"
    exit 0
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
    "$WASM_BINDGEN" --target nodejs --out-dir "$out" "$verify_wasm" \
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

echo "WASM_BINDGEN=$WASM_BINDGEN"
echo "WASM_OPT=$WASM_OPT"
echo "WASM_OPT_FLAGS=\"$WASM_OPT_FLAGS\""
