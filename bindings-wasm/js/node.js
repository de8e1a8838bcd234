// Node (and Bun): read the .wasm next to this file synchronously, so a plain
// `import { RetryPolicy } from "ojs-retry-wasm"` is ready to use.
import { readFileSync } from "node:fs";
import { initSync } from "./ojs_retry_wasm.js";

initSync({ module: readFileSync(new URL("./ojs_retry_wasm_bg.wasm", import.meta.url)) });

export * from "./ojs_retry_wasm.js";
