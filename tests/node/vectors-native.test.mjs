// Every conformance vector through the native addon of the ojs-retry package.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { vectorTests } from './lib/run-vectors.mjs'

delete process.env.OJS_RETRY_FORCE_WASM
const api = createRequire(import.meta.url)('../../bindings-node/index.js')

// Cases a vector restricts (`runtimes`) to other runtimes, by id, with why.
const NATIVE_NOT_APPLICABLE = {}

test('the native backend loaded', () => {
  assert.equal(api.backend, 'native')
})

vectorTests(api, 'node-native', NATIVE_NOT_APPLICABLE)
