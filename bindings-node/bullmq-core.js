// ojs-retry/bullmq, the queue-independent half: the error class and the
// failure it gives, the job's policy layer (validated at enqueue), the
// dead-letter record. bullmq.js (the worker side) re-exports the public names.
//
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
//   the backoff type "ojs-retry": the delay the wrapper decided for this very
//   failure, exactly.
//
// The job's policy layer travels in its options (`opts.ojs_retry_policy`, set
// by `jobOptions` / `addJob`, which validate it first); its §10 retry state in
// a field of the job's own hash (`ojs_retry_state`), removed with the job.
// BullMQ has no dead-letter queue: a dead-lettered job's record is pushed onto
// the Redis list `<prefix>:<queue>:dead` (oldest first) and the job itself
// goes to BullMQ's failed set. The same names as BullMQ for Python's
// integration (`ojs_retry.integrations.bullmq`), so either language's worker
// can run the other's jobs.
//
// `bullmq` is an optional peer dependency, required only when a function here
// needs one of its classes; requiring `ojs-retry` never loads it.
'use strict'

const { RetryPolicy, RetryState } = require('./index.js')

/** The backoff type whose delays the engine decides. */
const BACKOFF_TYPE = 'ojs-retry'
/** BullMQ's own `attempts`: never the limit (the engine's `max_attempts` is). */
const ATTEMPTS = 2 ** 31 - 1
/** The error type of an attempt lost to a stall (its worker died or blocked). */
const STALLED_TYPE = 'bullmq.stalled'
/** The error type of a handler that overran `timeoutMs`. */
const TIMEOUT_TYPE = 'TimeoutError'
/** Where a job carries its policy layer (JSON text) in its options. */
const POLICY_KEY = 'ojs_retry_policy'
/** The job-hash field holding the job's §10 retry state (JSON text). */
const STATE_KEY = 'ojs_retry_state'
/** The job-hash field counting the stalls already counted as attempts. */
const STALLS_KEY = 'ojs_retry_stalls'
/**
 * Error history entries kept per job: the engine's default (spec §10.1: at
 * least the newest 10). States are made without options, which the engine
 * reads faster.
 */
const HISTORY_LIMIT = new RetryState().historyLimit

const HANDLER_CODES = ['RETRY', 'DISCARD', 'DEAD_LETTER', 'FAIL']
// BullMQ's control-flow errors: a handler moved its own job; not a failure.
const CONTROL_ERRORS = new Set(['DelayedError', 'WaitingError', 'WaitingChildrenError'])
const RATE_LIMIT_MESSAGE = 'bullmq:rateLimitExceeded'
const POLICY_CACHE_SIZE = 256

function bullmq() {
  // An optional peer dependency: npm install bullmq
  return require('bullmq')
}

let defaultPolicy
/** The engine's own check of a handler code, so a bad one is its typed error. */
function checkCode(type, code) {
  if (code === undefined || code === null || HANDLER_CODES.includes(code)) return
  defaultPolicy = defaultPolicy || new RetryPolicy()
  defaultPolicy.decide({ attempt: 1, type, code }, { u: 0.5, now: 0 })
}

/**
 * A handler failure with an OJS error type and an optional handler code:
 * `throw new JobError('payment.card_stolen', { code: 'DEAD_LETTER' })`.
 */
class JobError extends Error {
  constructor(type, { code, message, details } = {}) {
    checkCode(type, code)
    super(message === undefined ? type : message)
    this.name = 'JobError'
    this.type = type
    this.code = code === undefined ? null : code
    this.details = details === undefined ? null : details
  }
}

/**
 * The error type of any thrown value: a `JobError`'s type; otherwise the
 * error's `name` when it is not the generic "Error" (TypeError, AbortError,
 * UnrecoverableError, a library's named error), else its class's name
 * (`class CardDeclined extends Error {}` → "CardDeclined"), else "Error".
 */
function errorTypeOf(err) {
  if (err instanceof JobError) return err.type
  if (err === null || typeof err !== 'object') return 'Error'
  if (typeof err.name === 'string' && err.name !== '' && err.name !== 'Error') return err.name
  const ctor = err.constructor
  if (typeof ctor === 'function' && typeof ctor.name === 'string' && ctor.name !== '') return ctor.name
  return 'Error'
}

function messageOf(err) {
  if (err !== null && typeof err === 'object' && typeof err.message === 'string') return err.message
  return String(err)
}

/**
 * Any thrown value as the engine's failure (`decide` / `recordFailure`): its
 * type (`errorTypeOf`), handler code and details from a `JobError`, and
 * `timedOut` for a "TimeoutError" (spec §9.2: retryable until exhausted).
 */
function failureFromError(err) {
  const failure = { type: errorTypeOf(err), message: messageOf(err) }
  if (err instanceof JobError) {
    if (err.code !== null) failure.code = err.code
    if (err.details !== null) failure.details = err.details
  }
  if (failure.type === TIMEOUT_TYPE) failure.timedOut = true
  return failure
}

function layerOf(layer) {
  if (layer instanceof RetryPolicy) return layer.toString()
  return layer
}

/**
 * The effective policy: the queue's `defaults` ← the job's layer (either may
 * be absent; the spec's defaults fill in). Throws the engine's typed error for
 * a bad layer, or a preset mixed with another layer.
 */
