#!/usr/bin/env node
// The hot calls a queue makes per failed job, natively and in wasm, each
// beside its framework's no-op floor of the same signature and BullMQ's own
// backoff, in one process (information only; no test asserts timings):
//
//   node bindings-node/scripts/bench.mjs [--rounds=N]
//
// Needs the addon (npm run build), the wasm package (scripts/build-wasm), the
// floors (scripts/bench builds them into target/bench: bench/napifloor,
// bench/wasmfloor) and bench/node's dependencies (bullmq). Samples are taken
// in rounds that visit every subject in turn (a change in the machine's load
// touches a subject and its floor alike); each figure is the median.
import { createRequire } from 'node:module'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const PKG = join(dirname(fileURLToPath(import.meta.url)), '..')
const ROOT = join(PKG, '..')
const OUT = process.env.OJS_BENCH_OUT ?? join(ROOT, 'target', 'bench')
const require = createRequire(import.meta.url)
const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 15)
// One backend per process: the JS layer's functions are shared by both
// backends' classes, and V8's type feedback would see both, which no
// application holding one backend does.
const ONLY = process.argv.find((a) => a.startsWith('--backend='))?.slice(10) ?? 'native'
const SAMPLE_NS = 20e6

delete process.env.OJS_RETRY_FORCE_WASM
const native = require(join(PKG, 'index.js'))
if (native.backend !== 'native') throw new Error('the native addon did not load')
const wasm = await import(pathToFileURL(join(ROOT, 'bindings-wasm', 'pkg', 'node.js')).href)
const find = (dir, re) => join(dir, readdirSync(dir).find((f) => re.test(f)))
const rawNative = require(find(PKG, /^ojs-retry\..+\.node$/))
const rawWasm = await import(pathToFileURL(join(ROOT, 'bindings-wasm', 'pkg', 'ojs_retry_wasm.js')).href)
const { READERS } = await import(pathToFileURL(join(ROOT, 'bindings-wasm', 'pkg', 'host.js')).href)
const napiFloor = require(find(join(OUT, 'napi'), /^floor\..+\.node$/))
const wasmFloor = await import(pathToFileURL(join(OUT, 'wasmfloor', 'node.mjs')).href)
const { Backoffs } = createRequire(join(ROOT, 'bench', 'node', 'package.json'))('bullmq')

const benches = []
const bench = (name, fn) => {
  const side = name.startsWith('wasm') ? 'wasm' : name.startsWith('native') || name.startsWith('napi') ? 'native' : 'both'
  if (side !== 'both' && side !== ONLY) return
  fn(0)
  benches.push({ name, fn, times: [] })
}
function calibrate(fn) {
  const warm = process.hrtime.bigint()
  for (let i = 0; Number(process.hrtime.bigint() - warm) < SAMPLE_NS * 5; i++) fn(i)
  let n = 1
  for (;;) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) fn(i)
    const dt = Number(process.hrtime.bigint() - t0)
    if (dt > SAMPLE_NS / 4) return Math.max(1, Math.round((n * SAMPLE_NS) / dt))
    n *= 4
  }
}

const POLICY = '{"max_attempts": 10, "initial_interval": "PT15S", "backoff_coefficient": 4, "max_interval": "PT1H", "non_retryable_errors": ["validation.*", "auth.*", "payment.card_*"]}'
const NOW = 1_770_892_265_000
const JOBS = Array.from({ length: 1024 }, (_, i) => `job-${(0x8f3a00 + i * 7919).toString(16)}`)
const job = (i) => JOBS[i & 1023]
const nOf = (i) => (i % 9) + 1
const pn = new native.RetryPolicy(POLICY)
const pw = new wasm.RetryPolicy(POLICY)
const hn = rawNative.policyNew(POLICY, READERS)
const hw = rawWasm.policyNew(POLICY, READERS)
const outN = Buffer.from(new Float64Array(8).buffer)
const outW = new Float64Array(8)
const fhN = napiFloor.floorHandle()
const fhW = wasmFloor.floorHandle()

