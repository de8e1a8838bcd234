#!/usr/bin/env node
// Node benchmarks of ojs-retry, native (napi-rs) and wasm (wasm-bindgen),
// against their frameworks' floors and the peers, all in one process so
// that ratios compare figures measured under the same conditions. Run by
// scripts/bench, which builds the addon, the wasm package and both floors
// first; prints one JSON document on stdout:
//   { "suite": "node", "env": {...}, "results": [{ group, name, ns, note? }] }
// `ns` is the median over samples of the time per operation. The samples
// are taken in rounds that visit every benchmark in turn, so that a change
// in the machine's load during the run touches a subject and its baseline
// alike. Timings are information only: nothing asserts them.
//
//   node bench/node/bench.mjs [--quick] [--only=REGEX]
//
// The calls measured are the ones a queue makes when a job fails:
// `policy.delay(n, { key: jobId })` and `policy.decide(failure, { key:
// jobId, now })`, each next to the same call on its framework's floor: a
// plain class with no-op methods of the same shapes (bench/napifloor,
// bench/wasmfloor).
//
// Env: OJS_BENCH_OUT (where scripts/bench put the floors; default
//      target/bench).
import { createRequire } from 'node:module'
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import os from 'node:os'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
const OUT = process.env.OJS_BENCH_OUT ?? join(ROOT, 'target', 'bench')
const require = createRequire(import.meta.url)
const QUICK = process.argv.includes('--quick')
const ONLY = new RegExp(process.argv.find((a) => a.startsWith('--only='))?.slice(7) ?? '')

const findFile = (dir, re) => {
  const f = readdirSync(dir).find((x) => re.test(x))
  if (!f) throw new Error(`no ${re} in ${dir}`)
  return join(dir, f)
}
// The package as users load it (the loader picks the native addon).
delete process.env.OJS_RETRY_FORCE_WASM
const native = require(join(ROOT, 'bindings-node', 'index.js'))
if (native.backend !== 'native') throw new Error(`the native addon did not load (backend ${native.backend})`)
const wasm = await import(pathToFileURL(join(ROOT, 'bindings-wasm', 'pkg', 'node.js')).href)
const napiFloor = require(findFile(join(OUT, 'napi'), /^floor\..+\.node$/))
const wasmFloor = await import(pathToFileURL(join(OUT, 'wasmfloor', 'node.mjs')).href)
const { Backoffs } = require('bullmq')
const Ajv2020 = require('ajv/dist/2020').default

const POLICY_TEXT = readFileSync(join(ROOT, 'examples', '12.3-aggressive-dead-letter.json'), 'utf8')
const SCHEMA = JSON.parse(readFileSync(join(ROOT, 'bench', 'schema', 'retry-policy.schema.json'), 'utf8'))

// ---------------------------------------------------------------- harness
// 25 samples of each benchmark, one per round: a round visits every
// benchmark in under a second, so a subject and its baseline are sampled
// close together. (Five rounds of five samples left ~4 s between them,
// and a change of the machine's load in between moved a ratio by up to
// 0.2: native delay(n) against its floor read 1.31×, 1.55× and 1.47× in
// three runs; one sample per round read 1.33×, 1.31× and 1.33×.)
const ROUNDS = QUICK ? 1 : 25
const SAMPLES = QUICK ? 3 : 1 // per round
const SAMPLE_NS = QUICK ? 2e6 : 20e6

/** How many calls of `fn` fill one sample, after a warm-up (JIT tiers). */
function calibrate(fn) {
  const warm = process.hrtime.bigint()
  for (let i = 0; Number(process.hrtime.bigint() - warm) < SAMPLE_NS * 5; i++) fn(i)
  let n = 1
  for (;;) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) fn(i)
    const dt = Number(process.hrtime.bigint() - t0)
    if (dt > SAMPLE_NS / 4 || n > 1e8) {
      n = Math.max(1, Math.round((n * SAMPLE_NS) / Math.max(dt, 1)))
      break
    }
    n *= 4
  }
  return n
}

/** `SAMPLES` samples of ns per operation (`per` operations per call). */
function samples(fn, n, per) {
  const times = []
  let sink = 0
  for (let s = 0; s < SAMPLES; s++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < n; i++) sink += fn(i) ?? 0
    times.push(Number(process.hrtime.bigint() - t0) / (n * per))
  }
  globalThis.__sink = sink
  return times
}

const benches = []
function bench(group, name, fn, opts = {}) {
  if (!ONLY.test(`${group} ${name}`)) return
  fn(0) // fail loudly before timing
  benches.push({ group, name, fn, per: opts.per ?? 1, note: opts.note, times: [] })
}

function run() {
  for (const b of benches) b.n = calibrate(b.fn)
  for (let r = 0; r < ROUNDS; r++) {
    for (const b of benches) b.times.push(...samples(b.fn, b.n, b.per))
  }
  return benches.map((b) => {
    const t = [...b.times].sort((x, y) => x - y)
    const ns = t[Math.floor(t.length / 2)]
    process.stderr.write(`node ${b.group.padEnd(8)} ${b.name.padEnd(52)} ${ns.toFixed(1).padStart(9)} ns\n`)
    return { group: b.group, name: b.name, ns, ...(b.note ? { note: b.note } : {}) }
  })
}

