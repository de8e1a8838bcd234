// The herd view: for each policy compared, `policy.herd(jobs, retries,
// bucketMs)` (one batch call into the engine), drawn as arrivals per second
// over time, one colour per retry round.
//
// Every chart counts arrivals in the same fixed buckets (the finest width
// in WIDTHS that every policy's herd fits in) and draws each bucket's count
// as a rate (count ÷ bucket width), so a bar's height means the same thing
// wherever it is on the time axis, log or linear. Where several buckets
// fall in one pixel, the busiest is drawn: the tallest bar is the peak, and
// the headline's peak is that same bucket.

import { el, label, human, scale, ticks, sized, widthOf, count } from "./svg.js";

const H = 180;
const M = { left: 62, right: 14, top: 26, bottom: 30 };
/** Bucket widths tried, finest first (ms). */
const WIDTHS = [100, 200, 500, 1e3, 2e3, 5e3, 1e4, 3e4, 6e4, 3e5, 6e5, 36e5, 864e5];
/** The engine's most buckets per round (core `herd::MAX_HERD_BUCKETS`). */
const ROUND_BUCKETS = 100_000;
/** The most buckets the page holds for one herd, every round together. */
const PAGE_BUCKETS = 400_000;

/**
 * How far each round can spread: every job's delay for retry i lies in
 * [minMs, maxMs] of the schedule's row i, so arrival r lies within the sum
 * of those ranges up to r.
 */
function spreads(policy, retries) {
  let sum = 0;
  return policy.schedule(retries).map((r) => (sum += r.maxMs - r.minMs));
}

/** The finest width of WIDTHS in which every entry's herd fits. */
export function bucketFor(entries, retries) {
  let width = WIDTHS[0];
  for (const { policy } of entries) {
    const s = spreads(policy, retries);
    const widest = Math.max(0, ...s);
    const total = s.reduce((a, b) => a + b, 0);
    const fits = (w) => widest / w + 2 < ROUND_BUCKETS && total / w + 2 * s.length < PAGE_BUCKETS;
    width = Math.max(width, WIDTHS.find(fits) ?? Math.ceil(Math.max(widest / (ROUND_BUCKETS - 2), total / PAGE_BUCKETS)));
  }
  return width;
}

/** Every round's buckets added up: arrivals per absolute bucket, and the busiest one. */
export function analyse(herd) {
  const B = herd.bucketMs;
  const totals = new Map();
  for (const r of herd.rounds) {
    const base = r.startMs / B;
    r.counts.forEach((c, i) => { if (c) totals.set(base + i, (totals.get(base + i) ?? 0) + c); });
  }
  let peak = 0;
  let at = 0;
  for (const [i, c] of totals) if (c > peak || (c === peak && i < at)) { peak = c; at = i; }
  const order = [...totals.keys()].sort((a, b) => a - b);
  return { B, totals, order, peakCount: peak, peakRate: (peak * 1000) / B, peakAtMs: at * B };
}

/** Runs each policy's herd in the engine with one bucket width; the results and the time each call took. */
export function simulate(entries, jobs, retries) {
  const bucketMs = bucketFor(entries, retries);
  return entries.map(({ name, policy }) => {
    const t0 = performance.now();
    const herd = policy.herd(jobs, retries, bucketMs);
    const ms = performance.now() - t0;
    return { name, herd, ms, stats: analyse(herd) };
  });
}

/** Round n's colour, the same in every chart. */
export function colour(round, of) {
  return `hsl(${Math.round((210 + (round - 1) * (300 / Math.max(1, of))) % 360)} 65% 50%)`;
}

/** Round r's count in absolute bucket i. */
function countAt(herd, r, i) {
  return r.counts[i - r.startMs / herd.bucketMs] ?? 0;
}

/** The buckets to draw: per pixel column, the busiest bucket in it. */
function busiest(stats, x) {
  const out = [];
  for (const i of stats.order) {
    const c = stats.totals.get(i);
    const px = Math.floor(x(i * stats.B));
    const last = out[out.length - 1];
    if (last && last.px === px) {
      if (c > last.c) Object.assign(last, { i, c });
    } else out.push({ px, i, c });
  }
  return out;
}

function bars(svg, { herd, stats }, x, y, of) {
  const g = el("g", { class: "bars" }, svg);
  for (const { i, c } of busiest(stats, x)) {
    const x0 = x(i * stats.B);
    const w = Math.max(1, x((i + 1) * stats.B) - x0);
    const bar = el("g", { class: "bar", "data-at": i * stats.B, "data-count": c, "data-rate": (c * 1000) / stats.B }, g);
    let base = 0;
    for (const r of herd.rounds) {
      const n = countAt(herd, r, i);
      if (!n) continue;
      const y0 = y(((base + n) * 1000) / stats.B);
      const y1 = y((base * 1000) / stats.B);
      el("rect", { x: x0, width: w, y: y0, height: Math.max(0.8, y1 - y0), fill: colour(r.retryNumber, of), "data-round": r.retryNumber, "data-count": n }, bar);
      base += n;
    }
  }
}

