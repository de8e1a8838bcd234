// Browsers, bundlers (Vite, webpack 5, esbuild, Rollup: the `new URL(…,
// import.meta.url)` pattern makes them ship the .wasm as an asset), Deno.
// Top-level await: the module is ready once the import resolves.
import init from "./ojs_retry_wasm.js";

await init({ module_or_path: new URL("./ojs_retry_wasm_bg.wasm", import.meta.url) });

export * from "./ojs_retry_wasm.js";
