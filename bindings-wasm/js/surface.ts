// The public surface of both JavaScript packages (`ojs-retry` and
// `ojs-retry-wasm`): the shapes of the documents and results, the error
// class, and the classes and functions `bind` (api.ts) makes. tsc emits
// surface.d.ts from this file: with api.d.ts, the one declaration source
// both packages ship.

const { defineProperty } = Object


/** The systems `RetryPolicy.preset` reproduces. */
export type PresetSystem =
  | 'sidekiq' | 'faktory' | 'celery' | 'bullmq' | 'temporal' | 'oban' | 'rq'
  | 'dramatiq' | 'aws' | 'aws_jitter' | 'ratchet' | 'zzz_jobs' | 'chasquimq'

/** A retry policy document (spec §2): every field optional, merged over the defaults. */
export interface PolicyDocument {
  max_attempts?: number
  initial_interval?: string
  backoff_coefficient?: number
  max_interval?: string
  jitter?: boolean
  non_retryable_errors?: string[]
  on_exhaustion?: 'discard' | 'dead_letter'
  backoff_strategy?: 'none' | 'constant' | 'linear' | 'exponential' | 'polynomial'
}

/** A preset policy's document: the system's own options; the only layer when present. */
export interface PresetDocument {
  preset: { system: PresetSystem; [option: string]: unknown }
}

/** The canonical effective policy (`RetryPolicy#toJSON()`). */
export interface EffectivePolicy {
  max_attempts: number
  initial_interval: string
  backoff_coefficient: number
  max_interval: string
  jitter: boolean
  non_retryable_errors: string[]
  on_exhaustion: 'discard' | 'dead_letter'
  /** Present only when not the default "exponential". */
  backoff_strategy?: 'none' | 'linear' | 'polynomial'
}

/** Where a jitter sample comes from: at most one of `u`, `seed`, `key`; none is OS entropy. */
export interface Jitter {
  /** An explicit sample in [0, 1). */
  u?: number | null
  /** The documented SplitMix64 stream's seed (a u64: number, bigint or decimal string). */
  seed?: number | bigint | string | null
  /** Stateless deterministic jitter: the job id. */
  key?: string | null
}

/** A jitter source and the instant of the failure (epoch ms; default `Date.now()`). */
export interface DecideOptions extends Jitter {
  now?: number | null
}

/** The options of `new RetryState` and `RetryState.fromJSON`. */
export interface StateOptions {
  /** The most error records the history keeps (at least 10, spec §10.1). */
  historyLimit?: number | null
}

/** A handler's verdict on its failure. */
export type HandlerCode = 'RETRY' | 'DISCARD' | 'DEAD_LETTER' | 'FAIL'
export type Action = 'retry' | 'discard' | 'dead_letter'
export type Reason = 'handler_code' | 'non_retryable' | 'exhausted' | 'retryable' | 'policy_invalid'

/** A failed attempt, as `decide` and `recordFailure` take it. */
export interface Failure {
  /** The attempt that failed, 1-based (optional in `recordFailure`: the next attempt). */
  attempt?: number | null
  /** Dot-namespaced error type, matched against `non_retryable_errors`. */
  type?: string | null
  /** The error type's base types, nearest first: a preset's rules match them as its system matches by class (at most 64). */
  ancestors?: readonly string[] | null
  code?: HandlerCode | null
  /** The reservation's visibility timeout expired. */
  timedOut?: boolean | null
  message?: string | null
  details?: unknown
}

/** What a queue knows when a job fails (`runTransaction`); `attempt` is its own counter. */
export interface TransactionOptions {
  /** The jitter key: the job id. */
  key: string
  /** The queue's policy layers (objects, JSON texts or `RetryPolicy`s), merged in order. */
  defaults?: unknown
  /** The policy layer the job carries, as the queue stored it (object, JSON text, `RetryPolicy`; possibly invalid). */
  layer?: unknown
  /** The §10 state the job carries (object, JSON text, `RetryState`; possibly unreadable or behind the counter). */
  state?: unknown
  /** The failure's error type (dot-namespaced). */
  type?: string | null
  /** The error type's base types, nearest first (trimmed with a note when unusable). */
  ancestors?: readonly string[] | null
  /** The handler code as the handler spelled it. */
  code?: string | null
  /** The reservation's visibility timeout expired. */
  timedOut?: boolean | null
  /** The failure's message, of any length (truncated with a marker when over the limit). */
  message?: string | null
  /** Structured details (dropped with a note when unreadable or too large). */
  details?: unknown
  /** The instant of the failure, epoch ms (default `Date.now()`). */
  now?: number | null
  /** The newest errors the state keeps: 10 (the default) to 10 000; outside that range an `OjsRetryError` at `history_limit`. */
  historyLimit?: number | null
  /** The queue's name, for the dead-letter record. */
  queue?: string | null
  /** What re-enqueues the job by hand, kept in the dead-letter record as it is. */
  job?: unknown
}

