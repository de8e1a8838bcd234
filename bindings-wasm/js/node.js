// Node (and Bun): read the .wasm next to this file synchronously, so a plain
// `import { RetryPolicy } from "ojs-retry-wasm"` is ready to use. The API is
// the shared JS layer (api.js) over the module's exports.
import { readFileSync } from "node:fs";
import * as raw from "./ojs_retry_wasm.js";
import { bind, OjsRetryError } from "./api.js";

raw.initSync({ module: readFileSync(new URL("./ojs_retry_wasm_bg.wasm", import.meta.url)) });

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
