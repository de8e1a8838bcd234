// Cases a vector restricts to other runtimes (`"runtimes": [...]`) that the
// wasm runtimes cannot express, by id, with the reason. Empty today: every
// current vector runs in every JS runtime. The runner fails a restricted case
// that is missing here, and an id listed here that no vector has.
export const WASM_NOT_APPLICABLE = {};
