#!/usr/bin/env node
// BullMQ for Node: the engine's retry path against BullMQ's own, same Redis,
// same run. Information only: nothing asserts these figures.
//
//   node bench/queues/bullmq_node.mjs --redis URL [--jobs N] [--rounds R]
//
// Uses the packages tests/queues/node installs (tests/queues/node/install.sh):
// the pinned bullmq and ojs-retry as a user gets it. Prints one JSON document:
//
// * retry_path: jobs per second for N jobs that each fail once and then
//   succeed (a 1 ms retry delay both ways, so the queue's own retry mechanics
//   are what is timed), one in-process worker (concurrency 50), natively
//   (`attempts: 2`, `backoff: 1`) and on the engine (max_attempts 2, constant
//   1 ms, through ojs-retry/bullmq: the decision, the job's §10 state written
//   to its hash, the backoff hook); rounds alternate, the ratio is engine /
//   native of the medians. The floor beside it (floor_jobs_per_s,
//   floor_ratio): the same integration doing the same Redis writes with the
//   engine's transaction replaced by a no-op (the first job's real outcome,
//   reused) — what the integration's protocol costs without the engine.
// * enqueue: per call, `queue.add` alone (with `{attempts: 5}`, and with
//   options of the size `addJob` sends: the policy layer's text, attempts,
//   backoff), `jobOptions` (the enqueue-time validation, RET-16) alone,
//   `addJob` (validation + add), and the ratios; every subject once a round,
//   the order reversed every other round.
import { createRequire } from 'node:module'
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'

const require = createRequire(new URL('../../tests/queues/node/package.json', import.meta.url))
const { Queue, Worker } = require('bullmq')
const { backend } = require('ojs-retry')
const { addJob, createWorker, jobOptions, Processor, workerOptions } = require('ojs-retry/bullmq')

const POLICY = { max_attempts: 2, initial_interval: 'PT0.001S', backoff_strategy: 'none', jitter: false }
const LAYER = { max_attempts: 5, initial_interval: 'PT1S', non_retryable_errors: ['validation.*'] }

function connectionOf(url) {
  const u = new URL(url)
  return { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** The integration with a no-op engine: every failure gets the first one's outcome. */
class NoopEngine extends Processor {
  transact(job, attempt, failure, state, now) {
    this.outcome ??= super.transact(job, attempt, failure, state, now)
    return this.outcome
  }
}

function workerOf(kind, name, handler, opts) {
  if (kind === 'engine') return createWorker(name, handler, opts, { policy: POLICY })
  if (kind === 'floor') {
    const p = new NoopEngine(handler, { policy: POLICY })
    return new Worker(name, p.process, workerOptions(p, opts))
  }
  return new Worker(name, handler, opts)
}

async function retryRound(connection, jobs, kind) {
  const name = `bench-bmq-${randomUUID().slice(0, 8)}`
  const queue = new Queue(name, { connection })
  let finished = 0
  let done
  const all = new Promise((r) => (done = r))
  const handler = async (job) => {
    if (job.attemptsMade === 0) throw new Error('once')
    if (++finished === jobs) done()
    return 1
  }
  const opts = { connection, concurrency: 50 }
  const worker = workerOf(kind, name, handler, opts)
  await worker.waitUntilReady()
  const jobOpts = kind === 'native' ? { attempts: 2, backoff: 1 } : jobOptions()
  const start = performance.now()
  await queue.addBulk(Array.from({ length: jobs }, () => ({ name: 'j', data: null, opts: jobOpts })))
  await all
  const elapsed = (performance.now() - start) / 1000
  await worker.close()
  await queue.obliterate({ force: true })
  await queue.close()
  return jobs / elapsed
}

async function enqueueCost(connection, calls, rounds) {
  const name = `bench-bmq-${randomUUID().slice(0, 8)}`
  const queue = new Queue(name, { connection })
  await queue.waitUntilReady()
  const ojsOpts = jobOptions({ attempts: 5 }, { policy: LAYER, defaults: POLICY })
  const subjects = {
    // queue.add with BullMQ options of the same size as the ones addJob sends
    add: () => queue.add('j', null, { attempts: 5 }),
    add_same_opts: () => queue.add('j', null, ojsOpts),
    validate: () => jobOptions({ attempts: 5 }, { policy: LAYER, defaults: POLICY }),
    add_job: () => addJob(queue, 'j', null, { attempts: 5 }, { policy: LAYER, defaults: POLICY }),
  }
  const us = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]))
  for (let r = 0; r < rounds; r++) {
    // Every subject once per round, the order reversed every other round.
    const order = r % 2 ? Object.keys(subjects).reverse() : Object.keys(subjects)
    for (const k of order) {
      const t = performance.now()
      for (let i = 0; i < calls; i++) await subjects[k]()
      us[k].push(((performance.now() - t) * 1000) / calls)
    }
  }
  await queue.obliterate({ force: true })
  await queue.close()
  const m = Object.fromEntries(Object.entries(us).map(([k, v]) => [k, median(v)]))
  return {
    add_us: m.add,
    add_same_opts_us: m.add_same_opts,
    validate_us: m.validate,
    add_job_us: m.add_job,
    validate_over_add: m.validate / m.add,
    add_job_over_add_same_opts: m.add_job / m.add_same_opts,
    add_job_over_add: m.add_job / m.add,
  }
}

async function main() {
  const { values } = parseArgs({
    options: { redis: { type: 'string' }, jobs: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' } },
  })
  if (!values.redis) {
    console.error('usage: bullmq_node.mjs --redis URL [--jobs N] [--rounds R]')
    process.exit(2)
  }
  const connection = connectionOf(values.redis)
  const jobs = Number(values.jobs)
  const rounds = Number(values.rounds)
  const runs = { native: [], engine: [], floor: [] }
  const kinds = Object.keys(runs)
  for (let r = 0; r < rounds; r++) {
    // Each kind once a round, who goes first rotating round by round.
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[(r + i) % kinds.length]
      runs[kind].push(await retryRound(connection, jobs, kind))
    }
  }
  const { native, engine, floor } = runs
  const doc = {
    queue: 'bullmq-node',
    backend,
    bullmq: require('bullmq/package.json').version,
    retry_path: {
      jobs,
      native_jobs_per_s: native,
      engine_jobs_per_s: engine,
      floor_jobs_per_s: floor,
      ratio: median(engine) / median(native),
      floor_ratio: median(floor) / median(native),
      engine_over_floor: median(engine) / median(floor),
    },
    enqueue: await enqueueCost(connection, jobs, rounds),
  }
  console.log(JSON.stringify(doc, null, 1))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
