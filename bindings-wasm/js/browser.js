// Browsers, bundlers (Vite, webpack 5, esbuild, Rollup: the `new URL(…,
// import.meta.url)` pattern makes them ship the .wasm as an asset), Deno.
// Top-level await: the module is ready once the import resolves. The API is
// the shared JS layer (api.js) over the module's exports.
import init, * as raw from "./ojs_retry_wasm.js";
import { bind, OjsRetryError } from "./api.js";

await init({ module_or_path: new URL("./ojs_retry_wasm_bg.wasm", import.meta.url) });

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
