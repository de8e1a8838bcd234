// The native RetryPolicy as a handle: the loader's JS class holds a number
// that names a policy in the addon's per-thread table, and a
// FinalizationRegistry frees the entry when the object is collected.
// Checked here: values that are not policies (forged, cloned, proxied) and
// handles that name no policy (released, reused slot, made up) are typed
// errors, never a crash or another policy's answer; entries are freed after
// GC; worker threads each keep their own table. The GC scenarios run in
// child processes started with --expose-gc (lib/handles-gc.mjs).
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { readCounter, throwsCoded } from './lib/api-suite.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = resolve(HERE, '..', '..')
const PKG = join(ROOT, 'bindings-node')
const require = createRequire(import.meta.url)
delete process.env.OJS_RETRY_FORCE_WASM
const api = require(join(PKG, 'index.js'))
// The addon's own exports (the module the loader required: same object).
const bin = require(join(PKG, readdirSync(PKG).find((f) => /^ojs-retry\..+\.node$/.test(f))))
const { RetryPolicy, RetryState } = api
const ARG = 'validation.invalid_argument'
const STALE = 'expected a live RetryPolicy, found a released or unknown policy handle'

/** A typed error for field `policy`, with this message. */
function policyError(fn, message) {
  const err = throwsCoded(fn, ARG, 'policy')
  assert.equal(err.faults[0].message, message)
  assert.equal(err.message, `${ARG}: policy: ${message}`)
}

test('the native backend loaded', () => {
  assert.equal(api.backend, 'native')
  assert.equal(typeof api.__livePolicies, 'function')
  assert.ok(!Object.keys(api).includes('__livePolicies'), 'the diagnostic export is not enumerable')
})

test('policies are instances of the exported class, from every constructor', () => {
  const made = [
    new RetryPolicy(),
    new RetryPolicy('{"max_attempts": 4}'),
    new RetryPolicy({ max_attempts: 4 }),
    RetryPolicy.merge({ max_attempts: 4 }, '{"jitter": false}'),
    RetryPolicy.preset('sidekiq', { retry: 5 }),
  ]
  for (const p of made) {
    assert.ok(p instanceof RetryPolicy)
    assert.equal(Object.getPrototypeOf(p), RetryPolicy.prototype)
    assert.deepEqual(Object.keys(p), [])
    assert.equal(typeof p.delay(1, 0.5), 'number')
  }
  // A subclass gets a handle too, and is accepted wherever a policy is.
  class Mine extends RetryPolicy {
    twice(n) {
      return 2 * this.delay(n, 0.5)
    }
  }
  const m = new Mine('{"max_attempts": 7, "jitter": false}')
  assert.ok(m instanceof Mine && m instanceof RetryPolicy)
  assert.equal(m.maxAttempts, 7)
  assert.equal(m.twice(1), 2000)
  const d = new RetryState().recordFailure(m, { type: 'a', message: 'b' }, { now: 0 })
  assert.equal(d.delayMs, 1000)
})

test('a value that is not a policy: the typed `policy` error, for every member', () => {
  const forged = Object.create(RetryPolicy.prototype)
  const p = new RetryPolicy()
  const others = [
    ['an object', forged],
    ['an object', {}],
    ['an object', structuredClone(p)], // private fields do not survive a clone
    ['an object', new Proxy(p, {})], // nor does a proxy reach them
    ['a number', 5],
    ['undefined', undefined],
    ['a function', RetryPolicy],
  ]
  const proto = RetryPolicy.prototype
  const members = [
    (o) => proto.delay.call(o, 1, 0.5),
    (o) => proto.delay.call(o, 1, { seed: 3 }),
    (o) => proto.delay.call(o, 1, { key: 'k' }),
    (o) => proto.delays.call(o, [1, 2], { u: 0.5 }),
    (o) => proto.delays.call(o, [1, 2], { key: 'k' }),
    (o) => proto.schedule.call(o, 3),
    (o) => proto.decide.call(o, { attempt: 1 }, { now: 0 }),
    (o) => proto.toJSON.call(o),
    (o) => proto.toString.call(o),
    ...[
      'presetSystem',
      'maxAttempts',
      'initialIntervalMs',
      'backoffCoefficient',
      'maxIntervalMs',
      'jitter',
      'nonRetryableErrors',
      'onExhaustion',
      'backoffStrategy',
      'maxRetries',
    ].map((g) => (o) => Object.getOwnPropertyDescriptor(proto, g).get.call(o)),
    (o) => new RetryState().recordFailure(o, { type: 'a', message: 'b' }, { now: 0 }),
    (o) => new RetryState().recordTimeout(o, { now: 0 }),
  ]
  for (const [kind, o] of others) {
    for (const call of members) policyError(() => call(o), `expected a RetryPolicy instance, found ${kind}`)
  }
  assert.throws(() => forged.maxAttempts, { code: ARG, field: 'policy' })
  assert.throws(() => proto.maxAttempts, { code: ARG, field: 'policy' })
  // The real policy still answers.
  assert.equal(p.delay(1, 0.5), 1000)
})

