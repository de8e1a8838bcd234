// One worker of the `workers` scenario of lib/handles-gc.mjs: creates 300
// policies in its own table while the other workers do the same, keeps one
// per document, collects the rest, and reports its live counts, the kept
// policies' answers, and the error for the policy the main thread posted
// (which arrives as a plain object).
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parentPort, workerData } from 'node:worker_threads'

import { answers, collectUntil, DOCS } from './handles-common.mjs'

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bindings-node')
const api = createRequire(import.meta.url)(join(PKG, 'index.js'))

const base = api.__livePolicies()
let created = 0
let liveWhileHeld
const kept = []
;(() => {
  const all = []
  for (let r = 0; r < 100; r++) {
    for (const d of DOCS) {
      all.push(new api.RetryPolicy(d))
      created++
    }
  }
  kept.push(...all.slice(0, DOCS.length))
  liveWhileHeld = api.__livePolicies()
})()
const liveAfterGc = await collectUntil(api, base + kept.length)

let cloned = null
try {
  new api.RetryState().recordFailure(workerData.cloned, { type: 'a', message: 'b' }, { now: 0 })
} catch (e) {
  cloned = { code: e.code, field: e.field }
}
parentPort.postMessage({
  backend: api.backend,
  base,
  created,
  kept: kept.length,
  liveWhileHeld,
  liveAfterGc,
  answers: kept.map(answers),
  cloned,
})
