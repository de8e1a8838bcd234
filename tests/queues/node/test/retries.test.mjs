// ojs-retry/bullmq end to end: a real BullMQ worker on a real Redis
// (REDIS_URL), the engine deciding every failure.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { Queue } from 'bullmq'
import { RetryPolicy } from 'ojs-retry'
import { addJob, createWorker, deadLetters, JobError, STATE_KEY } from 'ojs-retry/bullmq'
import { isSettled, isTerminal } from '../lib/fleet.mjs'
import { localQueue } from '../lib/local.mjs'
import { connectionOf, queueName, redisClient, redisUrl } from '../lib/redis.mjs'

const open = []
after(() => Promise.all(open.map((q) => q.close())))

async function queueWith(tag, options) {
  const q = await localQueue(tag, options)
  open.push(q)
  return q
}

/** The job's last decision (or success), once BullMQ has also settled the job. */
async function terminal(q, id) {
  const end = await q.events.until((e) => e.jobId === id && isTerminal(e), 30000)
  await q.events.until((e) => e.jobId === id && isSettled(e), 30000)
  return end
}

/** Each gap between a failure and the next start is at least the decided delay. */
function assertGapsHonoured(events, id) {
  const starts = events.of(id, 'start')
  for (const d of events.of(id, 'decision').filter((e) => e.action === 'retry')) {
    const next = starts.find((s) => s.attempt === d.attempt + 1)
    assert.ok(next, `attempt ${d.attempt + 1} of ${id} started`)
    assert.ok(next.at - d.at >= d.delayMs, `${id}: attempt ${d.attempt + 1} started ${next.at - d.at} ms after the failure, before its ${d.delayMs} ms delay`)
  }
}

