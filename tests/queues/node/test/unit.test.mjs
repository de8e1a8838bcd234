// ojs-retry/bullmq without Redis: loading, the error-type rule, JobError,
// job options.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { describe, test } from 'node:test'
import { RetryPolicy } from 'ojs-retry'
import * as esm from 'ojs-retry/bullmq'
import {
  ATTEMPTS,
  BACKOFF_TYPE,
  JobError,
  POLICY_KEY,
  deadLetterKey,
  errorTypeOf,
  failureFromError,
  jobOptions,
  resolvePolicy,
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
    assert.deepEqual(loadedAfter("const b = require('ojs-retry/bullmq'); b.jobOptions({}, { policy: { max_attempts: 2 } })"), [])
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
    const opts = jobOptions({ jobId: 'a', attempts: 3, backoff: { type: 'fixed', delay: 5 } }, { policy: { max_attempts: 2 } })
    assert.deepEqual(opts, { jobId: 'a', attempts: ATTEMPTS, backoff: { type: BACKOFF_TYPE }, [POLICY_KEY]: '{"max_attempts":2}' })
    assert.equal(jobOptions(null)[POLICY_KEY], undefined)
  })
  test('queue defaults ← job layer', () => {
    const p = resolvePolicy({ max_attempts: 5, initial_interval: 'PT2S' }, '{"max_attempts": 2}')
    assert.deepEqual([p.maxAttempts, p.initialIntervalMs], [2, 2000])
    const preset = RetryPolicy.preset('bullmq', { attempts: 3 })
    assert.equal(resolvePolicy(preset), preset)
  })
  test('the dead-letter list', () => {
    assert.equal(deadLetterKey('orders'), 'bull:orders:dead')
    assert.equal(deadLetterKey('orders', 'app'), 'app:orders:dead')
  })
})
