// The playground page in a real headless browser: Debian's /usr/bin/chromium
// driven by playwright-core, the page loaded from the local server that
// scripts/test-playground started (OJS_PLAYGROUND_URL). Every check reads
// the page (the DOM it drew), not the engine directly; the expected values
// come from the conformance vectors or the systems' documented defaults.
// views.test.mjs checks what people look at, at 1280 px and 390 px.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, open, settled, setPolicy, setValid, faults, marked, vectors } from "./helpers.mjs";

let browser;
let page;
const problems = [];

before(async () => {
  browser = await launch();
  page = await open(browser, 1000, problems);
});

after(async () => {
  await browser?.close();
});

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
    await setPolicy(page, JSON.stringify(c.input.layers[0], null, 2));
    const shown = await faults(page);
    assert.deepEqual(shown.map((f) => [f.code, f.field, f.path]), [[c.error.code, c.error.field, c.error.paths[0]]], c.id);
    const top = c.error.paths[0].split(".").pop().replace(/\[.*$/, "");
    assert.deepEqual([...new Set(await marked(page))], [top], `${c.id}: the field is highlighted`);
  }
  await setPolicy(page, '{\n  "max_attempts": 5,\n  "jitter": "yes",\n  "non_retryable_errors": [""]\n}');
  assert.deepEqual((await faults(page)).map((f) => f.path).sort(), ["jitter", "non_retryable_errors[0]"]);
  assert.deepEqual((await marked(page)).sort(), ["jitter", "non_retryable_errors"]);
  // A misspelt field: the engine names the field it likely is.
  await setPolicy(page, '{\n  "max_attempt": 5\n}');
  assert.match(await page.locator("#faults li").first().textContent(), /did you mean "max_attempts"\?/);
  await setValid(page, '{\n  "max_attempts": 5,\n  "jitter": true,\n  "non_retryable_errors": ["auth.*"]\n}');
  assert.deepEqual(await faults(page), [{ code: undefined, field: undefined, path: undefined, ok: true }]);
  assert.deepEqual(await marked(page), []);
});

test("picking a preset fills its options and draws one point per retry", async () => {
  await page.selectOption("#preset-system", "sidekiq");
  await page.waitForFunction(() => document.querySelectorAll("#preset-form input").length > 0);
  // Sidekiq's own defaults: 25 retries (Sidekiq::JobRetry::DEFAULT_MAX_RETRY_ATTEMPTS), `retry: true`.
  assert.equal(await page.locator('#preset-form input[name="max_retries"]').first().evaluate((i) => i.value), "25");
  assert.equal(await page.locator('#preset-form input[name="retry"]').first().evaluate((i) => i.type === "checkbox" && i.checked), true);
  const points = () => page.locator("#s-chart g.drawn circle").count();
  const rows = () => page.locator("#s-table tbody tr").count();
  assert.equal(await points(), 25);
  assert.equal(await rows(), 25);
  assert.equal(await page.locator("#s-chart g.band").first().evaluate((g) => g.children.length), 25);
  assert.ok(!(await page.locator("#preset-views").first().evaluate((v) => v.hidden)));
  const doc = JSON.parse(await page.locator("#preset-doc").first().evaluate((p) => p.textContent));
  assert.equal(doc.preset.system, "sidekiq");
  assert.equal(doc.preset.max_retries, 25);
  const plain = await page.locator("#preset-plain dd").evaluateAll((dds) => Object.fromEntries(dds.map((d) => [d.dataset.field, [d.dataset.value, d.textContent]])));
  assert.deepEqual(plain.max_attempts, ["26", "26 (25 retries)"], "25 retries: 26 attempts");
  assert.deepEqual(plain.max_interval, ["none", "no cap"]);
  // Changing an option rebuilds the policy: 5 retries, 5 points.
  await page.fill('#preset-form input[name="max_retries"]', "5");
  await page.waitForFunction(() => document.querySelectorAll("#s-chart g.drawn circle").length === 5);
  assert.equal(await rows(), 5);
  // A bad option is marked on its input, with the engine's fault.
  await page.fill('#preset-form input[name="max_retries"]', "-3");
  await page.waitForSelector('#preset-form label.bad[data-option="max_retries"] .fault');
  assert.deepEqual((await faults(page)).map((f) => [f.field, f.path]), [["preset", "preset.max_retries"]]);
  await page.selectOption("#preset-system", "");
  await page.waitForFunction(() => document.getElementById("preset-form").hidden);
  // Hidden means not drawn (no style may override the attribute).
  assert.equal(await page.isVisible("#preset-form"), false);
  assert.equal(await page.isVisible("#preset-views"), false);
  await settled(page);
});

