// Presets in the real queue: with jitter off, BullMQ running on the engine
// with the `bullmq` preset gives the same timeline as BullMQ's native
// `attempts` + `backoff` on the same Redis — the delays BullMQ scheduled, the
// attempts made, the terminal state.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { Queue, UnrecoverableError, Worker } from 'bullmq'
import { RetryPolicy } from 'ojs-retry'
import { addJob, deadLetters } from 'ojs-retry/bullmq'
import { localQueue } from '../lib/local.mjs'
import { connectionOf, queueName, redisUrl } from '../lib/redis.mjs'

const cleanup = []
after(async () => {
  for (const f of cleanup) await f()
})

// Attempt n does script[n - 1] ('fail', 'unrecoverable'); past the end it succeeds.
function play(script, attemptsMade) {
  const what = script[attemptsMade]
  if (what === 'fail') throw new Error(`attempt ${attemptsMade + 1} failed`)
  if (what === 'unrecoverable') throw new UnrecoverableError('gave up')
  return 'done'
}

/** Runs `script` on a plain BullMQ worker with `opts`; what BullMQ did with each run. */
async function native(script, opts) {
  const connection = connectionOf(redisUrl())
  const name = queueName('native')
  const queue = new Queue(name, { connection })
  const runs = []
  let finish
  const done = new Promise((r) => (finish = r))
  const worker = new Worker(name, async (job) => play(script, job.attemptsMade), { connection })
  worker.on('failed', (job) => {
    runs.push({ attemptsMade: job.attemptsMade, delay: job.finishedOn ? null : job.delay })
    if (job.finishedOn) finish()
  })
  worker.on('completed', (job) => {
    runs.push({ attemptsMade: job.attemptsMade, completed: true })
    finish()
  })
  cleanup.push(async () => {
    await worker.close()
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
  })
  await queue.add('job', {}, { jobId: 'p', ...opts })
  await done
  return { runs, state: await (await queue.getJob('p')).getState() }
}

/** The same script on the engine with the `bullmq` preset of `opts`. */
async function onEngine(script, opts) {
  const handler = async (job) => play(script, job.attemptsMade)
  const q = await localQueue('preset', { handler })
  cleanup.push(q.close)
  const runs = []
  let finish
  const done = new Promise((r) => (finish = r))
  q.worker.on('failed', (job) => {
    runs.push({ attemptsMade: job.attemptsMade, delay: job.finishedOn ? null : job.delay })
    if (job.finishedOn) finish()
  })
  q.worker.on('completed', (job) => {
    runs.push({ attemptsMade: job.attemptsMade, completed: true })
    finish()
  })
  await addJob(q.queue, 'job', {}, { jobId: 'p' }, { policy: RetryPolicy.preset('bullmq', opts), defaults: null })
  await done
  return { runs, state: await (await q.queue.getJob('p')).getState(), dead: await deadLetters(q.queue) }
}

const CASES = [
  ['exponential, exhausted', ['fail', 'fail', 'fail', 'fail'], { attempts: 4, backoff: { type: 'exponential', delay: 100 } }],
  ['exponential, odd delay (Math.round)', ['fail', 'fail', 'fail'], { attempts: 3, backoff: { type: 'exponential', delay: 33 } }],
  ['exponential, succeeds on the 3rd attempt', ['fail', 'fail'], { attempts: 4, backoff: { type: 'exponential', delay: 60 } }],
  ['fixed, exhausted', ['fail', 'fail', 'fail'], { attempts: 3, backoff: { type: 'fixed', delay: 150 } }],
  ['UnrecoverableError on the 2nd attempt', ['fail', 'unrecoverable'], { attempts: 5, backoff: { type: 'exponential', delay: 50 } }],
  ['no backoff: immediate retries', ['fail', 'fail'], { attempts: 3 }],
]

describe('the bullmq preset in BullMQ matches BullMQ native', () => {
  for (const [title, script, opts] of CASES) {
    test(title, async () => {
      const [a, b] = await Promise.all([native(script, opts), onEngine(script, opts)])
      const runs = Math.min(script.includes('unrecoverable') ? script.indexOf('unrecoverable') + 1 : script.length + 1, opts.attempts)
      assert.equal(a.runs.length, runs, 'BullMQ native ran the job as configured')
      assert.deepEqual(b.runs, a.runs)
      assert.equal(b.state, a.state)
      // What BullMQ native means by "failed" is the preset's dead_letter.
      assert.equal(b.dead.length, a.state === 'failed' ? 1 : 0)
    })
  }
})
