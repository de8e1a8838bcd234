// Killed workers (RET-12): worker processes of their own, SIGKILLed while
// they run a job. BullMQ's stalled checker (in the surviving workers) moves
// the job back to wait with `stalledCounter` raised; the next worker to take
// it counts the lost run as a failed, timed-out attempt before anything else.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { Queue } from 'bullmq'
import { RetryPolicy } from 'ojs-retry'
import { addJob, deadLetters, STALLED_TYPE, STATE_KEY } from 'ojs-retry/bullmq'
import { Fleet, isSettled, isTerminal } from '../lib/fleet.mjs'
import { connectionOf, queueName, redisClient, redisUrl } from '../lib/redis.mjs'

// A killed worker's lock lapses after lockDuration; the stalled checker runs
// every stalledInterval (small here, so the test is quick).
const WORKER = { lockDuration: 600, stalledInterval: 300 }
const cleanup = []
after(async () => {
  for (const f of cleanup) await f()
})

async function setup(tag, policy) {
  const name = queueName(tag)
  const queue = new Queue(name, { connection: connectionOf(redisUrl()) })
  const fleet = new Fleet({ redisUrl: redisUrl(), queue: name, policy, worker: WORKER })
  cleanup.push(async () => {
    await fleet.close()
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
  })
  await Promise.all([fleet.start(), fleet.start()])
  return { queue, fleet }
}

/** Kills every worker that starts `id` (and starts a fresh one) until the job ends. */
async function killEachRun(fleet, id, runs) {
  const killed = new Set()
  for (;;) {
    const e = await fleet.until((ev) => ev.jobId === id && ((ev.ev === 'start' && !killed.has(ev.attempt)) || isTerminal(ev)), 30000)
    if (isTerminal(e) || killed.size === runs) return e
    killed.add(e.attempt)
    await fleet.kill(e.pid)
    await fleet.start()
  }
}

describe('a killed worker', () => {
  test("counts the attempt; the job is neither lost nor retried early", async () => {
    const policy = { max_attempts: 3, initial_interval: 'PT0.2S' }
    const { queue, fleet } = await setup('killed', policy)
    await addJob(queue, 'job', { outcomes: [{ hang: true }] }, { jobId: 'k-1' })
    await killEachRun(fleet, 'k-1', 1)
    const end = await fleet.until((e) => e.jobId === 'k-1' && isTerminal(e), 30000)
    await fleet.until((e) => e.jobId === 'k-1' && isSettled(e), 30000)
    assert.deepEqual([end.ev, end.attempt], ['succeeded', 2])
    const [d] = fleet.of('k-1', 'decision')
    const want = new RetryPolicy(policy).decide({ attempt: 1, timedOut: true }, { key: 'k-1' })
    assert.deepEqual([d.attempt, d.action, d.reason, d.timedOut, d.type, d.delayMs], [1, 'retry', 'retryable', true, STALLED_TYPE, want.delayMs])
    const starts = fleet.of('k-1', 'start')
    assert.deepEqual(starts.map((s) => s.attempt), [1, 2])
    assert.notEqual(starts[0].pid, starts[1].pid)
    assert.ok(starts[1].at - d.at >= d.delayMs, `the retry started ${starts[1].at - d.at} ms after the stall was counted, before its ${d.delayMs} ms delay`)
    const job = await queue.getJob('k-1')
    assert.equal(await job.getState(), 'completed')
    const client = await redisClient(queue)
    const state = JSON.parse(await client.hget(queue.toKey('k-1'), STATE_KEY))
    assert.deepEqual(state.errors.map((e) => [e.attempt, e.type]), [[1, STALLED_TYPE]])
  })

  test('every run killed: dead-lettered at max_attempts, never run past it', async () => {
    const policy = { max_attempts: 2, initial_interval: 'PT0.1S', on_exhaustion: 'dead_letter' }
    const { queue, fleet } = await setup('killed-always', policy)
    await addJob(queue, 'job', { outcomes: 'always', always: { hang: true } }, { jobId: 'k-2' })
    await killEachRun(fleet, 'k-2', 2)
    const end = await fleet.until((e) => e.jobId === 'k-2' && isTerminal(e), 30000)
    await fleet.until((e) => e.jobId === 'k-2' && isSettled(e), 30000)
    assert.deepEqual([end.ev, end.attempt, end.action, end.reason, end.type], ['decision', 2, 'dead_letter', 'exhausted', STALLED_TYPE])
    assert.deepEqual(fleet.of('k-2', 'start').map((s) => s.attempt), [1, 2])
    assert.equal(await (await queue.getJob('k-2')).getState(), 'failed')
    const [record] = await deadLetters(queue)
    assert.equal(record.job_id, 'k-2')
    assert.equal(record.retry_state.attempt, 2)
    assert.deepEqual(record.retry_state.errors.map((e) => [e.attempt, e.type]), [[1, STALLED_TYPE], [2, STALLED_TYPE]])
  })
})
