// Every conformance vector through the wasm fallback of the ojs-retry package
// (OJS_RETRY_FORCE_WASM=1; node --test runs each file in its own process).
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

import { applies, loadCases, runCase } from './lib/vectors.mjs'

process.env.OJS_RETRY_FORCE_WASM = '1'
const require = createRequire(import.meta.url)
const api = require('../../bindings-node/index.js')

// Cases restricted (by their `runtimes` list) to other runtimes, by id.
const NOT_APPLICABLE = new Set([])

test('the wasm backend loaded', () => {
  assert.equal(api.backend, 'wasm')
})

for (const c of loadCases()) {
  if (!applies(c, 'node-wasm', NOT_APPLICABLE)) continue
  test(`${c.file} ${c.id}`, () => runCase(api, c))
}
