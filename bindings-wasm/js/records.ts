// Reading the records a queue passes on every failure (a failure, an option
// bag) by own-property lookups, for the hot calls that take numbers and
// strings; anything else goes to the engine's reader of live values as it is
// (bindings-wasm/src/read.rs). Every intrinsic is captured when this loads.

const { getPrototypeOf, keys: objectKeys, hasOwn } = Object
const ObjectPrototype = Object.prototype
const call = Function.prototype.call
const isWellFormed = call.bind(String.prototype.isWellFormed as (this: string) => boolean) as unknown as (s: string) => boolean

/** The longest string the hot calls pass as it is (longer ones take the reader that measures first). */
const SHORT = 4096


/** A failure read field by field: what the hot calls take. */
export interface FailureFields {
  attempt: number | undefined
  type: string | undefined
  code: string | undefined
  timedOut: boolean | undefined
  message: string | undefined
}

/** Options read field by field. */
export interface OptionFields {
  u: number | undefined
  seed: number | undefined
  key: string | undefined
  now: number | undefined
}

/** What the engine's reader takes instead: the value as it is, or the caller's own fields as read. */
export interface AsItIs {
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

export function readFailure(v: unknown, attemptRequired: boolean): FailureFields | AsItIs {
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
export const JITTER = 1
export const DECIDE = 2

export function readOptions(v: unknown, call: number): OptionFields | AsItIs {
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

export const asItIs = (r: object): r is AsItIs => 'value' in r

/** A failure read field by field, as an object for the engine's reader. */
export function fieldsOf(f: FailureFields): Record<string, unknown> {
  const o: Record<string, unknown> = { __proto__: null } as unknown as Record<string, unknown>
  if (f.attempt !== undefined) o['attempt'] = f.attempt
  if (f.type !== undefined) o['type'] = f.type
  if (f.code !== undefined) o['code'] = f.code
  if (f.timedOut !== undefined) o['timedOut'] = f.timedOut
  if (f.message !== undefined) o['message'] = f.message
  return o
}

/** Options read field by field, as an object for the engine's reader. */
export function optionsOf(f: OptionFields): Record<string, unknown> {
  const o: Record<string, unknown> = { __proto__: null } as unknown as Record<string, unknown>
  if (f.u !== undefined) o['u'] = f.u
  if (f.seed !== undefined) o['seed'] = f.seed
  if (f.key !== undefined) o['key'] = f.key
  if (f.now !== undefined) o['now'] = f.now
  return o
}
