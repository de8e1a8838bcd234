// ojs-retry/bullmq, the queue-independent half: the error class and the
// failure it gives, the job's policy layer (read by the engine's JS reader
// and validated against the workers' defaults at enqueue), the dead-letter
// list. bullmq.js (the worker side) re-exports the public names. The keys,
// fields and script both BullMQ integrations (Node, Python) use are written
// down once in docs/bullmq-protocol.md.
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

const { RetryPolicy, OjsRetryError } = require('./index.js')

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

/** The package's typed error for an argument of the enqueue helpers. */
function argumentError(field, message) {
  const fault = { field, path: field, message }
  return new OjsRetryError({ code: 'validation.invalid_argument', field, path: field, faults: [fault], message: `validation.invalid_argument: ${field}: ${message}` })
}

/**
 * The job's policy layer as the JSON text it carries, checked against the
 * workers' defaults (`defaults`: their canonical text, or null). An object
 * is read by the engine's JS reader first, over the defaults (own plain
 * data: a Map, a function, a BigInt, a cycle or a throwing getter is its
 * typed error naming the field), then written as JSON; the text carried is
 * what validate() checks.
 */
function layerText(layer, defaults = null) {
  if (typeof layer === 'string') return layer
  if (layer instanceof RetryPolicy) return layer.toString()
  let text
  try {
    text = JSON.stringify(layer)
  } catch {
    try {
      // A BigInt the engine read as an integer is written as that number.
      text = JSON.stringify(layer, (_, v) => (typeof v === 'bigint' ? Number(v) : v))
    } catch {
      text = undefined
    }
  }
  // The same object with the same text over the same defaults was read
  // already (jobs of one kind pass one layer object).
  const seen = text === undefined || layer === null || typeof layer !== 'object' ? undefined : layersSeen.get(layer)
  if (seen !== undefined && seen[0] === defaults && seen[1] === text) return text
  RetryPolicy.merge(defaults === null ? [layer] : [defaults, layer])
  if (text === undefined) throw argumentError('policy', 'the layer cannot be written as JSON')
  if (layer !== null && typeof layer === 'object') layersSeen.set(layer, [defaults, text])
  return text
}
const layersSeen = new WeakMap()

// The workers' defaults as canonical text, per object given (a worker's
// defaults are one object, passed to every enqueue).
const defaultsSeen = new WeakMap()
/** The workers' defaults as the effective policy's canonical text (none: the spec's defaults). */
function defaultsText(defaults) {
  if (defaults === undefined || defaults === null) return null
  if (defaults instanceof RetryPolicy) return defaults.toString()
  if (typeof defaults === 'string') return RetryPolicy.merge([defaults]).toString()
  let text = defaultsSeen.get(defaults)
  if (text === undefined) {
    text = RetryPolicy.merge([defaults]).toString()
    if (typeof defaults === 'object') defaultsSeen.set(defaults, text)
  }
  return text
}

// Pairs (workers' defaults, job layer) the engine accepted: jobs of one
// kind carry one layer, so each pair is merged once; bounded.
const accepted = new Map()
function validate(defaults, text) {
  // Unambiguous: the defaults' length before them (none: 'n').
  const key = defaults === null ? `n\u0000${text}` : `${defaults.length}:${defaults}\u0000${text}`
  if (accepted.has(key)) return
  RetryPolicy.merge(defaults === null ? [text] : [defaults, text])
  if (accepted.size >= POLICY_CACHE_SIZE) accepted.delete(accepted.keys().next().value)
  accepted.set(key, true)
}

/**
 * Job options for `Queue#add` carrying the job's policy layer, validated now
 * (RET-16) against the workers' `defaults` — the engine's typed error, before
 * anything reaches Redis. A job with a layer must say which defaults the
 * workers run (`defaults: null` when they have none): the helper refuses to
 * guess. `attempts` and `backoff` are the integration's: the engine decides
 * both. Also fit for `defaultJobOptions`.
 */
