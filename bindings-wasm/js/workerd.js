// Cloudflare Workers (workerd, wrangler, miniflare): the runtime compiles
// imported .wasm modules ahead of time, so initialisation is synchronous
// (no fetch, no top-level await, no compiling of wasm bytes at run time).
// The API is the shared JS layer (api.js) over the module's exports.
import wasmModule from "./ojs_retry_wasm_bg.wasm";
import * as raw from "./ojs_retry_wasm.js";
import { bind, OjsRetryError } from "./api.js";

raw.initSync({ module: wasmModule });

/** Which implementation answers: this package is always WebAssembly. */
export const backend = "wasm";
export const {
  RetryPolicy,
  RetryState,
  Reservation,
  matches,
  firstMatch,
  parseDuration,
  formatDuration,
  parseTimestamp,
  formatTimestamp,
  jitterSample,
  presetSystems,
  runTransaction,
} = bind(raw);
export { OjsRetryError };
