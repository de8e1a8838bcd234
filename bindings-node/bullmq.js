// ojs-retry/bullmq: BullMQ (Node) workers whose retries an OJS policy decides.
//
// Two pieces, both on BullMQ's own extension points:
//
// * `Processor` wraps the job handler. It turns the handler's failure into the
//   engine's failure, asks the engine (attempt `job.attemptsMade + 1 +
//   job.stalledCounter`, keyed jitter with the job's id) and carries the
//   decision out. A retry re-throws, so BullMQ's own `moveToFailed` schedules
//   it through the backoff hook; a discard or a dead-letter throws BullMQ's
//   `UnrecoverableError` (BullMQ never asks the hook for it, and the job lands
//   in the failed set at once).
// * `Processor#backoffStrategy` is the worker's `settings.backoffStrategy` for
//   the backoff type "ojs-retry": exactly the delay the wrapper decided for
//   this very failure.
//
// Given no policy, a job without a layer of its own is decided by the
// `bullmq` preset of its own `attempts` / `backoff` (the one-line adoption:
// `createWorker` in place of `new Worker`, producers unchanged).
//
// A stalled job (its worker died, or blocked past `lockDuration`) comes back
// through BullMQ's stalled checker with `stalledCounter` raised: the wrapper
// counts each stall as a failed attempt of type "bullmq.stalled", timed out
// (spec §9.2), before the handler runs again — and delays the job by the
// engine's delay first, or carries out its terminal decision.
//
// The queue-independent half (JobError, failures, the job's validated policy
// layer, the dead-letter record) is in bullmq-core.js. `bullmq` is an optional
// peer dependency, required only when a function here needs one of its
// classes; requiring `ojs-retry` never loads it.
'use strict'

const { runTransaction } = require('./index.js')
const core = require('./bullmq-core.js')

const { BACKOFF_TYPE, ATTEMPTS, STALLED_TYPE, TIMEOUT_TYPE, POLICY_KEY, STATE_KEY, STALLS_KEY } = core