test('a handle that names no policy: typed errors from the full functions, -1 from the fast ones', () => {
  const live = api.__livePolicies()
  const h = bin.policyFromText('{"max_attempts": 4}')
  assert.equal(api.__livePolicies(), live + 1)
  assert.equal(bin.policyMaxAttempts(h), 4)
  assert.ok(bin.__delayU(h, 1, 0.5) > 0)
  assert.ok(bin.__delayE(h, 1) > 0)
  bin.__release(h)
  assert.equal(api.__livePolicies(), live)
  bin.__release(h) // twice: nothing more happens
  assert.equal(api.__livePolicies(), live)

  const released = (x) => {
    policyError(() => bin.policyMaxAttempts(x), STALE)
    policyError(() => bin.policyPresetSystem(x), STALE)
    policyError(() => bin.policyNonRetryableErrors(x), STALE)
    policyError(() => bin.policyToJson(x), STALE)
    policyError(() => bin.policyToString(x), STALE)
    policyError(() => bin.policyDelay(x, 1, 0.5), STALE)
    policyError(() => bin.policyDelays(x, Float64Array.of(1, 2), { seed: 1 }), STALE)
    policyError(() => bin.policySchedule(x, 3, undefined), STALE)
    policyError(() => bin.policyDecide(x, { attempt: 1 }, { now: 0 }), STALE)
    assert.equal(bin.__delayU(x, 1, 0.5), -1)
    assert.equal(bin.__delayS(x, 1, 7), -1)
    assert.equal(bin.__delayE(x, 1), -1)
    assert.equal(bin.__delaysInPlace(new Uint8Array(Float64Array.of(x, 1, 7, 2, 1, 2).buffer)), -1)
  }
  released(h)
  // The next policy takes the freed slot (same index, the low 24 bits)
  // under a new generation: the old handle still names nothing, and
  // releasing it again does not free the new policy.
  const h2 = bin.policyFromText('{"max_attempts": 9}')
  assert.notEqual(h2, h)
  assert.equal(h2 % 2 ** 24, h % 2 ** 24)
  assert.ok(Number.isInteger(h2) && h2 > 0 && h2 < 2 ** 31)
  released(h)
  bin.__release(h)
  assert.equal(bin.policyMaxAttempts(h2), 9)
  bin.__release(h2)
  released(h2)
  // Numbers that are no handle, some close to a live one.
  const h3 = bin.policyFromText('{"max_attempts": 11}')
  const index = h3 % 2 ** 24
  const generation = Math.floor(h3 / 2 ** 24)
  for (const x of [
    0,
    -1,
    0.5,
    h3 + 0.5,
    NaN,
    Infinity,
    -Infinity,
    2 ** 53,
    2 ** 60,
    2 ** 32 + h3, // the live handle's low 32 bits
    ((generation % 127) + 1) * 2 ** 24 + index, // the live slot, another generation
    2 ** 31 + index,
    2 ** 24 - 1, // an index no slot has
  ]) {
    released(x)
    bin.__release(x) // ignored
  }
  assert.equal(bin.policyMaxAttempts(h3), 11)
  bin.__release(h3)
  assert.equal(api.__livePolicies(), live)
})

