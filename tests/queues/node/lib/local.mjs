// A queue and an in-process ojs-retry/bullmq worker over the scripted
// handler (outcome.mjs), reporting the same events as worker-child.mjs.
import { Queue } from 'bullmq'
import { createWorker } from 'ojs-retry/bullmq'
import { Fleet } from './fleet.mjs'
import { connectionOf, queueName, redisUrl } from './redis.mjs'
import { playOutcome } from './outcome.mjs'

/**
 * `options`: { policy (queue defaults), timeoutMs, worker (WorkerOptions),
 * handler (replaces the scripted one) }. Returns { queue, worker, events, close }.
 */
export async function localQueue(tag, options = {}) {
  const connection = connectionOf(redisUrl())
  const name = queueName(tag)
  const queue = new Queue(name, { connection })
  const events = new Fleet({})
  const send = (msg) => events.push({ pid: process.pid, ...msg })
  const scripted = async (job) => {
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
      handlerCode: e.decision.handlerCode,
      matchedPattern: e.decision.matchedPattern,
      type: e.failure.type,
      at: e.atMs,
    })
  const worker = createWorker(
    name,
    options.handler || scripted,
    { connection, ...(options.worker || {}) },
    { policy: options.policy, listeners: [listener], timeoutMs: options.timeoutMs },
  )
  worker.on('error', (err) => send({ ev: 'error', message: String(err && err.message) }))
  // What BullMQ itself did with each failure: the delay it scheduled, or none.
  worker.on('failed', (job) =>
    send({ ev: 'bullmq-failed', jobId: job.id, attemptsMade: job.attemptsMade, delay: job.finishedOn ? null : job.delay }),
  )
  worker.on('completed', (job) => send({ ev: 'bullmq-completed', jobId: job.id }))
  await worker.waitUntilReady()
  const close = async () => {
    await worker.close()
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
  }
  return { name, queue, worker, events, close }
}