function jobOptions(opts, options) {
  const { policy, defaults } = options === undefined || options === null ? {} : options
  const out = { ...(opts || {}) }
  if (policy !== undefined && policy !== null) {
    if (defaults === undefined) {
      throw argumentError('defaults', "a job's policy layer is validated against the workers' defaults: pass them (null when the workers have none)")
    }
    const workers = defaultsText(defaults)
    const text = layerText(policy, workers)
    validate(workers, text)
    out[POLICY_KEY] = text
  }
  out.attempts = ATTEMPTS
  out.backoff = { type: BACKOFF_TYPE }
  return out
}

/** `queue.add(name, data, jobOptions(opts, { policy, defaults }))`. */
function addJob(queue, name, data, opts, options) {
  return queue.add(name, data, jobOptions(opts, options))
}

// BullMQ's built-in backoff types: the `bullmq` preset's `backoff.type`.
const BUILT_IN = new Set(['fixed', 'exponential'])
// The adoption documents made, by the job's own options: jobs of one kind
// carry one `attempts` / `backoff`; bounded like `accepted`.
const adopted = new Map()

/**
 * The one-line adoption: a job with no OJS policy anywhere (no workers'
 * defaults, no layer of its own) is decided by the `bullmq` preset of its
 * own `attempts` / `backoff`, so its producer stays as it is. The preset
 * document's text, to be the transaction's defaults (a preset is the only
 * layer); null for a job enqueued for the engine (`jobOptions` with no
 * policy: backoff type "ojs-retry"), which keeps the spec's default policy.
 * A backoff BullMQ does not build in is handed over as it is: the preset
 * refuses it, and the transaction dead-letters the job with the reason.
 *
 * @example
 * adoptionText({ attempts: 3, backoff: { type: 'fixed', delay: 500 } }, 'node')
 * // '{"preset":{"system":"bullmq","runtime":"node","attempts":3,"backoff":{"type":"fixed","delay":500}}}'
 */
function adoptionText(opts, runtime) {
  const given = opts || {}
  const raw = given.backoff
  const built = raw !== null && typeof raw === 'object' && BUILT_IN.has(raw.type)
  if (raw !== null && typeof raw === 'object' && raw.type === BACKOFF_TYPE) return null
  // BullMQ's Job gives a job without `attempts` 0 (one run, as 1).
  const attempts = given.attempts ?? 0
  // Cheaper than the document's JSON. Only numbers (the usual case) are
  // cached: their text is their JSON's, so no two documents share a key.
  const cached = built && typeof attempts === 'number' && [raw.delay, raw.jitter].every((v) => v === undefined || typeof v === 'number')
  const key = cached ? `${runtime}\u0000${attempts}\u0000${raw.type}\u0000${raw.delay}\u0000${raw.jitter}` : undefined
  let text = key === undefined ? undefined : adopted.get(key)
  if (text !== undefined) return text
  // BullMQ reads only these of a built-in backoff; anything beside them is for custom strategies.
  const backoff = built ? { type: raw.type, delay: raw.delay, jitter: raw.jitter } : raw
  text = JSON.stringify({ preset: { system: 'bullmq', runtime, attempts, backoff: backoff ?? null } })
  if (key !== undefined) {
    if (adopted.size >= POLICY_CACHE_SIZE) adopted.delete(adopted.keys().next().value)
    adopted.set(key, text)
  }
  return text
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

module.exports = {
  CONTROL_ERRORS,
  adoptionText,
  clientOf,
  POLICY_CACHE_SIZE,
  RATE_LIMIT_MESSAGE,
  bullmq,
  defaultsText,
  prefixOf,
  ATTEMPTS,
  BACKOFF_TYPE,
  POLICY_KEY,
  STALLED_TYPE,
  STALLS_KEY,
  STATE_KEY,
  TIMEOUT_TYPE,
  JobError,
  addJob,
  deadLetterKey,
  deadLetters,
  errorTypeOf,
  failureFromError,
  jobOptions,
  layerText,
}
