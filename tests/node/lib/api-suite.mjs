// API tests of the `ojs-retry` package, run once per backend (native, and
// the forced wasm fallback): the error shape, strict argument checking, the
// system-clock and OS-entropy defaults, the batch call, and the classes.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { apiChecks } from '../../js-common/api-checks.mjs'

const MAX = 2 ** 53 - 1
const ARG = 'validation.invalid_argument'

/**
 * Asserts `fn` throws an engine error with this code and field (and path:
 * the field itself unless given).
 */
export function throwsCoded(fn, code, field, path = field) {
  let err
  try {
    fn()
  } catch (e) {
    err = e
  }
  assert.ok(err !== undefined, `expected ${code} (${field}), nothing was thrown`)
  assert.ok(err instanceof Error, `expected an Error, found ${err}`)
  assert.equal(err.code, code, `code of: ${err.message}`)
  assert.equal(err.field, field, `field of: ${err.message}`)
  assert.equal(err.path, path, `path of: ${err.message}`)
  assert.ok(Array.isArray(err.faults) && err.faults.length >= 1, 'faults is a non-empty array')
  assert.equal(err.faults[0].field, field)
  assert.equal(err.faults[0].path, path)
  for (const f of err.faults) {
    assert.deepEqual(Object.keys(f).sort(), ['field', 'message', 'path'])
    assert.ok(f.field === null || typeof f.field === 'string')
    assert.ok(f.path === null || typeof f.path === 'string')
    assert.ok(typeof f.message === 'string' && f.message.length > 0)
  }
  assert.ok(err.message.includes(code), `the message names the code: ${err.message}`)
  return err
}

