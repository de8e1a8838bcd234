// The boundary api.js speaks to the wasm module, spoken again here for the
// tests that check the raw exports against the API: `__run(op, handle,
// len)` reads 8 numbers from the buffer at `__scratch(8, 2)` and
// length-prefixed UTF-8 texts from the text buffer (`__io`), and leaves its
// result there, JSON text or an error `[code, message, field, fault
// message, …]`; an operation that answers a number (a handle, a delay, …)
// leaves it in the first of the 8 numbers instead (see `call` in
// bindings-wasm/src/lib.rs). Written from the documented format, not
// copied from api.js, so that a drift between the two shows.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// The glue module api.js imports (the same instance, already initialised
// once the package is imported). Not in the package's exports map, so it is
// imported by file URL.
export const glue = await import(
  new URL("./ojs_retry_wasm.js", pathToFileURL(createRequire(import.meta.url).resolve("ojs-retry-wasm/package.json")))
);
await import("ojs-retry-wasm");
/** The instance's exports (raw `__delayU` / `__delayS`, `memory`). */
export const fast = glue.initSync();

/** The raw result of operation `op`: `{ ok: text, number }` or `{ error: parts }`. */
export function runRaw(op, h, nums, texts) {
  const args = new Float64Array(fast.memory.buffer, glue.__scratch(8, 2), 8);
  args.fill(0);
  nums.forEach((x, i) => (args[i] = x));
  const parts = [];
  for (const t of texts) {
    const bytes = new TextEncoder().encode(t);
    const len = new Uint8Array(new Uint32Array([bytes.length]).buffer);
    parts.push(len, bytes);
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const at = glue.__io(total);
  let off = at;
  for (const p of parts) {
    new Uint8Array(fast.memory.buffer, off, p.length).set(p);
    off += p.length;
  }
  const r = glue.__run(op, h, total);
  const len = r < 0 ? -r - 1 : r;
  const text = new TextDecoder().decode(new Uint8Array(fast.memory.buffer, glue.__io(0), len));
  const number = new Float64Array(fast.memory.buffer, glue.__scratch(8, 2), 8)[0];
  return r < 0 ? { error: JSON.parse(text) } : { ok: text, number };
}

/** Operation `op`'s text, or its error thrown as the API throws it. */
export function run(op, h, nums = [], texts = []) {
  return outcome(runRaw(op, h, nums, texts)).ok;
}

/** Operation `op`'s number, or its error thrown as the API throws it. */
export function runNumber(op, h, nums = [], texts = []) {
  return outcome(runRaw(op, h, nums, texts)).number;
}

function outcome(r) {
  if (r.error) {
    const [code, message, ...rest] = r.error;
    const err = new Error(message);
    err.code = code;
    err.faults = [];
    for (let i = 0; i < rest.length; i += 2) err.faults.push({ field: rest[i], message: rest[i + 1] });
    err.field = err.faults[0]?.field ?? "";
    throw err;
  }
  return r;
}

/** A policy registered through the full route (JSON text), by handle. */
export const makePolicy = (doc) => runNumber(0, 0, [], [typeof doc === "string" ? doc : JSON.stringify(doc)]);
/** The canonical text of the policy behind `h` (or its handle error). */
export const policyText = (h) => run(2, h, [10]);
/** `policy.delay(n, u)` through the full route, by handle. */
export const policyDelay = (h, n, u) => runNumber(3, h, [n, 0, u]);

/**
 * Runs `body` in a child Node with --expose-gc, where `RetryPolicy`,
 * `RetryState`, `Reservation`, `glue`, `live()` (the registry's taken
 * slots) and `collect(target)` (GC until at most `target` are taken) are
 * in scope and `body` fills the object `out`; returns `out` as the child
 * wrote it.
 */
export function inChild(body) {
  const code = `
    import { RetryPolicy, RetryState, Reservation } from "ojs-retry-wasm";
    const { glue } = await import("./wire.mjs");
    const live = () => glue.__livePolicies();
    async function collect(target) {
      for (let i = 0; i < 50 && live() > target; i++) {
        globalThis.gc();
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    const out = {};
    ${body}
    process.stdout.write(JSON.stringify(out));
  `;
  const here = dirname(fileURLToPath(import.meta.url));
  const r = spawnSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", code], { cwd: here, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}