// ---------------------------------------------------------------- the runs
const nOf = (i) => (i % 25) + 1 // retries 1..25, as in the Rust benches
const I = 15_000, C = 4, CAP = 3_600_000
const NOW = 1_770_892_265_000
// A queue's job ids: a different key on every call, as when jobs fail.
const JOBS = Array.from({ length: 1024 }, (_, i) => `job-${(0x8f3a00 + i * 7919).toString(16)}`)
const job = (i) => JOBS[i & 1023]

// Each backend's subjects and its floor's are written out separately (not
// made by one helper): closures from one literal share V8's type feedback,
// so one call site would see both classes and run polymorphic, which no
// application holding one backend does.
const pn = new native.RetryPolicy(POLICY_TEXT)
const pw = new wasm.RetryPolicy(POLICY_TEXT)
const fn = new napiFloor.Floor()
const fw = new wasmFloor.Floor()

// delay(n, { key: jobId }): the call a queue makes, and its floors.
bench('delay', 'native delay(n, { key })', (i) => pn.delay(nOf(i), { key: job(i) }))
bench('floor', 'napi-rs no-op delay(n, { key }), bag read by napi-rs', (i) => fn.delay(nOf(i), { key: job(i) }))
bench('floor', 'napi-rs no-op delayBare(n, { key }), bag not read', (i) => fn.delayBare(nOf(i), { key: job(i) }))
bench('floor', "napi-rs no-op delaySerde(n, { key }), bag read by napi-rs's serde", (i) => fn.delaySerde(nOf(i), { key: job(i) }))
// A free function: napi-rs's call without a class instance (no borrow
// scope, no type-tag check on `this`).
bench('floor', 'napi-rs no-op free function noop()', () => napiFloor.noop())
bench('floor', 'napi-rs no-op method delayBare(n)', (i) => fn.delayBare(nOf(i)))
bench('delay', 'wasm delay(n, { key })', (i) => pw.delay(nOf(i), { key: job(i) }))
bench('floor', 'wasm-bindgen no-op delay(n, { key }), bag read by serde-wasm-bindgen', (i) => fw.delay(nOf(i), { key: job(i) }))
bench('floor', 'wasm-bindgen no-op delayBare(n, { key }), bag not read', (i) => fw.delayBare(nOf(i), { key: job(i) }))
// What the structuredClone copy of every object argument cost by itself,
// which both bindings made before issue 24 (for comparison with earlier
// rounds; the binding no longer copies).
bench('floor', 'structuredClone({ key })', (i) => structuredClone({ key: job(i) }).key.length)
bench('floor', 'structuredClone(failure) + structuredClone({ key, now })', (i) =>
  structuredClone({ attempt: 3, type: 'external.timeout' }).attempt +
  structuredClone({ key: job(i), now: NOW }).now)
// Since issue 24 the API calls typed free functions of the binding crate
// (policyDelay, policyDecide): their frameworks' no-ops of the same
// signatures, called with the same arguments.
const fhN = napiFloor.floorHandle()
const fhW = wasmFloor.floorHandle()
const outN = Buffer.from(new Float64Array(8).buffer)
const outW = new Float64Array(8)
bench('floor', 'napi-rs no-op policyDelay(h, n, u, seed, key), the export of delay', (i) =>
  napiFloor.policyDelay(fhN, nOf(i), undefined, undefined, job(i)))
bench('floor', 'wasm-bindgen no-op policyDelay(h, n, u, seed, key), the export of delay', (i) =>
  wasmFloor.policyDelay(fhW, nOf(i), undefined, undefined, job(i)))
bench('floor', 'napi-rs no-op policyDecide(h, attempt, type, ..., key, now, out), the export of decide', (i) =>
  napiFloor.policyDecide(fhN, 3, 'external.timeout', undefined, undefined, undefined, undefined, undefined, job(i), NOW, outN) ?? 0)
bench('floor', 'wasm-bindgen no-op policyDecide(h, attempt, type, ..., key, now, out), the export of decide', (i) =>
  wasmFloor.policyDecide(fhW, 3, 'external.timeout', undefined, undefined, undefined, undefined, undefined, job(i), NOW, outW) ?? 0)
// The other jitter sources, for scale.
bench('delay', 'native delay(n, { seed })', (i) => pn.delay(nOf(i), { seed: i }))
bench('delay', 'native delay(n, { u })', (i) => pn.delay(nOf(i), { u: Math.random() }))
bench('delay', "native delay(n), the host's entropy", (i) => pn.delay(nOf(i)))
bench('delay', 'wasm delay(n, { seed })', (i) => pw.delay(nOf(i), { seed: i }))
bench('delay', 'wasm delay(n, { u })', (i) => pw.delay(nOf(i), { u: Math.random() }))
bench('delay', "wasm delay(n), the host's entropy", (i) => pw.delay(nOf(i)))