export function apiSuite(api, expectedBackend) {
  const { RetryPolicy, RetryState, Reservation } = api

  test('the shared JS API checks (tests/js-common/api-checks.mjs)', () => {
    const results = apiChecks(api)
    assert.ok(results.length > 0)
    assert.deepEqual(
      results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.message}`),
      [],
    )
  })

  test(`backend is reported as ${expectedBackend}`, () => {
    assert.equal(api.backend, expectedBackend)
  })

  test('the exports are the declared surface', () => {
    for (const name of ['RetryPolicy', 'RetryState', 'Reservation', 'OjsRetryError']) {
      assert.equal(typeof api[name], 'function', name)
    }
    for (const name of [
      'matches',
      'firstMatch',
      'parseDuration',
      'formatDuration',
      'formatTimestamp',
      'parseTimestamp',
      'jitterSample',
      'presetSystems',
      'runTransaction',
    ]) {
      assert.equal(typeof api[name], 'function', name)
    }
    for (const name of ['fromJSON', 'merge', 'preset']) assert.equal(typeof RetryPolicy[name], 'function', name)
    for (const name of ['herd', 'nearestPlain', 'free', 'delays', 'schedule', 'decide', 'delay']) {
      assert.equal(typeof RetryPolicy.prototype[name], 'function', name)
    }
    assert.equal(typeof RetryState.fromJSON, 'function')
    assert.ok(api.presetSystems().includes('sidekiq'))
  })

  test('an invalid policy: Error with code, field, path and every fault in order', () => {
    const err = throwsCoded(
      () => new RetryPolicy({ max_attempts: -1, jitter: 'yes', bogus: 1 }),
      'validation.retry_policy_invalid',
      'max_attempts',
    )
    assert.deepEqual(
      err.faults.map((f) => f.field),
      ['max_attempts', 'jitter', 'bogus'],
    )
    assert.match(err.faults[1].message, /true or false/)
    // The field is the policy field; the path says where inside it.
    const e2 = throwsCoded(
      () => new RetryPolicy({ non_retryable_errors: ['ok', ''] }),
      'validation.retry_policy_invalid',
      'non_retryable_errors',
      'non_retryable_errors[1]',
    )
    assert.ok(e2.message.includes('non_retryable_errors[1]'))
    // A fault of the whole document has no field and no path.
    throwsCoded(() => new RetryPolicy('[1, 2]'), 'validation.retry_policy_invalid', null)
    throwsCoded(() => RetryPolicy.fromJSON('{"max_attempts": 1, "max_attempts": 2}'), 'validation.retry_policy_invalid', null)
  })

  test('validation applies to the effective policy (merge first)', () => {
    throwsCoded(() => new RetryPolicy({ initial_interval: 'PT10M' }), 'validation.retry_policy_invalid', 'max_interval')
    const p = RetryPolicy.merge([{ max_interval: 'PT1H' }, '{"initial_interval": "PT10M"}'])
    assert.equal(p.initialIntervalMs, 600_000)
    assert.equal(p.maxIntervalMs, 3_600_000)
    throwsCoded(() => RetryPolicy.merge({ max_attempts: 2 }), ARG, 'layers')
  })

  test('JSON text and objects give the same policy; fromJSON, toJSON, toString', () => {
    const doc = { max_attempts: 5, backoff_strategy: 'linear', non_retryable_errors: ['auth.*'] }
    const a = new RetryPolicy(doc)
    const b = new RetryPolicy(JSON.stringify(doc))
    const c = RetryPolicy.fromJSON(JSON.stringify(doc))
    assert.deepEqual(a.toJSON(), b.toJSON())
    assert.equal(a.toString(), b.toString())
    assert.equal(c.toString(), a.toString())
    assert.deepEqual(JSON.parse(a.toString()), a.toJSON())
    assert.equal(String(a), a.toString())
    assert.deepEqual(Object.keys(a.toJSON()), [
      'max_attempts',
      'initial_interval',
      'backoff_coefficient',
      'max_interval',
      'jitter',
      'non_retryable_errors',
      'on_exhaustion',
      'backoff_strategy',
    ])
    assert.equal(a.maxAttempts, 5)
    assert.equal(a.maxRetries, 4)
    assert.equal(a.backoffStrategy, 'linear')
    assert.deepEqual(a.nonRetryableErrors, ['auth.*'])
    assert.equal(a.onExhaustion, 'discard')
    assert.equal(a.jitter, true)
    assert.equal(a.backoffCoefficient, 2)
    assert.equal(a.presetSystem, null)
    const d = new RetryPolicy()
    assert.equal(d.maxAttempts, 3)
    assert.equal(d.backoffStrategy, 'exponential')
    assert.equal(d.initialIntervalMs, 1000)
    assert.equal(d.maxIntervalMs, 300_000)
  })

  test('presets: the system is kept, the document round-trips', () => {
    const p = RetryPolicy.preset('sidekiq', { retry: 5 })
    assert.equal(p.presetSystem, 'sidekiq')
    const back = new RetryPolicy(p.toJSON())
    assert.equal(back.toString(), p.toString())
    assert.equal(back.delay(3, { u: 0.5 }), p.delay(3, { u: 0.5 }))
    assert.throws(() => RetryPolicy.preset(42), (e) => typeof e.code === 'string' && e.code.startsWith('validation.'))
  })

  test('bad numeric arguments are validation.invalid_argument, never truncated', () => {
    const p = new RetryPolicy()
    for (const bad of [NaN, -1, 1.5, 2 ** 53, Infinity, -Infinity, '3', null, {}, 3n]) {
      throwsCoded(() => p.delay(bad, { u: 0.5 }), ARG, 'retry_number')
    }
    throwsCoded(() => p.delay(0, { u: 0.5 }), ARG, 'retry_number')
    for (const bad of [NaN, -1, 2.5, 'x', 2 ** 53]) {
      throwsCoded(() => p.schedule(bad), ARG, 'count')
    }
    throwsCoded(() => p.schedule(100_001), ARG, 'count')
    for (const bad of [NaN, -1, 0.5, '1', 2 ** 53]) {
      throwsCoded(() => p.decide({ attempt: bad }, { now: 0, u: 0.5 }), ARG, 'attempt')
    }
    for (const bad of [NaN, -1, 0.5, '1', 2 ** 53]) {
      throwsCoded(() => p.decide({ attempt: 1 }, { now: bad, u: 0.5 }), ARG, 'now')
    }
    throwsCoded(() => new Reservation(1.5, 10, 0), ARG, 'attempt')
    throwsCoded(() => new Reservation(1, -10, 0), ARG, 'visibility_timeout_ms')
    throwsCoded(() => new Reservation(1, 10, NaN), ARG, 'now')
    throwsCoded(() => new Reservation(1, 10, 0).isExpired(-1), ARG, 'now')
    throwsCoded(() => api.formatDuration(-1), ARG, 'duration')
    throwsCoded(() => api.formatDuration(0.5), ARG, 'duration')
    throwsCoded(() => api.formatDuration(2 ** 53), ARG, 'duration')
    throwsCoded(() => api.formatTimestamp(NaN), ARG, 'timestamp')
    throwsCoded(() => new RetryState({ historyLimit: 10.5 }), ARG, 'historyLimit')
    throwsCoded(() => new RetryState({ historyLimit: 9 }), ARG, 'history_limit')
    throwsCoded(() => api.jitterSample(-1, { seed: 1 }), ARG, 'retry_number')
  })

  test('jitter sources are checked: u, seed (number, bigint < 2^64 or decimal string), key', () => {
    const p = new RetryPolicy()
    for (const bad of [1, -0.1, NaN, Infinity]) {
      throwsCoded(() => p.delay(1, { u: bad }), ARG, 'u')
    }
    throwsCoded(() => p.delay(1, { u: '0.5' }), ARG, 'u')
    for (const bad of [-1, 1.5, NaN, -1n, 'x', 2n ** 64n]) {
      throwsCoded(() => p.delay(1, { seed: bad }), ARG, 'seed')
    }
    throwsCoded(() => p.delay(1, { key: 42 }), ARG, 'key')
    throwsCoded(() => p.delay(1, { jitter: { u: 0.5 } }), ARG, 'jitter')
    throwsCoded(() => p.delay(1, 'job-1'), ARG, null)
    // A number seed, the same bigint seed and its decimal text are one stream.
    assert.equal(p.delay(7, { seed: 12345 }), p.delay(7, { seed: 12345n }))
    assert.equal(p.delay(7, { seed: '12345' }), p.delay(7, { seed: 12345n }))
    assert.equal(api.jitterSample(3, { seed: MAX }), api.jitterSample(3, { seed: BigInt(MAX) }))
    // The full u64 range is accepted.
    const top = api.jitterSample(1, { seed: 2n ** 64n - 1n })
    assert.ok(Number.isSafeInteger(top) && top >= 0 && top < 2 ** 53)
    assert.equal(api.jitterSample(1, { u: 0.5 }), 2 ** 52)
  })

  test('decide: now defaults to the system clock, jitter to OS entropy', () => {
    const p = new RetryPolicy()
    const before = Date.now()
    const d = p.decide({ attempt: 1 }, { u: 0.5 })
    const after = Date.now()
    assert.equal(d.action, 'retry')
    assert.equal(d.delayMs, 1000)
    const now = d.nextRetryAt - d.delayMs
    assert.ok(now >= before && now <= after, `now ${now} within [${before}, ${after}]`)
    const t0 = Date.now()
    const e = p.decide({ attempt: 2 })
    const t1 = Date.now()
    assert.ok(e.delayMs >= 1000 && e.delayMs < 3000, `delay ${e.delayMs} within the jitter range of retry 2`)
    const n2 = e.nextRetryAt - e.delayMs
    assert.ok(n2 >= t0 && n2 <= t1)
  })

  test('Reservation: now defaults to the system clock', () => {
    const before = Date.now()
    const r = new Reservation(1, 60_000)
    const after = Date.now()
    assert.ok(r.deadline - 60_000 >= before && r.deadline - 60_000 <= after)
    assert.equal(r.attempt, 1)
    assert.equal(r.visibilityTimeoutMs, 60_000)
    assert.equal(r.isExpired(), false)
    const h = r.heartbeat()
    assert.equal(h.extended, true)
    assert.ok(h.deadline >= r.deadline - 1 && h.deadline <= Date.now() + 60_000)
    assert.equal(r.expiry(), null)
    const f = r.expiry(r.deadline)
    assert.equal(f.attempt, 1)
    assert.equal(f.timedOut, true)
  })

  test('RetryState: now defaults to the system clock', () => {
    const p = new RetryPolicy({ jitter: false })
    const s = new RetryState()
    const before = Date.now()
    const d = s.recordFailure(p, { type: 'net.reset', message: 'peer reset' })
    const after = Date.now()
    assert.equal(d.action, 'retry')
    assert.ok(s.nextRetryAt - 1000 >= before && s.nextRetryAt - 1000 <= after)
    const ts = s.errors[0].timestampMs
    assert.ok(ts >= before && ts <= after)
    assert.equal(Date.parse(s.toJSON().errors[0].timestamp), ts)
  })

  test('the jitter source defaults to OS entropy: varies, always within bounds', () => {
    const p = new RetryPolicy({ max_attempts: 10 })
    const [row] = p.schedule(4).slice(3)
    assert.equal(row.delayMs, null, 'schedule without a source draws nothing')
    const seen = new Set()
    for (let i = 0; i < 300; i++) {
      const d = p.delay(4)
      assert.ok(Number.isSafeInteger(d) && d >= row.minMs && d <= row.maxMs, `${d} in [${row.minMs}, ${row.maxMs}]`)
      seen.add(d)
    }
    assert.ok(seen.size > 50, `entropy gave only ${seen.size} distinct delays in 300 draws`)
    const batch = p.delays(new Float64Array(300).fill(4))
    assert.ok(new Set(batch).size > 50)
    for (const d of batch) assert.ok(d >= row.minMs && d <= row.maxMs)
  })

  test('keyed jitter: delay, schedule, delays and decide agree; stable across calls', () => {
    const p = new RetryPolicy({ max_attempts: 8, initial_interval: 'PT2S' })
    const rows = p.schedule(7, { key: 'job-8f3a' })
    assert.equal(rows.length, 7)
    const single = rows.map((r) => p.delay(r.retryNumber, { key: 'job-8f3a' }))
    assert.deepEqual(
      rows.map((r) => r.delayMs),
      single,
    )
    const ns = [1, 2, 3, 4, 5, 6, 7]
    assert.deepEqual(Array.from(p.delays(Float64Array.from(ns), { key: 'job-8f3a' })), single)
    assert.deepEqual(Array.from(p.delays(new Float64Array(0), { key: 'job-8f3a' })), [])
    assert.deepEqual(
      ns.map((n) => p.decide({ attempt: n }, { key: 'job-8f3a', now: 0 }).delayMs),
      single,
    )
    for (const r of rows) {
      assert.ok(r.delayMs >= r.minMs && r.delayMs <= r.maxMs)
      assert.deepEqual(Object.keys(r).sort(), [
        'attempt',
        'cappedMs',
        'cumulativeMs',
        'delayMs',
        'maxMs',
        'minMs',
        'rawMs',
        'retryNumber',
      ])
    }
    assert.equal(rows.at(-1).cumulativeMs, single.reduce((a, b) => a + b, 0))
    // A different key gives a different stream.
    assert.notDeepEqual(Array.from(p.delays(Float64Array.from(ns), { key: 'job-8f3b' })), single)
  })

  test('delays: the Float64Array is filled in place and returned; bad slots name their index', () => {
    const p = new RetryPolicy({ max_attempts: 30, initial_interval: 'PT3S', backoff_coefficient: 3 })
    for (const j of [{ u: 0.25 }, { seed: 7 }, { seed: 7n }, { key: 'job-1' }]) {
      for (const len of [1, 25, 40, 3, 2000, 5]) {
        const ns = Array.from({ length: len }, (_, i) => (i % 29) + 1)
        const arr = Float64Array.from(ns)
        assert.equal(p.delays(arr, j), arr)
        assert.deepEqual(Array.from(arr), ns.map((n) => p.delay(n, j)))
      }
    }
    for (const bad of [Float64Array.of(1, 0, 2), Float64Array.of(1, 2, 1.5), Float64Array.of(1, NaN)]) {
      assert.throws(() => p.delays(bad, { u: 0.5 }), (e) => e.code === ARG && /^retry_number/.test(e.field))
    }
    for (const bad of [[1, 2], Uint32Array.of(1), 5, null]) {
      throwsCoded(() => p.delays(bad, { u: 0.5 }), ARG, 'retry_numbers')
    }
    throwsCoded(() => p.delays(Float64Array.of(1), { u: 2 }), ARG, 'u')
    throwsCoded(() => p.delays(Float64Array.of(1), { seed: -1 }), ARG, 'seed')
    // A failed batch leaves nothing behind for the next one.
    assert.deepEqual(Array.from(p.delays(Float64Array.of(2, 1), { seed: 3 })), [p.delay(2, { seed: 3 }), p.delay(1, { seed: 3 })])
  })

  test('decide: decisions are plain objects with camelCase keys; the failure is checked', () => {
    const p = new RetryPolicy({ non_retryable_errors: ['auth.*'], on_exhaustion: 'dead_letter' })
    const d = p.decide({ attempt: 1, type: 'auth.forbidden' }, { now: 0, u: 0.5 })
    assert.deepEqual(d, {
      action: 'dead_letter',
      reason: 'non_retryable',
      handlerCode: null,
      matchedPattern: 'auth.*',
      attempt: 1,
      timedOut: false,
      retryNumber: null,
      delayMs: null,
      nextRetryAt: null,
    })
    assert.equal(Object.getPrototypeOf(d), Object.prototype)
    const f = p.decide({ attempt: 1, code: 'FAIL' }, { now: 0 })
    assert.equal(f.action, 'discard')
    assert.equal(f.handlerCode, 'FAIL')
    // A timed-out failure may carry a type; timeouts ignore non_retryable_errors.
    const t = p.decide({ attempt: 1, type: 'auth.forbidden', timedOut: true }, { now: 0, u: 0.5 })
    assert.equal(t.action, 'retry')
    throwsCoded(() => p.decide({ attempt: 1, code: 'fail' }, { now: 0 }), ARG, 'code')
    throwsCoded(() => p.decide({ attempt: 1, timedOut: true, code: 'RETRY' }, { now: 0 }), ARG, 'code')
    throwsCoded(() => p.decide({ attempt: 1, bogus: true }, { now: 0 }), ARG, 'bogus')
    throwsCoded(() => p.decide({ type: 'x' }, { now: 0 }), ARG, 'attempt')
  })

  test('RetryState: records, serialises, reads back, refuses a non-policy', () => {
    const p = new RetryPolicy({ max_attempts: 2, jitter: false })
    const s = new RetryState({ historyLimit: 12 })
    assert.equal(s.attempt, 0)
    assert.equal(s.nextAttempt, 1)
    assert.equal(s.historyLimit, 12)
    assert.equal(s.nextRetryAt, null)
    assert.equal(s.terminal, null)
    assert.deepEqual(s.errors, [])
    const now = 1_770_892_265_000
    s.recordFailure(p, { type: 'a.b', message: 'x', details: { n: [1, 2], ok: true } }, { now })
    assert.equal(s.attempt, 1)
    assert.equal(s.nextAttempt, 2)
    assert.equal(s.nextRetryAt, now + 1000)
    assert.equal(s.errors[0].timestampMs, now)
    assert.deepEqual(s.errors[0].details, { n: [1, 2], ok: true })
    const d = s.recordFailure(p, { timedOut: true }, { now: now + 5000 })
    assert.equal(d.action, 'discard')
    assert.equal(d.timedOut, true)
    assert.equal(d.attempt, 2)
    assert.equal(s.terminal, 'discard')
    const doc = s.toJSON()
    assert.deepEqual(Object.keys(doc), ['attempt', 'errors', 'next_retry_at', 'terminal'])
    assert.deepEqual(doc.errors[0].details, { n: [1, 2], ok: true })
    assert.equal(doc.errors[1].type, 'reservation.timeout')
    assert.deepEqual(RetryState.fromJSON(doc).toJSON(), doc)
    assert.deepEqual(RetryState.fromJSON(s.toString()).toJSON(), doc)
    const fresh = new RetryState()
    throwsCoded(() => fresh.recordFailure(p, { attempt: 2, type: 'a' }, { now }), ARG, 'attempt')
    // Not a RetryPolicy: refused with the package's error, in both builds.
    for (const notAPolicy of [{}, null, new RetryState(), structuredClone(p)]) {
      throwsCoded(() => fresh.recordFailure(notAPolicy, {}, { now }), ARG, 'policy')
    }
    assert.equal(fresh.attempt, 0, 'a refused call records nothing')
    // Another class's instance disguised as a policy, and a method called
    // on another class's instance: the JS layer's private fields refuse
    // both (no type confusion, no crash).
    const disguised = Object.setPrototypeOf(new RetryState(), RetryPolicy.prototype)
    throwsCoded(() => fresh.recordFailure(disguised, {}, { now }), ARG, 'policy')
    throwsCoded(() => disguised.maxAttempts, ARG, 'this')
    throwsCoded(() => RetryPolicy.prototype.delay.call(new RetryState(), 1, { u: 0.5 }), ARG, 'this')
    throwsCoded(() => RetryState.prototype.recordFailure.call(p, p, {}, { now }), ARG, 'this')
    throwsCoded(() => RetryState.fromJSON('{"attempt": -1, "errors": []}'), 'validation.state_invalid', 'attempt')
  })

  test('functions: matches, firstMatch, durations, timestamps', () => {
    assert.equal(api.matches('auth.forbidden', ['auth.*']), true)
    assert.equal(api.matches('authz.x', ['auth.*']), false)
    assert.equal(api.firstMatch('auth.forbidden', ['x', 'auth.*', '*']), 'auth.*')
    assert.equal(api.firstMatch('y', ['x']), null)
    assert.equal(api.parseDuration('PT0.5S'), 500)
    assert.equal(api.formatDuration(86_400_000), 'PT24H')
    assert.equal(api.formatTimestamp(1_770_892_265_250), '2026-02-12T10:31:05.250Z')
    assert.equal(api.parseTimestamp('2026-02-12T11:31:05.25+01:00'), 1_770_892_265_250)
    throwsCoded(() => api.parseDuration('-PT1S'), 'validation.duration_invalid', 'duration')
    throwsCoded(() => api.parseTimestamp('yesterday'), ARG, 'timestamp')
    throwsCoded(() => api.matches('a', 'a'), ARG, 'patterns')
    throwsCoded(() => api.matches(1, ['a']), ARG, 'error_type')
  })
}