test('the fast exports (plain Node-API callbacks): numbers only, -1 for anything else, no coercion', () => {
  // Defaults but for max_attempts: 1 s × 2^(n − 1), jitter × (0.5 + u),
  // floored (spec §5): retry 3 at u = 0.25 is 4 000 × 0.75 = 3 000 ms.
  const h = bin.policyFromText('{"max_attempts": 4}')
  try {
    assert.equal(bin.__delayU.name, '__delayU')
    assert.equal(bin.__delayU(h, 3, 0.25), 3000)
    assert.equal(bin.__delayU(h, 3, 0.25, 'extra', {}), 3000)
    assert.equal(bin.__delayS(h, 3, 7), bin.policyDelay(h, 3, { seed: 7 }))
    let coerced = 0
    const sneaky = { valueOf: () => ((coerced += 1), 3) }
    const bad = (x) => [[], [h], [h, 3], [h, '3', x], [h, 3n, x], [h, sneaky, x], [String(h), 3, x], [h, 0, x], [null, 3, x]]
    for (const args of [...bad(0.25), [h, 3, sneaky], [h, 3, '0.25'], [h, 3, NaN], [h, 3, 1], [h, 3, -0.5]]) {
      assert.equal(bin.__delayU(...args), -1, `__delayU(${args.map(String)})`)
    }
    for (const args of [...bad(7), [h, 3, sneaky], [h, 3, '7'], [h, 3, NaN], [h, 3, -1], [h, 3, 1.5], [h, 3, 2 ** 64]]) {
      assert.equal(bin.__delayS(...args), -1, `__delayS(${args.map(String)})`)
    }
    for (const args of [[], [h], [h, '1'], [h, 1n], [h, sneaky], [h, 0], [h, 1.5], [h, -1], [h, NaN], [sneaky, 1]]) {
      assert.equal(bin.__delayE(...args), -1, `__delayE(${args.map(String)})`)
    }
    // The batch: [handle, kind (0: u, 1: seed), u or seed, len, n…] as a
    // Float64Array's bytes; the delays replace the retry numbers.
    const buf = Float64Array.of(h, 0, 0.25, 2, 3, 1)
    assert.equal(bin.__delaysInPlace(new Uint8Array(buf.buffer)), 0)
    assert.deepEqual([...buf.subarray(4)], [3000, 750])
    // A valid batch's 48 bytes, but at byte 12 of their buffer: not f64s.
    const misaligned = new Uint8Array(new ArrayBuffer(64), 12, 48)
    misaligned.set(new Uint8Array(Float64Array.of(h, 0, 0.25, 2, 3, 1).buffer))
    for (const bad of [
      undefined, buf, [h, 0, 0.25, 1, 3], new Uint8Array(0), new Uint8Array(16), new Uint16Array(buf.buffer),
      new Uint8Array(buf.buffer, 0, 44), misaligned,
    ]) {
      assert.equal(bin.__delaysInPlace(bad), -1, String(bad))
    }
    assert.equal(coerced, 0, 'a fast export called valueOf')
    // delay(1) from the thread's generator: 1 000 × (0.5 + u), u ∈ [0, 1).
    for (let i = 0; i < 500; i++) {
      const d = bin.__delayE(h, 1)
      assert.ok(Number.isInteger(d) && d >= 500 && d < 1500, `__delayE(h, 1) = ${d}`)
    }
    // 10^6 values: 1 000 s × (0.5 + u) under a 1 h cap, so 500 fresh draws
    // repeat one about once in 8 runs (10 repeats: odds < 1e-20).
    const wide = bin.policyFromText('{"initial_interval": "PT1000S", "max_interval": "PT1H"}')
    try {
      const drawn = Array.from({ length: 500 }, () => bin.__delayE(wide, 1))
      for (const d of drawn) assert.ok(Number.isInteger(d) && d >= 500_000 && d < 1_500_000, `__delayE(wide, 1) = ${d}`)
      assert.ok(new Set(drawn).size >= 490, `only ${new Set(drawn).size} distinct delays in 500 draws`)
    } finally {
      bin.__release(wide)
    }
  } finally {
    bin.__release(h)
  }
})

test('delays: the copied-out batch equals single calls at every length, with and without code from strings', () => {
  // Up to 100 days: delays past 2^31 ms (24.8 days) come back as exact
  // doubles, not small integers.
  const policy = '{"initial_interval": "PT1000S", "max_interval": "P100D"}'
  const p = new RetryPolicy(policy)
  const batches = {}
  for (let n = 0; n <= 70; n++) {
    const ns = Array.from({ length: n }, (_, i) => ((i * 7) % 30) + 1)
    const single = ns.map((k) => p.delay(k, { seed: 7 }))
    assert.deepEqual(p.delays(ns, { seed: 7 }), single, `length ${n}`)
    batches[n] = single
  }
  assert.ok(batches[70].some((d) => d > 2 ** 31) && batches[70].some((d) => d < 2 ** 31))
  // The loader's fallback where the host forbids `new Function`.
  const script = `
    const { RetryPolicy, backend } = require(${JSON.stringify(join(PKG, 'index.js'))})
    const p = new RetryPolicy(${JSON.stringify(policy)})
    const out = {}
    for (const n of [0, 1, 25, 64, 65, 70]) out[n] = p.delays(Array.from({ length: n }, (_, i) => ((i * 7) % 30) + 1), { seed: 7 })
    console.log(JSON.stringify({ backend, out }))`
  const r = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const { backend, out } = JSON.parse(r.stdout)
  assert.equal(backend, 'native')
  for (const n of [0, 1, 25, 64, 65, 70]) assert.deepEqual(out[n], batches[n], `length ${n} without code from strings`)
})

