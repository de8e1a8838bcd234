#!/usr/bin/env bash
# shellcheck shell=bash
# wasm32-unknown-unknown builds, either route (see /work/shared/TOOLCHAIN.md).
#
# Meant to be SOURCED:
#     . scripts/ensure/wasm.sh
#     wasm_cargo build --release -p ojs-retry-wasm
#     ls "$WASM_TARGET_DIR"/wasm32-unknown-unknown/release/*.wasm
#
# Can also be executed: `scripts/ensure/wasm.sh build --release -p X`
# (no args: just pick/prepare the route and print it).
#
# Route 1 "rustup": rustup's wasm32-unknown-unknown target (installed, or
#   `rustup target add` succeeds within OJS_WASM_RUSTUP_TIMEOUT seconds, 120).
#   Plain `cargo <args>` with the target; artifacts in ${CARGO_TARGET_DIR:-target}.
# Route 2 "debian": Debian rustc-web 1.96 + rust-web-src, std built with
#   -Zbuild-std=$WASM_BUILD_STD (default std,panic_abort; use core,alloc for a
#   no_std --no-default-features check). Artifacts in <target>/wasm-debian.
#
# OJS_WASM_ROUTE=rustup|debian forces a route (fails if it can't be prepared).
# The choice is made once and cached in OJS_WASM_ROUTE_RESOLVED (exported, so
# child processes inherit it). Sourcing makes the choice immediately (so
# WASM_TARGET_DIR is exported right after `. scripts/ensure/wasm.sh`; a
# non-zero status of the `.` means no route works). OJS_WASM_LAZY=1 defers it
# to the first wasm_route/wasm_cargo call.
# Sourcing does not change the caller's shell options; functions run their
# work in subshells with `set -euo pipefail`.

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OJS_WASM_TARGET=wasm32-unknown-unknown

_wasm_set_target_dir() {
    case "$1" in
        rustup) WASM_TARGET_DIR="${CARGO_TARGET_DIR:-$OJS_ROOT/target}" ;;
        debian) WASM_TARGET_DIR="${OJS_WASM_DEBIAN_TARGET_DIR:-${CARGO_TARGET_DIR:-$OJS_ROOT/target}/wasm-debian}" ;;
    esac
    export WASM_TARGET_DIR
}

# 0 if the rustup route is usable (installs the target if needed).
_wasm_try_rustup() (
    set -euo pipefail
    cd "$OJS_ROOT"
    command -v rustup >/dev/null 2>&1 || { ensure_log "rustup not found"; exit 1; }
    if rustup target list --installed 2>/dev/null | grep -qx "$OJS_WASM_TARGET"; then
        ensure_log "rustup target $OJS_WASM_TARGET already present"
        exit 0
    fi
    ensure_log "installing rustup target $OJS_WASM_TARGET (timeout ${OJS_WASM_RUSTUP_TIMEOUT:-120}s)"
    if timeout "${OJS_WASM_RUSTUP_TIMEOUT:-120}" rustup target add "$OJS_WASM_TARGET" >/tmp/ojs-ensure-rustup-target.log 2>&1 \
        && rustup target list --installed 2>/dev/null | grep -qx "$OJS_WASM_TARGET"; then
        exit 0
    fi
    ensure_log "rustup target add $OJS_WASM_TARGET failed (see /tmp/ojs-ensure-rustup-target.log)"
    exit 1
)

_wasm_prepare_debian() (
    set -euo pipefail
    # rust-web-llvm ships /usr/bin/rust-lld -> lld-22, so lld-22 is needed too.
    # (No binaryen here: bookworm's binaryen 108 breaks wasm-bindgen output; see
    # wasm-opt-flags. wasm-tools.sh provides a good wasm-opt.)
    apt_ensure rustc-web cargo-web rust-web-src rust-web-llvm lld-22
    if [ ! -x /usr/bin/rustc ] || [ ! -x /usr/bin/cargo ]; then
        ensure_die "/usr/bin/rustc or /usr/bin/cargo missing after apt install"; exit 1
    fi
)

