// The failure-time cases of the BullMQ protocol (tests/queues/bullmq-failure-time.json,
// shared with BullMQ for Python) on a real Redis: each job ends in the
// outcome the case defines, through the engine's failure transaction, and
// the worker keeps running (it decides a good job after every case).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, describe, test } from 'node:test'
import { Queue } from 'bullmq'
import { RetryState } from 'ojs-retry'
import { addJob, createWorker, deadLetters, JobError, POLICY_KEY, STATE_KEY } from 'ojs-retry/bullmq'
import { connectionOf, queueName, redisClient, redisUrl } from '../lib/redis.mjs'

// From the repository root (run.sh runs a copy of this folder at the same depth).
const CASES = JSON.parse(readFileSync(new URL('../../../../tests/queues/bullmq-failure-time.json', import.meta.url), 'utf8')).cases
const DEADLINE_MS = 60_000

/** The hostile-input encodings of tests/vectors/README.md this file uses. */
function expand(v) {
  if (typeof v === 'string' || v === null || v === undefined) return v
  if ('$repeat' in v) return v.$repeat.repeat(v.times)
  if ('$lone_surrogate' in v) return String.fromCharCode(parseInt(v.$lone_surrogate, 16))
  if ('$concat' in v) return v.$concat.map(expand).join('')
  throw new Error(`unknown encoding ${JSON.stringify(v)}`)
}

const open = []
after(() => Promise.all(open.map((close) => close())))

/** A worker on the case's defaults whose handler plays the case's outcomes. */
async function setUp(c) {
  const connection = connectionOf(redisUrl())
  const name = queueName('ft')
  const queue = new Queue(name, { connection })
  const runs = []
  const decisions = []
  const errors = []
  const ended = new Map()
  const waiters = new Map()
  const settle = (id, how) => {
    ended.set(id, how)
    for (const w of waiters.get(id) || []) w(how)
  }
  const handler = async (job) => {
    const attempt = job.attemptsMade + 1 + (job.stalledCounter || 0)
    runs.push({ id: job.id, attempt })
    const o = (job.data.outcomes || [])[attempt - 1]
    if (!o) return 'ok'
    if (o.plant_state !== undefined) {
      const client = await redisClient(job.queue)
      await client.hset(job.queue.toKey(job.id), STATE_KEY, o.plant_state)
    }
    throw new JobError(o.type, { message: expand(o.message) })
  }
  const worker = createWorker(name, handler, { connection }, { policy: c.defaults, listeners: [(e) => decisions.push(e)] })
  worker.on('error', (err) => errors.push(String(err && err.message)))
  worker.on('completed', (job) => settle(job.id, 'completed'))
  worker.on('failed', (job) => job && job.finishedOn && settle(job.id, 'failed'))
  await worker.waitUntilReady()
  const close = async () => {
    await worker.close()
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
  }
  open.push(close)
  /** Resolves with how the job ended; rejects after the deadline. */
  const end = (id) =>
    new Promise((resolve, reject) => {
      if (ended.has(id)) return resolve(ended.get(id))
      const timer = setTimeout(() => reject(new Error(`job ${id} did not end within ${DEADLINE_MS} ms`)), DEADLINE_MS)
      waiters.set(id, [...(waiters.get(id) || []), (how) => (clearTimeout(timer), resolve(how))])
    })
  return { queue, worker, runs, decisions, errors, end }
}

async function enqueue(c, queue) {
  const data = { outcomes: c.outcomes }
  if (c.enqueue === 'helper') {
    return addJob(queue, 'job', data, { jobId: 'j' }, { policy: c.layer, defaults: c.producer_defaults })
  }
  // A producer on the queue's plain API: whatever it put in the options.
  const opts = c.layer === undefined ? { jobId: 'j' } : { jobId: 'j', [POLICY_KEY]: c.layer }
  if (c.stalled === undefined) return queue.add('job', data, opts)
  // Stalls BullMQ counted before any worker took the job: set while paused.
  await queue.pause()
  const job = await queue.add('job', data, opts)
  await (await redisClient(queue)).hset(queue.toKey('j'), 'stc', String(c.stalled))
  await queue.resume()
  return job
}

describe('failure time (tests/queues/bullmq-failure-time.json)', () => {
  for (const c of CASES) {
    test(`${c.id}: ${c.note}`, async () => {
      const q = await setUp(c)
      await enqueue(c, q.queue)
      assert.equal(await q.end('j'), c.expect.end)
      assert.equal(q.runs.filter((r) => r.id === 'j').length, c.expect.runs)
      const mine = q.decisions.filter((e) => e.jobId === 'j')
      assert.equal(mine.length, c.expect.decisions.length)
      mine.forEach((e, i) => {
        const [action, reason, notes] = c.expect.decisions[i]
        assert.deepEqual([e.decision.action, e.decision.reason], [action, reason], `decision ${i + 1}`)
        const kinds = e.notes.map((n) => n.kind)
        for (const k of notes) assert.ok(kinds.includes(k), `decision ${i + 1}: note ${k} in ${JSON.stringify(kinds)}`)
      })
      // The stored state: the engine's text, which reads back.
      const client = await redisClient(q.queue)
      const text = await client.hget(q.queue.toKey('j'), STATE_KEY)
      assert.ok(Buffer.byteLength(text) <= 1 << 20, `the state text is ${Buffer.byteLength(text)} bytes`)
      const state = RetryState.fromJSON(text)
      assert.equal(state.toString(), text)
      assert.deepEqual([state.attempt, state.errors.length], [c.expect.state.attempt, c.expect.state.errors])
      if (c.expect.last_message !== undefined) assert.equal(state.errors.at(-1).message, expand(c.expect.last_message))
      const dead = await deadLetters(q.queue)
      assert.deepEqual(dead.map((r) => r.reason), c.expect.dead_letter === null ? [] : [c.expect.dead_letter])
      // The worker still runs and decides: a good job completes.
      await q.queue.add('job', {}, { jobId: 'after' })
      assert.equal(await q.end('after'), 'completed')
      assert.ok(q.worker.isRunning())
      assert.deepEqual(q.errors, [])
    })
  }
})