// The protocol's one write (docs/bullmq-protocol.md): atomic, in one round
// trip — the job's state and the stalls counted, and the dead-letter record
// when there is one. A job removed meanwhile stays removed (0); a writer
// whose stall count is behind the stored one (a worker that lost its lock
// while another counted the stall) writes nothing (-1).
const WRITE_COMMAND = 'ojsRetryWrite'
const WRITE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local seen = tonumber(redis.call('HGET', KEYS[1], ARGV[3]) or '0') or 0
if seen > tonumber(ARGV[4]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if ARGV[5] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[5]) end
return 1
`
const defined = new WeakSet()
const clients = new WeakMap()

/** The worker's Redis client (BullMQ's main connection, not the blocking one), once resolved. */
async function clientFor(worker) {
  let client = clients.get(worker)
  if (client === undefined) {
    client = await core.clientOf(worker)
    clients.set(worker, client)
  }
  return client
}

/** Sends the write on `client` now (ioredis queues commands in call order); resolves with its answer. */
function sendWrite(client, worker, jobId, out, stalls) {
  if (!defined.has(client)) {
    client.defineCommand(WRITE_COMMAND, { numberOfKeys: 2, lua: WRITE_LUA })
    defined.add(client)
  }
  const args = [
    worker.toKey(String(jobId)),
    core.deadLetterKey(worker.name, core.prefixOf(worker)),
    STATE_KEY,
    out.stateJson,
    STALLS_KEY,
    String(stalls),
    out.deadLetter === null ? '' : out.deadLetter,
  ]
  // BullMQ ≥ 5.7x wraps its client (`runCommand`); older ones hand out ioredis.
  return typeof client.runCommand === 'function' ? client.runCommand(WRITE_COMMAND, args) : client[WRITE_COMMAND](...args)
}

async function writeState(worker, jobId, out, stalls) {
  return sendWrite(await clientFor(worker), worker, jobId, out, stalls)
}

async function readState(worker, jobId) {
  const client = await core.clientOf(worker)
  const [state, stalls] = await client.hmget(worker.toKey(String(jobId)), STATE_KEY, STALLS_KEY)
  return { state, stalls: Number(stalls || 0) }
}

function isControlError(err) {
  return (
    err !== null &&
    typeof err === 'object' &&
    (core.CONTROL_ERRORS.has(err.name) || err.message === core.RATE_LIMIT_MESSAGE)
  )
}

function timeoutError(ms) {
  const err = new Error(`the handler ran longer than ${ms} ms`)
  err.name = TIMEOUT_TYPE
  return err
}

/** Runs `handler(job, token, signal)`, failing with a TimeoutError after `ms`. */
async function runWithTimeout(handler, job, token, signal, ms) {
  if (ms === undefined || ms === null) return handler(job, token, signal)
  const controller = new AbortController()
  const signals = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal
  let timer
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const err = timeoutError(ms)
      controller.abort(err)
      reject(err)
    }, ms)
  })
  try {
    return await Promise.race([handler(job, token, signals), expired])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The worker's processor: runs `handler(job, token, signal)` and decides its
 * failures, each through the engine's one failure transaction
 * (`runTransaction`). `policy` is the workers' default layer (a job's own
 * layer goes over it); with none, a job without a layer of its own keeps
 * its BullMQ `attempts` / `backoff`, read through the `bullmq` preset (the
 * one-line adoption, `adoptionText`); `listeners` are told of every decision once it was
 * carried out; `timeoutMs` bounds each run (an overrun is a timed-out
 * failure); `jitterKey(job)` is the job's id unless given.
 */
class Processor {
  constructor(handler, { policy, listeners = [], timeoutMs, jitterKey } = {}) {
    if (typeof handler !== 'function') throw new TypeError('ojs-retry/bullmq: the handler must be a function')
    this.handler = handler
    // Bad defaults fail here, not at the first failure; the engine reads
    // their canonical text at every failure.
    this.defaults = core.defaultsText(policy) ?? undefined
    this.listeners = [...listeners]
    this.timeoutMs = timeoutMs
    this.jitterKey = jitterKey || ((job) => String(job.id))
    this.pending = new WeakMap()
    // Bound, so both can be handed to BullMQ as they are. BullMQ tracks a
    // cancellation signal for a processor of three parameters only: ask for
    // one when the handler takes it or a timeout is set.
    this.process =
      handler.length >= 3 || (timeoutMs !== undefined && timeoutMs !== null)
        ? (job, token, signal) => this.run(job, token, signal)
        : (job, token) => this.run(job, token)
    this.backoffStrategy = (attemptsMade, type, err, job) => this.delayFor(type, job)
  }

  async run(job, token, signal) {
    const stalls = job.stalledCounter || 0
    if (stalls > 0) await this.countStalls(job, token, stalls)
    try {
      return await runWithTimeout(this.handler, job, token, signal, this.timeoutMs)
    } catch (err) {
      if (isControlError(err)) throw err
      return this.carryOut(job, job.attemptsMade + 1 + stalls, core.failureFromError(err), stalls, err)
    }
  }

  /** `settings.backoffStrategy`: the delay decided for this failure. */
  delayFor(type, job) {
    const delay = job ? this.pending.get(job) : undefined
    if (type !== BACKOFF_TYPE || delay === undefined) {
      // Not ours, or a failure the wrapper did not decide: refusing leaves the
      // job active until its lock lapses, and the stall is then counted as an
      // attempt — never a silent retry.
      throw new Error(`ojs-retry: no decision for job ${job && job.id} (backoff type ${JSON.stringify(type)})`)
    }
    this.pending.delete(job)
    return delay
  }

  /** The engine's failure transaction for `attempt` of `job`, over the stored state text. */
  transact(job, attempt, failure, state, now) {
    const layer = job.opts ? job.opts[POLICY_KEY] : undefined
    // No OJS policy anywhere: the job's own attempts / backoff (the one-line
    // adoption), read before carryOut hands the job's backoff to the engine.
    const adopt = this.defaults === undefined && (layer === undefined || layer === null)
    return runTransaction(attempt, {
      key: this.jitterKey(job),
      now,
      defaults: adopt ? (core.adoptionText(job.opts, 'node') ?? undefined) : this.defaults,
      layer,
      state,
      type: failure.type,
      code: failure.code,
      timedOut: failure.timedOut,
      message: failure.message,
      details: failure.details,
      queue: job.queue.name,
      job: { name: job.name, data: job.data, opts: job.opts },
    })
  }

  /**
   * Each stall not yet counted is a failed attempt, timed out (RET-12): one
   * transaction per stall, in order, up to the first terminal outcome; one
   * atomic write of the last state and the stalls counted.
   */
  async countStalls(job, token, stalls) {
    const stored = await readState(job.queue, job.id)
    if (stalls <= stored.stalls) return
    let state = stored.state
    let out
    let attempt
    const failure = { type: STALLED_TYPE, timedOut: true, message: 'the job stalled (its worker stopped renewing the lock)' }
    const now = Date.now()
    for (let lost = stored.stalls + 1; lost <= stalls; lost++) {
      attempt = job.attemptsMade + lost
      out = this.transact(job, attempt, failure, state, now)
      state = out.stateJson
      if (out.action !== 'retry') break
    }
    await writeState(job.queue, job.id, out, stalls)
    if (out.action !== 'retry') return this.finish(job, attempt, failure, out, now)
    // The stalled checker made it available at once: hold it for the delay.
    await job.moveToDelayed(out.decision.nextRetryAt, token)
    this.notify(job, attempt, failure, out, now)
    throw new (core.bullmq().DelayedError)()
  }

  async carryOut(job, attempt, failure, stalls, err) {
    // The first attempt has no state to read (one round trip fewer).
    const stored = attempt === 1 ? null : (await readState(job.queue, job.id)).state
    const now = Date.now()
    const out = this.transact(job, attempt, failure, stored, now)
    if (out.action !== 'retry') {
      await writeState(job.queue, job.id, out, stalls)
      return this.finish(job, attempt, failure, out, now)
    }
    // Sent, not awaited: the throw below makes BullMQ send its moveToFailed
    // on the same connection, after this write, so Redis stores the state
    // before the job can be retried — one round trip fewer per retry.
    const client = await clientFor(job.queue)
    sendWrite(client, job.queue, job.id, out, stalls).catch((e) => this.report(job, e))
    // moveToFailed reads these from this very object: a job added without
    // jobOptions (a plain queue.add) is retried as the engine decided too.
    job.opts.attempts = ATTEMPTS
    job.opts.backoff = { type: BACKOFF_TYPE }
    this.pending.set(job, out.decision.delayMs || 0)
    this.notify(job, attempt, failure, out, now)
    throw retryable(err)
  }

  /** A discard or a dead letter (its record already written): BullMQ's failed set. */
  finish(job, attempt, failure, out, now) {
    this.notify(job, attempt, failure, out, now)
    throw new (core.bullmq().UnrecoverableError)(`ojs-retry: ${out.action} (${out.decision.reason})`)
  }

  /**
   * Tells the listeners, after the decision was carried out. A listener
   * that throws changes nothing: its error is the worker's 'error' event (a
   * process warning when nobody listens), never hidden. `atMs` is the
   * instant the engine decided at.
   */
  notify(job, attempt, failure, out, atMs) {
    if (this.listeners.length === 0) return
    const event = {
      queue: job.queue.name,
      jobId: String(job.id),
      attempt,
      failure: { attempt, ...failure },
      decision: out.decision,
      notes: out.notes,
      atMs,
    }
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (err) {
        this.report(job, err)
      }
    }
  }

  /** An error off the job's path: the worker's 'error' event, else a process warning. */
  report(job, err) {
    const worker = job.queue
    try {
      if (typeof worker.listenerCount === 'function' && worker.listenerCount('error') > 0) worker.emit('error', err)
      else process.emitWarning(err instanceof Error ? err : new Error(String(err)), 'OjsRetryListenerError')
    } catch {
      // An 'error' listener that throws in turn changes nothing either.
    }
  }
}

/**
 * The error BullMQ sees for a retry: the handler's own, unless BullMQ would
 * not retry it (an `UnrecoverableError` the policy retries, a thrown non-Error).
 */
function retryable(err) {
  if (err instanceof Error && err.name !== 'UnrecoverableError') return err
  const out = new Error(err instanceof Error ? err.message : String(err), { cause: err })
  out.name = err instanceof Error ? 'RetriedUnrecoverableError' : 'Error'
  return out
}

/**
 * Worker options running `processor`: `settings.backoffStrategy` (other
 * backoff types go to the one already in `opts.settings`, if any) and, unless
 * given, a `maxStalledCount` BullMQ never reaches — the engine counts stalls
 * as attempts, so BullMQ must not fail a stalled job behind its back.
 */
function workerOptions(processor, opts = {}) {
  const settings = { ...(opts.settings || {}) }
  const other = settings.backoffStrategy
  settings.backoffStrategy = (attemptsMade, type, err, job) =>
    type !== BACKOFF_TYPE && other ? other(attemptsMade, type, err, job) : processor.backoffStrategy(attemptsMade, type, err, job)
  return { maxStalledCount: ATTEMPTS, ...opts, settings }
}

/** A processor for `handler` (see `Processor`). */
function createProcessor(handler, options) {
  return new Processor(handler, options)
}

/** A `bullmq.Worker` running `handler` under a `Processor` with `workerOptions`. */
function createWorker(name, handler, opts, options) {
  const processor = new Processor(handler, options)
  const { Worker } = core.bullmq()
  const worker = new Worker(name, processor.process, workerOptions(processor, opts))
  return worker
}

module.exports = {
  ATTEMPTS,
  BACKOFF_TYPE,
  POLICY_KEY,
  STALLED_TYPE,
  STALLS_KEY,
  STATE_KEY,
  TIMEOUT_TYPE,
  JobError: core.JobError,
  Processor,
  addJob: core.addJob,
  adoptionText: core.adoptionText,
  createProcessor,
  createWorker,
  deadLetterKey: core.deadLetterKey,
  deadLetters: core.deadLetters,
  errorTypeOf: core.errorTypeOf,
  failureFromError: core.failureFromError,
  jobOptions: core.jobOptions,
  layerText: core.layerText,
  workerOptions,
}