test('decide: the loader reads each field of the failure, the options and the jitter once, and answers as before', () => {
  const { reads, counted } = readCounter()
  const p = new RetryPolicy({ non_retryable_errors: ['auth.*'] })
  const failure = counted({ attempt: 2, type: 'net.reset', code: undefined, timedOut: false }, 'failure.')
  const options = counted({ now: 5, jitter: counted({ u: 0.25 }, 'jitter.') }, 'options.')
  // Attempt 2 failed: retry 2 of the defaults, 1 s × 2^(2 − 1) × (0.5 +
  // 0.25) = 1 500 ms, at now + 1 500.
  assert.deepEqual(p.decide(failure, options), {
    action: 'retry', reason: 'retryable', handlerCode: null, matchedPattern: null,
    attempt: 2, timedOut: false, retryNumber: 2, delayMs: 1500, nextRetryAt: 1505,
  })
  assert.deepEqual(reads, {
    'failure.attempt': 1, 'failure.type': 1, 'failure.code': 1, 'failure.timedOut': 1,
    'options.now': 1, 'options.jitter': 1, 'jitter.u': 1,
  })
  // The key order of the object (what JSON.stringify writes).
  assert.deepEqual(Object.keys(p.decide({ attempt: 1, type: 'auth.denied' }, { now: 0 })), [
    'action', 'reason', 'handlerCode', 'matchedPattern', 'attempt', 'timedOut', 'retryNumber', 'delayMs', 'nextRetryAt',
  ])
})

test('policy text: the one-pass UTF-8 read agrees with the object form and the wasm build', async () => {
  const wasm = await import(join(ROOT, 'bindings-wasm', 'pkg', 'node.js'))
  const outcome = (make) => {
    try {
      return make().toString()
    } catch (e) {
      return { code: e.code, field: e.field, message: e.message }
    }
  }
  const patterns = [
    'plain',
    'é', // 2 UTF-8 bytes per UTF-16 unit
    '€'.repeat(50), // 3 bytes per unit: the read's worst case
    '😀😀', // 4 bytes per surrogate pair
    '\ufffd', // a real U+FFFD: read again as UTF-16, accepted
    'a\ud800', // a lone surrogate: refused
    '\udc00b',
    'x'.repeat(70_000), // above the kept buffer's size...
    'y', // ...then a short one
    '€'.repeat(30_000),
  ]
  for (const s of patterns) {
    const text = `{"non_retryable_errors": ["${s}.*"], "max_attempts": 5}`
    const native = outcome(() => new RetryPolicy(text))
    assert.deepEqual(native, outcome(() => new wasm.RetryPolicy(text)), `text ${JSON.stringify(s.slice(0, 8))}`)
    if (typeof native === 'string') {
      assert.equal(native, new RetryPolicy(JSON.parse(text)).toString())
      assert.deepEqual(new RetryPolicy(text).nonRetryableErrors, [`${s}.*`])
    } else {
      assert.equal(native.code, 'validation.retry_policy_invalid')
      assert.equal(native.field, '')
    }
  }
})

/** Runs lib/handles-gc.mjs <scenario> with --expose-gc; returns its report. */
function gcScenario(name) {
  const r = spawnSync(process.execPath, ['--expose-gc', join(HERE, 'lib', 'handles-gc.mjs'), name], {
    encoding: 'utf8',
    env: { ...process.env, OJS_RETRY_FORCE_WASM: '' },
  })
  assert.equal(r.status, 0, `${name} failed:\n${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').at(-1))
}

test('GC frees the table entries of collected policies; kept ones still answer', () => {
  const out = gcScenario('collect')
  assert.equal(out.created, 600)
  assert.equal(out.liveWhileHeld, out.base + 600)
  assert.equal(out.liveAfterGc, out.base + out.kept)
  assert.deepEqual(out.keptAnswers, out.keptExpected)
  // The handles of collected policies name nothing now.
  assert.ok(out.staleChecked > 0)
  assert.deepEqual(out.staleErrors, [{ code: ARG, field: 'policy', message: `${ARG}: policy: ${STALE}` }])
  assert.deepEqual(out.staleFast, [-1])
})

test('worker threads: each keeps its own table, concurrently, with the same answers', () => {
  const out = gcScenario('workers')
  assert.equal(out.workers, 4)
  // Each worker saw only its own policies (its table starts empty while the
  // main thread's holds three), and freed them after GC.
  assert.equal(out.mainBase, 3)
  for (const w of out.reports) {
    assert.equal(w.backend, 'native')
    assert.equal(w.base, 0)
    assert.equal(w.liveWhileHeld, w.base + w.created)
    assert.equal(w.liveAfterGc, w.base + w.kept)
    assert.deepEqual(w.answers, out.expected)
    // A policy posted from the main thread arrives as a plain object.
    assert.deepEqual(w.cloned, { code: ARG, field: 'policy' })
  }
  // The main thread's table never saw the workers' policies.
  assert.deepEqual(out.mainLive, [out.mainBase, out.mainBase])
})
