// A BullMQ worker in a process of its own, running ojs-retry/bullmq's
// processor over a scripted handler, for the tests and timeline.mjs.
//
//   fork('worker-child.mjs', [JSON config])
//   config: { redisUrl, queue, policy?, timeoutMs?, worker?: WorkerOptions }
//
// The handler plays the job's script (`job.data.outcomes`, see outcome.mjs).
// Messages to the parent: {ev: 'ready'}, {ev: 'start', jobId, attempt, at},
// {ev: 'decision', jobId, attempt, action, reason, delayMs, timedOut, at},
// {ev: 'succeeded', jobId, attempt, at}, and BullMQ's own outcome
// {ev: 'bullmq-failed', jobId, attemptsMade, delay} / {ev: 'bullmq-completed',
// jobId}. On the message 'close' the worker
// closes and the process exits.
import { createWorker } from 'ojs-retry/bullmq'
import { connectionOf } from './redis.mjs'
import { playOutcome } from './outcome.mjs'

const config = JSON.parse(process.argv[2])
const send = (msg) => process.send({ pid: process.pid, ...msg })

async function handler(job) {
  const attempt = job.attemptsMade + 1 + (job.stalledCounter || 0)
  send({ ev: 'start', jobId: job.id, attempt, at: Date.now() })
  await playOutcome(job.data, attempt)
  send({ ev: 'succeeded', jobId: job.id, attempt, at: Date.now() })
  return { attempt }
}

const listener = (e) =>
  send({
    ev: 'decision',
    jobId: e.jobId,
    attempt: e.attempt,
    action: e.decision.action,
    reason: e.decision.reason,
    delayMs: e.decision.delayMs,
    timedOut: e.decision.timedOut,
    type: e.failure.type,
    at: e.atMs,
  })

const worker = createWorker(
  config.queue,
  handler,
  { connection: connectionOf(config.redisUrl), ...(config.worker || {}) },
  { policy: config.policy, listeners: [listener], timeoutMs: config.timeoutMs },
)
worker.on('error', (err) => send({ ev: 'error', message: String(err && err.message) }))
// What BullMQ itself did once the processor returned: the job is in its set.
worker.on('failed', (job) =>
  send({ ev: 'bullmq-failed', jobId: job.id, attemptsMade: job.attemptsMade, delay: job.finishedOn ? null : job.delay }),
)
worker.on('completed', (job) => send({ ev: 'bullmq-completed', jobId: job.id }))
process.on('message', async (msg) => {
  if (msg === 'close') {
    await worker.close()
    process.exit(0)
  }
})
process.on('disconnect', () => process.exit(0))
await worker.waitUntilReady()
send({ ev: 'ready' })