function peakMark(svg, stats, x, y, width) {
  const px = x(stats.peakAtMs + stats.B / 2);
  const py = y(stats.peakRate);
  const g = el("g", { class: "peak", "data-rate": stats.peakRate, "data-at": stats.peakAtMs }, svg);
  el("path", { d: `M${px - 5},${py - 9} L${px + 5},${py - 9} L${px},${py - 2} Z`, fill: "#c0392b" }, g);
  const text = `peak ${count(stats.peakRate)}/s at ${human(stats.peakAtMs)}`;
  const right = px > width / 2;
  label(g, px + (right ? -8 : 8), Math.max(11, py - 4), text, { "text-anchor": right ? "end" : "start", fill: "#c0392b" });
}

function legend(box, herd, of) {
  const ul = document.createElement("ul");
  ul.className = "legend";
  for (const r of herd.rounds) {
    const li = document.createElement("li");
    li.dataset.round = r.retryNumber;
    li.title = `retry ${r.retryNumber}: ${count(r.jobs)} jobs between ${human(r.firstMs)} and ${human(r.lastMs)}`;
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = colour(r.retryNumber, of);
    li.append(sw, `retry ${r.retryNumber}`);
    ul.appendChild(li);
  }
  box.appendChild(ul);
}

function drawOne(parent, result, { x, y, width, jobs, of }) {
  const { name, herd, ms, stats } = result;
  const box = document.createElement("div");
  box.className = "herd-chart";
  Object.assign(box.dataset, { name, peak: stats.peakRate, peakCount: stats.peakCount, peakAt: stats.peakAtMs, bucketMs: stats.B });
  const h3 = document.createElement("h3");
  const pct = ((stats.peakCount / jobs) * 100).toFixed(1);
  h3.textContent = herd.rounds.length
    ? `${name}: peak ${count(stats.peakRate)} arrivals/s (${count(stats.peakCount)} in one ${human(stats.B)} bucket, ${pct}% of the jobs) ` +
      `${human(stats.peakAtMs)} after the failure · ${herd.rounds.length} rounds · engine ${ms.toFixed(0)} ms`
    : `${name}: never retries, so no herd comes back`;
  box.appendChild(h3);
  const svg = sized(el("svg", { role: "img", "aria-label": `${name}: arrivals per second` }), width, H);
  box.appendChild(svg);
  for (const t of ticks(y, { durations: false, n: 4 })) {
    el("line", { x1: M.left, x2: width - M.right, y1: y(t), y2: y(t), stroke: "#eef0f2" }, svg);
    label(svg, M.left - 4, y(t) + 4, `${count(t)}/s`, { "text-anchor": "end" });
  }
  label(svg, 4, 12, `arrivals per second (counted in ${human(stats.B)} buckets)`);
  bars(svg, result, x, y, of);
  if (herd.rounds.length) peakMark(svg, stats, x, y, width);
  for (const t of ticks(x)) {
    el("line", { x1: x(t), x2: x(t), y1: H - M.bottom, y2: H - M.bottom + 4, stroke: "#999" }, svg);
    label(svg, x(t), H - M.bottom + 16, human(t), { "text-anchor": "middle", class: "tick" });
  }
  label(svg, width - M.right, H - 2, x.log ? "time after the failure (log)" : "time after the failure", { "text-anchor": "end", class: "axis-name" });
  legend(box, herd, of);
  parent.appendChild(box);
}

/** Draws `results` (from `simulate`) into `container` at its width: one time axis and one rate axis for all. */
export function drawHerd(container, results, { jobs, log }) {
  container.replaceChildren();
  const width = widthOf(container);
  const arrivals = results.flatMap((r) => r.herd.rounds.flatMap((d) => [d.firstMs, d.lastMs + r.herd.bucketMs]));
  const lo = Math.max(50, (arrivals.length ? Math.min(...arrivals) : 1000) / 1.5);
  const hi = Math.max(lo * 2, ...arrivals);
  const x = scale(log, log ? lo : 0, hi, M.left, width - M.right);
  const top = Math.max(1, ...results.map((r) => r.stats.peakRate)) * 1.12;
  const y = scale(false, 0, top, H - M.bottom, M.top);
  const of = Math.max(1, ...results.map((r) => r.herd.rounds.length));
  for (const r of results) drawOne(container, r, { x, y, width, jobs, of });
}

/** Simulates and draws every entry; returns the results and timings (engine and drawing, ms). */
export function renderHerd(container, entries, { jobs, retries, log }) {
  const t0 = performance.now();
  const results = simulate(entries, jobs, retries);
  const t1 = performance.now();
  drawHerd(container, results, { jobs, log });
  const t2 = performance.now();
  return { engineMs: t1 - t0, drawMs: t2 - t1, results };
}
