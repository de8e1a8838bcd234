#!/usr/bin/env node
// Node benchmarks of ojs-retry, native (napi-rs) and wasm, against the
// boundary floors and the peers, all in one process so that ratios compare
// figures measured under the same conditions. Run by scripts/bench, which
// builds the addons first; prints one JSON document on stdout:
//   { "suite": "node", "env": {...}, "results": [{ group, name, ns, note? }] }
// `ns` is the median over samples of the time per operation. The samples
// are taken in rounds that visit every benchmark in turn, so that a change
// in the machine's load during the run touches a subject and its baseline
// alike. Timings are information only: nothing asserts them.
//
//   node bench/node/bench.mjs [--quick]
//
// Env: OJS_BENCH_FLOOR (path of floor.<platform>.node, bench/napifloor;
//      default: the one scripts/bench builds in target/bench/napi).
import { createRequire } from 'node:module'
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import os from 'node:os'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
const require = createRequire(import.meta.url)
const QUICK = process.argv.includes('--quick')
const ONLY = new RegExp(process.argv.find((a) => a.startsWith('--only='))?.slice(7) ?? '')

const findNode = (dir, re) => {
  const f = readdirSync(dir).find((x) => re.test(x))
  if (!f) throw new Error(`no ${re} in ${dir}`)
  return join(dir, f)
}
// The package as users load it (the loader picks the native addon).
delete process.env.OJS_RETRY_FORCE_WASM
const native = require(join(ROOT, 'bindings-node', 'index.js'))
if (native.backend !== 'native') throw new Error(`the native addon did not load (backend ${native.backend})`)
const floor = require(process.env.OJS_BENCH_FLOOR ?? findNode(join(ROOT, 'target', 'bench', 'napi'), /^floor\..+\.node$/))
const wasm = await import(join(ROOT, 'bindings-wasm', 'pkg', 'node.js'))
const { Backoffs } = require('bullmq')
const Ajv2020 = require('ajv/dist/2020').default

const POLICY_TEXT = readFileSync(join(ROOT, 'examples', '12.3-aggressive-dead-letter.json'), 'utf8')
const SCHEMA = JSON.parse(readFileSync(join(ROOT, 'bench', 'schema', 'retry-policy.schema.json'), 'utf8'))

// A raw wasm module exporting `noop: () -> ()` and `id: (f64, f64) -> f64`
// (returns its first argument): the wasm boundary floor without any glue.
const RAW_WASM = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x0a, 0x02, 0x60, 0x00, 0x00, 0x60, 0x02, 0x7c, 0x7c, 0x01, 0x7c, // types
  0x03, 0x03, 0x02, 0x00, 0x01, // functions
  0x07, 0x0d, 0x02, 0x04, 0x6e, 0x6f, 0x6f, 0x70, 0x00, 0x00, 0x02, 0x69, 0x64, 0x00, 0x01, // exports
  0x0a, 0x09, 0x02, 0x02, 0x00, 0x0b, 0x04, 0x00, 0x20, 0x00, 0x0b, // code
])
const raw = new WebAssembly.Instance(new WebAssembly.Module(RAW_WASM)).exports

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

// Boundary floors.
bench('floor', 'native no-op function', () => floor.noop())
const fl = new floor.Floor()
// The same arguments as the subjects' `delay(nOf(i), Math.random())`.
bench('floor', 'native no-op method (n, u) -> number', (i) => fl.delay(nOf(i), Math.random()))
// The shape of what `RetryPolicy#delay(n, u)` calls: a free function taking
// the policy's handle first (a small integer: generation 1, slot 7).
const H = 2 ** 24 + 7
bench('floor', 'native no-op function (h, n, u) -> number', (i) => floor.delayH(H, nOf(i), Math.random()))
bench('floor', 'native no-op function (h, n) -> number', (i) => floor.delayH2(H, nOf(i)))
// The same two no-ops registered with Node-API directly, as the addon's
// fast delay calls are (bindings-node/src/raw.rs): the boundary without
// napi-rs's generated callback.
bench('floor', 'raw Node-API no-op function (h, n, u) -> number', (i) => floor.rawH(H, nOf(i), Math.random()))
bench('floor', 'raw Node-API no-op function (h, n) -> number', (i) => floor.rawH2(H, nOf(i)))
bench('floor', 'raw wasm no-op export', () => raw.noop())
bench('floor', 'raw wasm (f64, f64) -> f64 export', (i) => raw.id(nOf(i), Math.random()))

