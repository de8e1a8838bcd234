// The public API of both JavaScript packages — `ojs-retry` (the native
// addon, falling back to WebAssembly) and `ojs-retry-wasm` — over the
// exports of the one binding crate (bindings-wasm/src), which napi-rs and
// wasm-bindgen build with the same names and argument types.
//
// What this layer does, and nothing else:
// - classes holding the engine's handles in private fields: a copied,
//   forged or freed object is the package's error, never a read of other
//   memory (a structured clone of a policy is a plain `{}`, which no call
//   takes);
// - reading the records a queue passes on every failure (a failure, an
//   option bag) by own-property lookups, so the hot calls take numbers and
//   strings the frameworks convert directly; anything else (another class,
//   an unknown key, a value of another type, details) goes to the engine's
//   reader of live values as it is;
// - one error class, `OjsRetryError`, for every error the engine throws;
// - the clock (`Date.now`, captured at load) where the caller gives none.
// Every global it uses is captured when it loads.
//
// This file is the one source of the packages' TypeScript declarations
// (tsc emits api.d.ts from it).

import { ENGINE, READERS } from './host.js'

// ------------------------------------------------------------------ intrinsics
const parse = JSON.parse
const dateNow = Date.now
const { getPrototypeOf, defineProperty, freeze, keys: objectKeys, hasOwn } = Object
const ObjectPrototype = Object.prototype
const F64 = Float64Array
const call = Function.prototype.call
const uncurry = <A extends unknown[], R>(f: (...args: A) => R) =>
  call.bind(f) as unknown as (self: unknown, ...args: A) => R
const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as object
const taGetter = (name: PropertyKey) =>
  uncurry((Reflect.getOwnPropertyDescriptor(TypedArrayPrototype, name) as PropertyDescriptor).get as () => unknown)
const typedArrayTag = taGetter(Symbol.toStringTag) as (a: unknown) => string | undefined
const typedArrayLength = taGetter('length') as (a: unknown) => number
const typedArraySet = uncurry(
  (TypedArrayPrototype as { set: (src: ArrayLike<number>, offset?: number) => void }).set,
)
const isWellFormed = uncurry(String.prototype.isWellFormed as (this: string) => boolean)
const StringOf = String
const BufferFrom: ((a: ArrayBuffer, offset?: number, length?: number) => unknown) | undefined =
  typeof (globalThis as { Buffer?: unknown }).Buffer === 'function'
    ? (globalThis as unknown as { Buffer: { from: (a: ArrayBuffer, o?: number, l?: number) => unknown } }).Buffer.from.bind(
        (globalThis as unknown as { Buffer: unknown }).Buffer,
      )
    : undefined
const SymbolDispose: symbol | undefined = (Symbol as { dispose?: symbol }).dispose

/** The longest string the hot calls pass as it is (longer ones take the reader that measures first). */
const SHORT = 4096

// ------------------------------------------------------------------ types

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
export type Reason = 'handler_code' | 'non_retryable' | 'exhausted' | 'retryable'

