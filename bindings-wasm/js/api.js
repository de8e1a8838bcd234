// The public API of ojs-retry-wasm. `RetryPolicy` is a plain JS class
// defined here: each instance holds a handle (a number) naming its policy
// in the module's registry (bindings-wasm/src/registry.rs), and each member
// calls an export that takes the handle. Not a wasm-bindgen class: creating
// one registered the object in a FinalizationRegistry with an unregister
// token (more than the parse of a policy), and every method call went
// through wasm-bindgen's shim. `RetryState` and `Reservation` stay
// wasm-bindgen classes, completed here. Where JS does better than an
// export per method:
//  - `new RetryPolicy(text)` writes the text into wasm memory with the
//    host's TextEncoder and parses it there (`__parse`), no JsValue;
//  - `RetryPolicy.merge(...layers)` is variadic (Rust receives one array);
//  - a `policy` argument (or `this`) that is not a RetryPolicy, or one
//    freed, is a coded `validation.invalid_argument` error, like every
//    other bad argument.
//  - `delay(n, u)` with two numbers, `delay(n, { u })` and
//    `delay(n, { seed: number })` take fast exports (`__delayU`, `__delayS`):
//    plain functions of numbers, without JsValues (reading an object from
//    Rust costs a dozen boundary crossings); `delays(ns, { u } | { seed })`
//    copies the numbers into a scratch buffer in wasm memory that `__delays`
//    overwrites with the delays. Anything else, and any invalid number,
//    goes through the full method, which reports the error.
//  - Fewer exports, a smaller module: the getters go through one or two
//    exports per class, the methods taking JS values through one
//    (`__policyCall`), the module-level functions through one (`__call`),
//    `toJSON()` parses `toString()`, and `schedule()` builds its rows from
//    numbers (faster than building objects from Rust).
// Each entry point (node.js, browser.js, workerd.js) initialises the wasm
// module first, then re-exports this module (whose top level therefore runs
// before the module is initialised: it defines classes and rearranges
// prototypes, and calls no export).
import {
  RetryState,
  Reservation,
  __make as make,
  __parse as parseText,
  __policyNum as policyNum,
  __policyValue as policyValue,
  __policyCall as policyCall,
  __release as release,
  __call as call,
  __delays as delaysInPlace,
  __scratch as scratchAddress,
  __memory as wasmMemory,
  initSync,
} from "./ojs_retry_wasm.js";

// `__delayU` and `__delayS` are raw exports of the wasm instance, which
// wasm-bindgen's JS does not wrap (bindings-wasm/src/lib.rs says why):
// taken from the instance's exports on the first call. The module is
// initialised by then (a policy exists), and `initSync()` then returns its
// exports without instantiating anything.
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
}

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

// Collected policies give their registry slot back. Registered without an
// unregister token (a token costs more than the rest of the registration):
// `free()` drops the policy at once and the registry keeps its slot until
// this reports the object collected (bindings-wasm/src/registry.rs), so a
// handle never outlives its slot. Without FinalizationRegistry (very old
// hosts), `free()` gives the slot back itself and an unfreed policy stays
// in the registry, as wasm-bindgen's objects did there.
const collected =
  typeof FinalizationRegistry === "undefined" ? null : new FinalizationRegistry((h) => release(h, true));

// The handle a factory hands to the constructor (see `adopt`): the
// constructor takes no second argument that callers could forge.
let adopted = -1;
let handleOf;

// The text buffer of `__parse` (TEXT_LEN bytes in wasm memory, allocated
// on first use, never moved) seen through a Uint8Array, remade after a
// memory growth detached it; `null` when it cannot be had.
const TEXT_LEN = 16384;
const encoder = new TextEncoder();
let textAt = -1;
let textView = null;
function textBuffer() {
  if (textView === null || textView.length === 0) {
    if (textAt < 0) {
      textAt = scratchAddress(TEXT_LEN, 1);
      if (textAt < 0) return null;
    }
    textView = new Uint8Array(wasmMemory().buffer, textAt, TEXT_LEN);
  }
  return textView;
}