// delay(n): the engine (native, wasm) and the peers.
const pn = new native.RetryPolicy(POLICY_TEXT)
const pw = new wasm.RetryPolicy(POLICY_TEXT)
bench('delay', 'pure JS formula', (i) => {
  const n = nOf(i)
  return Math.floor(Math.min(I * C ** (n - 1), CAP) * (0.5 + Math.random()))
})
const bull = { type: 'exponential', delay: I, jitter: 0.5 }
bench('delay', 'BullMQ Backoffs.calculate', (i) => Backoffs.calculate(bull, nOf(i)), {
  note: 'base 2, no cap',
})
/**
 * `fn` compiled afresh, its free variables bound from `env`: call sites of
 * its own. Closures made from one literal share V8's type feedback, so in
 * the loops over [native, wasm] below each `p.delay(...)` site saw both
 * classes and ran polymorphic, which no application holding one backend
 * does (2–4 ns a call measured: native delay(n) 50.8 and 52.7 ns shared,
 * 48.0 and 48.5 ns with sites of its own, in two runs); the floors are
 * literals of their own already.
 */
function own(fn, env) {
  return new Function(...Object.keys(env), `return (${fn})`)(...Object.values(env))
}
for (const [label, p] of [['native', pn], ['wasm', pw]]) {
  const env = { p, nOf }
  bench('delay', `${label} delay(n, u)`, own((i) => p.delay(nOf(i), Math.random()), env))
  bench('delay', `${label} delay(n, { u })`, own((i) => p.delay(nOf(i), { u: Math.random() }), env))
  bench('delay', `${label} delay(n, { seed })`, own((i) => p.delay(nOf(i), { seed: i }), env))
  bench('delay', `${label} delay(n, { key })`, own((i) => p.delay(nOf(i), { key: 'job-8f3a' }), env))
  bench('delay', `${label} delay(n), the host's entropy`, own((i) => p.delay(nOf(i)), env))
}

// Batch: 25 delays in one call against 25 single calls, per delay.
const NS25 = Array.from({ length: 25 }, (_, i) => i + 1)
const NS25F = Float64Array.from(NS25)
for (const [label, p] of [['native', pn], ['wasm', pw]]) {
  const env = { p, j: { seed: 42 }, NS25, NS25F }
  bench('batch', `${label} 25 × delay(n, { seed }), per delay`, own(() => {
    let s = 0
    for (let n = 1; n <= 25; n++) s += p.delay(n, j)
    return s
  }, env), { per: 25 })
  bench('batch', `${label} delays(Array(25), { seed }), per delay`, own(() => p.delays(NS25, j).length, env), { per: 25 })
  bench('batch', `${label} delays(Float64Array(25), { seed }), per delay`, own(() => p.delays(NS25F, j).length, env), { per: 25 })
}

// decide: a retryable failure checked against the three patterns.
const failure = { attempt: 3, type: 'external.timeout' }
for (const [label, p] of [['native', pn], ['wasm', pw]]) {
  bench('decide', `${label} decide(failure, { now, jitter: { seed } })`, own((i) =>
    p.decide(failure, { now: 1_770_892_265_000, jitter: { seed: i } }).delayMs, { p, failure }))
}

// Parse + merge + validate the §12.3 document.
const validate = new Ajv2020({ allErrors: true }).compile(SCHEMA)
bench('parse', 'JSON.parse + ajv (compiled once)', () => {
  const doc = JSON.parse(POLICY_TEXT)
  if (!validate(doc)) throw new Error('ajv rejected §12.3')
  return doc.max_attempts
})
bench('parse', 'JSON.parse only', () => JSON.parse(POLICY_TEXT).max_attempts)
// What any napi-rs class instance costs to create and collect (napi_wrap,
// its weak reference, napi-rs's per-instance bookkeeping, the finalizer):
// the floor of `new RetryPolicy(text)` while policies were such instances.
bench('parse', 'native no-op class: new Floor()', () => new floor.Floor().delay(1, 0))
bench('parse', 'native new RetryPolicy(text)', () => new native.RetryPolicy(POLICY_TEXT).maxAttempts)
// The same without a document (the defaults): what creating and freeing any
// wasm-bindgen object costs here, plus the core's defaults.
bench('parse', 'wasm new RetryPolicy() (no document)', () => {
  const p = new wasm.RetryPolicy()
  const m = p.maxAttempts
  p.free()
  return m
})
bench('parse', 'wasm new RetryPolicy(text)', () => {
  const p = new wasm.RetryPolicy(POLICY_TEXT)
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
      env: { node: process.version, cpu, cores: os.cpus().length },
      results,
    },
    null,
    2,
  ) + '\n',
)
