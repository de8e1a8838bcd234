# shellcheck shell=bash
# Shared helpers for scripts/ensure/*.sh. Sourced, never executed.
# Safe to source more than once. Does not change the caller's shell options.

if [ -z "${OJS_ENSURE_LIB_LOADED:-}" ]; then
OJS_ENSURE_LIB_LOADED=1

OJS_ROOT="${OJS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
export OJS_ROOT

ensure_log() { printf 'ensure: %s\n' "$*" >&2; }
ensure_die() { printf 'ensure: ERROR: %s\n' "$*" >&2; return 1; }

# Run as root, or through sudo when available.
ensure_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n env DEBIAN_FRONTEND=noninteractive "$@"
    else
        ensure_die "need root (or passwordless sudo) to run: $*"
    fi
}

# 0 when the Debian package is installed.
apt_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# apt-get update at most once per boot (marker in /tmp keyed by boot id)
# and at most once per process tree (OJS_APT_UPDATED).
apt_update_once() {
    local boot marker
    boot="$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo noboot)"
    marker="/tmp/ojs-ensure-apt-updated.${boot}"
    if [ -n "${OJS_APT_UPDATED:-}" ] || [ -e "$marker" ]; then
        return 0
    fi
    ensure_log "running apt-get update (once per boot)"
    if ! ensure_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/tmp/ojs-ensure-apt-update.log 2>&1; then
        cat /tmp/ojs-ensure-apt-update.log >&2
        ensure_die "apt-get update failed (log above)"
        return 1
    fi
    : >"$marker" 2>/dev/null || true
    OJS_APT_UPDATED=1
    export OJS_APT_UPDATED
}

# apt_ensure PKG...: install the packages that are missing, print one line.
apt_ensure() {
    local missing=() p log
    for p in "$@"; do
        apt_installed "$p" || missing+=("$p")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        ensure_log "apt packages already present: $*"
        return 0
    fi
    command -v apt-get >/dev/null 2>&1 || { ensure_die "apt-get not found; install manually: ${missing[*]}"; return 1; }
    apt_update_once || return 1
    ensure_log "installing apt packages: ${missing[*]}"
    log="$(mktemp /tmp/ojs-ensure-apt.XXXXXX)"
    if ! ensure_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        ensure_die "apt-get install ${missing[*]} failed (log: $log)"
        return 1
    fi
    rm -f "$log"
}

fi
