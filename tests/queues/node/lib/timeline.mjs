// The bullmq-node timeline of the cross-queue identity scenario (issue 17):
// the scenario's jobs (ids and scripted outcomes) through BullMQ with
// ojs-retry/bullmq deciding, the scenario's policy as the queue's defaults,
// in `workers` worker processes (worker-child.mjs). timeline.mjs is its CLI.
//
// precision_ms: BullMQ moves a delayed job to wait when a worker's blocking
// BZPOPMIN on the queue's marker times out at the job's timestamp; Redis
// checks blocked clients' timeouts on its server cron, `hz` 10 by default,
// so a retry starts up to 100 ms after it is due (never before).
import { Queue } from 'bullmq'
import { addJob } from 'ojs-retry/bullmq'
import { Fleet, isTerminal } from './fleet.mjs'
import { connectionOf, queueName } from './redis.mjs'

export const PRECISION_MS = 100

/** Runs the scenario; resolves to the timeline document. */
export async function runTimeline({ redisUrl, scenario, workers = 2 }) {
  const name = queueName('x')
  const connection = connectionOf(redisUrl)
  const queue = new Queue(name, { connection })
  const fleet = new Fleet({ redisUrl, queue: name, policy: scenario.policy })
  try {
    await Promise.all(Array.from({ length: workers }, () => fleet.start()))
    for (const job of scenario.jobs) {
      const data = { outcomes: job.outcomes, always: job.always }
      await addJob(queue, 'scenario', data, { jobId: job.id }, { defaults: scenario.policy })
    }
    await Promise.all(scenario.jobs.map((j) => fleet.until((e) => e.jobId === j.id && isTerminal(e), 60000)))
    const jobs = {}
    for (const j of scenario.jobs) jobs[j.id] = entriesOf(fleet, j.id)
    const pids = new Set(fleet.events.filter((e) => e.ev === 'start').map((e) => e.pid))
    return { queue: 'bullmq-node', precision_ms: PRECISION_MS, workers, worker_pids_seen: pids.size, jobs }
  } finally {
    await fleet.close()
    await queue.obliterate({ force: true }).catch(() => {})
    await queue.close()
  }
}

/** One entry per attempt: its start, and the decision or success that ended it. */
function entriesOf(fleet, jobId) {
  const starts = new Map(fleet.of(jobId, 'start').map((e) => [e.attempt, e.at]))
  return fleet
    .of(jobId)
    .filter((e) => e.ev === 'decision' || e.ev === 'succeeded')
    .map((e) =>
      e.ev === 'succeeded'
        ? { attempt: e.attempt, action: 'succeeded', reason: null, delay_ms: null, started_at_ms: starts.get(e.attempt) ?? null, failed_at_ms: null }
        : {
            attempt: e.attempt,
            action: e.action,
            reason: e.reason,
            delay_ms: e.delayMs,
            started_at_ms: starts.get(e.attempt) ?? null,
            failed_at_ms: e.at,
          },
    )
}