describe('retries', () => {
  test("follow the engine's keyed delays, then the job succeeds", async () => {
    const policy = { max_attempts: 4, initial_interval: 'PT0.1S', backoff_coefficient: 2, max_interval: 'PT1S' }
    const q = await queueWith('delays', { policy })
    const script = { outcomes: [{ type: 'external.timeout' }, { type: 'external.timeout' }] }
    await addJob(q.queue, 'job', script, { jobId: 'd-1' })
    const end = await terminal(q, 'd-1')
    assert.equal(end.ev, 'succeeded')
    assert.equal(end.attempt, 3)
    const engine = new RetryPolicy(policy)
    const decisions = q.events.of('d-1', 'decision')
    assert.deepEqual(
      decisions.map((d) => [d.attempt, d.action, d.reason, d.delayMs]),
      [1, 2].map((n) => {
        const want = engine.decide({ attempt: n, type: 'external.timeout' }, { key: 'd-1' })
        return [n, want.action, want.reason, want.delayMs]
      }),
    )
    assertGapsHonoured(q.events, 'd-1')
    const job = await q.queue.getJob('d-1')
    assert.equal(await job.getState(), 'completed')
    // BullMQ scheduled each retry with exactly the engine's delay.
    assert.deepEqual(
      q.events.of('d-1', 'bullmq-failed').map((e) => [e.attemptsMade, e.delay]),
      decisions.map((d) => [d.attempt, d.delayMs]),
    )
    const client = await redisClient(q.queue)
    const state = JSON.parse(await client.hget(q.queue.toKey('d-1'), STATE_KEY))
    assert.equal(state.attempt, 2)
    assert.deepEqual(state.errors.map((e) => e.type), ['external.timeout', 'external.timeout'])
  })

  test('max_attempts is exact, then on_exhaustion: dead_letter and discard', async () => {
    const policy = { max_attempts: 3, initial_interval: 'PT0.05S', jitter: false }
    const q = await queueWith('exact', { policy })
    const always = { outcomes: 'always', always: { type: 'external.down' } }
    await addJob(q.queue, 'job', always, { jobId: 'x-dead' }, { policy: { on_exhaustion: 'dead_letter' }, defaults: policy })
    await addJob(q.queue, 'job', always, { jobId: 'x-gone' }, { policy: { on_exhaustion: 'discard' }, defaults: policy })
    for (const [id, action] of [['x-dead', 'dead_letter'], ['x-gone', 'discard']]) {
      const end = await terminal(q, id)
      assert.deepEqual([end.attempt, end.action, end.reason], [3, action, 'exhausted'])
      assert.deepEqual(q.events.of(id, 'start').map((s) => s.attempt), [1, 2, 3])
      assert.equal(await (await q.queue.getJob(id)).getState(), 'failed')
      assertGapsHonoured(q.events, id)
    }
    const dead = await deadLetters(q.queue)
    assert.deepEqual(dead.map((r) => r.job_id), ['x-dead'])
    assert.equal(dead[0].retry_state.attempt, 3)
    assert.equal(dead[0].retry_state.terminal, 'dead_letter')
    assert.equal(dead[0].decision.reason, 'exhausted')
  })

  test('a non-retryable type goes to on_exhaustion at once', async () => {
    const policy = { non_retryable_errors: ['validation.*', 'TypeError'], on_exhaustion: 'dead_letter' }
    const q = await queueWith('nonretry', { policy })
    await addJob(q.queue, 'job', { outcomes: [{ type: 'validation.bad_input' }] }, { jobId: 'n-1' })
    await addJob(q.queue, 'job', { outcomes: [{ error: 'TypeError' }] }, { jobId: 'n-2' })
    await addJob(q.queue, 'job', { outcomes: [{ type: 'validation.bad_input' }] }, { jobId: 'n-3' }, { policy: { on_exhaustion: 'discard' }, defaults: policy })
    const ends = await Promise.all(['n-1', 'n-2', 'n-3'].map((id) => terminal(q, id)))
    assert.deepEqual(
      ends.map((e) => [e.attempt, e.action, e.reason, e.matchedPattern, e.type]),
      [
        [1, 'dead_letter', 'non_retryable', 'validation.*', 'validation.bad_input'],
        [1, 'dead_letter', 'non_retryable', 'TypeError', 'TypeError'],
        [1, 'discard', 'non_retryable', 'validation.*', 'validation.bad_input'],
      ],
    )
    assert.deepEqual((await deadLetters(q.queue)).map((r) => r.job_id).sort(), ['n-1', 'n-2'])
  })

  test('each handler code: RETRY, DISCARD, DEAD_LETTER, FAIL', async () => {
    const policy = { max_attempts: 3, initial_interval: 'PT0.05S', on_exhaustion: 'discard' }
    const q = await queueWith('codes', { policy })
    for (const code of ['RETRY', 'DISCARD', 'DEAD_LETTER', 'FAIL']) {
      await addJob(q.queue, 'job', { outcomes: [{ type: 'payment.declined', code }] }, { jobId: `c-${code}` })
    }
    const byCode = {}
    for (const code of ['RETRY', 'DISCARD', 'DEAD_LETTER', 'FAIL']) {
      await terminal(q, `c-${code}`)
      byCode[code] = q.events.of(`c-${code}`).filter((e) => e.ev === 'decision' || e.ev === 'succeeded').map((e) => [e.ev, e.action, e.reason, e.handlerCode])
    }
    assert.deepEqual(byCode, {
      RETRY: [['decision', 'retry', 'retryable', 'RETRY'], ['succeeded', undefined, undefined, undefined]],
      DISCARD: [['decision', 'discard', 'handler_code', 'DISCARD']],
      DEAD_LETTER: [['decision', 'dead_letter', 'handler_code', 'DEAD_LETTER']],
      FAIL: [['decision', 'discard', 'handler_code', 'FAIL']],
    })
    const dead = await deadLetters(q.queue)
    assert.deepEqual(dead.map((r) => r.job_id), ['c-DEAD_LETTER'])
    assert.equal(dead[0].retry_state.errors[0].code, 'DEAD_LETTER')
    for (const code of ['DISCARD', 'DEAD_LETTER', 'FAIL']) {
      assert.equal(await (await q.queue.getJob(`c-${code}`)).getState(), 'failed')
    }
  })

  test('the dead-letter entry holds the §10 state: attempt, the 10 newest errors, why', async () => {
    const policy = { max_attempts: 12, backoff_strategy: 'none', initial_interval: 'PT0.01S', jitter: false, on_exhaustion: 'dead_letter' }
    const handler = async (job) => {
      const n = job.attemptsMade + 1
      throw new JobError('external.flaky', { message: `attempt ${n} failed`, details: { n } })
    }
    const q = await queueWith('history', { policy, handler })
    await addJob(q.queue, 'charge', { order: 42 }, { jobId: 'h-1' })
    const end = await terminal(q, 'h-1')
    assert.deepEqual([end.attempt, end.action, end.reason], [12, 'dead_letter', 'exhausted'])
    const [record] = await deadLetters(q.queue)
    assert.equal(record.queue, q.name)
    assert.equal(record.job_id, 'h-1')
    assert.equal(record.retry_state.attempt, 12)
    assert.equal(record.retry_state.terminal, 'dead_letter')
    assert.equal(record.retry_state.errors.length, 10)
    assert.deepEqual(record.retry_state.errors.map((e) => e.attempt), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    assert.deepEqual(record.retry_state.errors.map((e) => e.message), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((n) => `attempt ${n} failed`))
    assert.deepEqual(record.retry_state.errors[9].details, { n: 12 })
    assert.deepEqual([record.decision.action, record.decision.reason, record.decision.attempt], ['dead_letter', 'exhausted', 12])
    assert.equal(record.policy.max_attempts, 12)
    assert.deepEqual([record.job.name, record.job.data], ['charge', { order: 42 }])
    const client = await redisClient(q.queue)
    assert.deepEqual(JSON.parse(await client.hget(q.queue.toKey('h-1'), STATE_KEY)), record.retry_state)
  })

  test("the job's layer goes over the queue's defaults", async () => {
    const defaults = { max_attempts: 5, initial_interval: 'PT0.05S' }
    const q = await queueWith('layers', { policy: defaults })
    const always = { outcomes: 'always', always: { type: 'external.down' } }
    await addJob(q.queue, 'job', always, { jobId: 'l-1' }, { policy: { max_attempts: 2, on_exhaustion: 'dead_letter' }, defaults })
    const end = await terminal(q, 'l-1')
    assert.deepEqual([end.attempt, end.action, end.reason], [2, 'dead_letter', 'exhausted'])
    const [record] = await deadLetters(q.queue)
    assert.equal(record.policy.max_attempts, 2)
    assert.equal(record.policy.initial_interval, 'PT0.05S')
  })

  test('a run over timeoutMs is a timed-out failed attempt', async () => {
    const q = await queueWith('timeout', { policy: { initial_interval: 'PT0.05S' }, timeoutMs: 150 })
    await addJob(q.queue, 'job', { outcomes: [{ sleepMs: 5000 }] }, { jobId: 't-1' })
    const end = await terminal(q, 't-1')
    assert.deepEqual([end.ev, end.attempt], ['succeeded', 2])
    const [d] = q.events.of('t-1', 'decision')
    assert.deepEqual([d.attempt, d.action, d.timedOut, d.type], [1, 'retry', true, 'TimeoutError'])
  })

  test('a job added by a plain queue.add is retried as the engine decides', async () => {
    const policy = { max_attempts: 3, initial_interval: 'PT0.05S', on_exhaustion: 'dead_letter' }
    const q = await queueWith('plain', { policy })
    await q.queue.add('job', { outcomes: [{ type: 'external.timeout' }] }, { jobId: 'p-1' })
    await q.queue.add('job', { outcomes: 'always', always: { type: 'external.down' } }, { jobId: 'p-2' })
    const [ok, dead] = await Promise.all([terminal(q, 'p-1'), terminal(q, 'p-2')])
    assert.deepEqual([ok.ev, ok.attempt], ['succeeded', 2])
    assert.deepEqual([dead.attempt, dead.action, dead.reason], [3, 'dead_letter', 'exhausted'])
    assertGapsHonoured(q.events, 'p-1')
    assertGapsHonoured(q.events, 'p-2')
  })
})

describe('enqueue-time validation (RET-16)', () => {
  test('a bad policy is refused with the typed error before anything reaches Redis', async () => {
    const q = await queueWith('refused', {})
    const client = await redisClient(q.queue)
    // Only what an add would write: the job's hash, the id counter and the
    // lists a new job enters. The queue's worker is running, and its own
    // keys (stalled-check, marker, events) change whatever the enqueue does.
    const written = async () => ({
      job: await client.exists(q.queue.toKey('bad')),
      id: await client.get(q.queue.toKey('id')),
      wait: await client.lrange(q.queue.toKey('wait'), 0, -1),
      paused: await client.lrange(q.queue.toKey('paused'), 0, -1),
      delayed: await client.zrange(q.queue.toKey('delayed'), 0, -1),
      prioritized: await client.zrange(q.queue.toKey('prioritized'), 0, -1),
    })
    const before = await written()
    const bad = [
      [{ max_attempts: -1 }, 'max_attempts'],
      [{ initial_interval: '1 second' }, 'initial_interval'],
      [{ backoff_coefficient: 0.5 }, 'backoff_coefficient'],
      ['{"max_attempts": 3,', null],
    ]
    for (const [policy, field] of bad) {
      await assert.rejects(
        async () => addJob(q.queue, 'job', {}, { jobId: 'bad' }, { policy, defaults: null }),
        (e) => e.code === 'validation.retry_policy_invalid' && e.field === field,
      )
    }
    // A preset is a whole policy: the engine refuses to layer one over queue defaults.
    const preset = { preset: { system: 'bullmq', attempts: 3 } }
    await assert.rejects(async () => addJob(q.queue, 'job', {}, { jobId: 'bad' }, { policy: preset, defaults: { max_attempts: 2 } }), (e) => typeof e.code === 'string' && e.code.startsWith('validation.'))
    // ... and the queue's own defaults are checked with the job's layer.
    await assert.rejects(async () => addJob(q.queue, 'job', {}, { jobId: 'bad' }, { policy: { max_attempts: 2 }, defaults: { max_interval: 'PT-1S' } }), (e) => e.field === 'max_interval')
    assert.deepEqual(await written(), before)
    assert.equal(await q.queue.getJob('bad'), undefined)
    // A good one goes through.
    const job = await addJob(q.queue, 'job', {}, { jobId: 'good' }, { policy: { max_attempts: 2 }, defaults: null })
    assert.equal(job.opts.ojs_retry_policy, '{"max_attempts":2}')
  })
})

describe('listeners', () => {
  test("a listener that throws does not stop the decision; its error is the worker's 'error' event", async () => {
    const connection = connectionOf(redisUrl())
    const name = queueName('listener')
    const queue = new Queue(name, { connection })
    const seen = []
    let attempts = 0
    const worker = createWorker(
      name,
      async () => {
        attempts += 1
        if (attempts === 1) throw new JobError('external.timeout')
        return 'ok'
      },
      { connection },
      {
        policy: { initial_interval: 'PT0.05S' },
        listeners: [
          () => {
            throw new Error('listener broke')
          },
        ],
      },
    )
    worker.on('error', (err) => seen.push(err.message))
    const completed = new Promise((resolve) => worker.on('completed', resolve))
    open.push({
      close: async () => {
        await worker.close()
        await queue.obliterate({ force: true })
        await queue.close()
      },
    })
    await addJob(queue, 'job', {}, { jobId: 'li-1' })
    await completed
    assert.equal(attempts, 2)
    assert.deepEqual(seen, ['listener broke'])
  })
})
