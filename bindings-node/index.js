// ojs-retry for Node.js: the native addon (napi-rs) for this platform, or the
// WebAssembly build (`ojs-retry-wasm`) when no native binary loads.
//
//   OJS_RETRY_FORCE_WASM=1   skip the native addon and use the wasm build
//
// `backend` says which one loaded ('native' | 'wasm'). Both expose the same
// API (index.d.ts). Nothing here decides anything about retries: the loader
// picks a backend and, for the native one, defines the `RetryPolicy` class
// over the addon's functions (a policy is a handle to the addon's table, see
// nativeRetryPolicy) and adapts calling conventions that Node-API makes
// expensive.
'use strict'

const { existsSync } = require('node:fs')
const { join } = require('node:path')

const PACKAGE = 'ojs-retry'

/** The napi-rs platform suffix: linux-x64-gnu, darwin-arm64, win32-x64-msvc... */
function platformSuffix() {
  const { platform, arch } = process
  if (platform === 'linux') {
    return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

function isMusl() {
  try {
    const report = process.report && process.report.getReport()
    const header = report && (typeof report === 'string' ? JSON.parse(report) : report).header
    return !(header && header.glibcVersionRuntime)
  } catch {
    return false
  }
}

function loadNative() {
  const suffix = platformSuffix()
  const file = join(__dirname, `${PACKAGE}.${suffix}.node`)
  if (existsSync(file)) return require(file)
  // The napi-rs convention for prebuilt binaries shipped as per-platform
  // packages (`ojs-retry-linux-x64-gnu`).
  try {
    return require(`${PACKAGE}-${suffix}`)
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND') {
      const err = new Error(
        `no native binary for ${suffix}: neither ${PACKAGE}.${suffix}.node next to ${__filename} nor the package ${PACKAGE}-${suffix} is installed`,
      )
      err.code = 'MODULE_NOT_FOUND'
      throw err
    }
    throw e
  }
}

function describe(e) {
  return e && e.message ? e.message.split('\n')[0] : String(e)
}


// ---------------------------------------------------------------- native

/** A decision object from the addon's array (`decision_array` in src/lib.rs). */
function decisionOf(r) {
  return {
    action: r[0],
    reason: r[1],
    handlerCode: r[2],
    matchedPattern: r[3],
    attempt: r[4],
    timedOut: r[5],
    retryNumber: r[6],
    delayMs: r[7],
    nextRetryAt: r[8],
  }
}

/**
 * The native `RetryPolicy`: a plain JS class holding a handle (a number) to
 * a policy kept in the addon's per-thread table, each method forwarding to
 * an addon function that takes the handle. Not a napi-rs class: creating a
 * native class instance (napi_wrap, its weak reference, napi-rs's
 * bookkeeping) cost ~0.85 µs, twice the parse of a policy. The table entry
 * is freed by a FinalizationRegistry when the object is collected
 * (registered without an unregister token: there is no explicit free, and
 * a token costs ~2.5× the registration).
 *
 * Returns the class and `handleOf(value)`: the handle of a policy of this
 * class, or the addon's `validation.invalid_argument` error (field
 * `policy`) for any other value.
 */
function nativeRetryPolicy(native) {
  const {
    policyNew,
    policyFromText,
    policyMerge,
    policyPreset,
    policyPresetSystem,
    policyMaxAttempts,
    policyInitialIntervalMs,
    policyBackoffCoefficient,
    policyMaxIntervalMs,
    policyJitter,
    policyNonRetryableErrors,
    policyOnExhaustion,
    policyBackoffStrategy,
    policyMaxRetries,
    policyToJson,
    policyToString,
    policyDelay,
    policyDelays,
    policySchedule,
    policyDecide,
    __decideFields: decideFields,
    __delayU: delayU,
    __delayS: delayS,
    __delayE: delayE,
    __delaysInPlace: delaysInPlace,
    __release: release,
    __notAPolicy: notAPolicy,
  } = native
  const registry = new FinalizationRegistry(release)

  // The handle a factory hands to the constructor (see `adopt`): the
  // constructor takes no second argument that callers could forge.
  let adopted = -1
  let handleOf

  // Calling conventions adapted here, in plain JS, because Node-API makes
  // them expensive in the addon: every property read, type check and
  // element access is a C call, and so is creating a result array. Plain
  // numbers go to hidden fast functions with typed `f64` arguments that
  // return -1 for anything invalid; then the full function runs, checks
  // every argument and reports the error, so errors are exactly the addon's.
  //  - delay(n) (OS entropy), delay(n, u), delay(n, { u }) and
  //    delay(n, { seed: number });
  //  - delays(numbers, { u } | { seed: number }) copies the numbers into a
  //    reused scratch Float64Array that the addon overwrites with the delays.

  // `{ u }` → 0, `{ seed: number }` → 1, anything else → -1 (the full path).
  // Reads each property once, as the addon would.
  let jitterValue = 0
  function fastJitter(jitter) {
    if (typeof jitter !== 'object' || jitter === null || Array.isArray(jitter)) return -1
    const { u, seed, key } = jitter
    if (key !== undefined) return -1
    if (typeof u === 'number' && seed === undefined) {
      jitterValue = u
      return 0
    }
    if (typeof seed === 'number' && u === undefined) {
      jitterValue = seed
      return 1
    }
    return -1
  }

  // `[handle, seeded, u or seed, len, n_1 … n_len]`, kept across calls
  // (the addon never calls back into JS while it holds it); batches longer
  // than SCRATCH_MAX use a buffer of their own.
  const SCRATCH_MAX = 1024
  let scratch = new Float64Array(4 + 32)
  // Its bytes, which the addon takes (see `delays_in_place` in src/lib.rs).
  let scratchBytes = new Uint8Array(scratch.buffer)

  // One batch of `n` through the scratch `buf` (its `bytes` go to the
  // addon): each entry checked (a number, never converted: storing one
  // converts, so a symbol would throw and an object's valueOf run) and
  // copied in, the delays computed, and copied out as a new array; `null`
  // when an entry is not a number or the addon refuses (the full route
  // then reports why). Straight-line code compiled once per length up to
  // UNROLLED_MAX: for 25 delays the copy in takes 19.5 ns instead of 32 ns
  // as a loop, and the copy out, an array literal that V8 allocates inline
  // (`new Array(n)` is a runtime call), 32 ns instead of 53 ns. Loops for
  // longer batches, and where the host forbids code from strings
  // (`--disallow-code-generation-from-strings`).
  const UNROLLED_MAX = 64
  const unrolled = []
  let unrolling = true
  function compileBatch(n) {
    const slots = Array.from({ length: n }, (_, i) => i)
    const copyIn = slots.map((i) => `x = a[${i}]; if (typeof x !== 'number') return null; b[${i + 4}] = x`)
    const copyOut = slots.map((i) => `b[${i + 4}]`)
    return new Function(
      'a', 'b', 'bytes', 'delaysInPlace',
      `let x\n${copyIn.join('\n')}\nif (delaysInPlace(bytes) < 0) return null\nreturn [${copyOut.join(', ')}]`,
    )
  }
  function runBatch(a, buf, bytes, n) {
    if (n <= UNROLLED_MAX && unrolling) {
      let run = unrolled[n]
      if (run === undefined) {
        try {
          run = unrolled[n] = compileBatch(n)
        } catch {
          unrolling = false
        }
      }
      if (run !== undefined) return run(a, buf, bytes, delaysInPlace)
    }
    // Indexing (not .every) so that holes count as non-numbers.
    for (let i = 0; i < n; i++) {
      const x = a[i]
      if (typeof x !== 'number') return null
      buf[i + 4] = x
    }
    if (delaysInPlace(bytes) < 0) return null
    const out = new Array(n)
    for (let i = 0; i < n; i++) out[i] = buf[i + 4]
    return out
  }

  class RetryPolicy {
    #h

    /** A partial document (object or JSON text) merged over the defaults. */
    constructor(policy = undefined) {
      let h = adopted
      if (h >= 0) adopted = -1
      else h = typeof policy === 'string' ? policyFromText(policy) : policyNew(policy)
      this.#h = h
      registry.register(this, h)
    }

    /** Layers merged in order: defaults ← first ← … ← last, then validated. */
    static merge(...layers) {
      return adopt(policyMerge(layers))
    }

    /** A preset: `system`'s own retry configuration. */
    static preset(system, config) {
      return adopt(policyPreset(system, config))
    }

    static {
      handleOf = (p) =>
        (typeof p === 'object' || typeof p === 'function') && p !== null && #h in p ? p.#h : notAPolicy(p)
    }

    get presetSystem() {
      return policyPresetSystem(handleOf(this))
    }
    get maxAttempts() {
      return policyMaxAttempts(handleOf(this))
    }
    get initialIntervalMs() {
      return policyInitialIntervalMs(handleOf(this))
    }
    get backoffCoefficient() {
      return policyBackoffCoefficient(handleOf(this))
    }
    get maxIntervalMs() {
      return policyMaxIntervalMs(handleOf(this))
    }
    get jitter() {
      return policyJitter(handleOf(this))
    }
    get nonRetryableErrors() {
      return policyNonRetryableErrors(handleOf(this))
    }
    get onExhaustion() {
      return policyOnExhaustion(handleOf(this))
    }
    get backoffStrategy() {
      return policyBackoffStrategy(handleOf(this))
    }
    get maxRetries() {
      return policyMaxRetries(handleOf(this))
    }

    toJSON() {
      return policyToJson(handleOf(this))
    }
    toString() {
      return policyToString(handleOf(this))
    }

    delay(retryNumber, jitter) {
      const h = handleOf(this)
      if (typeof retryNumber === 'number') {
        let d = -1
        if (typeof jitter === 'number') {
          d = delayU(h, retryNumber, jitter)
        } else if (jitter === undefined) {
          d = delayE(h, retryNumber)
        } else {
          const kind = fastJitter(jitter)
          if (kind === 0) d = delayU(h, retryNumber, jitterValue)
          else if (kind === 1) d = delayS(h, retryNumber, jitterValue)
        }
        if (d >= 0) return d
      }
      return policyDelay(h, retryNumber, jitter)
    }

    delays(retryNumbers, jitter) {
      const h = handleOf(this)
      const kind = fastJitter(jitter)
      if (
        kind >= 0 &&
        (Array.isArray(retryNumbers) || retryNumbers instanceof Float64Array ||
          retryNumbers instanceof Uint32Array)
      ) {
        const n = retryNumbers.length
        let buf = scratch
        let bytes = scratchBytes
        if (n + 4 > buf.length) {
          buf = new Float64Array(n + 4)
          bytes = new Uint8Array(buf.buffer)
          if (n <= SCRATCH_MAX) {
            scratch = buf
            scratchBytes = bytes
          }
        }
        buf[0] = h
        buf[1] = kind
        buf[2] = jitterValue
        buf[3] = n
        const out = runBatch(retryNumbers, buf, bytes, n)
        if (out !== null) return out
      }
      let ns = retryNumbers
      if (Array.isArray(ns)) {
        let numbers = true
        for (let i = 0; i < ns.length && numbers; i++) numbers = typeof ns[i] === 'number'
        if (numbers) ns = Float64Array.from(ns)
      }
      return Array.from(policyDelays(h, ns, jitter))
    }

    schedule(count, jitter) {
      return policySchedule(handleOf(this), count, jitter)
    }

    decide(failure, options) {
      const h = handleOf(this)
      // A failure object, and an options object or none: their fields (and
      // a jitter object's) are read here, once each and in the addon's
      // order, and passed as values (the addon reading named properties
      // cost ~2.5 µs); anything else takes the full route, which reports it.
      const objects =
        typeof failure === 'object' && failure !== null && !Array.isArray(failure) &&
        (options === undefined ||
          (typeof options === 'object' && options !== null && !Array.isArray(options)))
      if (!objects) return decisionOf(policyDecide(h, failure, options))
      const { attempt, type, code, timedOut } = failure
      let now, jitter
      if (options !== undefined) ({ now, jitter } = options)
      let u, seed, key
      if (typeof jitter === 'object' && jitter !== null && !Array.isArray(jitter)) ({ u, seed, key } = jitter)
      return decisionOf(decideFields(h, attempt, type, code, timedOut, now, jitter, u, seed, key))
    }
  }

  function adopt(h) {
    adopted = h
    return new RetryPolicy()
  }

  // As the napi-rs class had them (and as `for…in` over a policy sees
  // them): the prototype's getters and methods are enumerable.
  for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(RetryPolicy.prototype))) {
    if (name !== 'constructor') Object.defineProperty(RetryPolicy.prototype, name, { ...d, enumerable: true })
  }
  return { RetryPolicy, handleOf }
}

