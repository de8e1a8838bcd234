// Cases a vector restricts to other runtimes (`"runtimes": [...]`) that the
// wasm runtimes cannot express, by id, with the reason. The runner fails a
// restricted case that is missing here, and an id listed here that no
// vector has.
const BYTES = "raw bytes of JSON text: a JavaScript string cannot hold invalid UTF-8 (lone surrogates, the JS analogue, are covered by hostile-policy-*-lone-surrogate-*)";
const LONE_SURROGATE_IN_OBJECT =
  "a lone surrogate inside an object: serde-wasm-bindgen reads strings as UTF-8 (JsValue::as_string, TextEncoder), which turns a lone surrogate into U+FFFD before the engine sees it; string arguments are checked (hostile-matches-lone-surrogate, hostile-duration-lone-surrogate, hostile-policy-json-text-lone-surrogate)";
const TOO_DEEP_TO_CLONE =
  "a value nested 100 000 deep: the wasm binding reads every object from a structuredClone copy (so no getter or proxy of the caller's can throw through the module's frames), and structuredClone refuses values a few thousand levels deep (RangeError): a fault of the whole document, field null; up to that depth the field is named (tests/wasm-node/api.test.mjs)";
export const WASM_NOT_APPLICABLE = {
  "hostile-policy-json-bytes-invalid-utf8": BYTES,
  "hostile-policy-json-bytes-overlong": BYTES,
  "hostile-policy-json-bytes-surrogate-utf8": BYTES,
  "hostile-policy-json-bytes-valid": BYTES,
  "hostile-policy-json-bytes-second-layer": BYTES,
  "hostile-policy-lone-surrogate-pattern": LONE_SURROGATE_IN_OBJECT,
  "hostile-policy-lone-surrogate-key": LONE_SURROGATE_IN_OBJECT,
  "hostile-value-nest-100000-in-field": TOO_DEEP_TO_CLONE,
  "hostile-value-nest-100000-objects-in-field": TOO_DEEP_TO_CLONE,
};
