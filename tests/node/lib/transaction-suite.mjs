// runTransaction's input rules, run once per backend: the queue's own
// arguments of the wrong kind are the package's error naming the field;
// whatever the job carried is an outcome, never an error (DESIGN "The
// failure transaction"). The outcomes themselves are pinned by
// tests/vectors/transaction.json.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { throwsCoded } from './api-suite.mjs'

const ARG = 'validation.invalid_argument'
const NOW = 1770892265000
const DEFAULTS = [{ max_interval: 'PT3S' }]

export function transactionSuite(api, backend) {
  const run = (attempt, options) => api.runTransaction(attempt, { key: 'job-1', now: NOW, ...options })

  test(`runTransaction (${backend}): the queue's own arguments are checked, naming the field`, () => {
    const e = throwsCoded(() => run(1, { kye: 'x' }), ARG, 'kye')
    assert.ok(e instanceof api.OjsRetryError)
    throwsCoded(() => api.runTransaction(1, { now: NOW }), ARG, 'key')
    throwsCoded(() => api.runTransaction(1, { key: 7 }), ARG, 'key')
    throwsCoded(() => run('1', {}), ARG, 'attempt')
    throwsCoded(() => run(1.5, {}), ARG, 'attempt')
    throwsCoded(() => run(1, { message: 404 }), ARG, 'message')
    throwsCoded(() => run(1, { type: {} }), ARG, 'type')
    throwsCoded(() => run(1, { timedOut: 'yes' }), ARG, 'timedOut')
    throwsCoded(() => run(1, { now: -1 }), ARG, 'now')
    throwsCoded(() => run(1, { historyLimit: 2.5 }), ARG, 'historyLimit')
    throwsCoded(() => api.runTransaction(1, new Map([['key', 'k']])), ARG, null, null)
    throwsCoded(() => api.runTransaction(1, undefined), ARG, null, null)
    const getter = { get key() { throw new Error('boom') } }
    assert.throws(() => api.runTransaction(1, getter), (err) => err instanceof api.OjsRetryError && err.code === ARG)
  })

  test(`runTransaction (${backend}): what the job carried is never an error`, () => {
    const carried = [
      new Map([['initial_interval', 'PT5S']]),
      new Set([1]),
      () => 1,
      Symbol('s'),
      10n ** 40n,
      { get initial_interval() { throw new Error('getter') } },
      'not json',
      `{"initial_interval": "\ud800"}`,
      { initial_interval: 'PT5S' },
    ]
    for (const layer of carried) {
      const out = run(1, { defaults: DEFAULTS, layer, type: 'net.reset', queue: 'q' })
      assert.equal(out.action, 'dead_letter', String(typeof layer))
      assert.equal(out.decision.reason, 'policy_invalid')
      assert.deepEqual(out.notes.map((n) => n.kind), ['policy_refused'])
      assert.equal(JSON.parse(out.deadLetter).job_id, 'job-1')
    }
    const cyclic = { attempt: 1 }
    cyclic.errors = [cyclic]
    for (const state of [new Map(), cyclic, '{', { attempt: -1 }]) {
      const out = run(2, { defaults: DEFAULTS, state })
      assert.equal(out.action, 'retry')
      assert.ok(out.notes.some((n) => n.kind === 'state_unreadable'), JSON.stringify(out.notes))
    }
    for (const details of [new Map(), { big: 'x'.repeat(70_000) }, NaN]) {
      const out = run(1, { defaults: DEFAULTS, details })
      assert.deepEqual(out.notes.map((n) => n.kind), ['details_dropped'])
    }
  })

  test(`runTransaction (${backend}): engine objects, BigInt counters, the outcome's shape`, () => {
    const policy = new api.RetryPolicy({ max_attempts: 4, jitter: false })
    const first = run(1n, { defaults: policy, type: 'net.reset', message: 'm' })
    assert.equal(first.decision.delayMs, 1000)
    assert.ok(Object.isFrozen(first))
    assert.equal(first.state.toString(), first.stateJson)
    assert.equal(first.policy.maxAttempts, 4)
    const second = run(2, { defaults: [policy], state: first.state, type: 'net.reset' })
    assert.equal(second.state.attempt, 2)
    assert.deepEqual(second.notes, [])
    assert.equal(run(2n ** 80n, { defaults: policy }).notes[0].kind, 'attempt_out_of_range')
    assert.equal(run(-3, { defaults: policy }).notes[0].kind, 'attempt_out_of_range')
  })
}