/**
 * `RetryState#recordFailure(policy, …)` / `#recordTimeout(policy, …)` pass
 * the policy's handle to the addon (or report a value that is not one) and
 * build the decision object from its array.
 */
function adaptRetryState(RetryState, handleOf) {
  const proto = RetryState.prototype
  const nativeRecordFailure = proto.recordFailure
  const nativeRecordTimeout = proto.recordTimeout
  Object.defineProperty(proto, 'recordFailure', {
    value: function recordFailure(policy, error, options) {
      return decisionOf(nativeRecordFailure.call(this, handleOf(policy), error, options))
    },
    writable: true,
    enumerable: true,
    configurable: true,
  })
  Object.defineProperty(proto, 'recordTimeout', {
    value: function recordTimeout(policy, options) {
      return decisionOf(nativeRecordTimeout.call(this, handleOf(policy), options))
    },
    writable: true,
    enumerable: true,
    configurable: true,
  })
}

let binding
let backend
const forced = /^(1|true|yes)$/i.test(process.env.OJS_RETRY_FORCE_WASM || '')
let nativeError = forced ? new Error('skipped: OJS_RETRY_FORCE_WASM is set') : null

if (!forced) {
  try {
    binding = loadNative()
    backend = 'native'
  } catch (e) {
    nativeError = e
  }
}

