// Cloudflare Workers (workerd, wrangler, miniflare): the runtime compiles
// imported .wasm modules ahead of time, so initialisation is synchronous
// (no fetch, no top-level await, no compiling of wasm bytes at run time).
import wasmModule from "./ojs_retry_wasm_bg.wasm";
import { initSync } from "./ojs_retry_wasm.js";

initSync({ module: wasmModule });

export * from "./ojs_retry_wasm.js";
