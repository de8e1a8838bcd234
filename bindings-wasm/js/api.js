// The public API of ojs-retry-wasm: the wasm-bindgen classes, completed
// here where JS does better than an export per method:
//  - `RetryPolicy.merge(...layers)` is variadic (Rust receives one array);
//  - a `policy` argument that is not a RetryPolicy is a coded
//    `validation.invalid_argument` error, like every other bad argument.
//  - `delay(n, u)` with two numbers, `delay(n, { u })` and
//    `delay(n, { seed: number })` take fast exports (`__delayU`, `__delayS`):
//    plain functions of numbers that reach the policy through its handle in
//    the module's registry (bindings-wasm/src/registry.rs), without
//    JsValues (reading an object from Rust costs a dozen boundary crossings)
//    and without wasm-bindgen's method shim; `delays(ns, { u } | { seed })`
//    copies the numbers into a scratch buffer in wasm memory that `__delays`
//    overwrites with the delays. Anything else, and any invalid number,
//    goes through the full method, which reports the error.
//  - Fewer exports, a smaller module: the getters of plain values go
//    through one export per class, the module-level functions through one
//    (`__call`), `toJSON()` parses `toString()`, and `schedule()` builds its
//    rows from numbers (faster than building objects from Rust).
// Each entry point (node.js, browser.js, workerd.js) initialises the wasm
// module first, then re-exports this module (whose top level therefore runs
// before the module is initialised: it only rearranges prototypes).
import {
  RetryPolicy,
  RetryState,
  Reservation,
  __call as call,
  __delayU as delayU,
  __delayS as delayS,
  __delays as delaysInPlace,
  __scratch as scratchAddress,
  __memory as wasmMemory,
} from "./ojs_retry_wasm.js";

function invalidArgument(field, message) {
  const err = new Error(`validation.invalid_argument: ${field}: ${message}`);
  err.code = "validation.invalid_argument";
  err.field = field;
  err.faults = [{ field, message }];
  return err;
}

function describe(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return `an object (${v.constructor?.name ?? "no prototype"})`;
  return `a ${typeof v}`;
}

function checkPolicy(policy) {
  if (!(policy instanceof RetryPolicy)) {
    throw invalidArgument("policy", `expected a RetryPolicy, found ${describe(policy)}`);
  }
  if (!policy.__wbg_ptr) {
    throw invalidArgument("policy", "expected a live RetryPolicy, found one already freed");
  }
}

const mergeArray = RetryPolicy.merge;
Object.defineProperty(RetryPolicy, "merge", {
  value: function merge(...layers) {
    return mergeArray.call(RetryPolicy, layers);
  },
  writable: true,
  configurable: true,
});

const proto = RetryPolicy.prototype;
const fullDelay = proto.delay;
const fullDelays = proto.delays;
const readHandle = Object.getOwnPropertyDescriptor(proto, "__handle").get;
delete proto.__handle;
const hasOwn = Object.prototype.hasOwnProperty;

// The policy's registry handle, read from Rust once per object and kept on
// it under a symbol (non-enumerable, so invisible to keys and JSON). A
// frozen policy cannot keep it: it is read again on every call. Callers
// check `__wbg_ptr` first: a freed policy takes the full path (its handle
// is stale anyway, and the fast exports answer -1 for it). Not a
// RetryPolicy (a method borrowed by another object): -1, the full path.
const HANDLE = Symbol("ojs-retry-wasm.handle");
function handleOf(policy) {
  let h = policy[HANDLE];
  if (h === undefined) {
    if (!(policy instanceof RetryPolicy)) return -1;
    h = readHandle.call(policy);
    Reflect.defineProperty(policy, HANDLE, { value: h });
  }
  return h;
}

// `{ u: number }` → 0, `{ seed: number }` → 1 (the value in `jitterValue`),
// anything else → -1: the full path, which checks and reports. Only what the
// full path accepts as-is qualifies: an object whose prototype is this
// realm's Object.prototype with exactly one own enumerable key (other
// realms, null prototypes and extra keys take the full path).
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

Object.defineProperty(proto, "delay", {
  value: function delay(retryNumber, jitter) {
    if (typeof retryNumber === "number" && this.__wbg_ptr) {
      const h = handleOf(this);
      let d = -1;
      if (typeof jitter === "number") {
        d = delayU(h, retryNumber, jitter);
      } else {
        const kind = fastJitter(jitter);
        if (kind === 0) d = delayU(h, retryNumber, jitterValue);
        else if (kind === 1) d = delayS(h, retryNumber, jitterValue);
      }
      if (d >= 0) return d;
    }
    return fullDelay.call(this, retryNumber, jitter);
  },
  writable: true,
  configurable: true,
});

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
      scratchAt = scratchAddress(SCRATCH_LEN);
      if (scratchAt < 0) return null;
    }
    scratch = new Float64Array(wasmMemory().buffer, scratchAt, SCRATCH_LEN);
  }
  return scratch;
}

