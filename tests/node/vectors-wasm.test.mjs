// Every conformance vector through the wasm fallback of the ojs-retry package
// (OJS_RETRY_FORCE_WASM=1; node --test runs each file in its own process).
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { WASM_NOT_APPLICABLE } from '../js-common/not-applicable.mjs'
import { vectorTests } from './lib/run-vectors.mjs'

process.env.OJS_RETRY_FORCE_WASM = '1'
const api = createRequire(import.meta.url)('../../bindings-node/index.js')

test('the wasm backend loaded', () => {
  assert.equal(api.backend, 'wasm')
})

vectorTests(api, 'wasm-node', WASM_NOT_APPLICABLE)
