// Types of the `ojs-retry` package: the surface shared with `ojs-retry-wasm`
// (ojs-retry.d.ts, copied verbatim from bindings-wasm/ojs-retry.d.ts at
// build time), plus what only this package adds.
import type { Jitter } from "./ojs-retry";

export * from "./ojs-retry";

declare module "./ojs-retry" {
  interface RetryPolicy {
    /**
     * The delay in ms before each of `retryNumbers` (1-based), in one call:
     * `delays(ns, j)[i] === delay(ns[i], j)` for a deterministic source.
     * A bad entry throws `validation.invalid_argument` with field
     * `retry_numbers[i]`. Without a jitter source each entry draws fresh OS
     * entropy.
     */
    delays(retryNumbers: readonly number[] | Uint32Array | Float64Array, jitter?: Jitter): number[];
  }
}

/** Which implementation loaded: the native addon, or the wasm fallback. */
export declare const backend: "native" | "wasm";
