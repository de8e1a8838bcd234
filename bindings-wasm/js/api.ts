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
// With surface.ts (the public types, the error class, the declared classes),
// records.ts (reading the hot records) and raw.ts (the exports it calls),
// this is the one source of the packages' TypeScript declarations: tsc
// emits api.d.ts and the others' .d.ts from them.

import { ENGINE, READERS } from './host.js'
import {
  OjsRetryError,
  type Action,
  type Api,
  type Decision,
  type ErrorShape,
  type ExpiredFailure,
  type HandlerCode,
  type HeartbeatResult,
  type Herd,
  type Jitter,
  type PresetSystem,
  type Reason,
  type RetryPolicy,
  type RetryState,
  type Reservation,
  type ScheduleRow,
} from './surface.js'

import {
  DECIDE,
  JITTER,
  asItIs,
  fieldsOf,
  optionsOf,
  readFailure,
  readOptions,
  type AsItIs,
  type FailureFields,
  type OptionFields,
} from './records.js'

import type { Handle, Raw } from './raw.js'
import { transactor } from './transaction.js'

export type { Handle, Raw } from './raw.js'
export * from './surface.js'

// ------------------------------------------------------------------ intrinsics
const parse = JSON.parse
const dateNow = Date.now
const { getPrototypeOf, defineProperty, freeze, hasOwn } = Object
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
const StringOf = String
const BufferFrom: ((a: ArrayBuffer, offset?: number, length?: number) => unknown) | undefined =
  typeof (globalThis as { Buffer?: unknown }).Buffer === 'function'
    ? (globalThis as unknown as { Buffer: { from: (a: ArrayBuffer, o?: number, l?: number) => unknown } }).Buffer.from.bind(
        (globalThis as unknown as { Buffer: unknown }).Buffer,
      )
    : undefined
const SymbolDispose: symbol | undefined = (Symbol as { dispose?: symbol }).dispose

function describe(e: unknown): string {
  try {
    return StringOf(e)
  } catch {
    return 'an exception that cannot be described'
  }
}

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

  const runTransaction = transactor({
    raw, readers: READERS, out: OUT_ARG, clock: dateNow, decision, thrownBy, argumentError, unreadable,
    // A live RetryPolicy or RetryState as its text; anything else (a freed
    // or forged one too) goes to the engine's reader, which notes it.
    engineText: (v) => {
      if (v === null || typeof v !== 'object') return undefined
      try {
        return raw.policyText(policyOf(v, 'layer'))
      } catch {
        // not a live policy
      }
      try {
        return raw.stateText(stateOf(v, 'state'))
      } catch {
        return undefined
      }
    },
    policyFromJSON: (text) => Policy.fromJSON(text),
    stateFromJSON: (text, historyLimit) => State.fromJSON(text, { historyLimit }),
  })

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
    runTransaction,
  })
}
