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

const core = require('./bullmq-core.js')

const { BACKOFF_TYPE, ATTEMPTS, STALLED_TYPE, TIMEOUT_TYPE, POLICY_KEY, STATE_KEY, STALLS_KEY } = core

// One round trip, atomic: the job's state (and stalls counted), plus the
// dead-letter record when there is one. A job removed meanwhile stays removed.
const WRITE_COMMAND = 'ojsRetryWrite'
const WRITE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if ARGV[5] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[5]) end
return 1
`
const defined = new WeakSet()

async function writeState(worker, jobId, stateText, stalls, record) {
  const client = await core.clientOf(worker)
  if (!defined.has(client)) {
    client.defineCommand(WRITE_COMMAND, { numberOfKeys: 2, lua: WRITE_LUA })
    defined.add(client)
  }
  const args = [
    worker.toKey(String(jobId)),
    core.deadLetterKey(worker.name, core.prefixOf(worker)),
    STATE_KEY,
    stateText,
    STALLS_KEY,
    String(stalls),
    record === null ? '' : JSON.stringify(record),
  ]
  // BullMQ ≥ 5.7x wraps its client (`runCommand`); older ones hand out ioredis.
  return typeof client.runCommand === 'function' ? client.runCommand(WRITE_COMMAND, args) : client[WRITE_COMMAND](...args)
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
 * failures. `policy` is the queue's default layer (a job's own layer goes
 * over it); `listeners` see every decision carried out; `timeoutMs` bounds
 * each run (an overrun is a timed-out failure); `jitterKey(job)` is the job's
 * id unless given.
 */
class Processor {
  constructor(handler, { policy, listeners = [], timeoutMs, jitterKey } = {}) {
    if (typeof handler !== 'function') throw new TypeError('ojs-retry/bullmq: the handler must be a function')
    this.handler = handler
    this.defaults = policy
    this.listeners = [...listeners]
    this.timeoutMs = timeoutMs
    this.jitterKey = jitterKey || ((job) => String(job.id))
    this.policies = new Map()
    this.pending = new WeakMap()
    core.resolvePolicy(policy) // a bad default fails here, not at the first failure
    // Bound, so both can be handed to BullMQ as they are. BullMQ tracks a
    // cancellation signal for a processor of three parameters only: ask for
    // one when the handler takes it or a timeout is set.
    this.process =
      handler.length >= 3 || (timeoutMs !== undefined && timeoutMs !== null)
        ? (job, token, signal) => this.run(job, token, signal)
        : (job, token) => this.run(job, token)
    this.backoffStrategy = (attemptsMade, type, err, job) => this.delayFor(type, job)
  }

  /** The job's effective policy: the defaults ← its own layer. */
  policyFor(job) {
    const layer = job.opts ? job.opts[POLICY_KEY] : undefined
    const id = typeof layer === 'string' ? layer : JSON.stringify(layer === undefined ? null : layer)
    let found = this.policies.get(id)
    if (found === undefined) {
      found = core.resolvePolicy(this.defaults, layer)
      if (this.policies.size >= core.POLICY_CACHE_SIZE) this.policies.delete(this.policies.keys().next().value)
      this.policies.set(id, found)
    }
    return found
  }

  async run(job, token, signal) {
    const stalls = job.stalledCounter || 0
    if (stalls > 0) await this.countStalls(job, token, stalls)
    try {
      return await runWithTimeout(this.handler, job, token, signal, this.timeoutMs)
    } catch (err) {
      if (isControlError(err)) throw err
      const attempt = job.attemptsMade + 1 + stalls
      const failure = { attempt, ...core.failureFromError(err) }
      return this.carryOut(job, failure, stalls, err)
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

  /** Each stall not yet counted is a failed attempt, timed out (RET-12). */
  async countStalls(job, token, stalls) {
    const stored = await readState(job.queue, job.id)
    if (stalls <= stored.stalls) return
    let text = stored.state
    let decision
    let state
    let failure
    for (let lost = stored.stalls + 1; lost <= stalls; lost++) {
      failure = {
        attempt: job.attemptsMade + lost,
        type: STALLED_TYPE,
        timedOut: true,
        message: 'the job stalled (its worker stopped renewing the lock)',
      }
      ;({ decision, state } = this.record(job, failure, text))
      text = state.toString()
      if (decision.action !== 'retry') return this.terminal(job, failure, decision, state, stalls)
    }
    await writeState(job.queue, job.id, text, stalls, null)
    this.notify(job, failure, decision, state)
    // The stalled checker made it available at once: hold it for the delay.
    await job.moveToDelayed(Date.now() + (decision.delayMs || 0), token)
    throw new (core.bullmq().DelayedError)()
  }

  record(job, failure, stateText) {
    const policy = this.policyFor(job)
    const state = core.stateFor(stateText, failure.attempt)
    const decision = state.recordFailure(policy, failure, { key: this.jitterKey(job), now: Date.now() })
    return { decision, state }
  }

  async carryOut(job, failure, stalls, err) {
    const fresh = job.attemptsMade + stalls === 0
    const stored = fresh ? { state: null } : await readState(job.queue, job.id)
    const { decision, state } = this.record(job, failure, stored.state)
    if (decision.action !== 'retry') return this.terminal(job, failure, decision, state, stalls)
    await writeState(job.queue, job.id, state.toString(), stalls, null)
    this.notify(job, failure, decision, state)
    // moveToFailed reads these from this very object: a job added without
    // jobOptions (a plain queue.add) is retried as the engine decided too.
    job.opts.attempts = ATTEMPTS
    job.opts.backoff = { type: BACKOFF_TYPE }
    this.pending.set(job, decision.delayMs || 0)
    throw retryable(err)
  }

  async terminal(job, failure, decision, state, stalls) {
    const record =
      decision.action === 'dead_letter'
        ? core.deadLetterRecord({
            queue: job.queue.name,
            jobId: String(job.id),
            state,
            decision,
            policy: this.policyFor(job),
            job: { name: job.name, data: job.data, opts: job.opts },
          })
        : null
    await writeState(job.queue, job.id, state.toString(), stalls, record)
    this.notify(job, failure, decision, state)
    throw new (core.bullmq().UnrecoverableError)(`ojs-retry: ${decision.action} (${decision.reason})`)
  }

  /**
   * Tells the listeners; `atMs` is the instant the engine decided at. A
   * listener that throws never stops the decision being carried out: its
   * error is the worker's 'error' event (a process warning when nobody
   * listens), never hidden.
   */
  notify(job, failure, decision, state) {
    if (this.listeners.length === 0) return
    const errors = state.errors
    const atMs = errors.length ? errors[errors.length - 1].timestampMs : Date.now()
    const event = { queue: job.queue.name, jobId: String(job.id), attempt: failure.attempt, failure, decision, atMs }
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (err) {
        const worker = job.queue
        if (typeof worker.listenerCount === 'function' && worker.listenerCount('error') > 0) worker.emit('error', err)
        else process.emitWarning(err instanceof Error ? err : new Error(String(err)), 'OjsRetryListenerError')
      }
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
  HISTORY_LIMIT: core.HISTORY_LIMIT,
  POLICY_KEY,
  STALLED_TYPE,
  STALLS_KEY,
  STATE_KEY,
  TIMEOUT_TYPE,
  JobError: core.JobError,
  Processor,
  addJob: core.addJob,
  createProcessor,
  createWorker,
  deadLetterKey: core.deadLetterKey,
  deadLetterRecord: core.deadLetterRecord,
  deadLetters: core.deadLetters,
  errorTypeOf: core.errorTypeOf,
  failureFromError: core.failureFromError,
  jobOptions: core.jobOptions,
  layerText: core.layerText,
  resolvePolicy: core.resolvePolicy,
  workerOptions,
}
