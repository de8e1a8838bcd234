// `runTransaction`: the engine's failure transaction (bindings-wasm/src/
// transaction.rs) as a queue integration calls it. This layer only reads
// the option bag by own-property lookups (each getter once, an unknown key
// the package's error naming it), passes the failure's texts as strings
// (both frameworks make a lone surrogate U+FFFD), and the carried values
// (layer, state, details, job) as they are: the engine reads them, and what
// it cannot read is a note in the outcome, never an error.

import type { Decision, Note, Outcome, RetryPolicy, RetryState } from './surface.js'
import type { Raw } from './raw.js'

const parse = JSON.parse
const { getPrototypeOf, keys: objectKeys, hasOwn, freeze } = Object
const isArray = Array.isArray
const ObjectPrototype = Object.prototype

/** The options `runTransaction` takes. */
const KNOWN = [
  'key', 'defaults', 'layer', 'state', 'type', 'ancestors', 'code', 'timedOut', 'message', 'details', 'now', 'historyLimit',
  'queue', 'job',
]
const EXPECTED = KNOWN.map((k) => `"${k}"`).join(', ')
const IS_KNOWN: Record<string, true> = { __proto__: null } as unknown as Record<string, true>
for (const k of KNOWN) IS_KNOWN[k] = true

/** What `bind` lends: its error makers, the decision reader, and the engine objects' texts. */
export interface TransactionDeps {
  raw: Raw
  readers: unknown
  out: unknown
  clock: () => number
  decision: (pattern: string | null | undefined) => Decision
  thrownBy: (e: unknown) => Error
  argumentError: (field: string, message: string) => Error
  unreadable: (e: unknown) => Error
  /** An engine object's JSON text (a RetryPolicy's, a RetryState's), or undefined for anything else. */
  engineText: (v: unknown) => string | undefined
  policyFromJSON: (text: string) => RetryPolicy
  stateFromJSON: (text: string, historyLimit: number) => RetryState
}

interface Raw0 {
  pattern: string | null
  state_json: string
  policy_json: string
  notes: Note[]
  dead_letter: string | null
}

const typeName = (v: unknown) =>
  v === null ? 'null' : isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`

/** The `runTransaction` of one build. */
export function transactor(d: TransactionDeps) {
  /** A carried value, an engine object as its text. */
  const carried = (v: unknown): unknown => d.engineText(v) ?? v
  /** The defaults: an array copied (engine objects as their texts, holes kept), or one layer. */
  function layers(v: unknown): unknown {
    if (!isArray(v) || v.length > 10_000) return carried(v)
    const copy: unknown[] = []
    copy.length = v.length
    for (let i = 0; i < v.length; i++) if (hasOwn(v, i)) copy[i] = carried(v[i])
    return copy
  }
  function text(o: Record<string, unknown>, field: string, required: boolean): string | undefined {
    const x = o[field]
    if (x === undefined || x === null) {
      if (required) throw d.argumentError(field, `expected a string (the job id), found ${typeName(x)}`)
      return undefined
    }
    if (typeof x !== 'string') throw d.argumentError(field, `expected a string, found ${typeName(x)}`)
    return x
  }

  return function runTransaction(attempt: unknown, options: unknown): Outcome {
    if (options === null || typeof options !== 'object' || isArray(options)) {
      throw d.argumentError('', `expected an options object with at least "key", found ${typeName(options)}`)
    }
    const proto = getPrototypeOf(options)
    if (proto !== ObjectPrototype && proto !== null) {
      throw d.argumentError('', 'expected a plain options object, found an object of another class')
    }
    // Every option read once, here, before the engine is called.
    const o: Record<string, unknown> = { __proto__: null } as unknown as Record<string, unknown>
    let unknownKey: string | undefined
    try {
      const names = objectKeys(options)
      for (let i = 0; i < names.length; i++) {
        const k = names[i] as string
        if (IS_KNOWN[k] !== true) {
          unknownKey ??= k
          continue
        }
        if (hasOwn(options, k)) o[k] = (options as Record<string, unknown>)[k]
      }
    } catch (e) {
      throw d.unreadable(e)
    }
    if (unknownKey !== undefined) {
      throw d.argumentError(unknownKey, `unknown option "${unknownKey}"; expected ${EXPECTED}`)
    }
    const key = text(o, 'key', true) as string
    const queue = text(o, 'queue', false)
    const type = text(o, 'type', false)
    const code = text(o, 'code', false)
    const message = text(o, 'message', false)
    const t = o['timedOut']
    if (t !== undefined && t !== null && typeof t !== 'boolean') {
      throw d.argumentError('timedOut', `expected a boolean, found ${typeName(t)}`)
    }
    const nullable = (x: unknown) => (x === null ? undefined : x)
    let r: Raw0
    let pattern: string | null | undefined
    try {
      const json = d.raw.transactionRun(
        attempt, layers(o['defaults']), carried(o['layer']), carried(o['state']), o['details'], o['ancestors'], o['job'],
        nullable(o['now']), nullable(o['historyLimit']), key, queue, type, code,
        (t as boolean | null | undefined) ?? undefined, message, d.clock(), d.readers, d.out,
      )
      r = parse(json) as Raw0
      pattern = r.pattern
    } catch (e) {
      throw d.thrownBy(e)
    }
    const limit = o['historyLimit']
    return new TransactionOutcome(d, d.decision(pattern), r, typeof limit === 'number' && limit > 10 ? limit : 10)
  }
}

/** An outcome: plain fields, and the state and policy made on first use (the engine's texts always read back). */
class TransactionOutcome {
  readonly action: Outcome['action']
  readonly decision: Decision
  readonly stateJson: string
  readonly notes: Note[]
  readonly deadLetter: string | null
  #d: TransactionDeps
  #policyJson: string
  #limit: number
  #state: RetryState | undefined
  #policy: RetryPolicy | undefined

  constructor(d: TransactionDeps, decision: Decision, r: Raw0, limit: number) {
    this.action = decision.action
    this.decision = decision
    this.stateJson = r.state_json
    this.notes = r.notes
    this.deadLetter = r.dead_letter
    this.#d = d
    this.#policyJson = r.policy_json
    this.#limit = limit
    freeze(this)
  }

  get state(): RetryState {
    return (this.#state ??= this.#d.stateFromJSON(this.stateJson, this.#limit))
  }

  get policy(): RetryPolicy {
    return (this.#policy ??= this.#d.policyFromJSON(this.#policyJson))
  }
}