# Pick the route once; prints it on stdout-free log line; sets and exports
# OJS_WASM_ROUTE_RESOLVED and WASM_TARGET_DIR in the current shell.
wasm_route() {
    if [ -n "${OJS_WASM_ROUTE_RESOLVED:-}" ] && { [ -z "${OJS_WASM_ROUTE:-}" ] || [ "$OJS_WASM_ROUTE" = "$OJS_WASM_ROUTE_RESOLVED" ]; }; then
        _wasm_set_target_dir "$OJS_WASM_ROUTE_RESOLVED"
        return 0
    fi
    local route=""
    case "${OJS_WASM_ROUTE:-auto}" in
        rustup)
            _wasm_try_rustup || { ensure_die "OJS_WASM_ROUTE=rustup but the rustup $OJS_WASM_TARGET target is unavailable"; return 1; }
            route=rustup ;;
        debian)
            _wasm_prepare_debian || { ensure_die "OJS_WASM_ROUTE=debian but the Debian rustc-web toolchain could not be installed"; return 1; }
            route=debian ;;
        auto|"")
            if _wasm_try_rustup; then
                route=rustup
            else
                ensure_log "falling back to Debian rustc-web + -Zbuild-std"
                _wasm_prepare_debian || { ensure_die "no wasm route works: rustup target unavailable and Debian rustc-web install failed"; return 1; }
                route=debian
            fi ;;
        *) ensure_die "OJS_WASM_ROUTE must be rustup, debian or empty (got '$OJS_WASM_ROUTE')"; return 1 ;;
    esac
    OJS_WASM_ROUTE_RESOLVED="$route"
    export OJS_WASM_ROUTE_RESOLVED
    _wasm_set_target_dir "$route"
    ensure_log "wasm route: $route (artifacts in $WASM_TARGET_DIR/$OJS_WASM_TARGET/)"
}

# wasm_cargo <cargo args...>: cargo for wasm32-unknown-unknown via the route.
# The target is passed as CARGO_BUILD_TARGET unless the args contain --target,
# so args (including a trailing `-- ...`) are passed through untouched.
# shellcheck disable=SC2030,SC2031  # the exports are meant to stay in the subshells
wasm_cargo() {
    wasm_route || return 1
    local has_target=0 a
    for a in "$@"; do
        case "$a" in --) break ;; --target|--target=*) has_target=1 ;; esac
    done
    if [ "$OJS_WASM_ROUTE_RESOLVED" = rustup ]; then
        (
            set -euo pipefail
            if [ "$has_target" -eq 0 ]; then export CARGO_BUILD_TARGET="$OJS_WASM_TARGET"; fi
            export CARGO_TARGET_DIR="$WASM_TARGET_DIR"
            exec cargo "$@"
        )
    else
        (
            set -euo pipefail
            if [ "$has_target" -eq 0 ]; then export CARGO_BUILD_TARGET="$OJS_WASM_TARGET"; fi
            export CARGO_TARGET_DIR="$WASM_TARGET_DIR"
            export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
            # rustup's env (if any) must not leak into Debian's toolchain.
            unset RUSTUP_TOOLCHAIN RUSTC_WRAPPER
            std="${WASM_BUILD_STD:-std,panic_abort}"
            exec /usr/bin/cargo -Zbuild-std="$std" "$@"
        )
    fi
}

# Executed rather than sourced: act as a CLI.  Sourced: choose the route now
# (so WASM_TARGET_DIR is set right away) unless OJS_WASM_LAZY=1.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
    if [ "${OJS_WASM_LAZY:-0}" != 1 ]; then
        wasm_route
    fi
else
    set -euo pipefail
    wasm_route
    if [ "$#" -gt 0 ]; then
        wasm_cargo "$@"
    else
        echo "OJS_WASM_ROUTE_RESOLVED=$OJS_WASM_ROUTE_RESOLVED"
        echo "WASM_TARGET_DIR=$WASM_TARGET_DIR"
    fi
fi
