// Small helpers for the page's SVG charts: elements, scales, ticks and
// durations in words. Presentation only: every number drawn comes from the
// engine.

const NS = "http://www.w3.org/2000/svg";

/** The engine's largest duration and count (2^53 − 1): what a policy without a cap or a limit holds. */
export const UNBOUNDED = Number.MAX_SAFE_INTEGER;

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

/** An empty SVG sized to `width` × `height` CSS pixels, drawn 1:1 (text keeps its size at any width). */
export function sized(svg, width, height) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  return svg;
}

/** The width a chart gets: its container's content width. */
export function widthOf(container, min = 260) {
  return Math.max(min, Math.floor(container.clientWidth));
}

/** A cap in words: `5m`, or "no cap" for the engine's largest duration. */
export function capText(ms) {
  return ms >= UNBOUNDED ? "no cap" : human(ms);
}

/** `850ms`, `1.5s`, `42s`, `5m 20s`, `1h 5m`, `2d 3h`; `∞` where a formula saturates at the engine's largest duration. */
export function human(ms) {
  if (ms == null) return "—";
  if (ms >= UNBOUNDED) return "∞";
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
 * outside are clamped. A log scale needs lo > 0. `invert` maps back.
 */
export function scale(log, lo, hi, from, to) {
  const f = log
    ? (x) => (Math.log(Math.max(x, lo)) - Math.log(lo)) / (Math.log(hi) - Math.log(lo) || 1)
    : (x) => (x - lo) / (hi - lo || 1);
  const s = (x) => from + Math.min(1, Math.max(0, f(x))) * (to - from);
  s.invert = (px) => {
    const u = (px - from) / (to - from || 1);
    return log ? Math.exp(Math.log(lo) + u * (Math.log(hi) - Math.log(lo))) : lo + u * (hi - lo);
  };
  Object.assign(s, { log, lo, hi, from, to });
  return s;
}

/** Round durations (ms), finest first: the ticks of duration axes. */
const DURATIONS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5,
  18e5, 36e5, 72e5, 216e5, 432e5, 864e5, 1728e5, 6048e5, 2592e6, 7776e6, 31536e6, 31536e7, 31536e8];
/** Each about ten times the last: a log axis's ticks when they are enough. */
const DECADES = [1, 10, 100, 1e3, 1e4, 6e4, 6e5, 36e5, 216e5, 864e5, 6048e5, 2592e6, 31536e6, 31536e7, 31536e8];

/** Round numbers 1, 2, 5 × 10^k for a count axis. */
function niceStep(raw) {
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  return [1, 2, 5, 10].map((m) => m * mag).find((m) => m >= raw) ?? mag;
}

/**
 * Tick values: on a log axis, round durations (the decades, or finer ones
 * when fewer than three decades fall inside, and at least both ends); on a
 * linear one about `n` steps of a round size (whole milliseconds when
 * `durations`).
 */
export function ticks(s, { durations = true, n = 5 } = {}) {
  if (s.log) {
    const inside = (list) => list.filter((t) => t >= s.lo && t <= s.hi);
    let t = inside(DECADES);
    if (t.length < 3) t = inside(DURATIONS);
    if (t.length > 8) t = t.filter((_, i) => i % Math.ceil(t.length / 8) === 0);
    if (t.length < 2) t = [Math.ceil(s.lo), Math.floor(s.hi)].filter((v, i, a) => a.indexOf(v) === i);
    return t;
  }
  const raw = (s.hi - s.lo) / n;
  let step = durations ? DURATIONS.find((d) => d >= raw) ?? niceStep(raw) : niceStep(raw);
  if (durations) step = Math.max(1, step);
  const out = [];
  for (let t = Math.ceil(s.lo / step) * step; t <= s.hi + 1e-9; t += step) out.push(t);
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

/** `12 345` with a thin space, for counts and rates. */
export function count(n) {
  return Math.round(n).toLocaleString("en");
}