// The peers: a hand-written formula, and BullMQ's own backoff (what a
// BullMQ worker calls for a failed job).
bench('delay', 'pure JS formula', (i) => {
  const n = nOf(i)
  return Math.floor(Math.min(I * C ** (n - 1), CAP) * (0.5 + Math.random()))
})
const bull = { type: 'exponential', delay: I, jitter: 0.5 }
bench('delay', 'BullMQ Backoffs.calculate', (i) => Backoffs.calculate(bull, nOf(i)), {
  note: 'base 2, no cap, jitter 0.5',
})

// decide(failure, { key: jobId, now }): a retryable failure checked against
// the three patterns, and the floors of the same shape.
bench('decide', 'native decide(failure, { key, now })', (i) =>
  pn.decide({ attempt: 3, type: 'external.timeout' }, { key: job(i), now: NOW }).delayMs)
bench('floor', 'napi-rs no-op decide(failure, { key, now }), objects read and made by napi-rs', (i) =>
  fn.decide({ attempt: 3, type: 'external.timeout' }, { key: job(i), now: NOW }).delayMs)
bench('floor', 'napi-rs no-op decideBare(failure, { key, now }), nothing read or made', (i) =>
  fn.decideBare({ attempt: 3, type: 'external.timeout' }, { key: job(i), now: NOW }))
bench('floor', "napi-rs no-op decideSerde(failure, { key, now }), objects read and made by napi-rs's serde", (i) =>
  fn.decideSerde({ attempt: 3, type: 'external.timeout' }, { key: job(i), now: NOW }).delayMs)
bench('decide', 'wasm decide(failure, { key, now })', (i) =>
  pw.decide({ attempt: 3, type: 'external.timeout' }, { key: job(i), now: NOW }).delayMs)
bench('floor', 'wasm-bindgen no-op decide(failure, { key, now }), objects read and made by serde-wasm-bindgen', (i) =>
  fw.decide({ attempt: 3, type: 'external.timeout' }, { key: job(i), now: NOW }).delayMs)
bench('floor', 'wasm-bindgen no-op decideBare(failure, { key, now }), nothing read or made', (i) =>
  fw.decideBare({ attempt: 3, type: 'external.timeout' }, { key: job(i), now: NOW }))

// Batch: 25 delays through one Float64Array against 25 single calls, per
// delay (the retry numbers are written into the array before each call,
// since the call replaces them with the delays).
const NS25F = new Float64Array(25)
const fill = (a) => {
  for (let n = 0; n < 25; n++) a[n] = n + 1
  return a
}
bench('batch', 'native 25 × delay(n, { key }), per delay', (i) => {
  let s = 0
  const key = job(i)
  for (let n = 1; n <= 25; n++) s += pn.delay(n, { key })
  return s
}, { per: 25 })
bench('batch', 'native delays(Float64Array(25), { key }), per delay', (i) =>
  pn.delays(fill(NS25F), { key: job(i) })[24], { per: 25 })
bench('floor', 'napi-rs no-op delays(Float64Array(25), { key }), per delay', (i) =>
  fn.delays(fill(NS25F), { key: job(i) })[24], { per: 25 })
bench('batch', 'wasm 25 × delay(n, { key }), per delay', (i) => {
  let s = 0
  const key = job(i)
  for (let n = 1; n <= 25; n++) s += pw.delay(n, { key })
  return s
}, { per: 25 })
bench('batch', 'wasm delays(Float64Array(25), { key }), per delay', (i) =>
  pw.delays(fill(NS25F), { key: job(i) })[24], { per: 25 })
bench('floor', 'wasm-bindgen no-op delays(Float64Array(25), { key }), per delay', (i) =>
  fw.delays(fill(NS25F), { key: job(i) })[24], { per: 25 })

// Parse + merge + validate the §12.3 document (information).
const validate = new Ajv2020({ allErrors: true }).compile(SCHEMA)
bench('parse', 'JSON.parse + ajv (compiled once)', () => {
  const doc = JSON.parse(POLICY_TEXT)
  if (!validate(doc)) throw new Error('ajv rejected §12.3')
  return doc.max_attempts
})
bench('parse', 'native RetryPolicy.fromJSON(text)', () => native.RetryPolicy.fromJSON(POLICY_TEXT).maxAttempts)
bench('parse', 'wasm RetryPolicy.fromJSON(text)', () => {
  const p = wasm.RetryPolicy.fromJSON(POLICY_TEXT)
  const m = p.maxAttempts
  p.free()
  return m
})

const results = run()
const cpu = os.cpus()[0]?.model ?? 'unknown'
process.stdout.write(
  JSON.stringify(
    {
      suite: 'node',
      env: {
        node: process.version,
        cpu,
        cores: os.cpus().length,
        peers: { bullmq: require('bullmq/package.json').version, ajv: require('ajv/package.json').version },
      },
      results,
    },
    null,
    2,
  ) + '\n',
)