/** A failed attempt, as `decide` and `recordFailure` take it. */
export interface Failure {
  /** The attempt that failed, 1-based (optional in `recordFailure`: the next attempt). */
  attempt?: number | null
  /** Dot-namespaced error type, matched against `non_retryable_errors`. */
  type?: string | null
  code?: HandlerCode | null
  /** The reservation's visibility timeout expired. */
  timedOut?: boolean | null
  message?: string | null
  details?: unknown
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

interface ErrorShape {
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

function describe(e: unknown): string {
  try {
    return StringOf(e)
  } catch {
    return 'an exception that cannot be described'
  }
}

// ------------------------------------------------------------------ the exports

/** An engine object's handle (an `External` natively, a wasm-bindgen object in wasm). */
export type Handle = object

/**
 * The exports of the binding crate, the same in both builds (what this
 * layer calls; not a public API). `Val` arguments are read by the engine
 * as they are; `ctx` is the readers of `host.js`; `out` lends numbers.
 */
export interface Raw {
  flavor(): string
  names(): string
  argumentError(field: string, message: string): string
  unreadableError(code: string, message: string): string
  checkLength(field: string, len: number): void
  matches(errorType: unknown, patterns: unknown, ctx: unknown): boolean
  firstMatch(errorType: unknown, patterns: unknown, ctx: unknown): string | null | undefined
  parseDuration(text: unknown, ctx: unknown): number
  formatDuration(ms: unknown, ctx: unknown): string
  parseTimestamp(text: unknown, ctx: unknown): number
  formatTimestamp(ms: unknown, ctx: unknown): string
  jitterSample(retryNumber: unknown, options: unknown, ctx: unknown): number
  policyNew(policy: unknown, ctx: unknown): Handle
  policyFromJson(text: unknown, ctx: unknown): Handle
  policyMerge(layers: unknown, ctx: unknown): Handle
  policyPreset(system: unknown, options: unknown, ctx: unknown): Handle
  policyProps(policy: Handle): string
  policyText(policy: Handle): string
  policyDelay(policy: Handle, n: number, u?: number, seed?: number, key?: string): number
  policyDelayWith(policy: Handle, n: unknown, options: unknown, ctx: unknown): number
  policyDelays(policy: Handle, slots: unknown, u?: number, seed?: number, key?: string): void
  policyDelaysWith(policy: Handle, slots: unknown, options: unknown, ctx: unknown): void
  policySchedule(policy: Handle, count: unknown, options: unknown, ctx: unknown): string
  policyDecide(
    policy: Handle, attempt: number, type: string | undefined, code: string | undefined,
    timedOut: boolean | undefined, message: string | undefined,
    u: number | undefined, seed: number | undefined, key: string | undefined, now: number, out: unknown,
  ): string | null | undefined
  policyDecideWith(policy: Handle, failure: unknown, options: unknown, now: number, ctx: unknown, out: unknown): string | null | undefined
  policyHerd(policy: Handle, jobs: unknown, retries: unknown, bucketMs: unknown, ctx: unknown): string
  policyNearestPlain(policy: Handle): Handle
  stateNew(options: unknown, ctx: unknown): Handle
  stateFromJson(state: unknown, options: unknown, ctx: unknown): Handle
  stateAttempt(state: Handle): number
  stateNextAttempt(state: Handle): number
  stateNextRetryAt(state: Handle): number | null | undefined
  stateTerminal(state: Handle): string | null | undefined
  stateHistoryLimit(state: Handle): number
  stateErrors(state: Handle): string
  stateText(state: Handle): string
  stateRecord(
    state: Handle, policy: Handle, attempt: number | undefined, type: string | undefined,
    code: string | undefined, timedOut: boolean | undefined, message: string | undefined,
    u: number | undefined, seed: number | undefined, key: string | undefined, now: number, out: unknown,
  ): string | null | undefined
  stateRecordWith(state: Handle, policy: Handle, failure: unknown, options: unknown, now: number, ctx: unknown, out: unknown): string | null | undefined
  reservationNew(attempt: unknown, visibilityTimeoutMs: unknown, now: unknown, ctx: unknown): Handle
  reservationProps(reservation: Handle, out: unknown): void
  reservationHeartbeat(reservation: Handle, now: unknown, ctx: unknown): number
  reservationIsExpired(reservation: Handle, now: unknown, ctx: unknown): boolean
  reservationExpiry(reservation: Handle, now: unknown, ctx: unknown): string | null | undefined
}

// ------------------------------------------------------------------ reading records

/** A failure read field by field: what the hot calls take. */
interface FailureFields {
  attempt: number | undefined
  type: string | undefined
  code: string | undefined
  timedOut: boolean | undefined
  message: string | undefined
}

/** Options read field by field. */
interface OptionFields {
  u: number | undefined
  seed: number | undefined
  key: string | undefined
  now: number | undefined
}

/** What the engine's reader takes instead: the value as it is, or the caller's own fields as read. */
interface AsItIs {
  value: unknown
}

const isShortText = (s: unknown): s is string =>
  typeof s === 'string' && s.length <= SHORT && isWellFormed(s)

/** A plain object: its prototype is `Object.prototype` (read here field by field). */
const isPlain = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && getPrototypeOf(v) === ObjectPrototype

/**
 * What the engine's reader takes when a record is not read here: the caller's
 * own fields as read so far (each getter runs once), then the rest, in a
 * null-prototype object the reader reads as it would the caller's.
 */
function rest(v: Record<string, unknown>, names: string[], from: number, read: Record<string, unknown>): AsItIs {
  const copy = read
  for (let i = from; i < names.length; i++) {
    const k = names[i] as string
    if (hasOwn(v, k)) copy[k] = v[k]
  }
  return { value: copy }
}

const fresh = (): Record<string, unknown> => ({ __proto__: null }) as unknown as Record<string, unknown>

function readFailure(v: unknown, attemptRequired: boolean): FailureFields | AsItIs {
  if (!isPlain(v)) return { value: v }
  const names = objectKeys(v)
  let attempt: number | undefined
  let type: string | undefined
  let code: string | undefined
  let timedOut: boolean | undefined
  let message: string | undefined
  for (let i = 0; i < names.length; i++) {
    const k = names[i] as string
    // A getter read before may have removed it: only own properties count.
    if (!hasOwn(v, k)) continue
    const x = v[k]
    if (x === undefined || x === null) continue
    let ok = false
    switch (k) {
      case 'attempt':
        if ((ok = typeof x === 'number')) attempt = x as number
        break
      case 'type':
        if ((ok = isShortText(x))) type = x as string
        break
      case 'code':
        if ((ok = isShortText(x))) code = x as string
        break
      case 'timedOut':
        if ((ok = typeof x === 'boolean')) timedOut = x as boolean
        break
      case 'message':
        if ((ok = isShortText(x))) message = x as string
        break
    }
    if (!ok) {
      const read = fresh()
      if (attempt !== undefined) read['attempt'] = attempt
      if (type !== undefined) read['type'] = type
      if (code !== undefined) read['code'] = code
      if (timedOut !== undefined) read['timedOut'] = timedOut
      if (message !== undefined) read['message'] = message
      read[k] = x
      return rest(v, names, i + 1, read)
    }
  }
  if (attemptRequired && attempt === undefined) return { value: v }
  return { attempt, type, code, timedOut, message }
}

/** Which options a call takes: 1 a jitter source, 2 and `now`. */
const JITTER = 1
const DECIDE = 2

function readOptions(v: unknown, call: number): OptionFields | AsItIs {
  let u: number | undefined
  let seed: number | undefined
  let key: string | undefined
  let now: number | undefined
  if (v === undefined) return { u, seed, key, now }
  if (!isPlain(v)) return { value: v }
  const names = objectKeys(v)
  for (let i = 0; i < names.length; i++) {
    const k = names[i] as string
    if (!hasOwn(v, k)) continue
    const x = v[k]
    if (x === undefined || x === null) continue
    let ok = false
    switch (k) {
      case 'key':
        if ((ok = isShortText(x))) key = x as string
        break
      case 'now':
        if ((ok = call === DECIDE && typeof x === 'number')) now = x as number
        break
      case 'u':
        if ((ok = typeof x === 'number')) u = x as number
        break
      case 'seed':
        if ((ok = typeof x === 'number')) seed = x as number
        break
    }
    if (!ok) {
      const read = fresh()
      if (u !== undefined) read['u'] = u
      if (seed !== undefined) read['seed'] = seed
      if (key !== undefined) read['key'] = key
      if (now !== undefined) read['now'] = now
      read[k] = x
      return rest(v, names, i + 1, read)
    }
  }
  return { u, seed, key, now }
}

const asItIs = (r: object): r is AsItIs => 'value' in r

// ------------------------------------------------------------------ the API

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

interface Names {
  actions: Action[]
  reasons: Reason[]
  codes: HandlerCode[]
  presetSystems: PresetSystem[]
}

/** The API over `raw`, one build's exports. */
export function bind(raw: Raw): Api {
  const names = parse(raw.names()) as Names
  const flavor = raw.flavor() === 'wasm' ? 'wasm' : 'native'
  const wasm = flavor === 'wasm'
  // The numbers a call lends (decisions, reservations): natively as a
  // Buffer over the same memory (napi-rs writes a Buffer's bytes).
  const OUT = new F64(8)
  const lend = (a: Float64Array): unknown =>
    wasm || BufferFrom === undefined ? a : BufferFrom(a.buffer as ArrayBuffer, a.byteOffset, a.byteLength)
  const OUT_ARG = lend(OUT)

  /** What a call into the engine threw, as the package's error. */
  function thrownBy(e: unknown): OjsRetryError {
    if (e instanceof OjsRetryError) return e
    let text: string | undefined
    if (typeof e === 'string') text = e
    else if (e !== null && typeof e === 'object' && hasOwn(e, 'message')) {
      const m = (e as { message?: unknown }).message
      if (typeof m === 'string') text = m
    }
    if (text !== undefined && text.charCodeAt(0) === 123) {
      try {
        const shape = parse(text) as ErrorShape
        if (typeof shape.code === 'string') return new OjsRetryError(shape)
      } catch {
        // not the engine's error
      }
    }
    // The framework refused an argument before the engine saw it.
    return errorOf(raw.argumentError('', text === undefined ? describe(e) : text))
  }
  const errorOf = (json: string) => new OjsRetryError(parse(json) as ErrorShape)
  const argumentError = (field: string, message: string) => errorOf(raw.argumentError(field, message))
  const unreadable = (e: unknown) =>
    errorOf(raw.unreadableError('validation.invalid_argument', describe(e)))
  const typeName = (v: unknown) =>
    v === null ? 'null' : typeof v === 'object' ? 'an object' : typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`
  const notA = (what: string, field: string, v: unknown, freed: boolean) =>
    argumentError(field, freed ? `expected a ${what}, found one that was freed` : `expected a ${what}, found ${typeName(v)}`)

  function decision(pattern: string | null | undefined): Decision {
    const o = OUT
    return {
      action: names.actions[o[0] as number] as Action,
      reason: names.reasons[o[1] as number] as Reason,
      handlerCode: (o[2] as number) < 0 ? null : (names.codes[o[2] as number] as HandlerCode),
      matchedPattern: pattern ?? null,
      attempt: o[3] as number,
      timedOut: o[4] === 1,
      retryNumber: o[5] === o[5] ? (o[5] as number) : null,
      delayMs: o[6] === o[6] ? (o[6] as number) : null,
      nextRetryAt: o[7] === o[7] ? (o[7] as number) : null,
    }
  }

  let pending: Handle | undefined
  const WRAP = Symbol('wrap')
  const release = (h: Handle | null) => {
    if (wasm && h !== null) (h as { free(): void }).free()
  }

  let policyOf: (p: unknown, field: string) => Handle
  let wrapPolicy: (h: Handle) => RetryPolicy
  let propOf: (p: unknown, name: string) => unknown

  class Policy {
    #h: Handle | null
    #props: Record<string, unknown> | undefined

    constructor(policy?: unknown) {
      if (policy === WRAP) {
        this.#h = pending as Handle
        pending = undefined
        return
      }
      try {
        this.#h = raw.policyNew(policy, READERS)
      } catch (e) {
        throw thrownBy(e)
      }
    }

    static {
      policyOf = (p: unknown, field: string): Handle => {
        if (p === null || typeof p !== 'object' || !(#h in p)) throw notA('RetryPolicy', field, p, false)
        const h = (p as Policy).#h
        if (h === null) throw notA('RetryPolicy', field, p, true)
        return h
      }
      wrapPolicy = (h: Handle) => {
        pending = h
        return new Policy(WRAP) as unknown as RetryPolicy
      }
      propOf = (p: unknown, name: string): unknown => {
        const h = policyOf(p, 'this')
        const q = p as Policy
        if (q.#props === undefined) q.#props = parse(raw.policyProps(h)) as Record<string, unknown>
        return q.#props[name]
      }
    }

    static fromJSON(text: unknown): RetryPolicy {
      try {
        return wrapPolicy(raw.policyFromJson(text, READERS))
      } catch (e) {
        throw thrownBy(e)
      }
    }

    static merge(layers: unknown): RetryPolicy {
      try {
        return wrapPolicy(raw.policyMerge(layers, READERS))
      } catch (e) {
        throw thrownBy(e)
      }
    }

    static preset(system: unknown, options?: unknown): RetryPolicy {
      try {
        return wrapPolicy(raw.policyPreset(system, options, READERS))
      } catch (e) {
        throw thrownBy(e)
      }
    }


    get presetSystem() {
      return propOf(this, 'presetSystem')
    }
    get maxAttempts() {
      return propOf(this, 'maxAttempts')
    }
    get initialIntervalMs() {
      return propOf(this, 'initialIntervalMs')
    }
    get backoffCoefficient() {
      return propOf(this, 'backoffCoefficient')
    }
    get maxIntervalMs() {
      return propOf(this, 'maxIntervalMs')
    }
    get jitter() {
      return propOf(this, 'jitter')
    }
    get nonRetryableErrors() {
      const list = propOf(this, 'nonRetryableErrors') as string[]
      const copy: string[] = []
      for (let i = 0; i < list.length; i++) copy[i] = list[i] as string
      return copy
    }
    get onExhaustion() {
      return propOf(this, 'onExhaustion')
    }
    get backoffStrategy() {
      return propOf(this, 'backoffStrategy')
    }
    get maxRetries() {
      return propOf(this, 'maxRetries')
    }

    toJSON() {
      return parse(raw.policyText(policyOf(this, 'this')))
    }

    toString() {
      return raw.policyText(policyOf(this, 'this'))
    }

    delay(retryNumber: unknown, options?: unknown): number {
      let o: OptionFields | AsItIs
      try {
        o = readOptions(options, JITTER)
      } catch (e) {
        throw unreadable(e)
      }
      const h = policyOf(this, 'this')
      try {
        if (typeof retryNumber === 'number' && !asItIs(o)) return raw.policyDelay(h, retryNumber, o.u, o.seed, o.key)
        return raw.policyDelayWith(h, retryNumber, asItIs(o) ? o.value : undefined, READERS)
      } catch (e) {
        throw thrownBy(e)
      }
    }

    delays(retryNumbers: unknown, options?: unknown): Float64Array {
      // Every argument is read (the caller's getters run) before the
      // array is: a getter may detach, transfer or shrink its buffer.
      let o: OptionFields | AsItIs
      try {
        o = readOptions(options, JITTER)
      } catch (e) {
        throw unreadable(e)
      }
      if (typedArrayTag(retryNumbers) !== 'Float64Array') {
        throw argumentError('retry_numbers', `expected a Float64Array of retry numbers, found ${typeName(retryNumbers)}`)
      }
      const h = policyOf(this, 'this')
      try {
        // Its length now (a detached buffer's is 0), checked before it is copied.
        const len = typedArrayLength(retryNumbers)
        raw.checkLength('retry_numbers', len)
        const slots = new F64(len)
        // (A detached or out-of-bounds view has length 0: nothing to copy.)
        if (len > 0) typedArraySet(slots, retryNumbers as Float64Array)
        if (asItIs(o)) raw.policyDelaysWith(h, lend(slots), o.value, READERS)
        else raw.policyDelays(h, lend(slots), o.u, o.seed, o.key)
        if (len > 0) typedArraySet(retryNumbers, slots)
        return retryNumbers as Float64Array
      } catch (e) {
        throw thrownBy(e)
      }
    }

    schedule(count: unknown, options?: unknown): ScheduleRow[] {
      const h = policyOf(this, 'this')
      try {
        return parse(raw.policySchedule(h, count, options, READERS)) as ScheduleRow[]
      } catch (e) {
        throw thrownBy(e)
      }
    }

    decide(failure: unknown, options?: unknown): Decision {
      let f: FailureFields | AsItIs
      let o: OptionFields | AsItIs
      try {
        f = readFailure(failure, true)
        o = readOptions(options, DECIDE)
      } catch (e) {
        throw unreadable(e)
      }
      const now = dateNow()
      const h = policyOf(this, 'this')
      let pattern: string | null | undefined
      try {
        if (!asItIs(f) && !asItIs(o)) {
          pattern = raw.policyDecide(
            h, f.attempt as number, f.type, f.code, f.timedOut, f.message,
            o.u, o.seed, o.key, o.now === undefined ? now : o.now, OUT_ARG,
          )
        } else {
          pattern = raw.policyDecideWith(
            h,
            asItIs(f) ? f.value : fieldsOf(f),
            asItIs(o) ? o.value : optionsOf(o),
            now, READERS, OUT_ARG,
          )
        }
      } catch (e) {
        throw thrownBy(e)
      }
      return decision(pattern)
    }

    herd(jobs: unknown, retries: unknown, bucketMs: unknown): Herd {
      const h = policyOf(this, 'this')
      try {
        return parse(raw.policyHerd(h, jobs, retries, bucketMs, READERS)) as Herd
      } catch (e) {
        throw thrownBy(e)
      }
    }

    nearestPlain(): RetryPolicy {
      return wrapPolicy(raw.policyNearestPlain(policyOf(this, 'this')))
    }

    free(): void {
      const h = policyOf(this, 'this')
      this.#h = null
      release(h)
    }
  }

  /** A failure read field by field, as an object for the engine's reader. */
  function fieldsOf(f: FailureFields): Record<string, unknown> {
    const o: Record<string, unknown> = { __proto__: null } as unknown as Record<string, unknown>
    if (f.attempt !== undefined) o['attempt'] = f.attempt
    if (f.type !== undefined) o['type'] = f.type
    if (f.code !== undefined) o['code'] = f.code
    if (f.timedOut !== undefined) o['timedOut'] = f.timedOut
    if (f.message !== undefined) o['message'] = f.message
    return o
  }
  function optionsOf(f: OptionFields): Record<string, unknown> {
    const o: Record<string, unknown> = { __proto__: null } as unknown as Record<string, unknown>
    if (f.u !== undefined) o['u'] = f.u
    if (f.seed !== undefined) o['seed'] = f.seed
    if (f.key !== undefined) o['key'] = f.key
    if (f.now !== undefined) o['now'] = f.now
    return o
  }

  let stateOf: (s: unknown, field: string) => Handle
  let wrapState: (h: Handle) => RetryState

  class State {
    #h: Handle | null

    constructor(options?: unknown) {
      if (options === WRAP) {
        this.#h = pending as Handle
        pending = undefined
        return
      }
      try {
        this.#h = raw.stateNew(options, READERS)
      } catch (e) {
        throw thrownBy(e)
      }
    }

    static {
      stateOf = (s: unknown, field: string): Handle => {
        if (s === null || typeof s !== 'object' || !(#h in s)) throw notA('RetryState', field, s, false)
        const h = (s as State).#h
        if (h === null) throw notA('RetryState', field, s, true)
        return h
      }
      wrapState = (h: Handle) => {
        pending = h
        return new State(WRAP) as unknown as RetryState
      }
    }

    static fromJSON(state: unknown, options?: unknown): RetryState {
      try {
        return wrapState(raw.stateFromJson(state, options, READERS))
      } catch (e) {
        throw thrownBy(e)
      }
    }

    get attempt() {
      return raw.stateAttempt(stateOf(this, 'this'))
    }
    get nextAttempt() {
      return raw.stateNextAttempt(stateOf(this, 'this'))
    }
    get nextRetryAt() {
      return raw.stateNextRetryAt(stateOf(this, 'this')) ?? null
    }
    get terminal() {
      return raw.stateTerminal(stateOf(this, 'this')) ?? null
    }
    get historyLimit() {
      return raw.stateHistoryLimit(stateOf(this, 'this'))
    }
    get errors() {
      return parse(raw.stateErrors(stateOf(this, 'this')))
    }

    recordFailure(policy: unknown, failure?: unknown, options?: unknown): Decision {
      let f: FailureFields | AsItIs
      let o: OptionFields | AsItIs
      try {
        f = failure === undefined || failure === null ? readFailure({}, false) : readFailure(failure, false)
        o = readOptions(options, DECIDE)
      } catch (e) {
        throw unreadable(e)
      }
      const now = dateNow()
      // The handles are taken after the arguments were read (a getter may
      // have freed either object).
      const p = policyOf(policy, 'policy')
      const s = stateOf(this, 'this')
      let pattern: string | null | undefined
      try {
        if (!asItIs(f) && !asItIs(o)) {
          pattern = raw.stateRecord(
            s, p, f.attempt, f.type, f.code, f.timedOut, f.message,
            o.u, o.seed, o.key, o.now === undefined ? now : o.now, OUT_ARG,
          )
        } else {
          pattern = raw.stateRecordWith(
            s, p,
            asItIs(f) ? f.value : fieldsOf(f),
            asItIs(o) ? o.value : optionsOf(o),
            now, READERS, OUT_ARG,
          )
        }
      } catch (e) {
        throw thrownBy(e)
      }
      return decision(pattern)
    }

    toJSON() {
      return parse(raw.stateText(stateOf(this, 'this')))
    }

    toString() {
      return raw.stateText(stateOf(this, 'this'))
    }

    free(): void {
      const h = stateOf(this, 'this')
      this.#h = null
      release(h)
    }
  }

  let reservationOf: (r: unknown) => Handle
  const reservationProp = (r: unknown, i: number): number => {
    raw.reservationProps(reservationOf(r), OUT_ARG)
    return OUT[i] as number
  }

  class Hold {
    #h: Handle | null

    constructor(attempt: unknown, visibilityTimeoutMs: unknown, now?: unknown) {
      try {
        this.#h = raw.reservationNew(attempt, visibilityTimeoutMs, now === undefined ? dateNow() : now, READERS)
      } catch (e) {
        throw thrownBy(e)
      }
    }

    static {
      reservationOf = (r: unknown): Handle => {
        if (r === null || typeof r !== 'object' || !(#h in r)) throw notA('Reservation', 'this', r, false)
        const h = (r as Hold).#h
        if (h === null) throw notA('Reservation', 'this', r, true)
        return h
      }
    }

    get attempt() {
      return reservationProp(this, 0)
    }
    get visibilityTimeoutMs() {
      return reservationProp(this, 1)
    }
    get deadline() {
      return reservationProp(this, 2)
    }

    heartbeat(now?: unknown): HeartbeatResult {
      const h = reservationOf(this)
      let d: number
      try {
        d = raw.reservationHeartbeat(h, now === undefined ? dateNow() : now, READERS)
      } catch (e) {
        throw thrownBy(e)
      }
      return d < 0 ? { extended: false, deadline: null } : { extended: true, deadline: d }
    }

    isExpired(now?: unknown): boolean {
      const h = reservationOf(this)
      try {
        return raw.reservationIsExpired(h, now === undefined ? dateNow() : now, READERS)
      } catch (e) {
        throw thrownBy(e)
      }
    }

    expiry(now?: unknown): ExpiredFailure | null {
      const h = reservationOf(this)
      try {
        const text = raw.reservationExpiry(h, now === undefined ? dateNow() : now, READERS)
        return typeof text === 'string' ? (parse(text) as ExpiredFailure) : null
      } catch (e) {
        throw thrownBy(e)
      }
    }

    free(): void {
      const h = reservationOf(this)
      this.#h = null
      release(h)
    }
  }

  for (const [cls, name] of [[Policy, 'RetryPolicy'], [State, 'RetryState'], [Hold, 'Reservation']] as const) {
    defineProperty(cls, 'name', { value: name })
    // Never a document: the engine's reader refuses an engine object.
    defineProperty(cls.prototype, ENGINE, { value: `a ${name}` })
    if (SymbolDispose !== undefined) {
      defineProperty(cls.prototype, SymbolDispose, {
        value(this: { free(): void }) {
          this.free()
        },
        writable: true,
        configurable: true,
      })
    }
  }

  const fn = <A extends unknown[], R>(f: (...args: A) => R) =>
    (...args: A): R => {
      try {
        return f(...args)
      } catch (e) {
        throw thrownBy(e)
      }
    }

  return freeze({
    flavor,
    RetryPolicy: Policy as unknown as typeof RetryPolicy,
    RetryState: State as unknown as typeof RetryState,
    Reservation: Hold as unknown as typeof Reservation,
    OjsRetryError,
    matches: fn((errorType: string, patterns: string[]) => raw.matches(errorType, patterns, READERS)),
    firstMatch: fn((errorType: string, patterns: string[]) => raw.firstMatch(errorType, patterns, READERS) ?? null),
    parseDuration: fn((text: string) => raw.parseDuration(text, READERS)),
    formatDuration: fn((ms: number) => raw.formatDuration(ms, READERS)),
    parseTimestamp: fn((text: string) => raw.parseTimestamp(text, READERS)),
    formatTimestamp: fn((ms: number) => raw.formatTimestamp(ms, READERS)),
    jitterSample: fn((retryNumber: number, options?: Jitter) => raw.jitterSample(retryNumber, options, READERS)),
    presetSystems: () => names.presetSystems.slice(),
  })
}
