// The two builds of the binding crate have the same exports: the
// declarations napi-rs generated for the native addon (bindings-node/
// native.d.ts) and those wasm-bindgen generated for the wasm module
// (bindings-wasm/pkg/ojs_retry_wasm.d.ts) both satisfy `Raw`, what the
// shared JS layer (bindings-wasm/js/api.ts) calls. Type-checked with
// `tsc --noEmit --strict` (tsconfig.raw.json); never executed.
import type { Raw } from "../../bindings-wasm/pkg/api.js";
import type * as native from "../../bindings-node/native";
import type * as wasm from "../../bindings-wasm/pkg/ojs_retry_wasm.js";

type Exports<T> = { [K in keyof Raw]: K extends keyof T ? T[K] : never };

// Every export of `Raw` exists in each build, with a signature the JS layer
// can call as `Raw` declares it.
const n: Raw = {} as Exports<typeof native>;
const w: Raw = {} as Exports<typeof wasm>;

// And the two builds export the same names (beyond wasm-bindgen's own
// `initSync` / `default`, and its handle classes).
type Own<T> = Exclude<keyof T, "initSync" | "default" | "InitInput" | "InitOutput" | "SyncInitInput" | "PolicyRef" | "StateRef" | "ReservationRef">;
const sameNames: [Exclude<Own<typeof native>, Own<typeof wasm>>, Exclude<Own<typeof wasm>, Own<typeof native>>] = [
  undefined as never,
  undefined as never,
];
export { n, w, sameNames };