function resolvePolicy(defaults, job) {
  if ((job === undefined || job === null) && defaults instanceof RetryPolicy) return defaults
  const layers = [defaults, job].filter((l) => l !== undefined && l !== null).map(layerOf)
  return layers.length ? RetryPolicy.merge(layers) : new RetryPolicy()
}

/** A policy layer as the JSON text a job carries. */
function layerText(layer) {
  if (layer instanceof RetryPolicy) return layer.toString()
  if (typeof layer === 'string') return layer
  return JSON.stringify(layer)
}

/**
 * Job options for `Queue#add` carrying the job's policy layer, validated now
 * (RET-16): the engine's typed error, before anything reaches Redis, for a bad
 * layer or one the queue's `defaults` refuse. `attempts` and `backoff` are the
 * integration's: the engine decides both. Also fit for `defaultJobOptions`.
 */
function jobOptions(opts, { policy, defaults } = {}) {
  const text = policy === undefined || policy === null ? undefined : layerText(policy)
  validate(defaults === undefined || defaults === null ? undefined : layerText(defaults), text)
  const out = { ...(opts || {}) }
  if (text !== undefined) out[POLICY_KEY] = text
  out.attempts = ATTEMPTS
  out.backoff = { type: BACKOFF_TYPE }
  return out
}

// Layer texts the engine accepted (defaults and job layer together): jobs of
// one kind carry one layer, so each pair is merged once, not once per job.
// The engine reads JSON text faster than an object, and the job carries the
// text anyway.
const accepted = new Set()
function validate(defaultsText, text) {
  const key = `${defaultsText === undefined ? '' : defaultsText}\u0000${text === undefined ? '' : text}`
  if (accepted.has(key)) return
  resolvePolicy(defaultsText, text)
  if (accepted.size >= POLICY_CACHE_SIZE) accepted.delete(accepted.values().next().value)
  accepted.add(key)
}

/** `queue.add(name, data, jobOptions(opts, { policy, defaults }))`. */
function addJob(queue, name, data, opts, { policy, defaults } = {}) {
  return queue.add(name, data, jobOptions(opts, { policy, defaults }))
}

/** The Redis list holding the queue's dead-lettered jobs (oldest first). */
function deadLetterKey(queueName, prefix = 'bull') {
  return `${prefix}:${queueName}:dead`
}

/**
 * The raw Redis client of a Worker or Queue: BullMQ 6's Redis backend holds
 * it (`getBackend().client`); BullMQ 5 has it on the class.
 */
function clientOf(queue) {
  const backend = typeof queue.getBackend === 'function' ? queue.getBackend() : null
  return backend && 'client' in backend ? backend.client : queue.client
}

/** The dead-letter records of `queue` (a BullMQ Queue or Worker), oldest first. */
async function deadLetters(queue) {
  const client = await clientOf(queue)
  const raw = await client.lrange(deadLetterKey(queue.name, prefixOf(queue)), 0, -1)
  return raw.map((r) => JSON.parse(r))
}

function prefixOf(queue) {
  return (queue.opts && queue.opts.prefix) || 'bull'
}

/** A decision as the engine's snake_case document (as Python's `to_dict`). */
function decisionDoc(d) {
  return {
    action: d.action,
    reason: d.reason,
    handler_code: d.handlerCode,
    matched_pattern: d.matchedPattern,
    attempt: d.attempt,
    timed_out: d.timedOut,
    retry_number: d.retryNumber,
    delay_ms: d.delayMs,
    next_retry_at: d.nextRetryAt,
  }
}

/**
 * What a dead-lettered job carries: its §10 state (attempt, the newest
 * errors, at least 10), the decision (why) and the policy, plus the job's
 * name, data and options to re-enqueue it by hand.
 */
function deadLetterRecord({ queue, jobId, state, decision, policy, job, now }) {
  return {
    queue,
    job_id: jobId,
    dead_lettered_at: now === undefined ? Date.now() : now,
    retry_state: state.toJSON(),
    decision: decisionDoc(decision),
    policy: policy.toJSON(),
    job: job === undefined ? null : job,
  }
}

/**
 * The job's §10 state for `attempt`: the queue's counter is the truth, so a
 * state that lags or leads it (a stall never recorded, a job retried by hand)
 * is rebased onto it, keeping its history.
 */
function stateFor(text, attempt) {
  const current = text ? RetryState.fromJSON(text) : new RetryState()
  if (current.nextAttempt === attempt || attempt < 1) return current
  const doc = current.toJSON()
  doc.attempt = attempt - 1
  doc.next_retry_at = null
  doc.terminal = null
  return RetryState.fromJSON(doc)
}

module.exports = {
  CONTROL_ERRORS,
  clientOf,
  POLICY_CACHE_SIZE,
  RATE_LIMIT_MESSAGE,
  bullmq,
  decisionDoc,
  prefixOf,
  stateFor,
  ATTEMPTS,
  BACKOFF_TYPE,
  HISTORY_LIMIT,
  POLICY_KEY,
  STALLED_TYPE,
  STALLS_KEY,
  STATE_KEY,
  TIMEOUT_TYPE,
  JobError,
  addJob,
  deadLetterKey,
  deadLetterRecord,
  deadLetters,
  errorTypeOf,
  failureFromError,
  jobOptions,
  layerText,
  resolvePolicy,
}
