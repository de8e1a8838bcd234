// The herd view: for each policy compared, `policy.herd(jobs, retries,
// bucketMs)` (a single batch call into the engine) and a stacked histogram
// of retry arrivals over time, one colour per retry round, on a shared
// time axis.

import { el, label, human, scale, ticks } from "./svg.js";

const W = 900;
const H = 150;
const M = { left: 64, right: 16, top: 14, bottom: 28 };
const BINS = 240;

/**
 * A bucket width (ms) that keeps every round within the engine's bucket
 * limit: no round spreads wider than the sum of the largest delays.
 */
export function bucketFor(policy, retries) {
  const rows = policy.schedule(retries);
  const span = rows.reduce((s, r) => s + r.maxMs, 0);
  const nice = [1e3, 2e3, 5e3, 1e4, 3e4, 6e4, 3e5, 6e5, 36e5, 864e5];
  return nice.find((b) => span / b < 50_000) ?? Math.ceil(span / 50_000);
}

/** Runs each policy's herd in the engine; the results and the time each call took. */
export function simulate(entries, jobs, retries) {
  return entries.map(({ name, policy }) => {
    const bucketMs = bucketFor(policy, retries);
    const t0 = performance.now();
    const herd = policy.herd(jobs, retries, bucketMs);
    return { name, herd, ms: performance.now() - t0 };
  });
}

function colour(round, of) {
  return `hsl(${Math.round((210 + (round - 1) * (300 / Math.max(1, of))) % 360)} 65% 52%)`;
}

/** Display bins: each round's buckets summed into BINS columns of the shared axis. */
function bin(herd, x) {
  const bins = new Map();
  for (const r of herd.rounds) {
    const cols = new Float64Array(BINS);
    r.counts.forEach((c, i) => {
      if (!c) return;
      const mid = r.startMs + (i + 0.5) * herd.bucketMs;
      const col = Math.min(BINS - 1, Math.floor(((x(mid) - M.left) / (W - M.left - M.right)) * BINS));
      cols[col] += c;
    });
    bins.set(r.retryNumber, cols);
  }
  return bins;
}

function drawOne(parent, { name, herd, ms }, x, jobs) {
  const box = document.createElement("div");
  box.className = "herd-chart";
  box.dataset.name = name;
  const pct = ((herd.peakPerSecond / jobs) * 100).toFixed(1);
  const h3 = document.createElement("h3");
  h3.textContent = `${name}: peak ${herd.peakPerSecond.toLocaleString("en")} arrivals/s (${pct}% of ${jobs.toLocaleString("en")} jobs) ` +
    `${human(herd.peakAtMs)} after the failure · ${herd.rounds.length} rounds · engine ${ms.toFixed(0)} ms`;
  box.appendChild(h3);
  box.dataset.peak = herd.peakPerSecond;
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
  box.appendChild(svg);
  const bins = bin(herd, x);
  const pxPerBin = (W - M.left - M.right) / BINS;
  const total = new Float64Array(BINS);
  for (const cols of bins.values()) cols.forEach((c, i) => { total[i] += c; });
  const top = Math.max(1, ...total);
  const y = scale(false, 0, top, H - M.bottom, M.top);
  for (const t of ticks(y)) {
    el("line", { x1: M.left, x2: W - M.right, y1: y(t), y2: y(t), stroke: "#eef0f2" }, svg);
    label(svg, M.left - 4, y(t) + 4, t.toLocaleString("en"), { "text-anchor": "end" });
  }
  label(svg, M.left + 6, M.top - 3, "arrivals per column");
  const base = new Float64Array(BINS);
  for (const [round, cols] of bins) {
    const g = el("g", { class: "round", "data-round": round, fill: colour(round, herd.rounds.length) }, svg);
    cols.forEach((c, i) => {
      if (!c) return;
      const y0 = y(base[i]);
      const y1 = y(base[i] + c);
      base[i] += c;
      el("rect", { x: M.left + i * pxPerBin, width: Math.max(1, pxPerBin - 0.3), y: y1, height: Math.max(0.8, y0 - y1), "data-count": c }, g);
    });
  }
  for (const t of ticks(x)) {
    el("line", { x1: x(t), x2: x(t), y1: H - M.bottom, y2: H - M.bottom + 4, stroke: "#999" }, svg);
    label(svg, x(t), H - M.bottom + 16, human(t), { "text-anchor": "middle" });
  }
  parent.appendChild(box);
}

/** Simulates and draws every entry; returns the timings (engine and drawing, ms). */
export function renderHerd(container, entries, { jobs, retries, log }) {
  const t0 = performance.now();
  const results = simulate(entries, jobs, retries);
  const t1 = performance.now();
  container.replaceChildren();
  const arrivals = results.flatMap((r) => r.herd.rounds.flatMap((d) => [d.firstMs, d.lastMs + r.herd.bucketMs]));
  const lo = Math.max(100, Math.min(...arrivals) / 1.5);
  const hi = Math.max(lo * 2, ...arrivals);
  const x = scale(log, log ? lo : 0, hi, M.left, W - M.right);
  for (const r of results) drawOne(container, r, x, jobs);
  const t2 = performance.now();
  return { engineMs: t1 - t0, drawMs: t2 - t1, results };
}
