// Small helpers for the page's SVG charts: elements, scales, ticks and
// durations in words. Presentation only: every number drawn comes from the
// engine.

const NS = "http://www.w3.org/2000/svg";

/** A new SVG element with `attrs`, appended to `parent` when given. */
export function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

/** A text element. */
export function label(parent, x, y, text, attrs = {}) {
  const t = el("text", { x, y, ...attrs }, parent);
  t.textContent = text;
  return t;
}

/** Round durations for the ticks of a log axis (ms). */
const NICE_MS = [1, 10, 100, 1e3, 1e4, 6e4, 6e5, 36e5, 216e5, 864e5, 6048e5, 2592e6, 31536e6];

/** `850ms`, `1.5s`, `42s`, `5m 20s`, `1h 5m`, `2d 3h`. */
export function human(ms) {
  if (ms == null) return "—";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000 && ms % 1000 !== 0) return `${(ms / 1000).toFixed(1)}s`;
  const units = [[864e5, "d"], [36e5, "h"], [6e4, "m"], [1e3, "s"]];
  for (let i = 0; i < units.length; i++) {
    const [u, n] = units[i];
    if (ms >= u) {
      const whole = Math.floor(ms / u);
      const next = units[i + 1];
      const rest = next ? Math.floor((ms % u) / next[0]) : 0;
      return rest ? `${whole}${n} ${rest}${next[1]}` : `${whole}${n}`;
    }
  }
  return `${ms}ms`;
}

/**
 * A scale from [lo, hi] onto [from, to] (pixels), linear or log; values
 * outside are clamped. A log scale needs lo > 0.
 */
export function scale(log, lo, hi, from, to) {
  const f = log
    ? (x) => (Math.log(Math.max(x, lo)) - Math.log(lo)) / (Math.log(hi) - Math.log(lo) || 1)
    : (x) => (x - lo) / (hi - lo || 1);
  const s = (x) => from + Math.min(1, Math.max(0, f(x))) * (to - from);
  s.log = log;
  s.lo = lo;
  s.hi = hi;
  return s;
}

/** Tick values for a duration axis: round durations (log) or ~5 steps (linear). */
export function ticks(s) {
  if (s.log) return NICE_MS.filter((t) => t >= s.lo && t <= s.hi);
  const raw = (s.hi - s.lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((m) => m >= raw) || mag;
  const out = [];
  for (let t = Math.ceil(s.lo / step) * step; t <= s.hi; t += step) out.push(t);
  return out;
}

/** A left or right axis of durations at x = `at`, for the vertical scale `s`. */
export function yAxis(svg, s, at, side, width) {
  for (const t of ticks(s)) {
    const y = s(t);
    el("line", { x1: at, x2: side === "left" ? at + width : at - 4, y1: y, y2: y, stroke: side === "left" ? "#eef0f2" : "#ccc" }, svg);
    label(svg, side === "left" ? at - 4 : at + 4, y + 4, human(t), { "text-anchor": side === "left" ? "end" : "start" });
  }
}