let RetryPolicy
if (backend === 'native') {
  const native = nativeRetryPolicy(binding)
  RetryPolicy = native.RetryPolicy
  adaptRetryState(binding.RetryState, native.handleOf)
} else {
  try {
    // An ES module (no top-level await): require() loads it on Node
    // ^20.19 / >= 22.12.
    binding = require('ojs-retry-wasm')
    backend = 'wasm'
  } catch (wasmError) {
    const err = new Error(
      `ojs-retry: no backend could be loaded.\n` +
        `  native addon (${PACKAGE}.${platformSuffix()}.node): ${describe(nativeError)}\n` +
        `  wasm fallback (ojs-retry-wasm): ${describe(wasmError)}`,
    )
    err.code = 'OJS_RETRY_NO_BACKEND'
    err.nativeError = nativeError
    err.wasmError = wasmError
    throw err
  }
}

if (backend === 'wasm') RetryPolicy = binding.RetryPolicy

module.exports = {
  backend,
  RetryPolicy,
  RetryState: binding.RetryState,
  Reservation: binding.Reservation,
  matches: binding.matches,
  firstMatch: binding.firstMatch,
  parseDuration: binding.parseDuration,
  formatDuration: binding.formatDuration,
  formatTimestamp: binding.formatTimestamp,
  parseTimestamp: binding.parseTimestamp,
  jitterSample: binding.jitterSample,
}
if (backend === 'native') {
  // Not API (non-enumerable, not in the types): how many policies this
  // thread's table holds, for the tests that check entries are freed.
  Object.defineProperty(module.exports, '__livePolicies', { value: binding.__livePolicies })
}
