// Shared by the playground's tests: the browser, a page at a given width
// with its console problems collected, and the page actions every test
// uses. Every check reads the page (the DOM it drew), not the engine.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const URL_ = process.env.OJS_PLAYGROUND_URL;
/** The test's output folder (screenshots); scripts/test-playground sets it under target/. */
export const OUT = process.env.OJS_PLAYGROUND_OUT || new URL("../../target/playground", import.meta.url).pathname;
const CHROMIUM = process.env.OJS_CHROMIUM || "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export const vectors = (name) => JSON.parse(readFileSync(new URL(`../vectors/${name}.json`, import.meta.url))).cases;

export function launch() {
  if (!URL_) throw new Error("OJS_PLAYGROUND_URL is not set (scripts/test-playground sets it)");
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

/** A page `width` px wide with the engine loaded; `problems` collects console errors, page errors and failed requests. */
export async function open(browser, width, problems) {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") problems.push(`${width}px ${m.type()}: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`${width}px pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`${width}px request failed: ${r.url()}`));
  await page.goto(URL_);
  await page.waitForFunction(() => document.getElementById("status").dataset.state !== "loading", null, { timeout: 60_000 });
  return page;
}

/** The version of the policy each view last drew. */
export const versions = (page) => page.evaluate(() => Object.fromEntries(
  ["schedule", "decide", "herd"].map((id) => [id, document.getElementById(id).dataset.version])));

/** Waits until every view (the debounced herd included) has drawn the same, newest policy. */
export async function settled(page) {
  await page.waitForFunction(() => {
    const v = ["schedule", "decide", "herd"].map((id) => document.getElementById(id).dataset.version);
    return v[0] && v.every((x) => x === v[0]) && String(window.__playground.version) === v[0];
  });
  return versions(page);
}

/** Replaces the editor's text and waits until the page has compiled it (valid or not). */
export async function setPolicy(page, text) {
  await page.fill("#editor", text);
  await page.waitForFunction((t) => {
    const marks = document.getElementById("editor-marks").textContent;
    return marks.trimEnd() === t.trimEnd() && document.querySelectorAll("#faults li").length > 0;
  }, text);
}

/** Like `setPolicy` for a valid policy, then waits for every view to follow it. */
export async function setValid(page, text) {
  const before = await page.evaluate(() => window.__playground.version);
  await setPolicy(page, text);
  await page.waitForFunction((v) => window.__playground.version > v, before);
  return settled(page);
}

export const faults = (page) => page.locator("#faults li").evaluateAll((lis) => lis.map((li) => ({
  code: li.dataset.code, field: li.dataset.field, path: li.dataset.path, ok: li.classList.contains("ok"),
})));
export const marked = (page) => page.locator("#editor-marks mark[data-field]").evaluateAll((ms) => ms.map((m) => m.dataset.field));

/** The policy every herd check starts from: the page's default document. */
export const DEFAULT_POLICY = JSON.stringify({ max_attempts: 10, initial_interval: "PT1S", backoff_coefficient: 2.0, max_interval: "PT5M", jitter: true, non_retryable_errors: ["validation.*"], on_exhaustion: "dead_letter" }, null, 2);

/** The width and height of a PNG file, from its IHDR chunk. */
export function pngSize(path) {
  const b = readFileSync(path);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

export const shot = (name) => join(OUT, name);
