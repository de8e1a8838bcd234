// The playground page in a real headless browser: Debian's /usr/bin/chromium
// driven by playwright-core, the page loaded from the local server that
// scripts/test-playground started (OJS_PLAYGROUND_URL). Every check reads
// the page (the DOM it drew), not the engine directly; the expected values
// come from the conformance vectors or the systems' documented defaults.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { chromium } from "playwright-core";

const URL_ = process.env.OJS_PLAYGROUND_URL;
const SHOT = process.env.OJS_PLAYGROUND_SCREENSHOT || "../../target/playground/playground.png";
const CHROMIUM = process.env.OJS_CHROMIUM || "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const vectors = (name) => JSON.parse(readFileSync(new URL(`../vectors/${name}.json`, import.meta.url))).cases;

let browser;
let page;
const problems = [];

before(async () => {
  assert.ok(URL_, "OJS_PLAYGROUND_URL is not set (scripts/test-playground sets it)");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(URL_);
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "loading", null, { timeout: 60_000 });
});

after(async () => {
  await browser?.close();
});

/** Replaces the editor's text and waits until the page has compiled it. */
async function setPolicy(text) {
  await page.fill("#editor", text);
  await page.waitForFunction((t) => {
    const marks = document.getElementById("editor-marks").textContent;
    return marks.trimEnd() === t.trimEnd() && document.querySelectorAll("#faults li").length > 0;
  }, text);
}

const faults = () => page.locator("#faults li").evaluateAll((lis) => lis.map((li) => ({
  code: li.dataset.code, field: li.dataset.field, path: li.dataset.path, ok: li.classList.contains("ok"),
})));
const marked = () => page.locator("#editor-marks mark").evaluateAll((ms) => ms.map((m) => m.dataset.field));

test("the page loads the engine", async () => {
  assert.equal(await page.locator("#status").first().evaluate((s) => s.dataset.state), "ready", await page.locator("#status").first().evaluate((s) => s.textContent));
  const systems = await page.locator("#preset-system option").evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
  assert.ok(systems.includes("sidekiq") && systems.length >= 13, systems.join());
});