bench('native delay(n, { key })', (i) => pn.delay(nOf(i), { key: job(i) }))
bench('native export policyDelay(h, n, u, seed, key)', (i) => rawNative.policyDelay(hn, nOf(i), undefined, undefined, job(i)))
bench('napi-rs no-op of the same signature', (i) => napiFloor.policyDelay(fhN, nOf(i), undefined, undefined, job(i)))
bench('wasm delay(n, { key })', (i) => pw.delay(nOf(i), { key: job(i) }))
bench('wasm export policyDelay(h, n, u, seed, key)', (i) => rawWasm.policyDelay(hw, nOf(i), undefined, undefined, job(i)))
bench('wasm-bindgen no-op of the same signature', (i) => wasmFloor.policyDelay(fhW, nOf(i), undefined, undefined, job(i)))
bench('native decide({ attempt, type }, { key, now })', (i) => pn.decide({ attempt: nOf(i), type: 'external.timeout' }, { key: job(i), now: NOW }).delayMs)
bench('native export policyDecide(h, attempt, type, ..., key, now, out)', (i) =>
  rawNative.policyDecide(hn, nOf(i), 'external.timeout', undefined, undefined, undefined, undefined, undefined, job(i), NOW, outN) ?? 0)
bench('napi-rs no-op of the same signature', (i) =>
  napiFloor.policyDecide(fhN, nOf(i), 'external.timeout', undefined, undefined, undefined, undefined, undefined, job(i), NOW, outN) ?? 0)
bench('wasm decide({ attempt, type }, { key, now })', (i) => pw.decide({ attempt: nOf(i), type: 'external.timeout' }, { key: job(i), now: NOW }).delayMs)
bench('wasm export policyDecide(h, attempt, type, ..., key, now, out)', (i) =>
  rawWasm.policyDecide(hw, nOf(i), 'external.timeout', undefined, undefined, undefined, undefined, undefined, job(i), NOW, outW) ?? 0)
bench('wasm-bindgen no-op of the same signature', (i) =>
  wasmFloor.policyDecide(fhW, nOf(i), 'external.timeout', undefined, undefined, undefined, undefined, undefined, job(i), NOW, outW) ?? 0)
const bull = { type: 'exponential', delay: 15000, jitter: 0.5 }
bench('BullMQ Backoffs.calculate', (i) => Backoffs.calculate(bull, nOf(i)))
const sn = native.RetryState.fromJSON('{"attempt": 0, "errors": [], "next_retry_at": null, "terminal": null}')
const sw = wasm.RetryState.fromJSON('{"attempt": 0, "errors": [], "next_retry_at": null, "terminal": null}')
const wide = new native.RetryPolicy('{"max_attempts": 1000000000}')
const widew = new wasm.RetryPolicy('{"max_attempts": 1000000000}')
bench('native recordFailure(p, { type, message }, { key, now })', (i) => sn.recordFailure(wide, { type: 'external.timeout', message: 'boom' }, { key: job(i), now: NOW }).delayMs)
bench('wasm recordFailure(p, { type, message }, { key, now })', (i) => sw.recordFailure(widew, { type: 'external.timeout', message: 'boom' }, { key: job(i), now: NOW }).delayMs)

for (const b of benches) b.n = calibrate(b.fn)
for (let r = 0; r < ROUNDS; r++) {
  for (const b of benches) {
    let sink = 0
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < b.n; i++) sink += b.fn(i) ?? 0
    b.times.push(Number(process.hrtime.bigint() - t0) / b.n)
    globalThis.__sink = sink
  }
}
const rows = benches.map((b) => {
  const t = [...b.times].sort((x, y) => x - y)
  return { name: b.name, ns: t[Math.floor(t.length / 2)] }
})
for (const r of rows) console.log(`${r.name.padEnd(72)} ${r.ns.toFixed(1).padStart(9)} ns`)
console.log(JSON.stringify({ node: process.version, backend: ONLY, rounds: ROUNDS, rows }))
