#!/usr/bin/env node
// Rough per-call costs (information only; no test asserts timings):
//   node bindings-node/scripts/bench.mjs [iterations]
// Compares delay(n) through the native addon and through the wasm build,
// and the batch call delays() per element.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PKG = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const N = Number(process.argv[2] ?? 1_000_000)

delete process.env.OJS_RETRY_FORCE_WASM
const native = require(join(PKG, 'index.js'))
const wasm = await import('ojs-retry-wasm')

function time(label, fn, per = N) {
  for (let i = 0; i < Math.min(N, 100_000); i++) fn(i) // warm up
  const t0 = process.hrtime.bigint()
  let sink = 0
  for (let i = 0; i < N; i++) sink += fn(i) ?? 0
  const ns = Number(process.hrtime.bigint() - t0) / per
  console.log(`${label.padEnd(52)} ${ns.toFixed(1).padStart(8)} ns/call`)
  return sink
}

const key = { key: 'job-8f3a' }
const pn = new native.RetryPolicy({ max_attempts: 10 })
const pw = new wasm.RetryPolicy({ max_attempts: 10 })
const ns = Float64Array.from({ length: 1000 }, (_, i) => (i % 9) + 1)
console.log(`backend=${native.backend}, ${N} iterations`)
time('native: policy.maxAttempts (getter)', () => pn.maxAttempts)
time('native: policy.delay(n, { u: 0.5 })', (i) => pn.delay((i % 9) + 1, { u: 0.5 }))
time("native: policy.delay(n, { key: 'job-8f3a' })", (i) => pn.delay((i % 9) + 1, key))
time('native: policy.delay(n) (OS entropy)', (i) => pn.delay((i % 9) + 1))
time('wasm:   policy.delay(n, { key })', (i) => pw.delay((i % 9) + 1, key))
const M = Math.max(1, Math.floor(N / 1000))
const perElem = (label, fn) => {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < M; i++) fn()
  console.log(`${label.padEnd(52)} ${(Number(process.hrtime.bigint() - t0) / (M * 1000)).toFixed(1).padStart(8)} ns/element`)
}
perElem('native: policy.delays(Float64Array(1000), { key }) (with a copy)', () => pn.delays(ns.slice(), key))
perElem('native: policy.schedule(1000, { key })', () => pn.schedule(1000, key))
