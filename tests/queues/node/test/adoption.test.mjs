// The one-line adoption on the real queue: the same app — the same producer
// (a plain `queue.add` with BullMQ's own `attempts` / `backoff`), the same
// jobs, the same failures — run once by a plain BullMQ `Worker` (native
// retries) and once by `createWorker` given no policy. The timelines must be
// identical: each delay BullMQ scheduled, the attempts made, the end state.
//
// BullMQ's jitter draws `Math.random()`; the native run pins it to the
// engine's keyed sample for the job's id and retry (`jitterSample`), which
// is what the `bullmq` preset draws, so both runs get the same jitter.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { Queue, UnrecoverableError, Worker } from 'bullmq'
import { jitterSample } from 'ojs-retry'
import { createWorker, deadLetters } from 'ojs-retry/bullmq'
import { localQueue } from '../lib/local.mjs'
import { connectionOf, queueName, redisUrl } from '../lib/redis.mjs'

const cleanup = []
after(async () => {
  for (const f of cleanup) await f()
})

// Per job: its BullMQ options (the producer's, unchanged) and what attempt n
// does (script[n - 1]: 'fail' or 'unrecoverable'; past the end it succeeds).
const JOBS = {
  'exp-jitter': [{ attempts: 4, backoff: { type: 'exponential', delay: 120, jitter: 0.5 } }, ['fail', 'fail', 'fail', 'fail']],
  'exp-round': [{ attempts: 3, backoff: { type: 'exponential', delay: 33 } }, ['fail', 'fail', 'fail']],
  'fixed-jitter': [{ attempts: 3, backoff: { type: 'fixed', delay: 90, jitter: 0.3 } }, ['fail', 'fail', 'fail']],
  'fixed-number': [{ attempts: 4, backoff: 70 }, ['fail', 'fail']],
  unrecoverable: [{ attempts: 5, backoff: { type: 'exponential', delay: 50 } }, ['fail', 'unrecoverable']],
  'no-options': [{}, ['fail']],
}

function play(job) {
  const what = JOBS[job.id][1][job.attemptsMade]
  if (what === 'fail') throw new Error(`attempt ${job.attemptsMade + 1} failed`)
  if (what === 'unrecoverable') throw new UnrecoverableError('gave up')
  return 'done'
}

/**
 * The app: the producer adds every job with its own options, `start(name)`
 * makes the worker. Resolves with, per job, what BullMQ did with each run
 * (the delay it scheduled, or the end) and the job's end state.
 */
async function runApp(tag, start) {
  const connection = connectionOf(redisUrl())
  const name = queueName(tag)
  const queue = new Queue(name, { connection })
  const worker = start(name, connection)
  cleanup.push(async () => {
    await worker.close()
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
  })
  const runs = {}
  const open = new Set(Object.keys(JOBS))
  let finish
  const done = new Promise((r) => (finish = r))
  const seen = (job, row) => {
    ;(runs[job.id] ||= []).push(row)
    if (row.end) open.delete(job.id)
    if (open.size === 0) finish()
  }
  worker.on('failed', (job) =>
    seen(job, job.finishedOn ? { attemptsMade: job.attemptsMade, end: 'failed' } : { attemptsMade: job.attemptsMade, delay: job.delay }),
  )
  worker.on('completed', (job) => seen(job, { attemptsMade: job.attemptsMade, end: 'completed' }))
  for (const [id, [opts]] of Object.entries(JOBS)) await queue.add('job', { id }, { jobId: id, ...opts })
  await done
  const ends = {}
  for (const id of Object.keys(JOBS)) {
    const job = await queue.getJob(id)
    ends[id] = { state: await job.getState(), attemptsMade: job.attemptsMade }
  }
  return { runs, ends, queue }
}

/** A plain BullMQ worker, its `Math.random` pinned to the engine's keyed sample. */
function nativeWorker(name, connection) {
  // One job at a time: the failure's backoff is drawn before the next job runs.
  return new Worker(
    name,
    async (job) => {
      const u = jitterSample(job.attemptsMade + 1, { key: String(job.id) }) / 2 ** 53
      pinned = () => u
      return play(job)
    },
    { connection, concurrency: 1 },
  )
}
let pinned = null
const random = Math.random
Math.random = () => (pinned ? pinned() : random())

describe('the one-line adoption: a worker given no policy runs BullMQ jobs as BullMQ does', () => {
  test('native retries and the adoption give identical timelines', { timeout: 60_000 }, async () => {
    const native = await runApp('adopt-native', nativeWorker)
    pinned = null
    // The one line: createWorker instead of new Worker, no policy.
    const adopted = await runApp('adopt-engine', (name, connection) => createWorker(name, async (job) => play(job), { connection, concurrency: 4 }))
    // The native run did what each job's options say (the test's own check).
    assert.deepEqual(native.ends['exp-jitter'], { state: 'failed', attemptsMade: 4 })
    assert.deepEqual(native.ends['fixed-number'], { state: 'completed', attemptsMade: 3 })
    const jittered = native.runs['exp-jitter'].map((r) => r.delay).filter((d) => d !== undefined)
    assert.ok(jittered.some((d, i) => d !== Math.round(120 * 2 ** i)), `jitter drawn: ${jittered}`)
    for (const id of Object.keys(JOBS)) {
      assert.deepEqual(adopted.runs[id], native.runs[id], `the runs of ${id}`)
      assert.deepEqual(adopted.ends[id], native.ends[id], `the end of ${id}`)
    }
    // What the engine adds: a dead-letter record for each job BullMQ failed.
    const failed = Object.keys(JOBS).filter((id) => native.ends[id].state === 'failed')
    const dead = await deadLetters(adopted.queue)
    assert.deepEqual(dead.map((r) => r.job_id).sort(), failed.sort())
  })
})

describe('a job the bullmq preset cannot read', () => {
  test('a custom backoff type: dead-lettered at its first failure, with the reason, never retried by BullMQ', async () => {
    const q = await localQueue('adopt-custom', { handler: async () => { throw new Error('boom') } })
    cleanup.push(q.close)
    await q.queue.add('job', {}, { jobId: 'c', attempts: 5, backoff: { type: 'mine', delay: 10 } })
    const ended = await q.events.until((e) => e.ev === 'bullmq-failed' && e.jobId === 'c')
    assert.deepEqual([ended.attemptsMade, ended.delay], [1, null])
    const [record] = await deadLetters(q.queue)
    assert.equal(record.reason, 'policy_invalid')
    assert.ok(record.notes.some((n) => n.kind === 'policy_refused' && n.message.includes('preset.backoff.type')), JSON.stringify(record.notes))
  })
})
