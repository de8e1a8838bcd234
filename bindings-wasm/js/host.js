// The readers of a caller's live values that may run the caller's code
// (getters, proxy traps), for the engine's reader of documents
// (bindings-wasm/src/read.rs) in both builds: the native addon calls them
// through Node-API, the wasm module through wasm-bindgen, so the two read
// the same value the same way.
//
// - Every intrinsic is captured when this module loads: deleting or
//   replacing a global afterwards (structuredClone, Reflect, Object, ...)
//   changes nothing.
// - Nothing here throws: an exception is caught and answered with THROWN,
//   and lastThrown() describes it (so no exception ever unwinds through the
//   engine).
// - Own properties only: a member is read only when it is an own property
//   (a hole of an array is a hole, never Array.prototype[i]).

const { apply, getPrototypeOf, getOwnPropertyDescriptor } = Reflect
const { keys: objectKeys, hasOwn, freeze } = Object
const isArray = Array.isArray
const ObjectPrototype = Object.prototype
const StringOf = String
const SymbolFor = Symbol.for
const isWellFormedOf = String.prototype.isWellFormed
const isView = ArrayBuffer.isView

/** Marks the engine's own objects (RetryPolicy, RetryState, Reservation): never a document. */
export const ENGINE = SymbolFor('ojs-retry.engine')

/** What a reader answers when the caller's code threw. */
export const THROWN = Symbol('ojs-retry.thrown')

let thrown = ''
function fail(e) {
  try {
    thrown = StringOf(e)
  } catch {
    thrown = 'an exception that cannot be described'
  }
  return THROWN
}

/** The exception of the last THROWN answer, described. */
export function lastThrown() {
  const t = thrown
  thrown = ''
  return t
}

const getter = (proto, name) => {
  const d = getOwnPropertyDescriptor(proto, name)
  return d && d.get
}
// Brand checks: an intrinsic that throws for any object but its own kind.
const BRANDS = [
  [getter(Map.prototype, 'size'), 'a Map'],
  [getter(Set.prototype, 'size'), 'a Set'],
  [Date.prototype.getTime, 'a Date'],
  [getter(RegExp.prototype, 'flags') && RegExp.prototype.exec, 'a RegExp'],
  [Number.prototype.valueOf, 'a boxed primitive'],
  [String.prototype.valueOf, 'a boxed primitive'],
  [Boolean.prototype.valueOf, 'a boxed primitive'],
  [Symbol.prototype.valueOf, 'a boxed primitive'],
  [BigInt.prototype.valueOf, 'a boxed primitive'],
  [getter(ArrayBuffer.prototype, 'byteLength'), 'binary data'],
  [typeof SharedArrayBuffer === 'function' ? getter(SharedArrayBuffer.prototype, 'byteLength') : undefined, 'binary data'],
  [WeakMap.prototype.has, 'a WeakMap'],
  [WeakSet.prototype.has, 'a WeakSet'],
  [typeof WeakRef === 'function' ? WeakRef.prototype.deref : undefined, 'a WeakRef'],
].filter(([f]) => typeof f === 'function')
const TYPED_ARRAY_TAG = getter(getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag)
// Kinds known by their prototype chain (no brand check without side effects).
const PROTOS = [
  [Promise.prototype, 'a Promise'],
  [Error.prototype, 'an Error'],
]

function branded(v) {
  for (let i = 0; i < BRANDS.length; i++) {
    const [check, what] = BRANDS[i]
    try {
      // RegExp.prototype.exec with a non-RegExp `this` throws before it reads anything.
      apply(check, v, check === RegExp.prototype.exec ? [''] : [])
      return what
    } catch {
      // not this kind
    }
  }
  if (isView(v)) return apply(TYPED_ARRAY_TAG, v, []) === undefined ? 'binary data' : 'a typed array'
  return undefined
}

/**
 * What an object is: an array's length (a number >= 0), -1 for an object
 * read by its own fields (a plain object, or another class's instance), or
 * what it is when it is not data ("a Map").
 */
export function kindOf(v) {
  try {
    if (isArray(v)) {
      const n = v.length
      return typeof n === 'number' ? n : 'an array without a length'
    }
    const proto = getPrototypeOf(v)
    if (proto === ObjectPrototype || proto === null) return -1
    if (ENGINE in v) {
      const what = v[ENGINE]
      return typeof what === 'string' ? what : 'an engine object'
    }
    const brand = branded(v)
    if (brand !== undefined) return brand
    for (let p = proto, depth = 0; p !== null && depth < 64; p = getPrototypeOf(p), depth++) {
      for (let i = 0; i < PROTOS.length; i++) if (p === PROTOS[i][0]) return PROTOS[i][1]
    }
    return -1
  } catch (e) {
    return fail(e)
  }
}

/** An object's own enumerable string keys. */
export function keys(o) {
  try {
    return objectKeys(o)
  } catch (e) {
    return fail(e)
  }
}

/** The number of entries of a list `keys` made. */
export function count(list) {
  return list.length
}

/** An entry of a list `keys` made. */
export function keyAt(list, i) {
  return list[i]
}

/** An own property's value; undefined when it is not an own one. */
export function own(o, k) {
  try {
    return hasOwn(o, k) ? o[k] : undefined
  } catch (e) {
    return fail(e)
  }
}

/** An array's own element; undefined for a hole. */
export function ownAt(o, i) {
  try {
    return hasOwn(o, i) ? o[i] : undefined
  } catch (e) {
    return fail(e)
  }
}

/** Whether a string is Unicode text (no lone surrogate). */
export function wellFormed(s) {
  return apply(isWellFormedOf, s, [])
}

/** A BigInt's decimal text. */
export function bigint(v) {
  return StringOf(v)
}

/** The readers, as the engine takes them (its `ctx` argument). */
export const READERS = freeze({
  __proto__: null,
  kindOf,
  keys,
  count,
  keyAt,
  own,
  ownAt,
  lastThrown,
  wellFormed,
  bigint,
  THROWN,
})
