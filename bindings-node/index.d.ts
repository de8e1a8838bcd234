// Types of the `ojs-retry` package: the surface shared with `ojs-retry-wasm`
// (ojs-retry.d.ts, copied verbatim from bindings-wasm/ojs-retry.d.ts at
// build time), plus what only this package adds (which backend loaded).
export * from "./ojs-retry";

/** Which implementation loaded: the native addon, or the wasm fallback. */
export declare const backend: "native" | "wasm";
