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
const NATIVE_NOT_APPLICABLE = {
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
