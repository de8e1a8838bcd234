#!/usr/bin/env bash
# Checks that `npm ci` accepts every tracked package-lock.json on this
# machine, without touching the repository: each lock's folder (its tracked
# files and untracked ones not ignored, as in the work tree) is copied to a scratch tree, a `file:`
# dependency outside it is linked to the repository's, and `npm ci
# --ignore-scripts` runs there; package.json and the lock must come out
# unchanged.
#
#   scripts/ensure/check-locks.sh [FOLDER...]   default: every tracked lock
#
# Prints "ok - FOLDER" / "not ok - FOLDER (reason)"; exits non-zero if any
# lock is refused.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
cd "$OJS_ROOT" || exit 1

if [ "$#" -gt 0 ]; then
    folders=("$@")
else
    mapfile -t folders < <(git ls-files '*package-lock.json' | xargs -r -n1 dirname)
fi
[ "${#folders[@]}" -gt 0 ] || { echo "check-locks: no package-lock.json tracked" >&2; exit 1; }

scratch="$(realpath "$(mktemp -d /tmp/ojs-check-locks.XXXXXX)")"
trap '[ -n "${OJS_KEEP_SCRATCH:-}" ] || rm -rf "$scratch"' EXIT
# `file:` dependencies of the folder DIR (e.g. bindings-node ->
# ../bindings-wasm/pkg, a build output), and theirs, resolve to the
# repository's own folders.
link_file_deps() {
    local dir="$1" rel target inside
    node -e '
        const p = require(require("path").resolve(process.argv[1], "package.json"));
        for (const deps of [p.dependencies, p.devDependencies, p.optionalDependencies, p.peerDependencies])
            for (const v of Object.values(deps || {}))
                if (typeof v === "string" && v.startsWith("file:")) console.log(v.slice(5));
    ' "$dir" | while read -r rel; do
        target="$(realpath -m "$dir/$rel")"
        inside="${target#"$OJS_ROOT"/}"
        [ -e "$scratch/$inside" ] && continue
        mkdir -p "$(dirname "$scratch/$inside")"
        ln -s "$target" "$scratch/$inside"
        [ -f "$target/package.json" ] && link_file_deps "$inside"
    done
}

# Every folder is copied before any link is made, so that a `file:`
# dependency on another checked folder is its copy, never the repository's.
for dir in "${folders[@]}"; do
    mkdir -p "$scratch/$dir"
    git ls-files --cached --others --exclude-standard -- "$dir" | while read -r f; do
        mkdir -p "$scratch/$(dirname "$f")"
        cp "$f" "$scratch/$f"
    done
done
for dir in "${folders[@]}"; do
    link_file_deps "$dir"
done

passed=0
failed=0
for dir in "${folders[@]}"; do
    copy="$(realpath "$scratch/$dir")"
    case "$copy" in
        "$scratch"/*) ;;
        *) echo "check-locks: $dir resolves outside the scratch tree ($copy)" >&2; exit 1 ;;
    esac
    log="$scratch/$(echo "$dir" | tr / _).log"
    start=$SECONDS
    if ! (cd "$copy" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
        failed=$((failed + 1))
        echo "not ok - $dir (npm ci: $(grep -m2 '^npm error [[:alnum:]`]' "$log" | tr '\n' ' '))"
    elif ! cmp -s "$dir/package-lock.json" "$copy/package-lock.json" || ! cmp -s "$dir/package.json" "$copy/package.json"; then
        failed=$((failed + 1))
        echo "not ok - $dir (npm ci rewrote package.json or package-lock.json)"
    else
        passed=$((passed + 1))
        echo "ok - $dir (npm ci in $((SECONDS - start)) s)"
    fi
done
echo "check-locks: $passed passed, $failed failed (node $(node --version), npm $(npm --version))"
[ "$failed" -eq 0 ]