test("a bad policy shows each fault with its field and code; fixing it clears them", async () => {
  const cases = vectors("validation").filter((c) => c.op === "policy" && c.error && c.input.layers?.length === 1
    && typeof c.input.layers[0] === "object" && c.error.field && c.error.paths?.length === 1).slice(0, 4);
  assert.ok(cases.length >= 3, "too few validation vectors");
  for (const c of cases) {
    await setPolicy(JSON.stringify(c.input.layers[0], null, 2));
    const shown = await faults();
    assert.deepEqual(shown.map((f) => [f.code, f.field, f.path]), [[c.error.code, c.error.field, c.error.paths[0]]], c.id);
    const top = c.error.paths[0].split(".").pop().replace(/\[.*$/, "");
    assert.deepEqual([...new Set(await marked())], [top], `${c.id}: the field is highlighted`);
  }
  await setPolicy('{\n  "max_attempts": 5,\n  "jitter": "yes",\n  "non_retryable_errors": [""]\n}');
  assert.deepEqual((await faults()).map((f) => f.path).sort(), ["jitter", "non_retryable_errors[0]"]);
  assert.deepEqual((await marked()).sort(), ["jitter", "non_retryable_errors"]);
  await setPolicy('{\n  "max_attempts": 5,\n  "jitter": true,\n  "non_retryable_errors": ["auth.*"]\n}');
  assert.deepEqual(await faults(), [{ code: undefined, field: undefined, path: undefined, ok: true }]);
  assert.deepEqual(await marked(), []);
});

test("picking a preset fills its options and draws one point per retry", async () => {
  await page.selectOption("#preset-system", "sidekiq");
  await page.waitForFunction(() => document.querySelectorAll("#preset-form input").length > 0);
  // Sidekiq's own defaults: 25 retries (Sidekiq::JobRetry::DEFAULT_MAX_RETRY_ATTEMPTS), `retry: true`.
  assert.equal(await page.locator('#preset-form input[name="max_retries"]').first().evaluate((i) => i.value), "25");
  assert.equal(await page.locator('#preset-form input[name="retry"]').first().evaluate((i) => i.type === "checkbox" && i.checked), true);
  const points = () => page.locator("#s-chart g.drawn circle").evaluateAll((cs) => cs.length);
  const rows = () => page.locator("#s-table tbody tr").evaluateAll((rs) => rs.length);
  assert.equal(await points(), 25);
  assert.equal(await rows(), 25);
  assert.equal(await page.locator("#s-chart g.band").first().evaluate((g) => g.children.length), 25);
  assert.ok(!(await page.locator("#preset-views").first().evaluate((v) => v.hidden)));
  const doc = JSON.parse(await page.locator("#preset-doc").first().evaluate((p) => p.textContent));
  assert.equal(doc.preset.system, "sidekiq");
  assert.equal(doc.preset.max_retries, 25);
  const plain = JSON.parse(await page.locator("#preset-plain").first().evaluate((p) => p.textContent));
  assert.equal(plain.max_attempts, 26, "25 retries: 26 attempts");
  // Changing an option rebuilds the policy: 5 retries, 5 points.
  await page.fill('#preset-form input[name="max_retries"]', "5");
  await page.waitForFunction(() => document.querySelectorAll("#s-chart g.drawn circle").length === 5);
  assert.equal(await rows(), 5);
  // A bad option is marked on its input, with the engine's fault.
  await page.fill('#preset-form input[name="max_retries"]', "-3");
  await page.waitForSelector('#preset-form label.bad[data-option="max_retries"] .fault');
  assert.deepEqual((await faults()).map((f) => [f.field, f.path]), [["preset", "preset.max_retries"]]);
  await page.selectOption("#preset-system", "");
  await page.waitForFunction(() => document.getElementById("preset-form").hidden);
  // Hidden means not drawn (no style may override the attribute).
  assert.equal(await page.isVisible("#preset-form"), false);
  assert.equal(await page.isVisible("#preset-views"), false);
});

test("the decision explorer gives the vectors' answers", async () => {
  const ids = ["decide-12.4-401", "decide-ret11-jittered", "decide-7.2-fail-code", "decide-9.2-timeout-retry", "decide-12.3-validation-prefix"];
  const cases = vectors("decisions").filter((c) => ids.includes(c.id));
  assert.equal(cases.length, ids.length, "a vector is missing");
  for (const c of cases) {
    const { policy, failure, now, jitter } = c.input;
    assert.ok("u" in jitter, `${c.id}: the explorer is driven with u`);
    await setPolicy(JSON.stringify(policy, null, 2));
    await page.fill("#d-attempt", String(failure.attempt));
    await page.fill("#d-type", failure.type ?? "");
    await page.selectOption("#d-code", failure.code ?? "");
    await page.setChecked("#d-timeout", Boolean(failure.timed_out));
    await page.fill("#d-now", String(now));
    await page.selectOption("#d-jitter", "u");
    await page.fill("#d-jitter-value", String(jitter.u));
    const got = await page.locator(".decision dd").evaluateAll((dds) => Object.fromEntries(dds.map((d) => [d.id, d.dataset.value])));
    const e = c.expect.decision;
    const s = (v) => (v === null ? "null" : String(v));
    assert.deepEqual(got, {
      "d-action": e.action, "d-reason": e.reason, "d-pattern": s(e.matched_pattern),
      "d-retry": s(e.retry_number), "d-delay": s(e.delay_ms), "d-next": s(e.next_retry_at),
    }, c.id);
  }
});

/** Per chart: its name, peak, and the sum of its bars' counts per round. */
const herdCharts = () => page.locator(".herd-chart").evaluateAll((charts) => charts.map((c) => ({
  name: c.dataset.name,
  peak: Number(c.dataset.peak),
  rounds: [...c.querySelectorAll("g.round")].map((g) => [...g.querySelectorAll("rect")].reduce((s, r) => s + Number(r.dataset.count), 0)),
})));

async function runHerd(jobs, retries) {
  await page.fill("#h-jobs", String(jobs));
  await page.fill("#h-retries", String(retries));
  await page.evaluate(() => { document.getElementById("h-summary").textContent = ""; });
  await page.click("#h-run");
  await page.waitForFunction(() => document.getElementById("h-summary").textContent !== "" || document.getElementById("h-error").textContent !== "");
  assert.equal(await page.locator("#h-error").first().evaluate((e) => e.textContent), "");
  return page.evaluate(() => window.__playground.timings.herd);
}

test("a herd of 10 000 draws histograms that count every job in every round", async () => {
  await setPolicy('{\n  "max_attempts": 11,\n  "initial_interval": "PT1S",\n  "max_interval": "PT5M"\n}');
  await page.setChecked('#h-presets input[value="sidekiq"]', true);
  await runHerd(10_000, 10);
  const charts = await herdCharts();
  assert.deepEqual(charts.map((c) => c.name), ["as written", "without jitter", "sidekiq (defaults)"]);
  for (const c of charts) {
    assert.equal(c.rounds.length, 10, c.name);
    assert.deepEqual(c.rounds, Array(10).fill(10_000), c.name);
  }
  // Without jitter the whole herd comes back in the same second.
  assert.equal(charts[1].peak, 10_000);
  assert.ok(charts[0].peak < 10_000 || charts[0].peak === 10_000);
  await page.setChecked('#h-presets input[value="sidekiq"]', false);
});

test("a herd of 100 000 jobs × 10 retries (time measured, not asserted)", async () => {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await runHerd(100_000, 10));
  const charts = await herdCharts();
  assert.deepEqual(charts[0].rounds, Array(10).fill(100_000));
  const asWritten = runs.map((r) => r.perPolicyMs[0][1]).sort((a, b) => a - b);
  const total = runs.map((r) => r.engineMs + r.drawMs).sort((a, b) => a - b);
  console.log(`herd timing [Chromium ${browser.version()}]: 100000 jobs x 10 retries, policy as written: engine ${asWritten.map((m) => m.toFixed(0)).join(" / ")} ms (median ${asWritten[1].toFixed(0)}); ` +
    `both herds (as written + without jitter) computed and drawn: ${total.map((m) => m.toFixed(0)).join(" / ")} ms (median ${total[1].toFixed(0)})`);
  await page.setChecked('#h-presets input[value="sidekiq"]', true);
  await runHerd(10_000, 10);
  await page.evaluate(() => window.scrollTo(0, 0));
  mkdirSync(dirname(SHOT), { recursive: true });
  await page.screenshot({ path: SHOT, fullPage: true });
  console.log(`screenshot: ${SHOT}`);
});

test("no console errors, page errors or failed requests", () => {
  assert.deepEqual(problems, []);
});
