// The schedule view: a table per retry and a chart of delay per retry (the
// min–max jitter band, the cap, the delays drawn for one job id, the
// cumulative time on the right axis). Rows come from `policy.schedule`.

import { el, label, human, scale, yAxis } from "./svg.js";

const W = 900;
const H = 320;
const M = { left: 64, right: 70, top: 26, bottom: 34 };

/** The cap to draw: a plain policy's max_interval, a preset's where its rows were capped. */
function capOf(policy, rows) {
  if (policy.presetSystem === null) return policy.maxIntervalMs;
  const capped = rows.filter((r) => r.cappedMs < r.rawMs).map((r) => r.cappedMs);
  return capped.length ? Math.max(...capped) : null;
}

function table(tbody, rows) {
  tbody.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement("tr");
    const cells = [r.attempt, r.retryNumber, human(r.rawMs), human(r.cappedMs), `${human(r.minMs)} – ${human(r.maxMs)}`, human(r.delayMs), human(r.cumulativeMs)];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
}

function chart(svg, rows, cap, log) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const n = rows.length;
  const step = (W - M.left - M.right) / n;
  const x = (i) => M.left + (i + 0.5) * step;
  const values = rows.flatMap((r) => [r.minMs, r.maxMs, r.delayMs]).concat(cap ?? []);
  const positive = values.filter((v) => v > 0);
  const hi = Math.max(1, ...values);
  const lo = Math.max(1, Math.min(...positive) / 1.5);
  const useLog = log && hi / lo > 3;
  const y = scale(useLog, useLog ? lo : 0, hi * 1.05, H - M.bottom, M.top);
  const cum = rows.map((r) => r.cumulativeMs);
  const cumLo = Math.max(1, Math.min(...cum) / 1.5);
  const y2 = scale(useLog, useLog ? cumLo : 0, Math.max(1, ...cum) * 1.05, H - M.bottom, M.top);
  yAxis(svg, y, M.left, "left", W - M.left - M.right);
  yAxis(svg, y2, W - M.right, "right");
  const every = Math.ceil(n / 25);
  rows.forEach((r, i) => {
    if (i % every === 0 || i === n - 1) label(svg, x(i), H - M.bottom + 14, r.retryNumber, { "text-anchor": "middle" });
  });
  label(svg, M.left + (W - M.left - M.right) / 2, H - 4, "retry number", { "text-anchor": "middle" });
  label(svg, 4, 14, `delay (${useLog ? "log" : "linear"})`);
  label(svg, W - 4, 14, "cumulative", { "text-anchor": "end", fill: "#8a5a00" });
  const band = el("g", { class: "band" }, svg);
  rows.forEach((r, i) => {
    const top = y(r.maxMs);
    el("rect", { x: x(i) - step * 0.3, width: step * 0.6, y: top, height: Math.max(1.5, y(r.minMs) - top), fill: "#b9d4f1", "data-retry": r.retryNumber }, band);
  });
  if (cap !== null) {
    el("line", { class: "cap", x1: M.left, x2: W - M.right, y1: y(cap), y2: y(cap), stroke: "#d2452f", "stroke-dasharray": "6 4" }, svg);
    label(svg, M.left + 4, y(cap) - 4, `cap ${human(cap)}`, { fill: "#d2452f" });
  }
  el("polyline", { class: "cumulative", points: rows.map((r, i) => `${x(i)},${y2(r.cumulativeMs)}`).join(" "), fill: "none", stroke: "#e0a020", "stroke-width": 1.5 }, svg);
  const drawn = el("g", { class: "drawn" }, svg);
  rows.forEach((r, i) => {
    const c = el("circle", { cx: x(i), cy: y(r.delayMs), r: Math.min(4, Math.max(2, step / 4)), fill: "#1f5fa8", "data-retry": r.retryNumber, "data-ms": r.delayMs }, drawn);
    el("title", {}, c).textContent = `retry ${r.retryNumber}: ${human(r.delayMs)}`;
  });
  const key = el("g", { transform: `translate(${M.left + 90}, 12)` }, svg);
  el("rect", { x: 0, y: -8, width: 12, height: 9, fill: "#b9d4f1" }, key);
  label(key, 16, 0, "jitter band (min–max)");
  el("circle", { cx: 150, cy: -4, r: 3.5, fill: "#1f5fa8" }, key);
  label(key, 158, 0, "delay drawn for the job id");
  el("line", { x1: 320, x2: 340, y1: -4, y2: -4, stroke: "#e0a020", "stroke-width": 1.5 }, key);
  label(key, 344, 0, "cumulative (right axis)");
  return useLog;
}

/** Draws the schedule of `policy` for `retries` retries with jitter key `key`. */
export function renderSchedule(policy, { retries, key, log }, { svg, tbody, caption }) {
  const rows = policy.schedule(retries, { key });
  const cap = capOf(policy, rows);
  table(tbody, rows);
  const usedLog = chart(svg, rows, cap, log);
  const last = rows[rows.length - 1];
  caption.textContent = `${rows.length} retries drawn for job id "${key}" (${usedLog ? "log" : "linear"} scale); ` +
    `the last one ${human(last.cumulativeMs)} after the first failure.`;
  return rows;
}