/** Something the transaction changed or could not use. */
export interface Note {
  /** A stable name (`policy_refused`, `message_truncated`, `state_rebased`, ...). */
  kind: string
  message: string
}

/** What the queue does with a failed job (`runTransaction`). */
export interface Outcome {
  /** `decision.action`. */
  readonly action: Action
  readonly decision: Decision
  /** The job's new state (read back from `stateJson`). */
  readonly state: RetryState
  /** The state as the §10 text the queue stores (always readable back). */
  readonly stateJson: string
  /** The policy that decided (the defaults' when the job's layer was refused). */
  readonly policy: RetryPolicy
  readonly notes: Note[]
  /** For a dead letter, the record to write (JSON text); null otherwise. */
  readonly deadLetter: string | null
}

/** What to do after a failure, and why. */
export interface Decision {
  action: Action
  reason: Reason
  handlerCode: HandlerCode | null
  matchedPattern: string | null
  attempt: number
  timedOut: boolean
  retryNumber: number | null
  delayMs: number | null
  /** Epoch milliseconds. */
  nextRetryAt: number | null
}

/** One retry of a policy's schedule. */
export interface ScheduleRow {
  retryNumber: number
  attempt: number
  rawMs: number
  cappedMs: number
  minMs: number
  maxMs: number
  /** The drawn delay; null when `schedule()` was called without a jitter source. */
  delayMs: number | null
  cumulativeMs: number
}

/** One entry of a job's error history. */
export interface ErrorRecord {
  attempt: number
  type: string
  message: string
  code: HandlerCode
  /** Epoch milliseconds. */
  timestampMs: number
  details: unknown
}

/** The spec's §10 state document. */
export interface RetryStateDocument {
  attempt: number
  errors: Array<{ [key: string]: unknown }>
  next_retry_at: string | null
  terminal: 'discard' | 'dead_letter' | null
  [key: string]: unknown
}

/** A failure the engine found in what it was given. */
export interface Fault {
  /** The policy or argument field; null for the whole document. */
  field: string | null
  /** Where inside the field (`non_retryable_errors[0]`); null for the whole document. */
  path: string | null
  message: string
}

/** One retry round of a herd: the arrivals of retry `retryNumber`, in ms after the failure. */
export interface HerdRound {
  retryNumber: number
  /** Jobs retried in this round (the sum of `counts`). */
  jobs: number
  firstMs: number
  lastMs: number
  /** The first bucket's start: a multiple of the herd's `bucketMs`. */
  startMs: number
  /** Arrivals per bucket of `bucketMs`, from `startMs` on. */
  counts: number[]
  /** The most arrivals of this round in any window [t, t + 1000 ms). */
  peakPerSecond: number
}

/** `RetryPolicy#herd(jobs, retries, bucketMs)`: jobs keyed "1" … "jobs" failing at instant 0. */
export interface Herd {
  jobs: number
  bucketMs: number
  /** The most arrivals in any window [t, t + 1000 ms), all rounds together. */
  peakPerSecond: number
  /** Where that window starts, in ms after the failure. */
  peakAtMs: number
  rounds: HerdRound[]
}

/** What a heartbeat did. */
export interface HeartbeatResult {
  extended: boolean
  /** The new deadline (epoch ms); null when the reservation had expired. */
  deadline: number | null
}

/** An expired reservation's failure, as `decide` and `recordFailure` take it. */
export interface ExpiredFailure {
  attempt: number
  timedOut: true
  type?: string
}

// ------------------------------------------------------------------ the error

export interface ErrorShape {
  code: string
  field: string | null
  path: string | null
  faults: Fault[]
  message: string
}

