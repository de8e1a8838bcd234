// ojs-retry-wasm in Cloudflare's real workerd runtime, through miniflare.
// The worker gets the files the package's `workerd` export condition names
// (read from the installed package's exports map, as wrangler would
// resolve them), the .wasm as a CompiledWasm module, the shared runner, and
// the vectors as an ES module. This side asserts the counts.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { Miniflare } from "miniflare";
import { loadVectors, countCases } from "../js-common/load-vectors-node.mjs";

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const pkgJsonPath = require.resolve("ojs-retry-wasm/package.json");
const pkgDir = dirname(pkgJsonPath);
const pkg = JSON.parse(readFileSync(pkgJsonPath, "utf8"));
const vectors = loadVectors();
const total = countCases(vectors);
const ROOT = "/virtual";

function moduleFor(name, file) {
  if (file.endsWith(".wasm")) return { type: "CompiledWasm", path: `${ROOT}/${name}`, contents: readFileSync(file) };
  return { type: "ESModule", path: `${ROOT}/${name}`, contents: readFileSync(file, "utf8") };
}

let mf;
let result;

/** The package's files as worker modules: its `workerd` entry under a fixed name, the rest as is. */
function packageModules() {
  const entry = pkg.exports["."].workerd;
  assert.equal(typeof entry, "string", "package.json has no `workerd` export condition");
  const modules = [moduleFor("pkg/entry.js", join(pkgDir, entry))];
  for (const f of readdirSync(pkgDir)) {
    if (f === entry.replace(/^\.\//, "")) continue;
    if (f.endsWith(".js") || f.endsWith(".wasm")) modules.push(moduleFor(`pkg/${f}`, join(pkgDir, f)));
  }
  return modules;
}

before(async () => {
  const modules = [
    { type: "ESModule", path: `${ROOT}/worker.mjs`, contents: readFileSync(join(here, "worker.mjs"), "utf8") },
    ...packageModules(),
  ];
  for (const f of ["vectors.mjs", "api-checks.mjs", "not-applicable.mjs"]) {
    modules.push(moduleFor(`js-common/${f}`, join(here, "../js-common", f)));
  }
  modules.push({
    type: "ESModule",
    path: `${ROOT}/vectors-data.mjs`,
    contents: `export default ${JSON.stringify(vectors)};\n`,
  });
  mf = new Miniflare({
    modules,
    modulesRoot: ROOT,
    compatibilityDate: "2025-09-01",
  });
  const res = await mf.dispatchFetch("http://localhost/");
  const text = await res.text();
  try {
    result = JSON.parse(text);
  } catch {
    result = { error: `worker answered ${res.status}: ${text.slice(0, 2000)}` };
  }
});

after(async () => {
  await mf?.dispose();
});

test(`every conformance vector passes in workerd (${total} cases)`, () => {
  assert.equal(result.error, undefined, result.error);
  const { report } = result;
  console.log(
    `vectors [wasm-workerd]: ${report.passed} passed, ${report.failed} failed, ${report.notApplicable} not applicable (of ${report.cases} cases)`,
  );
  const failures = report.results.filter((r) => r.status === "failed");
  assert.deepEqual(failures.map((r) => `${r.file} ${r.id}: ${r.message}`), []);
  assert.ok(total > 0, "no vectors found");
  assert.equal(report.cases, total);
  assert.equal(report.passed + report.notApplicable, total);
  assert.equal(report.failed, 0);
});

test("API checks pass in workerd", () => {
  assert.equal(result.error, undefined, result.error);
  const failed = result.checks.filter((c) => !c.ok);
  assert.deepEqual(failed.map((c) => `${c.name}: ${c.message}`), []);
  assert.ok(result.checks.length >= 15, `only ${result.checks.length} checks ran`);
  console.log(`api checks [wasm-workerd]: ${result.checks.length} passed`);
});

// Cold start, reported (not a gate): a fresh workerd answering its first
// request from a worker that imports the package (compile + instantiate of
// the module, then one call), against the same for a worker without it.
test("cold start in workerd (reported)", async () => {
  const time = async (script, extra) => {
    const t0 = performance.now();
    const m = new Miniflare({
      modules: [{ type: "ESModule", path: `${ROOT}/w.mjs`, contents: script }, ...extra],
      modulesRoot: ROOT,
      compatibilityDate: "2025-09-01",
    });
    const body = await (await m.dispatchFetch("http://localhost/")).text();
    const ms = performance.now() - t0;
    await m.dispose();
    return { ms, body };
  };
  // Alternating, best of three each: workerd's own start-up varies more
  // than the module costs.
  const bareScript = 'export default { fetch() { return new Response("1000"); } };';
  const pkgScript =
    'import { RetryPolicy } from "./pkg/entry.js";\nexport default { fetch() { return new Response(String(new RetryPolicy({ jitter: false }).delay(1))); } };';
  let bare = { ms: Infinity };
  let withPkg = { ms: Infinity };
  for (let i = 0; i < 3; i++) {
    const b = await time(bareScript, []);
    const w = await time(pkgScript, packageModules());
    assert.equal(w.body, "1000");
    if (b.ms < bare.ms) bare = b;
    if (w.ms < withPkg.ms) withPkg = w;
  }
  console.log(
    `cold start [wasm-workerd]: first response ${withPkg.ms.toFixed(0)} ms with the package, ${bare.ms.toFixed(0)} ms without (difference ${(withPkg.ms - bare.ms).toFixed(0)} ms)`,
  );
});
