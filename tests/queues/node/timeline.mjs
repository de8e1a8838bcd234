#!/usr/bin/env node
// The bullmq-node timeline of the cross-queue identity scenario (issue 17):
//
//   node tests/queues/node/timeline.mjs --redis URL --scenario FILE [--workers 2] [--out FILE]
//
// Runs the scenario's jobs (ids and scripted outcomes) through BullMQ with
// ojs-retry/bullmq deciding, the scenario's policy as the queue's defaults,
// in `--workers` worker processes, and prints the timeline document
// (tests/queues/README format: per job and attempt the engine's action,
// reason and delay_ms, when the attempt started and when it failed).
//
// precision_ms: BullMQ moves a delayed job to wait when a worker's blocking
// BZPOPMIN on the queue's marker times out at the job's timestamp; Redis
// checks blocked clients' timeouts on its server cron, `hz` 10 by default,
// so a retry starts up to 100 ms after it is due (never before).
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Queue } from 'bullmq'
import { addJob } from 'ojs-retry/bullmq'
import { Fleet, isTerminal } from './lib/fleet.mjs'
import { connectionOf, queueName } from './lib/redis.mjs'

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

async function main() {
  const { values } = parseArgs({
    options: {
      redis: { type: 'string' },
      scenario: { type: 'string' },
      workers: { type: 'string', default: '2' },
      out: { type: 'string' },
    },
  })
  if (!values.redis || !values.scenario) {
    console.error('usage: timeline.mjs --redis URL --scenario FILE [--workers N] [--out FILE]')
    process.exit(2)
  }
  const scenario = JSON.parse(readFileSync(values.scenario, 'utf8'))
  const doc = await runTimeline({ redisUrl: values.redis, scenario, workers: Number(values.workers) })
  const text = JSON.stringify(doc, null, 2) + '\n'
  if (values.out) writeFileSync(values.out, text)
  else process.stdout.write(text)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}
