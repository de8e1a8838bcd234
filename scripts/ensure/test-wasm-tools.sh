#!/usr/bin/env bash
# Tests wasm-tools.sh's two install routes for wasm-bindgen-cli.
#
#   scripts/ensure/test-wasm-tools.sh          with a stand-in cargo (< 1 s):
#       the locked route first; its failure logged and the unlocked route
#       taken; nothing reinstalled when the version is present; both routes
#       failing is an error; OJS_WBG_FORCE_LOCKED_FAIL=1 skips the locked one.
#   scripts/ensure/test-wasm-tools.sh --real   also the real fallback: the
#       real cargo, the locked route forced to fail, wasm-bindgen-cli
#       installed unlocked into a scratch root (~5 min on 2 cores).
#
# Prints "ok - ..." / "not ok - ..." per check and exits non-zero if any
# check failed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version=0.2.130
work="$(mktemp -d /tmp/ojs-test-wasm-tools.XXXXXX)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

check() { # check NAME COMMAND...: one result line
    local name="$1"
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "ok - $name"
    else
        failed=$((failed + 1))
        echo "not ok - $name"
    fi
}

# A cargo that records its arguments and answers `install` as the case
# says: STUB_LOCKED / STUB_UNLOCKED = ok | fail. "ok" puts a wasm-bindgen
# of $version in the --root's bin.
cat >"$work/cargo" <<'EOF'
#!/usr/bin/env bash
echo "$*" >>"$STUB_CALLS"
root="" locked=0 prev=""
for a in "$@"; do
    [ "$prev" = --root ] && root="$a"
    [ "$a" = --locked ] && locked=1
    prev="$a"
done
answer="$STUB_UNLOCKED"
[ "$locked" = 1 ] && answer="$STUB_LOCKED"
if [ "$answer" = fail ]; then
    echo "error: failed to select a version for the requirement \`webpki-roots = \"=1.0.11\"\`" >&2
    exit 101
fi
mkdir -p "$root/bin"
printf '#!/bin/sh\necho "wasm-bindgen %s"\n' "$STUB_VERSION" >"$root/bin/wasm-bindgen"
chmod +x "$root/bin/wasm-bindgen"
EOF
chmod +x "$work/cargo"

# run NAME LOCKED UNLOCKED [ENV...]: wasm-tools.sh --wasm-bindgen-only into
# $work/NAME with the stand-in; its stderr in $work/NAME.log, its cargo
# calls in $work/NAME.calls, its exit status in $work/NAME.rc.
run() {
    local name="$1" locked="$2" unlocked="$3"
    shift 3
    mkdir -p "$work/$name"
    : >"$work/$name.calls"
    env "$@" OJS_CARGO="$work/cargo" OJS_WBG_ROOT="$work/$name" WASM_BINDGEN_VERSION="$version" \
        STUB_CALLS="$work/$name.calls" STUB_LOCKED="$locked" STUB_UNLOCKED="$unlocked" STUB_VERSION="$version" \
        bash "$here/wasm-tools.sh" --wasm-bindgen-only >"$work/$name.out" 2>"$work/$name.log"
    echo $? >"$work/$name.rc"
}
rc() { [ "$(cat "$work/$1.rc")" = "$2" ]; }
calls() { [ "$(cut -d' ' -f1-4 "$work/$1.calls" | sed "s|$work/$1|ROOT|g" | tr '\n' ';')" = "$2" ]; }
logged() { grep -q -- "$2" "$work/$1.log"; }
installed() { [ "$("$work/$1/bin/wasm-bindgen" --version)" = "wasm-bindgen $version" ]; }

run locked-ok ok fail
check "locked route works: exit 0" rc locked-ok 0
check "locked route works: one cargo install --locked" \
    grep -qx -- "install wasm-bindgen-cli --version $version --force --root $work/locked-ok --locked" "$work/locked-ok.calls"
check "locked route works: no unlocked attempt" calls locked-ok "install wasm-bindgen-cli --version $version;"
check "locked route works: installed" installed locked-ok
check "locked route works: WASM_BINDGEN printed" \
    grep -qx "WASM_BINDGEN=$work/locked-ok/bin/wasm-bindgen" "$work/locked-ok.out"

run fallback fail ok
check "fallback: exit 0" rc fallback 0
check "fallback: --locked then without" \
    bash -c "[ \"\$(grep -c -- --locked '$work/fallback.calls')\" = 1 ] && [ \"\$(wc -l <'$work/fallback.calls')\" = 2 ] && tail -n 1 '$work/fallback.calls' | grep -qv -- --locked"
check "fallback: the locked failure is logged with its error" logged fallback "route locked: failed: error: failed to select a version"
check "fallback: the unlocked route is logged" logged fallback "route unlocked: installed"
check "fallback: installed" installed fallback

# The same root again: present, so cargo is not run at all.
mv "$work/fallback.calls" "$work/fallback.first-calls"
run fallback fail fail
check "present: exit 0 without cargo" rc fallback 0
check "present: no cargo call" test ! -s "$work/fallback.calls"
check "present: logged" logged fallback "already present"

# A different version present is replaced.
run wrong ok ok
STUB_VERSION=0.2.99 bash -c "printf '#!/bin/sh\necho \"wasm-bindgen 0.2.99\"\n' >'$work/wrong/bin/wasm-bindgen'"
run wrong ok ok
check "another version present: reinstalled" installed wrong
check "another version present: cargo ran" test -s "$work/wrong.calls"

run both-fail fail fail
check "both routes fail: non-zero exit" bash -c "[ \"\$(cat '$work/both-fail.rc')\" != 0 ]"
check "both routes fail: two attempts" bash -c "[ \"\$(wc -l <'$work/both-fail.calls')\" = 2 ]"
check "both routes fail: an error message" logged both-fail "failed by both routes"

run forced ok ok OJS_WBG_FORCE_LOCKED_FAIL=1
check "forced: exit 0" rc forced 0
check "forced: the locked route is not run" bash -c "! grep -q -- --locked '$work/forced.calls'"
check "forced: logged as forced" logged forced "forced by OJS_WBG_FORCE_LOCKED_FAIL=1"
check "forced: installed by the unlocked route" installed forced

if [ "${1:-}" = "--real" ]; then
    real="$work/real"
    start=$SECONDS
    OJS_WBG_ROOT="$real" OJS_WBG_FORCE_LOCKED_FAIL=1 WASM_BINDGEN_VERSION="$version" \
        bash "$here/wasm-tools.sh" --wasm-bindgen-only >"$work/real.out" 2>"$work/real.log"
    echo $? >"$work/real.rc"
    cat "$work/real.log" >&2
    echo "real fallback install took $((SECONDS - start)) s" >&2
    check "real: exit 0" rc real 0
    check "real: the unlocked route installed it" logged real "route unlocked: installed"
    check "real: wasm-bindgen $version runs" installed real
fi

echo "test-wasm-tools: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
