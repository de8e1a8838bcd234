// The public API of ojs-retry-wasm. Every export of the wasm module takes
// and returns numbers only, so wasm-bindgen wraps none of them in a shim
// (externref tables, Result unpacking, JS objects built from Rust): this
// module does the JS side of the boundary.
//  - Arguments are checked here, with the messages and codes the core
//    uses, and JS values given as JSON documents (policy layers, state
//    documents, error details) become JSON text here (`jsonText`), by the
//    rules the binding always had: plain objects, arrays, finite numbers,
//    strings, booleans and BigInts within 64 bits; anything else a coded
//    fault naming its path.
//  - Text and numbers cross through a buffer in wasm memory (`call`): the
//    arguments of an operation are written there, `__run` runs it in Rust
//    (through the core's text entry points) and leaves its result there as
//    JSON text, or a core error as `[code, message, field, fault message,
//    …]`, which `errorFrom` turns into the JS Error the API throws (with
//    `code`, `field` and `faults`).
//  - `RetryPolicy`, `RetryState` and `Reservation` are plain JS classes:
//    each instance holds a handle (a number) naming its object in the
//    module's registry (bindings-wasm/src/registry.rs), given back when the
//    instance is collected (a FinalizationRegistry) or at once by `free()`.
//  - An omitted `now` is `Date.now()`; an omitted jitter source a fresh
//    53-bit sample `k / 2^53` from `crypto.getRandomValues` (what the core's
//    OS entropy source draws), passed as `{ u }` (read from a pool in the
//    module: see `entropySample`).
//  - The hot paths keep exports of their own: `new RetryPolicy(text)`
//    writes the text into wasm memory with the host's TextEncoder and
//    parses it there (`__parse`), `new RetryPolicy()` is `__defaultPolicy`;
//    `delay(n)`, `delay(n, u)`, `delay(n, { u })` and
//    `delay(n, { seed: number })` call `__delayU` / `__delayS`; `delays(ns, { u } | { seed })` goes through a
//    scratch buffer of numbers (`__delays`); number getters are
//    `__policyNum` / `__objNum`. Anything else, and any invalid number,
//    takes the full route, which reports the error. Decisions come back as
//    numbers and names, built into objects here (faster than JSON.parse),
//    schedules as numbers.
// Each entry point (node.js, browser.js, workerd.js) initialises the wasm
// module first, then re-exports this module (whose top level therefore runs
// before the module is initialised: it defines classes and calls no
// export).
import {
  __io as ioAt,
  __run as runOp,
  __parse as parseText,
  __defaultPolicy as defaultPolicy,
  __policyNum as policyNum,
  __objNum as objectNum,
  __release as releaseHandle,
  __delays as delaysInPlace,
  __scratch as scratchAddress,
  initSync,
} from "./ojs_retry_wasm.js";

// The instance's exports (initialised by then: `initSync()` returns them
// without instantiating anything): its memory, and `__delayU`, `__delayS`
// and `__sample`, raw exports that wasm-bindgen's JS does not wrap
// (bindings-wasm/src/lib.rs says why), bound on the first call.
let wasmMemory = null;
const memory = () => (wasmMemory ??= initSync().memory);
let delayU = (h, n, u) => {
  bindRaw();
  return delayU(h, n, u);
};
let delayS = (h, n, seed) => {
  bindRaw();
  return delayS(h, n, seed);
};
function bindRaw() {
  const x = initSync();
  delayU = x.__delayU;
  delayS = x.__delayS;
  takeSample = x.__sample;
}

// --- errors ------------------------------------------------------------------

const INVALID_ARGUMENT = "validation.invalid_argument";
/** The error codes of a fault in each kind of document (the core's `Document`). */
const POLICY = "validation.retry_policy_invalid";
const STATE = "validation.state_invalid";
const ARGUMENT = INVALID_ARGUMENT;
const MAX_DEPTH = 64;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const LONE_SURROGATE = "expected well-formed Unicode text, found a string with a lone surrogate";

/** An error as the core renders it: `code: field: message` (no field: `code: message`). */
function coded(code, faults) {
  const text = faults.map(([f, m], i) => (i === 0 ? " " : "; ") + (f === "" ? "" : `${f}: `) + m).join("");
  const err = new Error(code + ":" + text);
  err.code = code;
  err.field = faults.length > 0 ? faults[0][0] : "";
  err.faults = faults.map(([field, message]) => ({ field, message }));
  return err;
}

/** A fault at `path` of a document whose faults have `code`. */
function fault(code, path, message) {
  return coded(code, [[path, message]]);
}

function argError(field, message) {
  return fault(INVALID_ARGUMENT, field, message);
}

