// Every conformance vector through the native addon.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { applies, loadCases, runCase } from './lib/vectors.mjs'

delete process.env.OJS_RETRY_FORCE_WASM
const require = createRequire(import.meta.url)
const api = require('../../bindings-node/index.js')

// Cases restricted (by their `runtimes` list) to other runtimes, by id.
const NOT_APPLICABLE = new Set([])

test('the native backend loaded', () => {
  assert.equal(api.backend, 'native')
})

for (const c of loadCases()) {
  if (!applies(c, 'node-native', NOT_APPLICABLE)) continue
  test(`${c.file} ${c.id}`, () => runCase(api, c))
}
