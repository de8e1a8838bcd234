// Concurrency: worker_threads sharing policies (as canonical JSON documents)
// give exactly the results of sequential use, for the native addon and for
// the wasm fallback. Each backend: the whole workload sequentially in this
// thread (native) or in one worker (wasm: this process loaded native), then
// split across WORKERS workers released at the same instant.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import { Worker } from 'node:worker_threads'

import { workload } from './lib/workload.mjs'

delete process.env.OJS_RETRY_FORCE_WASM
const api = createRequire(import.meta.url)('../../bindings-node/index.js')
const WORKER = new URL('./lib/worker-job.mjs', import.meta.url)
const WORKERS = 4

const POLICIES = [
  {},
  { max_attempts: 5, initial_interval: 'PT0.5S', backoff_coefficient: 3, max_interval: 'PT1M' },
  { max_attempts: 25, initial_interval: 'PT15S', backoff_coefficient: 4, backoff_strategy: 'polynomial', max_interval: 'PT1H' },
  { max_attempts: 10, backoff_strategy: 'linear', jitter: false, on_exhaustion: 'dead_letter' },
  { max_attempts: 4, non_retryable_errors: ['net.*'], on_exhaustion: 'dead_letter' },
].map((doc) => new api.RetryPolicy(doc).toString())
const JOBS = Array.from({ length: 48 }, (_, i) => `job-${i}-${'x'.repeat(i % 7)}`)

/** Runs `shares` in that many workers released together; merges their results. */
async function inWorkers(shares, wasm) {
  const start = new SharedArrayBuffer(8)
  const gate = new Int32Array(start)
  const env = { ...process.env }
  if (wasm) env.OJS_RETRY_FORCE_WASM = '1'
  else delete env.OJS_RETRY_FORCE_WASM
  const done = shares.map(
    (jobs) =>
      new Promise((resolve, reject) => {
        const w = new Worker(WORKER, { workerData: { policies: POLICIES, jobs, start }, env })
        w.once('message', resolve)
        w.once('error', reject)
        w.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
      }),
  )
  while (Atomics.load(gate, 1) < shares.length) await new Promise((r) => setTimeout(r, 5))
  Atomics.store(gate, 0, 1)
  Atomics.notify(gate, 0)
  const answers = await Promise.all(done)
  const backends = new Set(answers.map((a) => a.backend))
  assert.deepEqual([...backends], [wasm ? 'wasm' : 'native'])
  return Object.assign({}, ...answers.map((a) => a.results))
}

function split(jobs, n) {
  return Array.from({ length: n }, (_, i) => jobs.filter((_, j) => j % n === i))
}

let nativeSequential

test('native: worker_threads sharing policies match sequential use', async () => {
  assert.equal(api.backend, 'native')
  nativeSequential = workload(api, POLICIES, JOBS)
  assert.equal(Object.keys(nativeSequential).length, POLICIES.length * JOBS.length)
  // Every worker does the whole workload at once, and each does a share.
  const all = await inWorkers(Array(WORKERS).fill(JOBS), false)
  assert.deepEqual(all, nativeSequential)
  const shared = await inWorkers(split(JOBS, WORKERS), false)
  assert.deepEqual(shared, nativeSequential)
})

test('wasm: worker_threads sharing policies match sequential use (and native)', async () => {
  const sequential = await inWorkers([JOBS], true)
  const concurrent = await inWorkers(split(JOBS, WORKERS), true)
  assert.deepEqual(concurrent, sequential)
  assert.deepEqual(sequential, nativeSequential ?? workload(api, POLICIES, JOBS))
})