// A policy from JSON text: its bytes written into wasm memory by the
// host's encoder (one native call) and read there by `__parse`, or -1: the
// full path (`__make`), which reports the error. The full path also takes
// text too long for the buffer, and any text that is not ASCII (one byte
// per character): the encoder writes U+FFFD for a lone surrogate, which
// only the full path tells apart from a real one, and ASCII text needs no
// such check.
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
      h = typeof policy === "string" ? parsed(policy) : -1;
      if (h < 0) h = make(0, policy, undefined);
    }
    this.#h = h;
    collected?.register(this, h);
  }

  /** Layers merged in order: defaults ← first ← … ← last, then validated. */
  static merge(...layers) {
    return adopt(make(1, layers, undefined));
  }

  /** A preset: `system`'s own retry configuration. */
  static preset(system, config) {
    return adopt(make(2, system, config));
  }

  static {
    // One read of the private field, which throws a TypeError for any
    // value without it (not a RetryPolicy: a forged object, a proxy, a
    // clone, a primitive): cheaper than testing `#h in p` first.
    handleOf = (p) => {
      try {
        return p.#h;
      } catch {
        throw invalidArgument("policy", `expected a RetryPolicy, found ${describe(p)}`);
      }
    };
  }

  /** Frees the policy now; any later use is a `policy` error. */
  free() {
    const h = handleOf(this);
    release(h, collected === null);
  }
}

function adopt(h) {
  adopted = h;
  return new RetryPolicy();
}

const proto = RetryPolicy.prototype;
if (Symbol.dispose) proto[Symbol.dispose] = proto.free;
const hasOwn = Object.prototype.hasOwnProperty;

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
    const h = handleOf(this);
    if (typeof retryNumber === "number") {
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
    return policyCall(0, h, retryNumber, jitter);
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
    const h = handleOf(this);
    if (!scratchBusy) {
      const kind = fastJitter(jitter);
      if (
        kind >= 0 &&
        (Array.isArray(retryNumbers) ||
          retryNumbers instanceof Float64Array ||
          retryNumbers instanceof Uint32Array)
      ) {
        const out = delaysFast(h, kind, jitterValue, retryNumbers);
        if (out !== null) return out;
      }
    }
    return policyCall(1, h, retryNumbers, jitter);
  },
  writable: true,
  configurable: true,
});

// The getters of plain values, through one export per class (the value's
// number `k` is its index in the list given here); each getter is an
// accessor on the prototype, as wasm-bindgen defines them.
const isTrue = (x) => x !== 0;
const orNull = (x) => (x < 0 ? null : x); // -1: none
function accessor(cls, name, get) {
  Object.defineProperty(get, "name", { value: `get ${name}` });
  Object.defineProperty(cls.prototype, name, { get, configurable: true });
}
function getters(cls, exportName, names) {
  const read = cls.prototype[exportName];
  delete cls.prototype[exportName];
  names.forEach((spec, k) => {
    const [name, map] = Array.isArray(spec) ? spec : [spec, undefined];
    accessor(
      cls,
      name,
      map
        ? function () {
            return map(read.call(this, k));
          }
        : function () {
            return read.call(this, k);
          },
    );
  });
}
// RetryPolicy: numbers from `__policyNum` (-1: the handle names no policy,
// and `__policyValue` reports why), the others from `__policyValue`.
["maxAttempts", "initialIntervalMs", "backoffCoefficient", "maxIntervalMs", "jitter", "maxRetries"].forEach((name, k) => {
  const map = name === "jitter" ? isTrue : (x) => x;
  accessor(RetryPolicy, name, function () {
    const h = handleOf(this);
    const x = policyNum(h, k);
    return map(x >= 0 ? x : policyValue(h, k));
  });
});
["presetSystem", "onExhaustion", "backoffStrategy", "nonRetryableErrors"].forEach((name, i) => {
  accessor(RetryPolicy, name, function () {
    return policyValue(handleOf(this), 6 + i);
  });
});
Object.defineProperty(proto, "toString", {
  value: function toString() {
    return policyValue(handleOf(this), 10);
  },
  writable: true,
  configurable: true,
});
getters(RetryState, "__num", ["attempt", "historyLimit", ["nextRetryAt", orNull]]);
getters(Reservation, "__num", ["attempt", "visibilityTimeoutMs", "deadline"]);

// schedule(): the rows come from Rust as numbers, 8 per row (see
// `schedule_numbers` in bindings-wasm/src/lib.rs; delayMs -1: none).
Object.defineProperty(proto, "schedule", {
  value: function schedule(count, jitter) {
    const f = policyCall(2, handleOf(this), count, jitter);
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

Object.defineProperty(proto, "decide", {
  value: function decide(failure, options) {
    return policyCall(3, handleOf(this), failure, options);
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
    return recordFailure.call(this, handleOf(policy), error, options);
  },
  writable: true,
  configurable: true,
});
Object.defineProperty(RetryState.prototype, "recordTimeout", {
  value: function recordTimeout_(policy, options) {
    return recordTimeout.call(this, handleOf(policy), options);
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