/**
 * Every error the engine throws, whichever backend threw it: a stable
 * `code` ("validation.retry_policy_invalid", "validation.invalid_argument",
 * ...), the `field` and the `path` inside it of the first fault (null for
 * the whole document), and every fault, first one first.
 */
export class OjsRetryError extends Error {
  /** e.g. "validation.retry_policy_invalid", "validation.invalid_argument". */
  readonly code: string
  /** The policy or argument field of the first fault; null for the whole document. */
  readonly field: string | null
  /** Where inside the field (`non_retryable_errors[1]`); null for the whole document. */
  readonly path: string | null
  /** Every fault, first one first. */
  readonly faults: Fault[]

  /** @internal Made by the engine; the shape of its error. */
  constructor(e: ErrorShape) {
    super(e.message)
    this.code = e.code
    this.field = e.field
    this.path = e.path
    this.faults = e.faults
  }
}
defineProperty(OjsRetryError.prototype, 'name', { value: 'OjsRetryError', writable: true, configurable: true })


/** The API over one build's exports. */
export interface Api {
  /** Which build answers: the native addon, or WebAssembly. */
  readonly flavor: 'native' | 'wasm'
  readonly RetryPolicy: typeof RetryPolicy
  readonly RetryState: typeof RetryState
  readonly Reservation: typeof Reservation
  readonly OjsRetryError: typeof OjsRetryError
  matches(errorType: string, patterns: string[]): boolean
  firstMatch(errorType: string, patterns: string[]): string | null
  parseDuration(text: string): number
  formatDuration(ms: number): string
  parseTimestamp(text: string): number
  formatTimestamp(ms: number): string
  jitterSample(retryNumber: number, options?: Jitter): number
  presetSystems(): PresetSystem[]
  runTransaction(attempt: number | bigint, options: TransactionOptions): Outcome
}

/**
 * An immutable, validated, effective retry policy: the defaults merged with
 * the layers it was built from, or a preset of another system.
 */
export declare class RetryPolicy {
  /** A policy from a document (an object, or its JSON text) merged over the defaults; the defaults alone without one. */
  constructor(policy?: PolicyDocument | PresetDocument | string)
  /** A policy from its JSON text. */
  static fromJSON(text: string): RetryPolicy
  /** Layers (objects or JSON texts) merged in order over the defaults — defaults ← first ← … ← last — then validated as one policy. */
  static merge(layers: Array<PolicyDocument | PresetDocument | string>): RetryPolicy
  /** `system`'s own retry configuration (`options` in that system's own terms), evaluated exactly as that system does. */
  static preset(system: PresetSystem, options?: Record<string, unknown>): RetryPolicy
  /** The preset's system, or null for an OJS policy. */
  get presetSystem(): PresetSystem | null
  get maxAttempts(): number
  /** `initial_interval` in milliseconds. */
  get initialIntervalMs(): number
  get backoffCoefficient(): number
  /** `max_interval` in milliseconds. */
  get maxIntervalMs(): number
  get jitter(): boolean
  get nonRetryableErrors(): string[]
  get onExhaustion(): 'discard' | 'dead_letter'
  get backoffStrategy(): 'none' | 'linear' | 'exponential' | 'polynomial'
  /** How many retries the policy allows (`max_attempts − 1`, at least 0). */
  get maxRetries(): number
  /** The canonical effective document, or a preset's `{ preset: { ... } }` document. */
  toJSON(): EffectivePolicy | PresetDocument
  /** The canonical document as compact JSON text. */
  toString(): string
  /** The delay before retry `retryNumber` (1 = the first retry), in ms. */
  delay(retryNumber: number, options?: Jitter): number
  /** The delays of many retries in one call: each slot holds a retry number and receives its delay; the same array is returned. */
  delays(retryNumbers: Float64Array, options?: Jitter): Float64Array
  /** Retries 1 ..= `count`: raw, capped and jitter bounds per retry, and the drawn delay when a jitter source is given. */
  schedule(count: number, options?: Jitter): ScheduleRow[]
  /** Retry, discard or dead-letter after `failure`, and when. */
  decide(failure: Failure, options?: DecideOptions): Decision
  /** `jobs` jobs (jitter keys "1" … "jobs") failing at the same instant, for at most `retries` rounds. */
  herd(jobs: number, retries: number, bucketMs: number): Herd
  /** The plain OJS policy nearest to this one (a preset's translation; any other policy unchanged). */
  nearestPlain(): RetryPolicy
  /** Releases the engine's memory now (it is released when the object is collected anyway); the object is unusable after. */
  free(): void
}