// Set while the numbers are being copied: reading an array element can run
// JS (getters, proxies) that calls `delays` again, which then takes the full
// path instead of overwriting this call's numbers.
let scratchBusy = false;

// The delays through the scratch buffer, SCRATCH_LEN at a time, or null:
// the caller takes the full path (a non-number entry, or any -1).
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

Object.defineProperty(proto, "delays", {
  value: function delays(retryNumbers, jitter) {
    if (this.__wbg_ptr && !scratchBusy) {
      const kind = fastJitter(jitter);
      if (
        kind >= 0 &&
        (Array.isArray(retryNumbers) ||
          retryNumbers instanceof Float64Array ||
          retryNumbers instanceof Uint32Array)
      ) {
        const out = delaysFast(handleOf(this), kind, jitterValue, retryNumbers);
        if (out !== null) return out;
      }
    }
    return fullDelays.call(this, retryNumbers, jitter);
  },
  writable: true,
  configurable: true,
});

// The getters of plain values, through one export per class (`__num`,
// `__str`: the value's number `k` is its index here); each getter is an
// accessor on the prototype, as wasm-bindgen defines them.
const isTrue = (x) => x !== 0;
const orNull = (x) => (x < 0 ? null : x); // -1: none
function getters(cls, exportName, names) {
  const read = cls.prototype[exportName];
  delete cls.prototype[exportName];
  names.forEach((spec, k) => {
    const [name, map] = Array.isArray(spec) ? spec : [spec, undefined];
    const get = map
      ? function () {
          return map(read.call(this, k));
        }
      : function () {
          return read.call(this, k);
        };
    Object.defineProperty(get, "name", { value: `get ${name}` });
    Object.defineProperty(cls.prototype, name, { get, configurable: true });
  });
}
getters(RetryPolicy, "__num", [
  "maxAttempts",
  "initialIntervalMs",
  "backoffCoefficient",
  "maxIntervalMs",
  ["jitter", isTrue],
  "maxRetries",
]);
// `presetSystem` is null for a plain policy, as the types and the native
// package say (wasm-bindgen shows a `None` string as undefined).
getters(RetryPolicy, "__str", [["presetSystem", (x) => x ?? null], "onExhaustion", "backoffStrategy"]);
getters(RetryState, "__num", ["attempt", "historyLimit", ["nextRetryAt", orNull]]);
getters(Reservation, "__num", ["attempt", "visibilityTimeoutMs", "deadline"]);

// schedule(): the rows come from Rust as numbers, 8 per row (see
// `__schedule` in bindings-wasm/src/lib.rs; delayMs -1: none).
const scheduleNumbers = proto.__schedule;
delete proto.__schedule;
Object.defineProperty(proto, "schedule", {
  value: function schedule(count, jitter) {
    const f = scheduleNumbers.call(this, count, jitter);
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
  },
  writable: true,
  configurable: true,
});

// toJSON(): the canonical JSON text, parsed (no export of its own).
for (const cls of [RetryPolicy, RetryState]) {
  Object.defineProperty(cls.prototype, "toJSON", {
    value: function toJSON() {
      return JSON.parse(this.toString());
    },
    writable: true,
    configurable: true,
  });
}

const recordFailure = RetryState.prototype.recordFailure;
const recordTimeout = RetryState.prototype.recordTimeout;
Object.defineProperty(RetryState.prototype, "recordFailure", {
  value: function recordFailure_(policy, error, options) {
    checkPolicy(policy);
    return recordFailure.call(this, policy, error, options);
  },
  writable: true,
  configurable: true,
});
Object.defineProperty(RetryState.prototype, "recordTimeout", {
  value: function recordTimeout_(policy, options) {
    checkPolicy(policy);
    return recordTimeout.call(this, policy, options);
  },
  writable: true,
  configurable: true,
});

// The module-level functions: one wasm export (`__call`) takes the
// function's number, in this order (see `call` in bindings-wasm/src/lib.rs).
function matches(errorType, patterns) {
  return call(0, errorType, patterns);
}
function firstMatch(errorType, patterns) {
  return call(1, errorType, patterns);
}
function parseDuration(text) {
  return call(2, text, undefined);
}
function formatDuration(ms) {
  return call(3, ms, undefined);
}
function formatTimestamp(ms) {
  return call(4, ms, undefined);
}
function parseTimestamp(text) {
  return call(5, text, undefined);
}
function jitterSample(retryNumber, jitter) {
  return call(6, retryNumber, jitter);
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
