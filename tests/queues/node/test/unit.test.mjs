// ojs-retry/bullmq without Redis: loading, the error-type rule, JobError,
// job options.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { describe, test } from 'node:test'
import { OjsRetryError, RetryPolicy } from 'ojs-retry'
import * as esm from 'ojs-retry/bullmq'
import {
  ATTEMPTS,
  BACKOFF_TYPE,
  JobError,
  POLICY_KEY,
  adoptionText,
  deadLetterKey,
  errorTypeOf,
  failureFromError,
  jobOptions,
} from 'ojs-retry/bullmq'

const here = new URL('..', import.meta.url)
/** Which modules a fresh Node process has loaded after running `code`. */
function loadedAfter(code) {
  const script = `${code}; console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('/node_modules/bullmq/'))))`
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: here, encoding: 'utf8' }))
}

describe('loading', () => {
  test("requiring ojs-retry never loads bullmq", () => {
    assert.deepEqual(loadedAfter("require('ojs-retry')"), [])
  })
  test('ojs-retry/bullmq loads bullmq only when a function needs it', () => {
    assert.deepEqual(loadedAfter("const b = require('ojs-retry/bullmq'); b.jobOptions({}, { policy: { max_attempts: 2 }, defaults: null })"), [])
    assert.notDeepEqual(loadedAfter("require('ojs-retry/bullmq'); require('bullmq')"), [])
  })
  test('import and require share one module', () => {
    const require = createRequire(import.meta.url)
    assert.equal(esm.JobError, require('ojs-retry/bullmq').JobError)
    assert.equal(esm.default.Processor, esm.Processor)
  })
})

describe('the error type of a thrown value', () => {
  class CardDeclined extends Error {}
  class Named extends Error {
    constructor(m) {
      super(m)
      this.name = 'StripeCardError'
    }
  }
  const cases = [
    [new JobError('payment.card_stolen'), 'payment.card_stolen'],
    [new TypeError('x'), 'TypeError'],
    [new CardDeclined('x'), 'CardDeclined'],
    [new Named('x'), 'StripeCardError'],
    [new Error('x'), 'Error'],
    [new DOMException('x', 'AbortError'), 'AbortError'],
    ['a string', 'Error'],
    [undefined, 'Error'],
  ]
  for (const [err, type] of cases) {
    test(`${String(err && err.constructor && err.constructor.name)} → ${type}`, () => assert.equal(errorTypeOf(err), type))
  }
  test('a JobError carries its code, message and details; a TimeoutError is timed out', () => {
    const e = new JobError('payment.card_stolen', { code: 'DEAD_LETTER', message: 'stolen', details: { last4: '4242' } })
    assert.deepEqual(failureFromError(e), { type: 'payment.card_stolen', message: 'stolen', code: 'DEAD_LETTER', details: { last4: '4242' } })
    assert.deepEqual(failureFromError(new DOMException('slow', 'TimeoutError')), { type: 'TimeoutError', message: 'slow', timedOut: true })
  })
  test("a JobError's unknown handler code is the engine's typed error", () => {
    assert.throws(() => new JobError('x.y', { code: 'RETRY_LATER' }), (e) => typeof e.code === 'string' && e.code.startsWith('validation.'))
  })
})

