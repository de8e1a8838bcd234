#!/usr/bin/env bash
# Ensures Debian's chromium (/usr/bin/chromium) and checks that headless
# mode works. Flags that work here as root without a GPU or network:
#   --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
#   --disable-background-networking --disable-component-update --disable-sync
# (--no-sandbox is required when running as root.)
# Set OJS_CHROMIUM_CHECK=0 to skip the headless check.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

OJS_CHROMIUM_FLAGS="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync"

if [ -x /usr/bin/chromium ] && apt_installed chromium; then
    ensure_log "chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}') already present"
else
    apt_ensure chromium
    [ -x /usr/bin/chromium ] || ensure_die "/usr/bin/chromium missing after apt install"
    ensure_log "installed chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}')"
fi

if [ "${OJS_CHROMIUM_CHECK:-1}" != 0 ]; then
    profile="$(mktemp -d /tmp/ojs-chromium.XXXXXX)"
    trap 'rm -rf "$profile"' EXIT
    # shellcheck disable=SC2086
    if ! dom="$(timeout 60 /usr/bin/chromium $OJS_CHROMIUM_FLAGS --user-data-dir="$profile" \
            --dump-dom 'data:text/html,<p id=x>ojs-ok</p>' 2>"$profile.log")"; then
        tail -n 20 "$profile.log" >&2
        ensure_die "headless chromium failed (flags: $OJS_CHROMIUM_FLAGS)"
    fi
    case "$dom" in
        *ojs-ok*) ensure_log "chromium headless check ok" ;;
        *) tail -n 20 "$profile.log" >&2; ensure_die "headless chromium produced unexpected DOM: $dom" ;;
    esac
    rm -f "$profile.log"
fi
