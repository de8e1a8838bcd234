// The cross-queue scenario (tests/queues/scenario.json) through BullMQ with
// two worker processes: the timeline's actions, reasons and delays are what
// RetryPolicy.decide gives for the job ids, and every gap between a failure
// and the next start is at least its delay (no retry starts early; how late
// is the load's, not asserted).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { RetryPolicy } from 'ojs-retry'
import { outcomeFor } from '../lib/outcome.mjs'
import { redisUrl } from '../lib/redis.mjs'
import { runTimeline } from '../lib/timeline.mjs'

const scenario = JSON.parse(readFileSync(new URL('../../../../tests/queues/scenario.json', import.meta.url), 'utf8'))

/** What the engine says for a job's script: [action, reason, delay_ms] per attempt. */
function expected(policy, job) {
  const out = []
  for (let attempt = 1; ; attempt++) {
    const o = outcomeFor(job, attempt)
    if (o === null) return [...out, [attempt, 'succeeded', null, null]]
    const d = policy.decide({ attempt, type: o.type, code: o.code }, { key: job.id })
    out.push([attempt, d.action, d.reason, d.delayMs])
    if (d.action !== 'retry') return out
  }
}

test('the scenario on two worker processes gives the engine\'s timeline', async () => {
  const doc = await runTimeline({ redisUrl: redisUrl(), scenario, workers: 2 })
  assert.equal(doc.queue, 'bullmq-node')
  assert.equal(doc.workers, 2)
  const policy = new RetryPolicy(scenario.policy)
  for (const job of scenario.jobs) {
    const got = doc.jobs[job.id].map((e) => [e.attempt, e.action, e.reason, e.delay_ms])
    assert.deepEqual(got, expected(policy, job), job.id)
    const entries = doc.jobs[job.id]
    for (let i = 0; i + 1 < entries.length; i++) {
      const gap = entries[i + 1].started_at_ms - entries[i].failed_at_ms
      assert.ok(gap >= entries[i].delay_ms, `${job.id} attempt ${i + 2}: started ${gap} ms after the failure, before ${entries[i].delay_ms} ms`)
    }
  }
})