describe('job options', () => {
  test("carry the layer as JSON text; attempts and backoff are the integration's", () => {
    const opts = jobOptions({ jobId: 'a', attempts: 3, backoff: { type: 'fixed', delay: 5 } }, { policy: { max_attempts: 2 }, defaults: null })
    assert.deepEqual(opts, { jobId: 'a', attempts: ATTEMPTS, backoff: { type: BACKOFF_TYPE }, [POLICY_KEY]: '{"max_attempts":2}' })
    assert.equal(jobOptions(null)[POLICY_KEY], undefined)
  })
  test("a layer is validated against the workers' defaults, or refused: the helper never guesses", () => {
    throwsField(() => jobOptions({}, { policy: { max_attempts: 2 } }), 'validation.invalid_argument', 'defaults')
    // Valid alone, refused by the workers' defaults (initial over their max).
    jobOptions({}, { policy: { initial_interval: 'PT5S' }, defaults: null })
    throwsField(() => jobOptions({}, { policy: { initial_interval: 'PT5S' }, defaults: { max_interval: 'PT3S' } }), 'validation.retry_policy_invalid', 'max_interval')
    // Valid only over the workers' defaults.
    const ok = jobOptions({}, { policy: { initial_interval: 'PT10M' }, defaults: { max_interval: 'PT1H' } })
    assert.equal(ok[POLICY_KEY], '{"initial_interval":"PT10M"}')
  })
  test("the layer goes through the engine's JS reader: what is not plain data is its typed error naming the field", () => {
    const cyclic = {}
    cyclic.non_retryable_errors = [cyclic]
    const bad = [
      [new Map([['max_attempts', 2]]), null],
      [new Set([1]), null],
      [() => 1, null],
      [Symbol('s'), null],
      [{ max_attempts: 2n ** 64n }, 'max_attempts'],
      [cyclic, 'non_retryable_errors'],
      [{ get max_attempts() { throw new Error('getter') } }, null],
      [{ toJSON: () => undefined }, 'toJSON'],
      ['', null],
    ]
    for (const [policy, field] of bad) {
      assert.throws(
        () => jobOptions({}, { policy, defaults: null }),
        (e) => e instanceof OjsRetryError && e.code.startsWith('validation.') && e.field === field,
        String(field),
      )
    }
    // A BigInt the engine reads as an integer is carried as that number.
    assert.equal(jobOptions({}, { policy: { max_attempts: 2n }, defaults: null })[POLICY_KEY], '{"max_attempts":2}')
    // An object read once is read again when it changed.
    const reused = { max_attempts: 2 }
    jobOptions({}, { policy: reused, defaults: null })
    reused.non_retryable_errors = new Map()
    assert.throws(() => jobOptions({}, { policy: reused, defaults: null }), (e) => e instanceof OjsRetryError && e.field === 'non_retryable_errors')
    // A job without a layer, then an empty text: still validated (no shared cache key).
    jobOptions({}, { defaults: null })
    assert.throws(() => jobOptions({}, { policy: '', defaults: null }), OjsRetryError)
  })
  test('the dead-letter list', () => {
    assert.equal(deadLetterKey('orders'), 'bull:orders:dead')
    assert.equal(deadLetterKey('orders', 'app'), 'app:orders:dead')
  })
})

function throwsField(fn, code, field) {
  assert.throws(fn, (e) => e instanceof OjsRetryError && e.code === code && e.field === field, `${code} ${field}`)
}

describe('the one-line adoption', () => {
  const doc = (opts) => JSON.parse(adoptionText(opts, 'node')).preset
  test("a job's own attempts and backoff, as BullMQ reads them (a built-in backoff's other keys dropped)", () => {
    assert.deepEqual(doc({ attempts: 4, backoff: { type: 'exponential', delay: 100, jitter: 0.5, extra: 1 } }), {
      system: 'bullmq', runtime: 'node', attempts: 4, backoff: { type: 'exponential', delay: 100, jitter: 0.5 },
    })
    assert.deepEqual(doc({}), { system: 'bullmq', runtime: 'node', attempts: 0, backoff: null })
    assert.equal(adoptionText(jobOptions({}), 'node'), null, 'a job enqueued for the engine keeps the spec defaults')
  })
  test('values that print alike are never one cached document', () => {
    const backoff = { type: 'fixed', delay: 5 }
    assert.equal(doc({ attempts: '3', backoff }).attempts, '3')
    assert.equal(doc({ attempts: 3, backoff }).attempts, 3)
    assert.equal(doc({ attempts: 3, backoff: { type: 'fixed', delay: '5' } }).backoff.delay, '5')
    assert.throws(() => new RetryPolicy(adoptionText({ attempts: '3', backoff }, 'node')), (e) => e instanceof OjsRetryError && e.field === 'preset')
  })
})
