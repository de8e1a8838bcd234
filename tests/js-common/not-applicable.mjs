// Cases a vector restricts to other runtimes (`"runtimes": [...]`) that the
// wasm runtimes cannot express, by id, with the reason. Empty today: every
// current vector runs in every JS runtime. The runner fails a restricted case
// that is missing here, and an id listed here that no vector has.
const BYTES = "raw bytes of JSON text: a JavaScript string cannot hold invalid UTF-8 (lone surrogates, the JS analogue, are covered by hostile-policy-*-lone-surrogate-*)";
export const WASM_NOT_APPLICABLE = {
  "hostile-policy-json-bytes-invalid-utf8": BYTES,
  "hostile-policy-json-bytes-overlong": BYTES,
  "hostile-policy-json-bytes-surrogate-utf8": BYTES,
  "hostile-policy-json-bytes-valid": BYTES,
  "hostile-policy-json-bytes-second-layer": BYTES,
};
