// The schedule view: a table per retry and a chart of delay per retry (the
// min–max jitter band, the cap, the delays drawn for one job id, the
// cumulative time on the right axis). Rows come from `policy.schedule`.

import { el, label, human, scale, yAxis, sized, widthOf, UNBOUNDED } from "./svg.js";

const M = { left: 58, right: 62, top: 40, bottom: 34 };

/** The cap to draw: a plain policy's max_interval (none when it has no cap), a preset's where its rows were capped. */
function capOf(policy, rows) {
  if (policy.presetSystem === null) return policy.maxIntervalMs >= UNBOUNDED ? null : policy.maxIntervalMs;
  const capped = rows.filter((r) => r.cappedMs < r.rawMs).map((r) => r.cappedMs);
  return capped.length ? Math.max(...capped) : null;
}

function table(tbody, rows) {
  tbody.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement("tr");
    const range = r.minMs === r.maxMs ? human(r.minMs) : `${human(r.minMs)} – ${human(r.maxMs)}`;
    const cells = [r.attempt, r.retryNumber, human(r.rawMs), human(r.cappedMs), range, human(r.delayMs), human(r.cumulativeMs)];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
}

/** The key above the plot, wrapped onto two lines when the chart is narrow. */
function key(svg, W) {
  const items = [
    ["rect", { width: 12, height: 9, y: -8, fill: "#b9d4f1" }, "jitter band (min–max)", 150],
    ["circle", { r: 3.5, cy: -4, cx: 6, fill: "#1f5fa8" }, "delay drawn for the job id", 175],
    ["line", { x1: 0, x2: 14, y1: -4, y2: -4, stroke: "#e0a020", "stroke-width": 1.5 }, "cumulative (right axis)", 165],
  ];
  let x = 4;
  let y = 14;
  for (const [shape, attrs, text, w] of items) {
    if (x + w > W) { x = 4; y += 14; }
    const g = el("g", { transform: `translate(${x}, ${y})`, class: "key" }, svg);
    el(shape, attrs, g);
    label(g, 18, 0, text);
    x += w;
  }
}

function chart(svg, rows, cap, log, W) {
  const H = W < 500 ? 260 : 320;
  sized(svg, W, H);
  const n = rows.length;
  const step = (W - M.left - M.right) / n;
  const x = (i) => M.left + (i + 0.5) * step;
  const values = rows.flatMap((r) => [r.minMs, r.maxMs, r.delayMs]).concat(cap ?? []);
  const positive = values.filter((v) => v > 0);
  const hi = Math.max(1, ...values);
  const lo = Math.max(1, Math.min(...positive, hi) / 1.5);
  const useLog = log && hi / lo > 3;
  const y = scale(useLog, useLog ? lo : 0, hi * 1.05, H - M.bottom, M.top);
  const cum = rows.map((r) => r.cumulativeMs);
  const cumLo = Math.max(1, Math.min(...cum) / 1.5);
  const y2 = scale(useLog && Math.max(...cum) / cumLo > 3, useLog ? cumLo : 0, Math.max(1, ...cum) * 1.05, H - M.bottom, M.top);
  yAxis(svg, y, M.left, "left", W - M.left - M.right);
  yAxis(svg, y2, W - M.right, "right");
  const every = Math.ceil(n / Math.max(4, Math.floor((W - M.left - M.right) / 28)));
  rows.forEach((r, i) => {
    if (i % every === 0 || i === n - 1) label(svg, x(i), H - M.bottom + 14, r.retryNumber, { "text-anchor": "middle" });
  });
  label(svg, M.left + (W - M.left - M.right) / 2, H - 4, `retry number · delay on a ${useLog ? "log" : "linear"} scale`, { "text-anchor": "middle" });
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
  key(svg, W);
  return useLog;
}

/**
 * Draws the schedule of `policy` for `retries` retries with jitter key
 * `key`; a policy that never retries draws nothing and says so. Returns
 * the rows (for redrawing at another width).
 */
export function renderSchedule(policy, { retries, key, log }, view) {
  if (policy.maxRetries === 0) {
    view.svg.replaceChildren();
    view.svg.setAttribute("height", 0);
    view.tbody.replaceChildren();
    view.caption.textContent = `This policy never retries (max_attempts ${policy.maxAttempts}): the first failure is final.`;
    view.caption.dataset.retries = "0";
    return [];
  }
  const rows = policy.schedule(retries, { key });
  drawSchedule(policy, rows, { key, log }, view);
  return rows;
}

/** Draws `rows` (from `renderSchedule`) at the chart's current width. */
export function drawSchedule(policy, rows, { key, log }, { svg, tbody, caption }) {
  if (!rows.length) return;
  const cap = capOf(policy, rows);
  table(tbody, rows);
  const usedLog = chart(svg, rows, cap, log, widthOf(svg.parentElement));
  const last = rows[rows.length - 1];
  const n = rows.length === 1 ? "1 retry" : `${rows.length} retries`;
  const more = policy.maxAttempts >= Number.MAX_SAFE_INTEGER ? " (the policy retries without limit)" : "";
  caption.textContent = `${n} drawn for job id "${key}"${more} (${usedLog ? "log" : "linear"} scale); ` +
    `the last one ${human(last.cumulativeMs)} after the first failure.`;
  caption.dataset.retries = String(rows.length);
}
