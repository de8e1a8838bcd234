// The public API of ojs-retry-wasm: the wasm-bindgen classes and functions,
// plus the two things wasm-bindgen cannot express from Rust:
//  - `RetryPolicy.merge(...layers)` is variadic (Rust receives one array);
//  - a `policy` argument that is not a RetryPolicy is a coded
//    `validation.invalid_argument` error, like every other bad argument.
//  - `delay(n, u)` with two numbers, `delay(n, { u })` and
//    `delay(n, { seed: number })` take fast exports (`__delayU`, `__delayS`)
//    that pass plain f64s instead of JsValues (reading an object from Rust
//    costs a dozen boundary crossings); anything else, and any invalid
//    number, goes through the full `delay`, which reports the error.
// Each entry point (node.js, browser.js, workerd.js) initialises the wasm
// module first, then re-exports this module.
import {
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

const fullDelay = RetryPolicy.prototype.delay;
const delayU = RetryPolicy.prototype.__delayU;
const delayS = RetryPolicy.prototype.__delayS;
delete RetryPolicy.prototype.__delayU;
delete RetryPolicy.prototype.__delayS;
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

Object.defineProperty(RetryPolicy.prototype, "delay", {
  value: function delay(retryNumber, jitter) {
    if (typeof retryNumber === "number" && this.__wbg_ptr) {
      let d = -1;
      if (typeof jitter === "number") {
        d = delayU.call(this, retryNumber, jitter);
      } else {
        const kind = fastJitter(jitter);
        if (kind === 0) d = delayU.call(this, retryNumber, jitterValue);
        else if (kind === 1) d = delayS.call(this, retryNumber, jitterValue);
      }
      if (d >= 0) return d;
    }
    return fullDelay.call(this, retryNumber, jitter);
  },
  writable: true,
  configurable: true,
});

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