/** A value nested deeper than MAX_DEPTH: the fault names the top-level field. */
function tooDeep(code, path) {
  return fault(code, path.split(/[.[]/)[0], `expected a JSON value nested at most ${MAX_DEPTH} levels deep (is it cyclic?)`);
}

/** The JS Error of a core error as `__run` encodes it. */
function errorFrom(parts) {
  const [code, message, ...rest] = parts;
  const faults = [];
  for (let i = 0; i + 1 < rest.length; i += 2) faults.push({ field: rest[i], message: rest[i + 1] });
  const err = new Error(message);
  err.code = code;
  err.field = faults.length > 0 ? faults[0].field : "";
  err.faults = faults;
  return err;
}

// --- the boundary ------------------------------------------------------------

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Views on wasm memory, remade when a memory growth detached them (length
// 0) or the buffer they show moved: the 8 numbers of `__run` (allocated in
// Rust on first use, never moved), and its text buffer (which moves when
// it grows: `__io` gives its address).
const ARG_NUMS = 8;
let argNums = null;
function argView() {
  if (argNums === null || argNums.length === 0) {
    const at = scratchAddress(ARG_NUMS, 2);
    if (at < 0) throw argError("", "malformed call from api.js");
    argNums = new Float64Array(memory().buffer, at, ARG_NUMS);
  }
  return argNums;
}
let bytesView = new Uint8Array(0);
function bytes() {
  if (bytesView.length === 0) bytesView = new Uint8Array(memory().buffer);
  return bytesView;
}

/**
 * Runs operation `op` (see `call` in bindings-wasm/src/lib.rs) on `h`, the
 * numbers `nums` (at most 8) and the strings `texts`; returns its result as
 * text (JSON unless the operation says otherwise), or throws its error.
 * Called only once every argument is converted: nothing here runs the
 * caller's code (getters), so nothing can reuse the buffer before the
 * result is read.
 */
function call(op, h, nums, texts) {
  const r = send(op, h, nums, texts);
  const len = r < 0 ? -r - 1 : r;
  const at = ioAt(0);
  const text = utf8(bytes(), at, len);
  if (r < 0) throw errorFrom(JSON.parse(text));
  return text;
}

/** Writes the arguments and runs `op`: `__run`'s answer (see `call`). */
function send(op, h, nums, texts) {
  const a = argView();
  for (let i = 0; i < ARG_NUMS; i++) a[i] = i < nums.length ? nums[i] : 0;
  let cap = 0;
  for (const t of texts) cap += 4 + 3 * t.length;
  const at = ioAt(cap);
  if (at < 0) throw argError("", "malformed call from api.js");
  const mem = bytes();
  let p = at;
  for (const t of texts) {
    const written = encode(t, mem, p + 4);
    mem[p] = written & 0xff;
    mem[p + 1] = (written >>> 8) & 0xff;
    mem[p + 2] = (written >>> 16) & 0xff;
    mem[p + 3] = written >>> 24;
    p += 4 + written;
  }
  return runOp(op, h, p - at);
}

// Short ASCII text is copied by a loop here: the host's TextEncoder and
// TextDecoder cost a native call each (more than the loop below ~64
// characters); other text goes through them.
const SHORT = 64;

/** `t` as UTF-8 into `mem` at `at` (room for 3 bytes per unit): the bytes written. */
function encode(t, mem, at) {
  const n = t.length;
  if (n < SHORT) {
    let i = 0;
    for (; i < n; i++) {
      const c = t.charCodeAt(i);
      if (c >= 0x80) break;
      mem[at + i] = c;
    }
    if (i === n) return n;
  }
  return encoder.encodeInto(t, mem.subarray(at, at + 3 * n)).written;
}

/** The UTF-8 text of `len` bytes of `mem` at `at`. */
function utf8(mem, at, len) {
  if (len < SHORT) {
    let s = "";
    for (let i = 0; i < len; i++) {
      const c = mem[at + i];
      if (c >= 0x80) return decoder.decode(mem.subarray(at, at + len));
      s += String.fromCharCode(c);
    }
    return s;
  }
  return decoder.decode(mem.subarray(at, at + len));
}

/**
 * Runs an operation that answers a decision (`decide`, `recordFailure`,
 * `recordTimeout`) and builds it: numbers in the argument buffer, names and
 * the matched pattern as text (see `decision_text` in
 * bindings-wasm/src/lib.rs). Faster than JSON.parse of the object.
 */
function callDecision(op, h, nums, texts) {
  const r = send(op, h, nums, texts);
  const len = r < 0 ? -r - 1 : r;
  const t = utf8(bytes(), ioAt(0), len);
  if (r < 0) throw errorFrom(JSON.parse(t));
  const a = argView();
  const i1 = t.indexOf("\n");
  const i2 = t.indexOf("\n", i1 + 1);
  const i3 = t.indexOf("\n", i2 + 1);
  const orNull = (x) => (x < 0 ? null : x);
  return {
    action: t.slice(0, i1),
    reason: t.slice(i1 + 1, i2),
    handlerCode: i3 === i2 + 1 ? null : t.slice(i2 + 1, i3),
    matchedPattern: a[5] !== 0 ? t.slice(i3 + 1) : null,
    attempt: a[0],
    timedOut: a[1] !== 0,
    retryNumber: orNull(a[2]),
    delayMs: orNull(a[3]),
    nextRetryAt: orNull(a[4]),
  };
}

/**
 * Runs an operation that answers a number (a new object's handle, a delay,
 * a boolean as 0 or 1, a parsed duration or timestamp, a jitter sample):
 * `__run` leaves it in the first slot of the argument buffer, no text to
 * decode.
 */
function callNumber(op, h, nums, texts) {
  const r = send(op, h, nums, texts);
  if (r < 0) throw errorFrom(JSON.parse(utf8(bytes(), ioAt(0), -r - 1)));
  return argView()[0];
}

/** `call`, its JSON result parsed. */
function callJSON(op, h, nums, texts) {
  return JSON.parse(call(op, h, nums, texts));
}

// The operations of `__run` (the table at `call` in bindings-wasm/src/lib.rs).
const LAYERS = 0;
const PRESET = 1;
const POLICY_GET = 2;
const DELAY = 3;
const SCHEDULE = 4;
const DECIDE = 5;
const STATE_NEW = 6;
const STATE_FROM = 7;
const STATE_GET = 8;
const RECORD_FAILURE = 9;
const RECORD_TIMEOUT = 10;
const RESERVATION_NEW = 11;
const RESERVATION_GET = 12;
const HEARTBEAT = 13;
const IS_EXPIRED = 14;
const EXPIRY = 15;
const MATCHES = 16;
const FIRST_MATCH = 17;
const PARSE_DURATION = 18;
const FORMAT_DURATION = 19;
const FORMAT_TIMESTAMP = 20;
const PARSE_TIMESTAMP = 21;
const JITTER_SAMPLE = 22;
const CHECK_UINT = 23;
const CHECK_CODE = 24;

// --- arguments ---------------------------------------------------------------

/**
 * A string quoted for a message as the core quotes user text
 * (`ojs_retry::error::quote`): escaped as JSON escapes it.
 */
function debugText(s) {
  return JSON.stringify(s);
}

/** What a JS value is, for messages. */
function describe(v) {
  if (v === null) return "null";
  if (v === undefined) return "undefined";
  switch (typeof v) {
    case "string": {
      let out = "";
      let n = 0;
      let more = false;
      for (const c of v) {
        if (n === 40) {
          more = true;
          break;
        }
        // A lone surrogate reads as U+FFFD, as in Rust's copy of the text.
        out += c.length === 1 && c >= "\ud800" && c <= "\udfff" ? "\ufffd" : c;
        n++;
      }
      return `the string ${debugText(more ? out + "..." : out)}`;
    }
    case "number":
      return `the number ${v}`;
    case "boolean":
      return `the boolean ${v}`;
    case "object":
      return Array.isArray(v) ? "an array" : "an object";
    default:
      return `a ${typeof v}`;
  }
}

/** What is not a class instance, for the handle errors. */
function describeHandle(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return `an object (${v.constructor?.name ?? "no prototype"})`;
  return `a ${typeof v}`;
}

/** No lone surrogate in `s` (String.prototype.isWellFormed where the host has it). */
const isWellFormed =
  typeof String.prototype.isWellFormed === "function"
    ? (s) => s.isWellFormed()
    : (s) => {
        for (let i = 0; i < s.length; i++) {
          const c = s.charCodeAt(i);
          if (c < 0xd800 || c > 0xdfff) continue;
          const d = c <= 0xdbff && i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
          if (d < 0xdc00 || d > 0xdfff) return false;
          i++;
        }
        return true;
      };

const given = (v) => v !== undefined && v !== null;

/** An integer in 0 ..= 2^53 − 1 given as a JS number. */
function uint(v, field) {
  if (typeof v !== "number") {
    throw argError(field, `expected an integer number between 0 and ${MAX_SAFE}, found ${describe(v)}`);
  }
  // Out of range: the core's error (its message formats the number).
  if (!(v >= 0 && v <= MAX_SAFE && Math.floor(v) === v)) call(CHECK_UINT, 0, [v], [field]);
  return v;
}

/** `now`: the given epoch milliseconds, or `Date.now()`. */
function now(v) {
  return given(v) ? uint(v, "now") : Date.now();
}

/** A well-formed string; a fault of a document with `code` otherwise. */
function docString(v, field, code) {
  if (typeof v !== "string") throw fault(code, field, `expected a string, found ${describe(v)}`);
  if (!isWellFormed(v)) throw fault(code, field, LONE_SURROGATE);
  return v;
}

const string = (v, field) => docString(v, field, ARGUMENT);

function boolean(v, field) {
  if (typeof v !== "boolean") throw argError(field, `expected a boolean, found ${describe(v)}`);
  return v;
}

function strings(v, field) {
  if (!Array.isArray(v)) throw argError(field, `expected an array of strings, found ${describe(v)}`);
  const out = new Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = string(v[i], `${field}[${i}]`);
  return out;
}

/** Plain: its prototype is null or a root prototype (Object.prototype of any realm). */
function isPlain(v) {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * An options object: undefined/null give null; anything but a plain object
 * is an error, and so is a key outside `allowed` (a misspelt option must
 * not be silently ignored).
 */
function options(v, field, allowed) {
  if (!given(v)) return null;
  if (!isPlain(v)) throw argError(field, `expected a plain object, found ${describe(v)}`);
  for (const name of Object.keys(v)) {
    if (!allowed.includes(name)) {
      throw argError(name, `unknown option ${debugText(name)} in ${field}; expected one of: ${allowed.join(", ")}`);
    }
  }
  return v;
}

const TWO_32 = 4294967296;
const U64_MAX = (1n << 64n) - 1n;

/**
 * A jitter source as the numbers `__run` reads (kind, value…) and the texts
 * it needs (a key), or null when omitted: `{u}`, `{seed}` or `{key}`.
 */
function jitter(v) {
  const o = options(v, "jitter", ["u", "seed", "key"]);
  if (o === null) return null;
  const keys = Object.keys(o);
  if (keys.length !== 1) {
    throw argError("jitter", `expected exactly one of {u}, {seed} or {key}, found ${keys.length} keys`);
  }
  const value = o[keys[0]];
  switch (keys[0]) {
    case "u":
      // Range checks ([0, 1), NaN) belong to the core; only the type here.
      if (typeof value !== "number") throw argError("u", `expected a number in [0, 1), found ${describe(value)}`);
      return [0, value];
    case "seed":
      return seed(value);
    default:
      return [2, 0, string(value, "key")];
  }
}

/** A 64-bit seed: an integer number up to 2^53 − 1 or a BigInt below 2^64. */
function seed(v) {
  if (typeof v === "bigint") {
    if (v < 0n || v > U64_MAX) throw argError("seed", "expected a BigInt between 0 and 2^64 - 1 (18446744073709551615)");
    return [1, Number(v >> 32n), Number(v & 0xffffffffn)];
  }
  if (typeof v === "number") {
    uint(v, "seed");
    return [1, Math.floor(v / TWO_32), v % TWO_32];
  }
  throw argError("seed", `expected an integer number up to 2^53 - 1 or a BigInt below 2^64, found ${describe(v)}`);
}

// One fresh sample from the host's entropy: 53 bits `k`, as `u = k / 2^53`
// (exact: the core turns it back into `k`).
// The samples come from a pool in the module (bindings-wasm/src/lib.rs,
// `ENTROPY`) of 8 192 words of `crypto.getRandomValues`, written here a
// pool at a time (64 KiB, the most one call gives): one host call per
// sample cost ~2.4 µs, which made `delay(n)` a hundred times slower than
// `delay(n, u)`; a call per pool costs ~2 ns per sample. Each sample is
// the high 53 bits of one fresh 64-bit word, used once (the module clears
// each word as it reads it). `delay(n)` reads its sample in the module
// (`__delayU` with `u = -1`); everything else takes one here.
const ENTROPY_WORDS = 8192;
let entropyView = null;
let takeSample = () => {
  bindRaw();
  return takeSample();
};
/** A fresh uniform sample `k / 2^53` in [0, 1) from the host's entropy. */
function entropySample() {
  let u = takeSample();
  if (u === -2) {
    refillEntropy();
    u = takeSample();
  }
  return u;
}
// Out of line, so that `entropySample` and `delay` stay small enough to
// inline. The pool is marked fresh only once written: if the host has no
// `crypto` (or it throws), the call throws and the pool stays empty.
function refillEntropy() {
  // A view detaches when the memory grows: then a new one, same address.
  if (entropyView === null || entropyView.length === 0) {
    entropyView = new Uint32Array(memory().buffer, scratchAddress(0, 3), 2 * ENTROPY_WORDS);
  }
  crypto.getRandomValues(entropyView);
  scratchAddress(ENTROPY_WORDS, 3);
}
function entropy() {
  return [0, entropySample()];
}

/** The given jitter source, or a fresh entropy sample. */
const jitterOrEntropy = (v) => jitter(v) ?? entropy();

/** The numbers and texts of a jitter source: appended to `nums` / `texts`. */
function pushJitter(j, nums, texts) {
  if (j[0] === 2) {
    nums.push(2, texts.length);
    texts.push(j[2]);
  } else nums.push(...j);
}

/** A JS number as JSON text read back as the same number (a float, where it is not a safe integer). */
function numberText(x) {
  const s = String(x);
  if (Math.abs(x) <= MAX_SAFE && Number.isInteger(x)) return s;
  // Integral beyond 2^53 prints without a fraction: a float all the same.
  return /[.e]/.test(s) ? s : s + ".0";
}

/**
 * A JS value as the JSON text of the document it stands for (what
 * `JSON.stringify` would keep): object keys whose value is undefined are
 * omitted; NaN, infinities, functions, symbols, non-plain objects and lone
 * surrogates are faults of the document (`code`) naming the offending
 * path; BigInts become integers. Deeper than MAX_DEPTH (or cyclic): a
 * fault too.
 */
function jsonText(v, path, code, depth = 0) {
  if (depth > MAX_DEPTH) throw tooDeep(code, path);
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "number":
      if (!Number.isFinite(v)) throw fault(code, path, `expected a finite number, found ${v}`);
      return numberText(v);
    case "string":
      if (!isWellFormed(v)) throw fault(code, path, LONE_SURROGATE);
      return JSON.stringify(v);
    case "bigint":
      if (v < -(1n << 63n) || v > U64_MAX) throw fault(code, path, "expected a BigInt between -2^63 and 2^64 - 1");
      return String(v);
    case "object": {
      if (Array.isArray(v)) {
        const parts = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const item = v[i];
          parts[i] = item === undefined ? "null" : jsonText(item, `${path}[${i}]`, code, depth + 1);
        }
        return `[${parts.join(",")}]`;
      }
      if (!isPlain(v)) throw fault(code, path, `expected a plain object, found ${describe(v)}`);
      const parts = [];
      for (const name of Object.keys(v)) {
        if (!isWellFormed(name)) throw fault(code, path, LONE_SURROGATE);
        const item = v[name];
        if (item === undefined) continue;
        const p = path === "" ? name : `${path}.${name}`;
        parts.push(`${JSON.stringify(name)}:${jsonText(item, p, code, depth + 1)}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      throw fault(code, path, `expected a JSON value, found ${describe(v)}`);
  }
}

/** A policy layer: JSON text, or a JS value read as a JSON document. */
function layer(v) {
  if (typeof v === "string") {
    if (!isWellFormed(v)) throw fault(POLICY, "", LONE_SURROGATE);
    return v;
  }
  return jsonText(v, "", POLICY);
}

/** `{historyLimit?}`: the bound, or -1 when not given. */
function historyLimit(v) {
  const o = options(v, "options", ["historyLimit"]);
  const limit = o === null ? undefined : o.historyLimit;
  if (!given(limit)) return -1;
  const n = uint(limit, "history_limit");
  if (n > 0xffffffff) throw argError("history_limit", `expected at most 4294967295 in wasm32, found ${n}`);
  return n;
}

/** `{now?, jitter?}` as numbers (now, then the jitter source) and texts. */
function decideOptions(v, nums, texts) {
  const o = options(v, "options", ["now", "jitter"]);
  if (o === null) {
    nums.push(Date.now());
    pushJitter(entropy(), nums, texts);
  } else {
    nums.push(now(o.now));
    pushJitter(jitterOrEntropy(o.jitter), nums, texts);
  }
}

/** A handler code: checked where it is read (the core's error for a bad one). */
function handlerCode(v) {
  const c = string(v, "code");
  if (c !== "RETRY" && c !== "DISCARD" && c !== "DEAD_LETTER" && c !== "FAIL") call(CHECK_CODE, 0, [], [c]);
  return c;
}

// --- handles -----------------------------------------------------------------

// Collected objects give their registry slot back. Registered without an
// unregister token (a token costs more than the rest of the registration):
// `free()` drops the object at once and the registry keeps its slot until
// this reports the object collected (bindings-wasm/src/registry.rs), so a
// handle never outlives its slot. Without FinalizationRegistry (very old
// hosts), `free()` gives the slot back itself and an unfreed object stays
// in the registry.
const hasFinalizers = typeof FinalizationRegistry !== "undefined";
const collectedPolicies = hasFinalizers ? new FinalizationRegistry((h) => releaseHandle(h, true, 0)) : null;
const collectedObjects = hasFinalizers ? new FinalizationRegistry((h) => releaseHandle(h, true, 1)) : null;

// The handle a factory hands to a constructor (see `adopt`): the
// constructors take no extra argument that callers could forge.
let adopted = -1;
let handleOf;

// The text buffer of `__parse` (TEXT_LEN bytes in wasm memory, allocated
// on first use, never moved) seen through a Uint8Array, remade after a
// memory growth detached it; `null` when it cannot be had.
const TEXT_LEN = 16384;
let textAt = -1;
let textView = null;
function textBuffer() {
  if (textView === null || textView.length === 0) {
    if (textAt < 0) {
      textAt = scratchAddress(TEXT_LEN, 1);
      if (textAt < 0) return null;
    }
    textView = new Uint8Array(memory().buffer, textAt, TEXT_LEN);
  }
  return textView;
}

// A policy from JSON text: its bytes written into wasm memory by the
// host's encoder (one native call) and read there by `__parse`, or -1: the
// full route, which reports the error. The full route also takes text too
// long for the buffer, and any text that is not ASCII (one byte per
// character): the encoder writes U+FFFD for a lone surrogate, which only
// the full route tells apart from a real one, and ASCII text needs no such
// check.
function parsed(text) {
  const buf = textBuffer();
  if (buf === null) return -1;
  const { read, written } = encoder.encodeInto(text, buf);
  return read === text.length && written === read ? parseText(written) : -1;
}

/**
 * An immutable, validated, effective retry policy: a handle (a number)
 * naming the policy in the module's registry, each member an export that
 * takes it.
 */
class RetryPolicy {
  #h;

  /** A partial document (object or JSON text) merged over the defaults. */
  constructor(policy) {
    let h = adopted;
    if (h >= 0) adopted = -1;
    else {
      h = typeof policy === "string" ? parsed(policy) : policy === undefined ? defaultPolicy() : -1;
      if (h < 0) h = callNumber(LAYERS, 0, [], policy === undefined ? [] : [layer(policy)]);
    }
    this.#h = h;
    collectedPolicies?.register(this, h);
  }

  /** Layers merged in order: defaults ← first ← … ← last, then validated. */
  static merge(...layers) {
    return adopt(callNumber(LAYERS, 0, [], layers.map(layer)));
  }

  /** A preset: `system`'s own retry configuration. */
  static preset(system, config) {
    const s = string(system, "system");
    const c = given(config) ? jsonText(config, "preset", POLICY) : "{}";
    return adopt(callNumber(PRESET, 0, [], [s, c]));
  }

  static {
    // One read of the private field, which throws a TypeError for any
    // value without it (not a RetryPolicy: a forged object, a proxy, a
    // clone, a primitive): cheaper than testing `#h in p` first.
    handleOf = (p) => {
      try {
        return p.#h;
      } catch {
        throw argError("policy", `expected a RetryPolicy, found ${describeHandle(p)}`);
      }
    };
  }

  /** Frees the policy now; any later use is a `policy` error. */
  free() {
    releaseHandle(handleOf(this), !hasFinalizers, 0);
  }
}

function adopt(h) {
  adopted = h;
  return new RetryPolicy();
}

/** The handle of a live policy `p`, or its typed error (freed, unknown). */
function livePolicy(p) {
  const h = handleOf(p);
  if (policyNum(h, 0) < 0) call(POLICY_GET, h, [0], []);
  return h;
}

const proto = RetryPolicy.prototype;
const hasOwn = Object.prototype.hasOwnProperty;

/** Defines a method as a class's methods are: writable, configurable, not enumerable. */
function method(cls, name, value) {
  Object.defineProperty(cls.prototype, name, { value, writable: true, configurable: true });
}
/** Defines a getter as a class's getters are. */
function accessor(cls, name, get) {
  Object.defineProperty(get, "name", { value: `get ${name}` });
  Object.defineProperty(cls.prototype, name, { get, configurable: true });
}

// `{ u: number }` → 0, `{ seed: number }` → 1 (the value in `jitterValue`),
// anything else → -1: the full route, which checks and reports. Only what
// the full route accepts as-is qualifies: an object whose prototype is this
// realm's Object.prototype with exactly one own enumerable key (other
// realms, null prototypes and extra keys take the full route).
let jitterValue = 0;
function fastJitter(jitter) {
  if (typeof jitter !== "object" || jitter === null) return -1;
  if (Object.getPrototypeOf(jitter) !== Object.prototype) return -1;
  let name;
  let count = 0;
  for (const k in jitter) {
    if (++count > 1) return -1;
    name = k;
  }
  if (count !== 1 || !hasOwn.call(jitter, name)) return -1;
  if (name === "u") {
    const u = jitter.u;
    if (typeof u !== "number") return -1;
    jitterValue = u;
    return 0;
  }
  if (name === "seed") {
    const seed = jitter.seed;
    if (typeof seed !== "number") return -1;
    jitterValue = seed;
    return 1;
  }
  return -1;
}

method(RetryPolicy, "delay", function delay(retryNumber, jitter_) {
  const h = handleOf(this);
  // The fast exports take the retry number as a wasm i32: any other
  // number (too large, fractional, negative) takes the full route.
  if (typeof retryNumber === "number" && retryNumber === retryNumber >>> 0) {
    let d = -1;
    if (typeof jitter_ === "number") {
      // A negative `u` would read as "no jitter source" there.
      if (jitter_ >= 0) d = delayU(h, retryNumber, jitter_);
    } else if (jitter_ === undefined) {
      d = delayU(h, retryNumber, -1);
      if (d === -2) {
        refillEntropy();
        d = delayU(h, retryNumber, -1);
      }
    } else {
      const kind = fastJitter(jitter_);
      if (kind === 0) {
        if (jitterValue >= 0) d = delayU(h, retryNumber, jitterValue);
      }
      else if (kind === 1) d = delayS(h, retryNumber, jitterValue);
    }
    if (d >= 0) return d;
  }
  return delayFull(this, h, retryNumber, jitter_);
});

// The full `delay`, which checks every argument and reports the first
// problem: out of line, so that the method stays small enough for V8 to
// inline its fast route into callers.
function delayFull(policy, h, retryNumber, jitter_) {
  livePolicy(policy);
  const n = uint(retryNumber, "retry_number");
  const nums = [n];
  const texts = [];
  pushJitter(typeof jitter_ === "number" ? [0, jitter_] : jitterOrEntropy(jitter_), nums, texts);
  return callNumber(DELAY, h, nums, texts);
}

// The scratch buffer of `__delays` (SCRATCH_LEN numbers, allocated in Rust
// on first use, never moved) seen through a Float64Array. Growing the wasm
// memory detaches every view on it (length 0): then a new view is made at
// the same address.
const SCRATCH_LEN = 1024;
let scratchAt = -1;
let scratch = null;
function scratchView() {
  if (scratch === null || scratch.length === 0) {
    if (scratchAt < 0) {
      scratchAt = scratchAddress(SCRATCH_LEN, 0);
      if (scratchAt < 0) return null;
    }
    scratch = new Float64Array(memory().buffer, scratchAt, SCRATCH_LEN);
  }
  return scratch;
}

// Set while the numbers are being copied: reading an array element can run
// JS (getters, proxies) that calls `delays` again, which then takes the full
// route instead of overwriting this call's numbers.
let scratchBusy = false;

// The delays through the scratch buffer, SCRATCH_LEN at a time, or null:
// the caller takes the full route (a non-number entry, or any -1).
function delaysFast(h, kind, value, retryNumbers) {
  const len = retryNumbers.length;
  if (typeof len !== "number") return null;
  const out = new Array(len);
  let start = 0;
  // At least one call, even for no numbers: the jitter is checked there.
  do {
    const n = Math.min(len - start, SCRATCH_LEN);
    let buf = scratchView();
    if (buf === null) return null;
    scratchBusy = true;
    try {
      for (let i = 0; i < n; i++) {
        const x = retryNumbers[start + i];
        if (typeof x !== "number") return null;
        buf[i] = x;
      }
    } finally {
      scratchBusy = false;
    }
    // A getter grew the wasm memory: the numbers written since went nowhere.
    if (buf.length === 0) return null;
    if (delaysInPlace(h, kind, value, n) !== 0) return null;
    buf = scratchView();
    for (let i = 0; i < n; i++) out[start + i] = buf[i];
    start += n;
  } while (start < len);
  return out;
}

method(RetryPolicy, "delays", function delays(retryNumbers, jitter_) {
  const h = handleOf(this);
  if (!scratchBusy) {
    const kind = fastJitter(jitter_);
    if (
      kind >= 0 &&
      (Array.isArray(retryNumbers) || retryNumbers instanceof Float64Array || retryNumbers instanceof Uint32Array)
    ) {
      const out = delaysFast(h, kind, jitterValue, retryNumbers);
      if (out !== null) return out;
    }
  }
  return delaysFull(this, h, retryNumbers, jitter_);
});

/** The full `delays` (out of line, as `delayFull`). */
function delaysFull(policy, h, retryNumbers, jitter_) {
  livePolicy(policy);
  if (!(Array.isArray(retryNumbers) || retryNumbers instanceof Uint32Array || retryNumbers instanceof Float64Array)) {
    throw argError(
      "retry_numbers",
      `expected an array, Uint32Array or Float64Array of retry numbers, found ${describe(retryNumbers)}`,
    );
  }
  const j = jitter(jitter_);
  const items = Array.from(retryNumbers);
  const out = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const field = `retry_numbers[${i}]`;
    const nums = [uint(items[i], field)];
    const texts = [];
    // Without a source, each entry draws its own sample.
    pushJitter(j ?? entropy(), nums, texts);
    try {
      out[i] = callNumber(DELAY, h, nums, texts);
    } catch (e) {
      // The entry, not the parameter name, is what the caller must fix.
      if (e.field === "retry_number") throw argError(field, e.faults[0].message);
      throw e;
    }
  }
  return out;
}

// RetryPolicy's getters: numbers from `__policyNum` (-1: the handle names
// no policy, and `livePolicy` reports why), the others from `__run`.
["maxAttempts", "initialIntervalMs", "backoffCoefficient", "maxIntervalMs", "jitter", "maxRetries"].forEach((name, k) => {
  const map = name === "jitter" ? (x) => x !== 0 : (x) => x;
  accessor(RetryPolicy, name, function () {
    const h = handleOf(this);
    let x = policyNum(h, k);
    if (x < 0) {
      livePolicy(this);
      x = policyNum(h, k);
    }
    return map(x);
  });
});
// The other values, read once per policy (it is immutable) and kept in a
// WeakMap: `[presetSystem, onExhaustion, backoffStrategy,
// nonRetryableErrors]`; each read checks the handle (a freed policy is an
// error), and the list is a fresh copy each time.
const infos = new WeakMap();
["presetSystem", "onExhaustion", "backoffStrategy", "nonRetryableErrors"].forEach((name, i) => {
  accessor(RetryPolicy, name, function () {
    const h = livePolicy(this);
    let info = infos.get(this);
    if (info === undefined) {
      info = callJSON(POLICY_GET, h, [6], []);
      infos.set(this, info);
    }
    return i === 3 ? info[3].slice() : info[i];
  });
});
method(RetryPolicy, "toString", function toString() {
  return call(POLICY_GET, handleOf(this), [10], []);
});

// schedule(): the rows come from Rust as numbers, 8 per row (delayMs -1:
// none), made into objects here.
method(RetryPolicy, "schedule", function schedule(count, jitter_) {
  const h = livePolicy(this);
  const nums = [uint(count, "count")];
  const texts = [];
  const j = jitter(jitter_);
  pushJitter(j ?? [3], nums, texts);
  const r = send(SCHEDULE, h, nums, texts);
  const at = ioAt(0);
  if (r < 0) throw errorFrom(JSON.parse(utf8(bytes(), at, -r - 1)));
  // The numbers start at the first multiple of 8 from `at` (see `__run`).
  const f = new Float64Array(memory().buffer, at + ((8 - (at % 8)) % 8), r / 8);
  const rows = new Array(f.length >>> 3);
  for (let i = 0, k = 0; k < f.length; i++, k += 8) {
    rows[i] = {
      retryNumber: f[k],
      attempt: f[k + 1],
      rawMs: f[k + 2],
      cappedMs: f[k + 3],
      minMs: f[k + 4],
      maxMs: f[k + 5],
      delayMs: f[k + 6] < 0 ? null : f[k + 6],
      cumulativeMs: f[k + 7],
    };
  }
  return rows;
});

/** A failure `{attempt, type?, code?, timedOut?}`: numbers 0, 1 and 7 of DECIDE, and texts. */
function failure(v, nums, texts) {
  const o = options(v, "failure", ["attempt", "type", "code", "timedOut"]);
  if (o === null) throw argError("failure", "expected a failure object {attempt, type?, code?, timedOut?}");
  // Each field read once (a getter runs once), in the native addon's order.
  const attempt = uint(o.attempt, "attempt");
  let flags = 0;
  const type = o.type;
  if (given(type)) {
    texts.push(string(type, "type"));
    flags |= 1;
  }
  const code = o.code;
  if (given(code)) {
    texts.push(handlerCode(code));
    flags |= 2;
  }
  const timedOutField = o.timedOut;
  const timedOut = given(timedOutField) ? boolean(timedOutField, "timed_out") : false;
  nums.push(attempt, timedOut ? 1 : 0);
  return flags;
}

method(RetryPolicy, "decide", function decide(failure_, options_) {
  const h = livePolicy(this);
  const nums = [];
  const texts = [];
  const flags = failure(failure_, nums, texts);
  decideOptions(options_, nums, texts);
  while (nums.length < 7) nums.push(0);
  nums[7] = flags;
  return callDecision(DECIDE, h, nums, texts);
});

if (Symbol.dispose) proto[Symbol.dispose] = proto.free;

// --- RetryState and Reservation ------------------------------------------------

// The handle of a RetryState / Reservation, or the typed `this` error
// (set by each class's static block).
let stateHandle;
let reservationHandle;

/** Per-job retry state (§10): a handle into the module's registry. */
class RetryState {
  #h;

  /** A fresh job at attempt 1. */
  constructor(options) {
    let h = adopted;
    if (h >= 0) adopted = -1;
    else h = callNumber(STATE_NEW, 0, [historyLimit(options)], []);
    this.#h = h;
    collectedObjects?.register(this, h);
  }

  /** Reads a §10 state document (object or JSON text). */
  static fromJSON(state, options) {
    const limit = historyLimit(options);
    let text;
    if (typeof state === "string") {
      if (!isWellFormed(state)) throw fault(STATE, "", LONE_SURROGATE);
      text = state;
    } else text = jsonText(state, "", STATE);
    adopted = callNumber(STATE_FROM, 0, [limit], [text]);
    return new RetryState();
  }

  static {
    stateHandle = (s) => {
      try {
        return s.#h;
      } catch {
        throw argError("this", `expected a RetryState, found ${describeHandle(s)}`);
      }
    };
  }

  /** Records a handler failure and returns the decision. */
  recordFailure(policy, error, opts) {
    const h = stateHandle(this);
    const p = livePolicy(policy);
    const o = options(error, "error", ["type", "message", "code", "details"]);
    if (o === null) throw argError("error", "expected an error object {type, message, code?, details?}");
    const texts = [string(o.type, "type"), string(o.message, "message")];
    let flags = 0;
    const code = o.code;
    if (given(code)) {
      texts.push(handlerCode(code));
      flags |= 1;
    }
    const details = o.details;
    if (details !== undefined) {
      texts.push(jsonText(details, "details", ARGUMENT));
      flags |= 2;
    }
    const nums = [p];
    decideOptions(opts, nums, texts);
    while (nums.length < 6) nums.push(0);
    nums[6] = flags;
    return callDecision(RECORD_FAILURE, h, nums, texts);
  }

  /** Records an expired reservation and returns the decision. */
  recordTimeout(policy, options) {
    const h = stateHandle(this);
    const nums = [livePolicy(policy)];
    const texts = [];
    decideOptions(options, nums, texts);
    return callDecision(RECORD_TIMEOUT, h, nums, texts);
  }

  /** The §10 state document as compact JSON text. */
  toString() {
    return call(STATE_GET, stateHandle(this), [4], []);
  }

  /** Frees the state now; any later use is an error. */
  free() {
    releaseHandle(stateHandle(this), !hasFinalizers, 1);
  }
}

// The numbers from `__objNum` (-2: no such object, and `__run` reports
// why; -1: none), the terminal action from `__run`.
["attempt", "historyLimit", "nextRetryAt"].forEach((name, k) => {
  accessor(RetryState, name, function () {
    const h = stateHandle(this);
    const x = objectNum(h, k);
    if (x === -2) return callJSON(STATE_GET, h, [k], []);
    return x === -1 ? null : x;
  });
});
// The terminal action: its number from `__objNum`, its name from `__run`
// the first time that number is seen.
const actionNames = [];
accessor(RetryState, "terminal", function () {
  const h = stateHandle(this);
  const x = objectNum(h, 6);
  if (x === -1) return null;
  if (x < 0 || actionNames[x] === undefined) {
    const name = callJSON(STATE_GET, h, [3], []);
    if (x >= 0) actionNames[x] = name;
    return name;
  }
  return actionNames[x];
});

/** A visibility-timeout reservation (§9.2, §9.3): a handle into the module's registry. */
class Reservation {
  #h;

  /** Reserves `attempt` until `now + visibilityTimeoutMs`. */
  constructor(attempt, visibilityTimeoutMs, now_) {
    const a = uint(attempt, "attempt");
    const t = uint(visibilityTimeoutMs, "visibility_timeout_ms");
    const h = callNumber(RESERVATION_NEW, 0, [a, t, now(now_)], []);
    this.#h = h;
    collectedObjects?.register(this, h);
  }

  static {
    reservationHandle = (r) => {
      try {
        return r.#h;
      } catch {
        throw argError("this", `expected a Reservation, found ${describeHandle(r)}`);
      }
    };
  }

  /** Extends the deadline, unless already expired. */
  heartbeat(now_) {
    const h = reservationHandle(this);
    return callJSON(HEARTBEAT, h, [now(now_)], []);
  }

  /** Whether `now` has reached the deadline. */
  isExpired(now_) {
    const h = reservationHandle(this);
    return callNumber(IS_EXPIRED, h, [now(now_)], []) !== 0;
  }

  /** The failure to pass to `decide()` once expired, else null. */
  expiry(now_) {
    const h = reservationHandle(this);
    return callJSON(EXPIRY, h, [now(now_)], []);
  }

  /** Frees the reservation now; any later use is an error. */
  free() {
    releaseHandle(reservationHandle(this), !hasFinalizers, 1);
  }
}
["attempt", "visibilityTimeoutMs", "deadline"].forEach((name, k) => {
  accessor(Reservation, name, function () {
    const h = reservationHandle(this);
    const x = objectNum(h, 3 + k);
    return x < 0 ? callJSON(RESERVATION_GET, h, [k], []) : x;
  });
});

for (const cls of [RetryState, Reservation]) {
  if (Symbol.dispose) cls.prototype[Symbol.dispose] = cls.prototype.free;
}

// toJSON(): the canonical JSON text, parsed (no export of its own).
for (const cls of [RetryPolicy, RetryState]) {
  method(cls, "toJSON", function toJSON() {
    return JSON.parse(this.toString());
  });
}

// --- module-level functions --------------------------------------------------

function matches(errorType, patterns) {
  return callNumber(MATCHES, 0, [], [string(errorType, "error_type"), ...strings(patterns, "patterns")]) !== 0;
}
function firstMatch(errorType, patterns) {
  return callJSON(FIRST_MATCH, 0, [], [string(errorType, "error_type"), ...strings(patterns, "patterns")]);
}
function parseDuration(text) {
  return callNumber(PARSE_DURATION, 0, [], [string(text, "duration")]);
}
function formatDuration(ms) {
  return callJSON(FORMAT_DURATION, 0, [uint(ms, "duration")], []);
}
function formatTimestamp(ms) {
  return callJSON(FORMAT_TIMESTAMP, 0, [uint(ms, "timestamp")], []);
}
function parseTimestamp(text) {
  return callNumber(PARSE_TIMESTAMP, 0, [], [string(text, "timestamp")]);
}
function jitterSample(retryNumber, jitter_) {
  const nums = [uint(retryNumber, "retry_number")];
  const j = jitter(jitter_);
  if (j === null) throw argError("jitter", "expected a jitter source {u}, {seed} or {key}");
  const texts = [];
  pushJitter(j, nums, texts);
  return callNumber(JITTER_SAMPLE, 0, nums, texts);
}

export {
  RetryPolicy,
  RetryState,
  Reservation,
  matches,
  firstMatch,
  parseDuration,
  formatDuration,
  formatTimestamp,
  parseTimestamp,
  jitterSample,
};
