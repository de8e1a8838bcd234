// What people look at, at 1280 px and at 390 px (issue 28): the herd chart
// in arrivals per second with its peak marked and equal to the headline,
// a legend per round and one scale for every chart; every view following
// the editor, or marked stale with the reason; faults marked where they
// were typed (JSON syntax errors included); unbounded values in words; and
// a page whose charts fit their containers. The screenshots checked are
// saved in the test's output folder (target/playground).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { launch, open, settled, setPolicy, setValid, marked, DEFAULT_POLICY, pngSize, shot, OUT } from "./helpers.mjs";

let browser;
const problems = [];

before(async () => {
  mkdirSync(OUT, { recursive: true });
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

/** Per herd chart: what it says and what it draws. */
const herdCharts = (page) => page.locator(".herd-chart").evaluateAll((charts) => charts.map((c) => {
  const B = Number(c.dataset.bucketMs);
  const bars = [...c.querySelectorAll("g.bar")].map((b) => ({
    count: Number(b.dataset.count),
    rate: Number(b.dataset.rate),
    sum: [...b.querySelectorAll("rect")].reduce((s, r) => s + Number(r.dataset.count), 0),
  }));
  const texts = [...c.querySelectorAll("svg text")].map((t) => t.textContent);
  const marker = c.querySelector("g.peak");
  return {
    name: c.dataset.name,
    peak: Number(c.dataset.peak),
    peakCount: Number(c.dataset.peakCount),
    bucketMs: B,
    headline: c.querySelector("h3").textContent,
    marker: marker ? Number(marker.dataset.rate) : null,
    tallest: Math.max(0, ...bars.map((b) => b.rate)),
    barsAreRates: bars.length > 0 && bars.every((b) => b.sum === b.count && b.rate === (b.count * 1000) / B),
    legend: [...c.querySelectorAll(".legend li")].map((li) => Number(li.dataset.round)),
    legendText: [...c.querySelectorAll(".legend li")].map((li) => li.textContent),
    drawnRounds: [...new Set([...c.querySelectorAll("g.bar rect")].map((r) => Number(r.dataset.round)))],
    rateTicks: texts.filter((t) => t.endsWith("/s") && !t.startsWith("peak")),
    axisName: texts.find((t) => t.startsWith("arrivals per second")),
  };
}));

/** Nothing wider than the window, and every chart inside its section. */
const layout = (page) => page.evaluate(() => ({
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  outside: [...document.querySelectorAll("svg")].filter((s) => {
    const r = s.getBoundingClientRect();
    const box = s.closest("section").getBoundingClientRect();
    return r.width > 0 && (r.right > box.right + 0.5 || r.left < box.left - 0.5);
  }).map((s) => s.id || s.getAttribute("aria-label")),
  scheduleFill: (() => {
    const svg = document.getElementById("s-chart");
    return svg.getBoundingClientRect().width / svg.parentElement.clientWidth;
  })(),
}));

async function checkLayout(page, width) {
  const l = await layout(page);
  assert.ok(l.scrollWidth <= width, `the page is ${l.scrollWidth} px wide in a ${width} px window`);
  assert.deepEqual(l.outside, [], "charts outside their section");
  assert.ok(l.scheduleFill > 0.97 && l.scheduleFill <= 1.0001, `the schedule chart fills its container (${l.scheduleFill})`);
}

async function herdChecks(page) {
  await setValid(page, DEFAULT_POLICY);
  const charts = await herdCharts(page);
  assert.deepEqual(charts.map((c) => c.name), ["as written", "without jitter"]);
  for (const c of charts) {
    assert.ok(c.barsAreRates, `${c.name}: each bar is its bucket's count ÷ the bucket width`);
    assert.equal(c.marker, c.peak, `${c.name}: the marked peak is the headline's`);
    assert.equal(c.tallest, c.peak, `${c.name}: the tallest bar is the peak`);
    assert.ok(c.headline.includes(`peak ${Math.round(c.peak).toLocaleString("en")} arrivals/s`), c.headline);
    assert.deepEqual(c.legend, [1, 2, 3, 4, 5, 6, 7, 8, 9], `${c.name}: a legend entry per round`);
    assert.deepEqual(c.legendText, c.legend.map((n) => `retry ${n}`));
    assert.ok(c.drawnRounds.every((r) => c.legend.includes(r)), "every colour drawn is in the legend");
    assert.match(c.axisName ?? "", /^arrivals per second \(counted in \S+ buckets\)$/);
  }
  // One scale: the same buckets and the same rate axis for every chart.
  assert.equal(new Set(charts.map((c) => c.bucketMs)).size, 1);
  assert.ok(charts[0].bucketMs < 1000, "buckets finer than the jitter's one-second spread");
  assert.deepEqual(charts[0].rateTicks, charts[1].rateTicks);
  // Without jitter the 10 000 jobs come back in the same bucket; with it they spread.
  assert.equal(charts[1].peakCount, 10_000);
  assert.ok(charts[0].peak < charts[1].peak / 4, `jitter lowers the peak: ${charts[0].peak} vs ${charts[1].peak}`);
  // Turning jitter on in the editor lowers the reported peak.
  await setValid(page, DEFAULT_POLICY.replace('"jitter": true', '"jitter": false'));
  const off = (await herdCharts(page))[0].peak;
  await setValid(page, DEFAULT_POLICY);
  const on = (await herdCharts(page))[0].peak;
  assert.ok(on < off, `jitter on: peak ${on}/s, off: ${off}/s`);
}

const staleNotes = (page) => page.locator("section[data-stale]").evaluateAll((ss) => ss.map((s) => [s.id, s.querySelector(".stale-note")?.textContent ?? ""]));

async function followChecks(page) {
  const v0 = await setValid(page, DEFAULT_POLICY);
  // A change of text re-runs every view, the herd included (debounced, no click).
  const v1 = await setValid(page, DEFAULT_POLICY.replace('"max_attempts": 10', '"max_attempts": 4'));
  assert.ok(Number(v1.herd) > Number(v0.herd));
  assert.equal(await page.locator("#s-table tbody tr").count(), 3);
  assert.deepEqual((await herdCharts(page))[0].legend, [1, 2, 3]);
  // A change of preset too.
  await page.selectOption("#preset-system", "sidekiq");
  await page.waitForFunction(() => document.querySelector(".herd-chart h3")?.textContent.startsWith("as written") &&
    document.getElementById("herd").dataset.version === String(window.__playground.version) && window.__playground.policy.presetSystem === "sidekiq");
  await settled(page);
  // A fault in the preset form is marked on its field, not in the editor, and the views say they are stale.
  await page.fill('#preset-form input[name="max_retries"]', "-3");
  await page.waitForSelector('#preset-form label.bad[data-option="max_retries"] .fault');
  assert.deepEqual(await marked(page), [], "no mark in the editor for a form fault");
  assert.equal(await page.locator('#faults li[data-where="form"]').count(), 1);
  const notes = await staleNotes(page);
  assert.deepEqual(notes.map(([id]) => id), ["schedule", "decide", "herd"]);
  assert.ok(notes.every(([, t]) => t.includes("the preset form has 1 fault")), JSON.stringify(notes));
  await page.fill('#preset-form input[name="max_retries"]', "5");
  await page.waitForFunction(() => !document.querySelector("section[data-stale]"));
  await page.selectOption("#preset-system", "");
  await settled(page);
  // A JSON syntax error marks its line; the views are marked stale until it is fixed.
  const broken = DEFAULT_POLICY.replace('"jitter": true', "jitter: true");
  await setPolicy(page, broken);
  const line = broken.split("\n").findIndex((l) => l.includes("jitter: true")) + 1;
  const lines = await page.locator("#editor-marks mark.line").evaluateAll((ms) => ms.map((m) => Number(m.dataset.line)));
  assert.deepEqual(lines, [line], "the syntax error's line is marked");
  assert.equal(await page.locator(`#faults li[data-line="${line}"]`).count(), 1);
  assert.deepEqual((await staleNotes(page)).map(([id]) => id), ["schedule", "decide", "herd"]);
  assert.ok(await page.locator("#schedule .stale-note").isVisible());
  // A field fault marks the key in the editor.
  await setPolicy(page, DEFAULT_POLICY.replace('"jitter": true', '"jitter": "yes"'));
  assert.deepEqual(await marked(page), ["jitter"]);
  await setValid(page, DEFAULT_POLICY);
  assert.deepEqual(await staleNotes(page), []);
}

/** Every chart's axis labels: at least two per axis, none repeated. */
const scheduleTicks = (page) => page.locator("#s-chart text[text-anchor=end]").evaluateAll((ts) => ts.map((t) => t.textContent)
  .filter((t) => /^\d/.test(t)));

async function pick(page, system) {
  await page.selectOption("#preset-system", system);
  await page.waitForFunction((s) => (window.__playground.policy?.presetSystem ?? "") === s, system);
  await settled(page);
}

async function noCap(page, what) {
  const cap = await page.locator('#preset-plain dd[data-field="max_interval"]').textContent();
  assert.equal(cap, "no cap", what);
  const text = await page.locator("body").innerText();
  assert.doesNotMatch(text, /\d{7,}\s*(H|h|d\b)/, `${what}: no 7-digit hour or day count on the page`);
}

async function unboundedChecks(page, width) {
  await pick(page, "sidekiq");
  await noCap(page, "sidekiq");
  await checkLayout(page, width);
  // BullMQ's own default is one attempt: the schedule says it never retries, as the explorer and the herd do.
  await pick(page, "bullmq");
  const caption = await page.locator("#s-caption").textContent();
  assert.ok(caption.startsWith("This policy never retries (max_attempts 1)"), caption);
  assert.equal(await page.locator("#s-chart circle").count(), 0);
  assert.equal(await page.locator("#d-reason").textContent(), "exhausted");
  assert.ok((await page.locator(".herd-chart h3").first().textContent()).includes("never retries"));
  // Exponential backoff: no cap, and a delay axis with several distinct labels.
  const before = await page.evaluate(() => window.__playground.version);
  await page.fill('#preset-form input[name="backoff"]', '{"type": "exponential", "delay": 1000}');
  await page.fill('#preset-form input[name="attempts"]', "6");
  await page.waitForFunction((v) => window.__playground.version > v && document.querySelectorAll("#s-chart g.drawn circle").length === 5, before);
  await settled(page);
  await noCap(page, "bullmq, exponential");
  await checkLayout(page, width);
  const ticks = await scheduleTicks(page);
  assert.ok(ticks.length >= 3 && new Set(ticks).size === ticks.length, `distinct axis labels: ${ticks}`);
  // Celery without a retry limit: "unlimited", and the schedule says it shows only the first retries.
  await pick(page, "celery");
  const v = await page.evaluate(() => window.__playground.version);
  await page.fill('#preset-form input[name="max_retries"]', "");
  await page.waitForFunction((n) => window.__playground.version > n, v);
  await settled(page);
  assert.equal(await page.locator('#preset-plain dd[data-field="max_attempts"]').textContent(), "unlimited");
  assert.match(await page.locator("#s-caption").textContent(), /the policy retries without limit/);
  await pick(page, "");
}

for (const width of [1280, 390]) {
  test(`what people look at is right at ${width} px`, async (t) => {
    const page = await open(browser, width, problems);
    await settled(page);
    await t.test("the page and its charts fit the window", () => checkLayout(page, width));
    await t.test("the herd chart: arrivals per second, peak marked = headline, legend, one scale; jitter lowers the peak", () => herdChecks(page));
    await t.test("every view follows the editor or says it is stale; faults marked where typed", () => followChecks(page));
    await t.test("unbounded values in words; a policy that never retries says so", () => unboundedChecks(page, width));
    await t.test("the screenshots checked", async () => {
      await setValid(page, DEFAULT_POLICY);
      await checkLayout(page, width);
      const full = shot(`playground-${width}.png`);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: full, fullPage: true });
      assert.equal(pngSize(full).width, width, "the full-page screenshot is no wider than the window");
      const herd = shot(`herd-${width}.png`);
      await page.locator("#herd").screenshot({ path: herd });
      assert.ok(pngSize(herd).width <= width);
      console.log(`screenshots: ${full}, ${herd}`);
    });
    await page.close();
  });
}

test("the charts follow a change of window width", async () => {
  const page = await open(browser, 1280, problems);
  await settled(page);
  const wide = await page.locator("#s-chart").evaluate((s) => s.getBoundingClientRect().width);
  await page.setViewportSize({ width: 390, height: 900 });
  await page.waitForFunction((w) => document.getElementById("s-chart").getBoundingClientRect().width < w / 2, wide);
  await page.waitForFunction(() => [...document.querySelectorAll(".herd-chart svg")].every((s) => s.getBoundingClientRect().width <= 390));
  await checkLayout(page, 390);
  await page.close();
});

test("no console errors, page errors or failed requests", () => {
  assert.deepEqual(problems, []);
});
