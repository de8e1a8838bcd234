// Every conformance vector through the native addon of the ojs-retry package.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { vectorTests } from './lib/run-vectors.mjs'

delete process.env.OJS_RETRY_FORCE_WASM
const api = createRequire(import.meta.url)('../../bindings-node/index.js')

// Cases a vector restricts (`runtimes`) to other runtimes, by id, with why.
const BYTES = "raw bytes of JSON text: a JavaScript string cannot hold invalid UTF-8 (lone surrogates, the JS analogue, are covered by hostile-policy-*-lone-surrogate-*)";
// napi-rs reads strings with napi_get_value_string_utf8, which turns a lone
// surrogate into U+FFFD before any reader sees it (string *arguments* are
// read as UTF-16 and checked: hostile-matches-lone-surrogate and the others).
const SURROGATE_IN_DOCUMENT = "a lone surrogate inside a JS object: napi-rs's serde support reads strings as UTF-8, replacing it with U+FFFD before the core sees it";
// napi-rs's serde deserializer (js_values/de.rs) gives every number whose
// fraction is below f64::EPSILON to visit_i64 as `x as i64`: 1e300 arrives
// as i64::MAX and ±5e-324 as 0, before the engine sees them.
const NAPI_NUMBERS = "napi-rs's serde deserializer turns numbers with a fraction below f64::EPSILON into `x as i64` (1e300 -> i64::MAX, 5e-324 -> 0)";

const NATIVE_NOT_APPLICABLE = {
  "policy-coefficient-large": NAPI_NUMBERS,
  "hostile-policy-max-attempts-subnormal": NAPI_NUMBERS,
  "hostile-delay-u-neg-subnormal": NAPI_NUMBERS,
  "hostile-policy-lone-surrogate-pattern": SURROGATE_IN_DOCUMENT,
  "hostile-policy-lone-surrogate-key": SURROGATE_IN_DOCUMENT,
  "hostile-policy-json-bytes-invalid-utf8": BYTES,
  "hostile-policy-json-bytes-overlong": BYTES,
  "hostile-policy-json-bytes-surrogate-utf8": BYTES,
  "hostile-policy-json-bytes-valid": BYTES,
  "hostile-policy-json-bytes-second-layer": BYTES,
}

test('the native backend loaded', () => {
  assert.equal(api.backend, 'native')
})

vectorTests(api, 'node-native', NATIVE_NOT_APPLICABLE)
