// One rule for what a caller passes, the same in the native addon and the
// wasm build (issue 20): in option bags and failures, a key holding
// `undefined` or `null` is absent; an unknown key (a typo such as
// `error_type` or `timed_out`) is an error naming it. Documents are read
// from their own enumerable properties only, plain data only, within the
// documented limits. Each case states its answer; both backends must give it.
import assert from 'node:assert/strict'
import { test } from 'node:test'

/** Runs `f`, returning its value or `{ code, field, path }` of what it threw (always the package's error class). */
function outcome(f, api) {
  try {
    return { value: f() }
  } catch (e) {
    if (!(e instanceof api.OjsRetryError)) return { notTheErrorClass: String(e) }
    return { code: e.code, field: e.field, path: e.path }
  }
}

function cases(api) {
  const { RetryPolicy, RetryState, Reservation, matches } = api
  const flat = new RetryPolicy({ jitter: false }) // first retry 1 s (RET-06)
  const decide = (failure, options) => {
    const d = flat.decide(failure, options)
    return [d.action, d.reason, d.delayMs, d.timedOut, d.handlerCode]
  }
  const retry1 = ['retry', 'retryable', 1000, false, null]
  const huge = () => {
    const a = []
    a.length = 2 ** 32 - 1
    return a
  }
  return [
    // Option bags.
    ['now: undefined is absent (the clock)', () => decide({ attempt: 1 }, { now: undefined }), { value: retry1 }],
    ['now: null is absent (the clock)', () => decide({ attempt: 1 }, { now: null }), { value: retry1 }],
    ['u: undefined is absent', () => flat.delay(1, { u: undefined }), { value: 1000 }],
    ['u: null is absent', () => flat.delay(1, { u: null }), { value: 1000 }],
    ['an unknown option is an error naming it', () => decide({ attempt: 1 }, { now: 0, nope: 1 }), { code: 'validation.invalid_argument', field: 'nope', path: 'nope' }],
    ['a snake_case option is unknown', () => decide({ attempt: 1 }, { now: 0, history_limit: 10 }), { code: 'validation.invalid_argument', field: 'history_limit', path: 'history_limit' }],
    ['jitter is not an option', () => flat.delay(1, { jitter: 0.5 }), { code: 'validation.invalid_argument', field: 'jitter', path: 'jitter' }],
    ['two jitter sources are an error', () => flat.delay(1, { u: 0.5, key: 'a' }), { code: 'validation.invalid_argument', field: 'u', path: 'u' }],
    ['historyLimit: null is absent', () => new RetryState({ historyLimit: null }).historyLimit, { value: 10 }],
    ['historyLimit: undefined is absent', () => new RetryState({ historyLimit: undefined }).historyLimit, { value: 10 }],
    // Failures.
    ['type: undefined is absent', () => decide({ attempt: 1, type: undefined }, { now: 0 }), { value: retry1 }],
    ['type: null is absent', () => decide({ attempt: 1, type: null }, { now: 0 }), { value: retry1 }],
    ['code: null is absent', () => decide({ attempt: 1, code: null }, { now: 0 }), { value: retry1 }],
    ['timedOut: null is absent', () => decide({ attempt: 1, timedOut: null }, { now: 0 }), { value: retry1 }],
    ['error_type is a typo, not "no error type"', () => decide({ attempt: 1, error_type: 'x' }, { now: 0 }), { code: 'validation.invalid_argument', field: 'error_type', path: 'error_type' }],
    ['timed_out is a typo', () => decide({ attempt: 1, timed_out: true }, { now: 0 }), { code: 'validation.invalid_argument', field: 'timed_out', path: 'timed_out' }],
    // The engine reads `timed_out`; the binding spells it `timedOut` both ways.
    ['timedOut with details is read as timed out', () => decide({ attempt: 1, timedOut: true, details: { a: 1 } }, { now: 0 }), { value: ['retry', 'retryable', 1000, true, null] }],
    ['a timedOut that is not a boolean is a fault at timedOut', () => decide({ attempt: 1, timedOut: 'yes' }, { now: 0 }), { code: 'validation.invalid_argument', field: 'timedOut', path: 'timedOut' }],
    ['faults in key order: an unknown key before timedOut', () => decide({ attempt: 1, bogus: 1, timedOut: 'yes' }, { now: 0 }), { code: 'validation.invalid_argument', field: 'bogus', path: 'bogus' }],
    ['faults in key order: timedOut before an unknown key', () => decide({ attempt: 1, zzz: 1, timedOut: 'yes' }, { now: 0 }), { code: 'validation.invalid_argument', field: 'timedOut', path: 'timedOut' }],
    ['attempts is a typo', () => new RetryState().recordFailure(flat, { attempts: 1 }, { now: 0 }), { code: 'validation.invalid_argument', field: 'attempts', path: 'attempts' }],
    ['a null failure is no details', () => new RetryState().recordFailure(flat, null, { now: 0 }).action, { value: 'retry' }],
    ['an undefined failure is no details', () => new RetryState().recordFailure(flat, undefined, { now: 0 }).action, { value: 'retry' }],
    // Documents: own enumerable data only.
    ['a member holding undefined is absent', () => new RetryPolicy({ max_attempts: undefined }).maxAttempts, { value: 3 }],
    ['null is not a max_attempts', () => new RetryPolicy({ max_attempts: null }).maxAttempts, { code: 'validation.retry_policy_invalid', field: 'max_attempts', path: 'max_attempts' }],
    ['undefined in an array is null, not a pattern', () => new RetryPolicy({ non_retryable_errors: ['a', undefined] }).maxAttempts, { code: 'validation.retry_policy_invalid', field: 'non_retryable_errors', path: 'non_retryable_errors[1]' }],
    ['inherited properties do not count', () => new RetryPolicy(Object.create({ max_attempts: 9 })).maxAttempts, { value: 3 }],
    ['a class instance counts by its own fields', () => new RetryPolicy(new (class { constructor() { this.max_attempts = 4 } })()).maxAttempts, { value: 4 }],
    ['a Map is not a document', () => new RetryPolicy(new Map([['max_attempts', 5]])).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['a Set inside is a fault at its field', () => new RetryPolicy({ non_retryable_errors: new Set(['a']) }).maxAttempts, { code: 'validation.retry_policy_invalid', field: 'non_retryable_errors', path: 'non_retryable_errors' }],
    ['a Date is not a document', () => new RetryPolicy(new Date(0)).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['a RegExp is not a document', () => new RetryPolicy(/x/).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['new Number(5) is not a number', () => new RetryPolicy({ max_attempts: new Number(5) }).maxAttempts, { code: 'validation.retry_policy_invalid', field: 'max_attempts', path: 'max_attempts' }],
    ['an ArrayBuffer is not a document', () => new RetryPolicy(new ArrayBuffer(8)).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['a Promise is not a document', () => new RetryPolicy(Promise.resolve(1)).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['a Map in details is a fault at details', () => decide({ attempt: 1, details: { m: new Map() } }, { now: 0 }), { code: 'validation.invalid_argument', field: 'details', path: 'details.m' }],
    // Limits, checked before anything is read.
    ['2^32 - 1 patterns', () => matches('x', huge()), { code: 'validation.invalid_argument', field: 'patterns', path: 'patterns' }],
    ['2^32 - 1 non-retryable errors', () => new RetryPolicy({ non_retryable_errors: huge() }).maxAttempts, { code: 'validation.retry_policy_invalid', field: 'non_retryable_errors', path: 'non_retryable_errors' }],
    ['2^32 - 1 layers', () => RetryPolicy.merge(huge()).maxAttempts, { code: 'validation.invalid_argument', field: 'layers', path: 'layers' }],
    ['2^32 - 1 details', () => decide({ attempt: 1, details: huge() }, { now: 0 }), { code: 'validation.invalid_argument', field: 'details', path: 'details' }],
    ['800 000 strings of 900 characters', () => matches('x', new Array(800000).fill('a'.repeat(900))), { code: 'validation.invalid_argument', field: 'patterns', path: 'patterns' }],
    ['a 2 MiB error type', () => matches('a'.repeat(2 ** 21), []), { code: 'validation.invalid_argument', field: 'error_type', path: 'error_type' }],
    ['a 100 000-key object in details', () => decide({ attempt: 1, details: Object.fromEntries(Array.from({ length: 100000 }, (_, i) => [`k${100000 - i}`, 1])) }, { now: 0 }), { code: 'validation.invalid_argument', field: 'details', path: 'details' }],
    ['a 70 000-byte jitter key', () => new RetryPolicy().delay(1, { key: 'k'.repeat(70000) }), { code: 'validation.invalid_argument', field: 'key', path: 'key' }],
    // Issue 24. Options that mean nothing for the call are refused, per call.
    ['delay takes no now', () => flat.delay(1, { now: 5 }), { code: 'validation.invalid_argument', field: 'now', path: 'now' }],
    ['delay takes no historyLimit', () => flat.delay(1, { historyLimit: 12 }), { code: 'validation.invalid_argument', field: 'historyLimit', path: 'historyLimit' }],
    ['delays takes no now', () => flat.delays(Float64Array.of(1), { now: 5 }), { code: 'validation.invalid_argument', field: 'now', path: 'now' }],
    ['schedule takes no now', () => flat.schedule(2, { now: 5 }), { code: 'validation.invalid_argument', field: 'now', path: 'now' }],
    ['jitterSample takes no now', () => api.jitterSample(1, { u: 0.5, now: 5 }), { code: 'validation.invalid_argument', field: 'now', path: 'now' }],
    ['decide takes no historyLimit', () => decide({ attempt: 1 }, { now: 0, historyLimit: 12 }), { code: 'validation.invalid_argument', field: 'historyLimit', path: 'historyLimit' }],
    ['a RetryState takes no u', () => new RetryState({ u: 0.5 }).historyLimit, { code: 'validation.invalid_argument', field: 'u', path: 'u' }],
    ['fromJSON takes no now', () => RetryState.fromJSON({ attempt: 0, errors: [] }, { now: 1 }).attempt, { code: 'validation.invalid_argument', field: 'now', path: 'now' }],
    // delays() holds to the array limit, checked before the array is copied.
    ['10 001 retry numbers', () => flat.delays(new Float64Array(10001).fill(1), { u: 0.5 }), { code: 'validation.invalid_argument', field: 'retry_numbers', path: 'retry_numbers' }],
    ['10 000 retry numbers', () => flat.delays(new Float64Array(10000).fill(1), { u: 0.5 }).length, { value: 10000 }],
    ['a Float64Array subclass is written through the intrinsic set', () => Array.from(flat.delays(new (class extends Float64Array { set() { throw new Error('no') } })([1, 2]), { u: 0 })), { value: [1000, 2000] }],
    ['one element of a large buffer is one retry number', () => Array.from(flat.delays(new Float64Array(new ArrayBuffer(1 << 24), 8, 1).fill(2), { u: 0 })), { value: [2000] }],
    // Engine objects are not documents.
    ['a policy is not a policy document', () => new RetryPolicy(new RetryPolicy({ max_attempts: 9 })).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['a policy is not a layer', () => RetryPolicy.merge([{}, new RetryPolicy({ max_attempts: 9 })]).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['a policy is not a failure', () => decide(new RetryPolicy(), { now: 0 }), { code: 'validation.invalid_argument', field: null, path: null }],
    ['a policy is not an option bag', () => flat.delay(1, new RetryPolicy()), { code: 'validation.invalid_argument', field: null, path: null }],
    ['a state is not a state document', () => RetryState.fromJSON(new RetryState()).attempt, { code: 'validation.state_invalid', field: null, path: null }],
    ['a policy in details is a fault at details', () => decide({ attempt: 1, details: { p: new RetryPolicy() } }, { now: 0 }), { code: 'validation.invalid_argument', field: 'details', path: 'details.p' }],
    // Copied, forged and freed objects are the package's error.
    ['a structured clone of a policy is not a policy', () => new RetryState().recordFailure(structuredClone(flat), {}, { now: 0 }), { code: 'validation.invalid_argument', field: 'policy', path: 'policy' }],
    ['a forged policy is not a policy', () => Object.create(RetryPolicy.prototype).delay(1), { code: 'validation.invalid_argument', field: 'this', path: 'this' }],
    ['a getter of another object', () => Object.getOwnPropertyDescriptor(RetryPolicy.prototype, 'maxAttempts').get.call({}), { code: 'validation.invalid_argument', field: 'this', path: 'this' }],
    ['a freed policy', () => { const p = new RetryPolicy(); p.free(); return p.maxAttempts }, { code: 'validation.invalid_argument', field: 'this', path: 'this' }],
    ['a freed policy as an argument', () => { const p = new RetryPolicy(); p.free(); return new RetryState().recordFailure(p, {}, { now: 0 }) }, { code: 'validation.invalid_argument', field: 'policy', path: 'policy' }],
    ['a freed state', () => { const s = new RetryState(); s[Symbol.dispose](); return s.attempt }, { code: 'validation.invalid_argument', field: 'this', path: 'this' }],
    ['a freed reservation', () => { const r = new Reservation(1, 10, 0); r.free(); return r.deadline }, { code: 'validation.invalid_argument', field: 'this', path: 'this' }],
    ['freed twice', () => { const p = new RetryPolicy(); p.free(); p.free() }, { code: 'validation.invalid_argument', field: 'this', path: 'this' }],
    // A bare "*" is not a wildcard of everything (the spec wants prefix.* only).
    ['a bare * matches nothing', () => [matches('x', ['*']), matches('a.b', ['*'])], { value: [false, false] }],
    // Sizes are checked before anything is copied.
    ['4000 strings of a million characters in details', () => decide({ attempt: 1, details: new Array(4000).fill('a'.repeat(1e6)) }, { now: 0 }), { code: 'validation.invalid_argument', field: 'details', path: 'details[0]' }],
    ['a 64 Mi-character error type', () => matches('a'.repeat(2 ** 26), []), { code: 'validation.invalid_argument', field: 'error_type', path: 'error_type' }],
    ['a 64 Mi-character policy text', () => new RetryPolicy(' '.repeat(2 ** 26)).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['a 64 Mi-character key', () => flat.delay(1, { key: 'k'.repeat(2 ** 26) }), { code: 'validation.invalid_argument', field: 'key', path: 'key' }],
    // Issue 26: limits that bound the work, the same in every runtime.
    ['17 layers', () => RetryPolicy.merge(new Array(17).fill({})).maxAttempts, { code: 'validation.invalid_argument', field: 'layers', path: 'layers' }],
    ['100 layers sharing one 10 000-element array', () => RetryPolicy.merge(new Array(100).fill({ non_retryable_errors: new Array(10000).fill('a.*') })).maxAttempts, { code: 'validation.invalid_argument', field: 'layers', path: 'layers' }],
    ['1 000 references to one 1 MiB text', () => RetryPolicy.merge(new Array(1000).fill(`{"max_attempts":3${' '.repeat(2 ** 20 - 18)}}`)).maxAttempts, { code: 'validation.invalid_argument', field: 'layers', path: 'layers' }],
    ['two layers sharing one 700 000-byte object: over 1 MiB together', () => RetryPolicy.merge(new Array(2).fill({ non_retryable_errors: new Array(14).fill('p'.repeat(50000)) })).maxAttempts, { code: 'validation.retry_policy_invalid', field: null, path: null }],
    ['a keyed schedule with a 64 KiB + 1 key', () => new RetryPolicy().schedule(10000, { key: 'k'.repeat(65537) }).length, { code: 'validation.invalid_argument', field: 'key', path: 'key' }],
    ['details nested 65 deep: the value too deep, by its path', () => { let x = []; for (let i = 0; i < 64; i++) x = [x]; return decide({ attempt: 1, details: x }, { now: 0 }) }, { code: 'validation.invalid_argument', field: 'details', path: `details${'[0]'.repeat(64)}` }],
    ['details nested 64 deep', () => { let x = []; for (let i = 0; i < 63; i++) x = [x]; return decide({ attempt: 1, details: x }, { now: 0 }) }, { value: retry1 }],
    ['a failure over 1 MiB: details then a 500-byte message', () => decide({ attempt: 1, details: [...new Array(15).fill('d'.repeat(65536)), 'e'.repeat(65000)], message: 'm'.repeat(500) }, { now: 0 }), { code: 'validation.invalid_argument', field: 'message', path: 'message' }],
    ['a state with records out of order', () => RetryState.fromJSON({ attempt: 2, errors: [2, 1].map((a) => ({ attempt: a, type: 'x', message: 'm', timestamp: '2026-01-01T00:00:00Z' })) }).attempt, { code: 'validation.state_invalid', field: 'errors', path: 'errors[1].attempt' }],
    ['a DEAD_LETTER record without terminal', () => RetryState.fromJSON({ attempt: 1, errors: [{ attempt: 1, type: 'x', message: 'm', code: 'DEAD_LETTER', timestamp: '2026-01-01T00:00:00Z' }] }).attempt, { code: 'validation.state_invalid', field: 'terminal', path: 'terminal' }],
    // The herd is the wasm build's (the playground's view).
    ...(typeof flat.herd === 'function'
      ? [
          ['herd(1, 10^7, 1000): more rounds than the limit', () => new RetryPolicy().herd(1, 1e7, 1000).jobs, { code: 'validation.invalid_argument', field: 'retries', path: 'retries' }],
          ['herd(100 000, 11, 1000): more decisions than the limit', () => new RetryPolicy().herd(100000, 11, 1000).jobs, { code: 'validation.invalid_argument', field: 'retries', path: 'retries' }],
        ]
      : []),
    ['a state record with an empty type', () => RetryState.fromJSON({ attempt: 1, errors: [{ attempt: 1, type: '', message: 'm', timestamp: '2026-01-01T00:00:00Z' }] }).attempt, { code: 'validation.state_invalid', field: 'errors', path: 'errors[0].type' }],
  ]
}

/** The rules for `api` (the native addon or the wasm build). */
export function inputRules(api, backend) {
  for (const [name, f, expected] of cases(api)) {
    test(`${backend}: ${name}`, () => {
      assert.deepEqual(outcome(f, api), expected)
    })
  }

  test(`${backend}: a polluted Object.prototype changes nothing`, () => {
    const p = Object.prototype
    try {
      p.max_attempts = 42
      p.non_retryable_errors = ['*']
      p.terminal = 'dead_letter'
      assert.equal(new api.RetryPolicy({}).maxAttempts, 3)
      assert.equal(new api.RetryPolicy({ jitter: false }).decide({ attempt: 1, type: 'x' }, { now: 0 }).action, 'retry')
      const state = api.RetryState.fromJSON({ attempt: 1, errors: [{ attempt: 1, type: 'x', message: 'm', timestamp: '2026-01-01T00:00:00Z' }] })
      assert.equal(state.terminal, null)
    } finally {
      delete p.max_attempts
      delete p.non_retryable_errors
      delete p.terminal
    }
  })

  test(`${backend}: an inherited Array.prototype[1] never fills a hole`, () => {
    const { RetryPolicy, RetryState } = api
    Array.prototype[1] = 'INJECTED'
    try {
      // eslint-disable-next-line no-sparse-arrays
      const holes = ['a', , 'c']
      assert.deepEqual(outcome(() => new RetryPolicy({ non_retryable_errors: holes }).nonRetryableErrors, api), { code: 'validation.retry_policy_invalid', field: 'non_retryable_errors', path: 'non_retryable_errors[1]' })
      assert.deepEqual(outcome(() => api.matches('INJECTED', holes), api), { code: 'validation.invalid_argument', field: 'patterns', path: 'patterns[1]' })
      const s = new RetryState()
      // eslint-disable-next-line no-sparse-arrays
      s.recordFailure(new RetryPolicy(), { type: 'x', details: [0, , 2] }, { now: 0, u: 0 })
      assert.deepEqual(s.errors[0].details, [0, null, 2])
      assert.equal(JSON.stringify(s.toJSON().errors[0].details), '[0,null,2]')
    } finally {
      delete Array.prototype[1]
    }
  })

  test(`${backend}: "__proto__" as an own key survives every round trip`, () => {
    const { RetryPolicy, RetryState } = api
    const details = JSON.parse('{"__proto__": {"polluted": true}, "n": 1}')
    const s = new RetryState()
    s.recordFailure(new RetryPolicy(), { type: 'x', details }, { now: 0, u: 0 })
    const fromErrors = s.errors[0].details
    assert.equal(Object.getPrototypeOf(fromErrors), Object.prototype)
    assert.ok(Object.hasOwn(fromErrors, '__proto__'))
    assert.deepEqual(Object.keys(fromErrors).sort(), ['__proto__', 'n'])
    const doc = s.toJSON()
    assert.ok(Object.hasOwn(doc.errors[0].details, '__proto__'))
    assert.equal(RetryState.fromJSON(doc).toString(), s.toString())
    assert.equal(RetryState.fromJSON(s.toString()).toString(), s.toString())
    assert.equal({}.polluted, undefined)
  })

  test(`${backend}: deleting or replacing the globals the binding uses changes nothing`, () => {
    const { RetryPolicy, RetryState } = api
    const saved = {}
    const names = ['structuredClone', 'Reflect', 'JSON', 'Date', 'Array', 'Object', 'String', 'Symbol', 'Float64Array', 'Uint8Array', 'Buffer', 'Map', 'Set', 'Error', 'TypeError', 'TextEncoder', 'TextDecoder', 'FinalizationRegistry', 'crypto', 'Function', 'Number', 'Math']
    for (const n of names) saved[n] = globalThis[n]
    const expected = (() => {
      const p = new RetryPolicy({ max_attempts: 4, non_retryable_errors: ['a.*'] })
      const s = new RetryState()
      return [p.delay(2, { key: 'job-1' }), Array.from(p.delays(Float64Array.of(1, 2), { seed: 3 })), p.decide({ attempt: 1, type: 'a.b' }, { now: 0 }).action, s.recordFailure(p, { type: 'x', details: { m: [1] } }, { now: 5, u: 0.5 }).delayMs, s.errors[0].details, p.toJSON().max_attempts]
    })()
    const f64 = Float64Array
    try {
      for (const n of names) delete globalThis[n]
      globalThis.JSON = { parse() { throw new Error('replaced') }, stringify() { throw new Error('replaced') } }
      const p = new RetryPolicy({ max_attempts: 4, non_retryable_errors: ['a.*'] })
      const s = new RetryState()
      const got = [p.delay(2, { key: 'job-1' }), saved.Array.from(p.delays(f64.of(1, 2), { seed: 3 })), p.decide({ attempt: 1, type: 'a.b' }, { now: 0 }).action, s.recordFailure(p, { type: 'x', details: { m: [1] } }, { now: 5, u: 0.5 }).delayMs, s.errors[0].details, p.toJSON().max_attempts]
      let err
      try { new RetryPolicy({ max_attempts: -1 }) } catch (e) { err = e }
      for (const n of names) globalThis[n] = saved[n]
      assert.deepEqual(got, expected)
      assert.ok(err instanceof api.OjsRetryError)
      assert.equal(err.field, 'max_attempts')
    } finally {
      for (const n of names) globalThis[n] = saved[n]
    }
  })

  test(`${backend}: a getter that detaches, transfers or shrinks the array of delays() leaves no dangling view`, () => {
    const { RetryPolicy } = api
    const p = new RetryPolicy({ jitter: false })
    const attempts = [
      ['detached by a transfer', (a) => structuredClone(a.buffer, { transfer: [a.buffer] })],
      ['transferred to a port', (a) => { const { port1 } = new MessageChannel(); port1.postMessage(a.buffer, [a.buffer]); port1.close() }],
      ['shrunk', (a) => a.buffer.resize(8)],
      ['grown', (a) => a.buffer.resize(64)],
    ]
    const expected = {
      'detached by a transfer': { value: [] },
      'transferred to a port': { value: [] },
      shrunk: { value: [1000] },
      // A length-tracking view grows: its new slots hold 0, no retry number.
      grown: { code: 'validation.invalid_argument', field: 'retry_number', path: 'retry_number' },
    }
    for (const [what, change] of attempts) {
      for (let round = 0; round < 200; round++) {
        const a = new Float64Array(new ArrayBuffer(32, { maxByteLength: 64 }))
        a.set([1, 2, 3, 4])
        const options = { get u() { change(a); return 0 } }
        assert.deepEqual(outcome(() => { const out = p.delays(a, options); assert.equal(out, a); return out.length === 0 ? [] : Array.from(out) }, api), expected[what], what)
      }
    }
    const fixed = new Float64Array(new ArrayBuffer(32, { maxByteLength: 64 }), 0, 4)
    fixed.set([1, 2, 3, 4])
    assert.deepEqual(outcome(() => p.delays(fixed, { get u() { fixed.buffer.resize(16); return 0 } }).length, api), { value: 0 })
  })

  test(`${backend}: a getter that calls back into the engine sees and leaves consistent state`, () => {
    const policy = new api.RetryPolicy({ jitter: false })
    const state = new api.RetryState()
    const inner = []
    const options = {
      get now() {
        // Runs while the outer call reads its options, before it records.
        inner.push(state.recordFailure(policy, { type: 'a' }, { now: 0 }).retryNumber)
        inner.push(Array.from(policy.delays(new Float64Array([1, 2, 3]), { u: 0 })))
        return 0
      },
    }
    const outer = state.recordFailure(policy, { type: 'b' }, options)
    assert.deepEqual(inner, [1, [1000, 2000, 4000]])
    assert.equal(outer.retryNumber, 2)
    assert.equal(state.attempt, 2)
    assert.deepEqual(state.errors.map((e) => e.type), ['a', 'b'])
  })
}
