#!/usr/bin/env bash
# Checks node >= 20 and npm (Node itself is not installed by this script:
# the machines ship NodeSource's Node 20; fails clearly otherwise).
#
#   scripts/ensure/node.sh            check only (fast)
#   scripts/ensure/node.sh --verify   also, in ${OJS_NODECHECK_DIR:-/tmp/nodecheck},
#       npm install the pinned playwright-core, miniflare and @napi-rs/cli and
#       check that playwright-core drives /usr/bin/chromium (evaluate 1+1 on
#       about:blank) and that miniflare runs a module worker (dispatchFetch -> ok).
#
# Versions verified on Node 20.20.2 / npm 11.19.1 (see NOTES.md); override
# with OJS_PLAYWRIGHT_CORE_VERSION, OJS_MINIFLARE_VERSION, OJS_NAPI_CLI_VERSION.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

OJS_PLAYWRIGHT_CORE_VERSION="${OJS_PLAYWRIGHT_CORE_VERSION:-1.65.1}"
# Newest miniflare whose engines field allows Node 20 (>=18.0.0); releases
# from 4.20260430.0 on declare node >=22.
OJS_MINIFLARE_VERSION="${OJS_MINIFLARE_VERSION:-4.20260426.0}"
OJS_NAPI_CLI_VERSION="${OJS_NAPI_CLI_VERSION:-3.10.12}"
OJS_CHROMIUM_ARGS='["--headless","--no-sandbox","--disable-gpu","--disable-quic","--no-first-run","--disable-background-networking","--disable-component-update","--disable-sync"]'

command -v node >/dev/null 2>&1 || ensure_die "node not found on PATH (need Node >= 20; install Node 20+ first)"
command -v npm >/dev/null 2>&1 || ensure_die "npm not found on PATH (need npm alongside Node >= 20)"
node_version="$(node -p 'process.versions.node')"
node_major="${node_version%%.*}"
[ "$node_major" -ge 20 ] 2>/dev/null || ensure_die "node $node_version is too old (need >= 20)"
npm_version="$(npm --version 2>/dev/null)" || ensure_die "npm does not run"
ensure_log "node $node_version and npm $npm_version already present"

[ "${1:-}" = "--verify" ] || exit 0

dir="${OJS_NODECHECK_DIR:-/tmp/nodecheck}"
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{ "private": true, "type": "module" }' >package.json

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

for spec in "playwright-core@$OJS_PLAYWRIGHT_CORE_VERSION" "miniflare@$OJS_MINIFLARE_VERSION" "@napi-rs/cli@$OJS_NAPI_CLI_VERSION"; do
    name="${spec%@*}"
    want="${spec##*@}"
    have="$(node -p "try { require('./node_modules/$name/package.json').version } catch { '' }" 2>/dev/null || true)"
    if [ "$have" = "$want" ]; then
        ensure_log "npm $spec already present in $dir"
        continue
    fi
    t0="$(now)"
    log="$(mktemp /tmp/ojs-ensure-npm.XXXXXX)"
    if ! npm install --no-audit --no-fund --save-exact "$spec" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        ensure_die "npm install $spec failed (log: $log)"
    fi
    rm -f "$log"
    ensure_log "installed npm $spec in $(elapsed "$t0")"
done

t0="$(now)"
OJS_CHROMIUM_ARGS="$OJS_CHROMIUM_ARGS" timeout 120 node --input-type=module -e '
import { chromium } from "playwright-core";
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: JSON.parse(process.env.OJS_CHROMIUM_ARGS),
});
try {
  const page = await browser.newPage();
  await page.goto("about:blank");
  const v = await page.evaluate("1+1");
  if (v !== 2) throw new Error("1+1 evaluated to " + v);
  console.error("ensure: playwright-core + chromium " + browser.version() + ": 1+1 = " + v);
} finally {
  await browser.close();
}' || ensure_die "playwright-core could not drive /usr/bin/chromium (run scripts/ensure/chromium.sh)"
ensure_log "playwright check took $(elapsed "$t0")"

t0="$(now)"
timeout 120 node --input-type=module -e '
import { Miniflare } from "miniflare";
const mf = new Miniflare({ modules: true, script: "export default { fetch() { return new Response(\"ok\") } }" });
try {
  const res = await mf.dispatchFetch("http://localhost/");
  const body = await res.text();
  if (body !== "ok") throw new Error("worker answered " + JSON.stringify(body));
  console.error("ensure: miniflare (workerd) module worker answered " + JSON.stringify(body));
} finally {
  await mf.dispose();
}' || ensure_die "miniflare could not run a module worker"
ensure_log "miniflare check took $(elapsed "$t0")"

napi_v="$(./node_modules/.bin/napi --version 2>/dev/null)" || ensure_die "@napi-rs/cli does not run"
ensure_log "@napi-rs/cli napi --version: $napi_v"
