#!/usr/bin/env bash
# Ensures the project virtualenv (${OJS_VENV:-.venv}, relative paths taken
# from the repo root; made with `python3 -m venv`) with maturin, pytest and
# mypy. Prints the venv path (stdout, last line); log lines go to stderr.
# May also be sourced in a subshell: ( . scripts/ensure/python.sh ).
# OJS_PYTHON picks the interpreter (default python3 on PATH).
# OJS_PIP_PACKAGES overrides the package list (default "maturin pytest mypy").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

venv="${OJS_VENV:-.venv}"
case "$venv" in /*) ;; *) venv="$OJS_ROOT/$venv" ;; esac   # relative = to the repo root
py="${OJS_PYTHON:-python3}"
read -r -a pkgs <<<"${OJS_PIP_PACKAGES:-maturin pytest mypy}"

command -v "$py" >/dev/null 2>&1 || apt_ensure python3 python3-venv
command -v "$py" >/dev/null 2>&1 || ensure_die "$py not found"
"$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' \
    || ensure_die "$py is $("$py" --version 2>&1); need >= 3.9"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    ensure_log "venv already present: $venv ($("$venv/bin/python" --version 2>&1))"
else
    # Debian's python3 needs python3-venv for ensurepip.
    if ! "$py" -c 'import ensurepip, venv' >/dev/null 2>&1; then
        apt_ensure python3-venv
    fi
    ensure_log "creating venv $venv with $("$py" --version 2>&1)"
    rm -rf "$venv"
    "$py" -m venv "$venv" || ensure_die "python3 -m venv $venv failed"
fi

# Missing = not installed per importlib.metadata (one interpreter start).
pkg_versions() {
    "$venv/bin/python" - "$@" <<'PY'
import sys, re
from importlib import metadata
for spec in sys.argv[1:]:
    name = re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0]
    try:
        print(f"ok {spec} {name}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        print(f"missing {spec}")
PY
}
missing=()
while read -r state spec _; do
    [ "$state" = ok ] || missing+=("$spec")
done < <(pkg_versions "${pkgs[@]}")
if [ "${#missing[@]}" -eq 0 ]; then
    ensure_log "python packages already present: $(pkg_versions "${pkgs[@]}" | awk '{printf "%s%s", sep, $3; sep=" "}')"
else
    ensure_log "installing python packages into $venv: ${missing[*]}"
    log="$(mktemp /tmp/ojs-ensure-pip.XXXXXX)"
    if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install -q "${missing[@]}" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        ensure_die "pip install ${missing[*]} failed (log: $log)"
    fi
    rm -f "$log"
    ensure_log "installed: $(pkg_versions "${pkgs[@]}" | awk '{printf "%s%s", sep, $3; sep=" "}')"
fi
echo "$venv"
