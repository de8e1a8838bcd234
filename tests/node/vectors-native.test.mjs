// Every conformance vector through the native addon of the ojs-retry package.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { vectorTests } from './lib/run-vectors.mjs'
import { TOO_DEEP_TO_CLONE } from '../js-common/not-applicable.mjs'

delete process.env.OJS_RETRY_FORCE_WASM
const api = createRequire(import.meta.url)('../../bindings-node/index.js')

// Cases a vector restricts (`runtimes`) to other runtimes, by id, with why.
const BYTES = "raw bytes of JSON text: a JavaScript string cannot hold invalid UTF-8 (lone surrogates, the JS analogue, are covered by hostile-policy-*-lone-surrogate-*)";
const NATIVE_NOT_APPLICABLE = {
  "hostile-value-nest-100000-in-field": TOO_DEEP_TO_CLONE,
  "hostile-value-nest-100000-objects-in-field": TOO_DEEP_TO_CLONE,
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
