// GC scenarios of tests/node/handles.test.mjs, run as
//   node --expose-gc handles-gc.mjs <collect | workers>
// Prints one JSON report on its last line; the test asserts on it.
//
// collect: creates 600 policies through every constructor, keeps 5, collects
//   the rest, and reports the table's live count before and after, the kept
//   policies' answers, and what the addon says about the collected
//   policies' handles (recorded by wrapping the addon's constructor
//   functions before the loader takes them).
// workers: 4 worker threads (lib/handles-worker.mjs) do the same at once,
//   each with its own table; the main thread's count must not move.
import { readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

import { answers, collectUntil, DOCS, TEXT } from './handles-common.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const PKG = resolve(HERE, '..', '..', '..', 'bindings-node')
const require = createRequire(import.meta.url)

if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc')

const scenario = process.argv[2]
let report

if (scenario === 'collect') {
  const bin = require(join(PKG, readdirSync(PKG).find((f) => /^ojs-retry\..+\.node$/.test(f))))
  const seen = []
  for (const name of ['policyNew', 'policyFromText', 'policyMerge', 'policyPreset']) {
    const f = bin[name]
    Object.defineProperty(bin, name, {
      value: (...args) => {
        const h = f(...args)
        seen.push(h)
        return h
      },
    })
  }
  const api = require(join(PKG, 'index.js'))
  if (api.backend !== 'native') throw new Error(`backend ${api.backend}`)
  const base = api.__livePolicies()
  const kept = []
  let liveWhileHeld
  ;(() => {
    const all = []
    for (let i = 0; i < 200; i++) {
      all.push(new api.RetryPolicy(i % 2 ? TEXT : DOCS[2]))
      all.push(api.RetryPolicy.merge({ max_attempts: i + 1 }, '{"jitter": false}'))
      all.push(api.RetryPolicy.preset('sidekiq', { retry: i }))
    }
    for (let i = 0; i < 5; i++) kept.push(all[i * 7])
    liveWhileHeld = api.__livePolicies()
  })()
  const keptExpected = kept.map(answers)
  const keptHandles = new Set([0, 1, 2, 3, 4].map((i) => seen[i * 7]))
  const liveAfterGc = await collectUntil(api, base + kept.length)
  // The handles of collected policies (no policy was created since, and a
  // reused slot would carry a new generation anyway).
  const staleErrors = new Map()
  const staleFast = new Set()
  let staleChecked = 0
  for (const h of seen) {
    if (keptHandles.has(h)) continue
    staleChecked++
    try {
      bin.policyDelay(h, 1, 0.5)
      staleErrors.set('no error', { code: null })
    } catch (e) {
      staleErrors.set(e.message, { code: e.code, field: e.field, message: e.message })
    }
    staleFast.add(bin.__delayU(h, 1, 0.5))
  }
  report = {
    base,
    created: seen.length,
    kept: kept.length,
    liveWhileHeld,
    liveAfterGc,
    keptExpected,
    keptAnswers: kept.map(answers),
    staleChecked,
    staleErrors: [...staleErrors.values()],
    staleFast: [...staleFast],
  }
} else if (scenario === 'workers') {
  const api = require(join(PKG, 'index.js'))
  if (api.backend !== 'native') throw new Error(`backend ${api.backend}`)
  const mine = DOCS.map((d) => new api.RetryPolicy(d))
  const expected = mine.map(answers)
  const mainBase = api.__livePolicies()
  const WORKERS = 4
  const reports = await Promise.all(
    Array.from(
      { length: WORKERS },
      () =>
        new Promise((res, rej) => {
          // `cloned`: a policy, structured-cloned on its way to the worker.
          const w = new Worker(new URL('./handles-worker.mjs', import.meta.url), {
            workerData: { cloned: mine[0] },
          })
          w.once('message', res)
          w.once('error', rej)
          w.once('exit', (code) => code !== 0 && rej(new Error(`worker exited with ${code}`)))
        }),
    ),
  )
  report = { workers: WORKERS, reports, expected, mainBase, mainLive: [mainBase, api.__livePolicies()] }
} else {
  throw new Error(`unknown scenario ${scenario}`)
}
console.log(JSON.stringify(report))