/** A job's retry state: the attempt that last ran, a bounded error history, when the next attempt is due, and whether the job is finished. */
export declare class RetryState {
  /** A job that has not run yet (attempt 0). */
  constructor(options?: StateOptions)
  /** Reads a §10 state document (an object, or its JSON text). */
  static fromJSON(state: RetryStateDocument | string, options?: StateOptions): RetryState
  /** The attempt that last ran (0 before the first). */
  get attempt(): number
  /** The number of the next attempt (`attempt + 1`). */
  get nextAttempt(): number
  /** When the next attempt is due (epoch ms), or null. */
  get nextRetryAt(): number | null
  /** `"discard"` or `"dead_letter"` once the job is finished, else null. */
  get terminal(): 'discard' | 'dead_letter' | null
  /** The most error records the history keeps. */
  get historyLimit(): number
  /** The kept error records, oldest first. */
  get errors(): ErrorRecord[]
  /** Records that the next attempt failed (`failure.attempt`, when given, must be `nextAttempt`) and returns the decision `policy` makes. */
  recordFailure(policy: RetryPolicy, failure?: Failure | null, options?: DecideOptions): Decision
  /** The §10 state document (snake_case; RFC 3339 timestamps). */
  toJSON(): RetryStateDocument
  /** The §10 state document as compact JSON text. */
  toString(): string
  /** Releases the engine's memory now; the object is unusable after. */
  free(): void
}

/** A worker's hold on one attempt of a job: a visibility-timeout deadline that heartbeats extend, and the attempt's failure once it expires. */
export declare class Reservation {
  /** Reserves `attempt` for `visibilityTimeoutMs` from `now` (the system clock when omitted). */
  constructor(attempt: number, visibilityTimeoutMs: number, now?: number)
  get attempt(): number
  get visibilityTimeoutMs(): number
  /** The deadline, epoch ms. */
  get deadline(): number
  /** Extends the deadline to `now + visibilityTimeoutMs`, unless it has already passed. */
  heartbeat(now?: number): HeartbeatResult
  /** Whether the deadline has passed at `now`. */
  isExpired(now?: number): boolean
  /** Once expired, the failure to pass to `decide` / `recordFailure`; null before. */
  expiry(now?: number): ExpiredFailure | null
  /** Releases the engine's memory now; the object is unusable after. */
  free(): void
}

/** Whether `errorType` matches any of `patterns` (exact, or a `prefix.*` wildcard; a bare `*` matches nothing). */
export declare function matches(errorType: string, patterns: string[]): boolean
/** The first of `patterns` that `errorType` matches, or null. */
export declare function firstMatch(errorType: string, patterns: string[]): string | null
/** An ISO 8601 duration (`"PT1.5S"`) in milliseconds. */
export declare function parseDuration(text: string): number
/** The canonical ISO 8601 text of a duration in milliseconds. */
export declare function formatDuration(ms: number): string
/** An RFC 3339 timestamp as epoch milliseconds. */
export declare function parseTimestamp(text: string): number
/** Epoch milliseconds as RFC 3339 UTC text (`2026-02-12T10:31:05.250Z`). */
export declare function formatTimestamp(ms: number): string
/** The 53-bit sample `k` (`u = k / 2^53`) a jitter source gives for retry `retryNumber`; OS entropy without one. */
export declare function jitterSample(retryNumber: number, options?: Jitter): number
/** The systems `RetryPolicy.preset` knows. */
export declare function presetSystems(): PresetSystem[]
/**
 * The failure transaction: what a queue knows when a job fails, to what it
 * does next. Never throws for what the job carried or the failure holds (a
 * refused layer is dead-lettered, a long message truncated, an unreadable
 * state rebased — each listed in `notes`); throws `OjsRetryError` only for
 * the queue's own arguments of the wrong kind (an unknown option, a `key`
 * that is not a string).
 *
 * ```js
 * const out = runTransaction(2, { key: job.id, defaults: [{ max_attempts: 5 }], state: job.data.state, type: 'net.reset' })
 * if (out.action === 'retry') queue.add(name, { ...job.data, state: out.stateJson }, { delay: out.decision.delayMs })
 * ```
 */
export declare function runTransaction(attempt: number | bigint, options: TransactionOptions): Outcome

