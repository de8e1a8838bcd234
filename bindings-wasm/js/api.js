// The public API of ojs-retry-wasm: the wasm-bindgen classes and functions,
// plus the two things wasm-bindgen cannot express from Rust:
//  - `RetryPolicy.merge(...layers)` is variadic (Rust receives one array);
//  - a `policy` argument that is not a RetryPolicy is a coded
//    `validation.invalid_argument` error, like every other bad argument.
//  - `delay(n, u)` with two numbers takes a fast export (`__delayU`) that
//    passes plain f64s instead of JsValues; anything else, and any invalid
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
delete RetryPolicy.prototype.__delayU;
Object.defineProperty(RetryPolicy.prototype, "delay", {
  value: function delay(retryNumber, jitter) {
    if (typeof retryNumber === "number" && typeof jitter === "number" && this.__wbg_ptr) {
      const d = delayU.call(this, retryNumber, jitter);
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
