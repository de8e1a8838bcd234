#!/usr/bin/env bash
# Whether a run changed the git work tree: tracked files rewritten (a lock
# file an `npm install` regenerated, a generated index.d.ts that differs)
# or untracked files left that .gitignore does not cover.
#
#   scripts/ensure/tree-unchanged.sh snapshot FILE   record the tree's state
#   scripts/ensure/tree-unchanged.sh check FILE      compare with it
#
# `check` lists what changed. It fails when CI=true (a fresh clone that
# nobody else edits); elsewhere (a shared work tree where others edit
# during the run) it only warns.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/../.." || exit 1

state() {
    # Each changed or untracked path with the hash of its content.
    git status --porcelain=v1 --untracked-files=all -z | tr '\0' '\n' | while read -r line; do
        path="${line:3}"
        if [ -f "$path" ]; then
            printf '%s %s\n' "$(git hash-object -- "$path")" "$line"
        else
            printf 'absent %s\n' "$line"
        fi
    done | sort
}

case "${1:-}" in
    snapshot)
        state >"${2:?snapshot FILE}"
        ;;
    check)
        before="${2:?check FILE}"
        [ -f "$before" ] || { echo "tree-unchanged: no snapshot $before" >&2; exit 1; }
        changes="$(diff <(cat "$before") <(state) | sed -n 's/^[<>] //p' | cut -d' ' -f2- | sort -u)"
        if [ -z "$changes" ]; then
            echo "tree-unchanged: the run left the work tree as it found it"
            exit 0
        fi
        echo "tree-unchanged: the run changed these paths (git status before / after):"
        printf '  %s\n' "$changes"
        if [ "${CI:-}" = true ]; then
            exit 1
        fi
        echo "tree-unchanged: (a warning only: CI is not true, and others may be editing this tree)"
        ;;
    *)
        echo "usage: $0 snapshot FILE | check FILE" >&2
        exit 2
        ;;
esac
