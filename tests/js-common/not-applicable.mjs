// Cases a vector restricts to other runtimes (`"runtimes": [...]`) that the
// wasm runtimes cannot express, by id, with the reason. The runner fails a
// restricted case that is missing here, and an id listed here that no
// vector has.
const BYTES = "raw bytes of JSON text: a JavaScript string cannot hold invalid UTF-8 (lone surrogates, the JS analogue, are covered by hostile-policy-*-lone-surrogate-*)";
export const TOO_DEEP_TO_CLONE =
  "a value nested 100 000 deep: both JS bindings read every object from a structuredClone copy (so no getter or proxy of the caller's can throw through the module's frames), and structuredClone refuses values a few thousand levels deep (RangeError): a fault of the whole document, field null; up to that depth the field is named (tests/wasm-node/api.test.mjs)";
export const WASM_NOT_APPLICABLE = {
  "hostile-policy-json-bytes-invalid-utf8": BYTES,
  "hostile-policy-json-bytes-overlong": BYTES,
  "hostile-policy-json-bytes-surrogate-utf8": BYTES,
  "hostile-policy-json-bytes-valid": BYTES,
  "hostile-policy-json-bytes-second-layer": BYTES,
  "hostile-value-nest-100000-in-field": TOO_DEEP_TO_CLONE,
  "hostile-value-nest-100000-objects-in-field": TOO_DEEP_TO_CLONE,
};
