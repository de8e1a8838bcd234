// ojs-retry-wasm in a real headless browser: Debian's /usr/bin/chromium
// driven by playwright-core. The page loads the package's `browser` entry
// (through an import map, from the tarball installed in ./node_modules by
// scripts/test-wasm), runs every conformance vector with the shared runner
// and the portable API checks; this side asserts the counts.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "./server.mjs";
import { loadVectors, countCases } from "../js-common/load-vectors-node.mjs";

const here = fileURLToPath(new URL("./", import.meta.url));
const CHROMIUM = process.env.OJS_CHROMIUM || "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const vectors = loadVectors();
const total = countCases(vectors);
let server;
let browser;
let result;

before(async () => {
  server = await serve({
    mounts: {
      "/node_modules/": fileURLToPath(new URL("./node_modules/", import.meta.url)),
      "/js-common/": fileURLToPath(new URL("../js-common/", import.meta.url)),
    },
    routes: {
      "/": () => ["text/html; charset=utf-8", readFileSync(`${here}page.html`)],
      "/vectors.json": () => ["application/json", JSON.stringify(vectors)],
    },
  });
  const { port } = server.address();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  const page = await browser.newPage();
  const logs = [];
  page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  await page.goto(`http://127.0.0.1:${port}/`);
  try {
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60_000 });
    result = await page.evaluate(() => window.__result);
  } catch (e) {
    result = { error: `the page never reported: ${e.message}` };
  }
  result.logs = logs;
  result.browserVersion = browser.version();
});

after(async () => {
  await browser?.close();
  server?.close();
});

test(`every conformance vector passes in Chromium (${total} cases)`, () => {
  assert.equal(result.error, undefined, `page failed: ${result.error}\n${result.logs.join("\n")}`);
  const { report } = result;
  console.log(
    `vectors [wasm-browser, Chromium ${result.browserVersion}]: ${report.passed} passed, ${report.failed} failed, ${report.notApplicable} not applicable (of ${report.cases} cases)`,
  );
  const failures = report.results.filter((r) => r.status === "failed");
  assert.deepEqual(failures.map((r) => `${r.file} ${r.id}: ${r.message}`), []);
  assert.ok(total > 0, "no vectors found");
  assert.equal(report.cases, total);
  assert.equal(report.passed + report.notApplicable, total);
  assert.equal(report.failed, 0);
});

test("API checks pass in Chromium", () => {
  assert.equal(result.error, undefined);
  const failed = result.checks.filter((c) => !c.ok);
  assert.deepEqual(failed.map((c) => `${c.name}: ${c.message}`), []);
  assert.ok(result.checks.length >= 15, `only ${result.checks.length} checks ran`);
  console.log(`api checks [wasm-browser]: ${result.checks.length} passed`);
});