test("the decision explorer gives the vectors' answers", async () => {
  const ids = ["decide-12.4-401", "decide-ret11-jittered", "decide-7.2-fail-code", "decide-9.2-timeout-retry", "decide-12.3-validation-prefix"];
  const cases = vectors("decisions").filter((c) => ids.includes(c.id));
  assert.equal(cases.length, ids.length, "a vector is missing");
  for (const c of cases) {
    const { policy, failure, now, jitter } = c.input;
    assert.ok("u" in jitter, `${c.id}: the explorer is driven with u`);
    await setValid(page, JSON.stringify(policy, null, 2));
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

async function runHerd(jobs, retries) {
  await page.fill("#h-jobs", String(jobs));
  await page.fill("#h-retries", String(retries));
  await page.evaluate(() => { document.getElementById("h-summary").textContent = ""; });
  await page.click("#h-run");
  await page.waitForFunction(() => document.getElementById("h-summary").textContent !== "" || document.getElementById("h-error").textContent !== "");
  assert.equal(await page.locator("#h-error").first().evaluate((e) => e.textContent), "");
  return page.evaluate(() => window.__playground.timings.herd);
}

test("presets beside the policy share its buckets and rate axis", async () => {
  await setValid(page, '{\n  "max_attempts": 11,\n  "initial_interval": "PT1S",\n  "max_interval": "PT5M"\n}');
  await page.setChecked('#h-presets input[value="sidekiq"]', true);
  await runHerd(10_000, 10);
  const charts = await page.locator(".herd-chart").evaluateAll((cs) => cs.map((c) => ({
    name: c.dataset.name, bucketMs: c.dataset.bucketMs, legend: c.querySelectorAll(".legend li").length,
    ticks: [...c.querySelectorAll("svg text")].map((t) => t.textContent).filter((t) => /^\d[\d,]*\/s$/.test(t)),
  })));
  assert.deepEqual(charts.map((c) => c.name), ["as written", "without jitter", "sidekiq (defaults)"]);
  assert.equal(new Set(charts.map((c) => c.bucketMs)).size, 1, "one bucket width");
  assert.equal(new Set(charts.map((c) => c.ticks.join())).size, 1, "one rate axis");
  assert.deepEqual(charts.map((c) => c.legend), [10, 10, 10]);
  await page.setChecked('#h-presets input[value="sidekiq"]', false);
});

test("a herd of 100 000 jobs × 10 retries (time measured, not asserted)", async () => {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await runHerd(100_000, 10));
  const legend = await page.locator(".herd-chart").first().evaluate((c) => c.querySelectorAll(".legend li").length);
  assert.equal(legend, 10);
  const asWritten = runs.map((r) => r.perPolicyMs[0][1]).sort((a, b) => a - b);
  const total = runs.map((r) => r.engineMs + r.drawMs).sort((a, b) => a - b);
  console.log(`herd timing [Chromium ${browser.version()}]: 100000 jobs x 10 retries, policy as written: engine ${asWritten.map((m) => m.toFixed(0)).join(" / ")} ms (median ${asWritten[1].toFixed(0)}); ` +
    `both herds (as written + without jitter) computed and drawn: ${total.map((m) => m.toFixed(0)).join(" / ")} ms (median ${total[1].toFixed(0)})`);
});

test("no console errors, page errors or failed requests", () => {
  assert.deepEqual(problems, []);
});
