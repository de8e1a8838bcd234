// ojs-retry for Node.js: the native addon (napi-rs) for this platform, or the
// WebAssembly build (`ojs-retry-wasm`) when no native binary loads.
//
//   OJS_RETRY_FORCE_WASM=1   skip the native addon and use the wasm build
//
// `backend` says which one loaded ('native' | 'wasm'). Both expose the same
// API (index.d.ts). Nothing here decides anything about retries: the loader
// only picks a backend and adapts one calling convention (the variadic
// `RetryPolicy.merge(...layers)`).
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

if (backend === 'native') {
  const { RetryPolicy } = binding
  const mergeLayers = RetryPolicy.mergeLayers
  Object.defineProperty(RetryPolicy, 'merge', {
    value: function merge(...layers) {
      return mergeLayers.call(RetryPolicy, layers)
    },
    writable: true,
    configurable: true,
  })

  // Calling conventions adapted here, in plain JS, because Node-API makes
  // them expensive in the addon: every property read, type check and
  // element access is a C call, and so is creating a result array. Plain
  // numbers go to hidden fast methods with typed `f64` arguments that
  // return -1 for anything invalid; then the full method runs, checks every
  // argument and reports the error, so errors are exactly the addon's.
  //  - delay(n, u), delay(n, { u }) and delay(n, { seed: number });
  //  - delays(numbers, { u } | { seed: number }) copies the numbers into a
  //    reused scratch Float64Array that the addon overwrites with the delays.
  const proto = RetryPolicy.prototype
  const nativeDelay = proto.delay
  const nativeDelays = proto.delays
  const delayU = proto.__delayU
  const delayS = proto.__delayS
  const delaysInPlace = proto.__delaysInPlace
  delete proto.__delayU
  delete proto.__delayS
  delete proto.__delaysInPlace

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

  Object.defineProperty(proto, 'delay', {
    value: function delay(retryNumber, jitter) {
      if (typeof retryNumber === 'number') {
        let d = -1
        if (typeof jitter === 'number') {
          d = delayU.call(this, retryNumber, jitter)
        } else {
          const kind = fastJitter(jitter)
          if (kind === 0) d = delayU.call(this, retryNumber, jitterValue)
          else if (kind === 1) d = delayS.call(this, retryNumber, jitterValue)
        }
        if (d >= 0) return d
      }
      return nativeDelay.call(this, retryNumber, jitter)
    },
    writable: true,
    configurable: true,
  })

  // `[seeded, u or seed, len, n_1 … n_len]`, kept across calls (the addon
  // never calls back into JS while it holds it); batches longer than
  // SCRATCH_MAX use a buffer of their own.
  const SCRATCH_MAX = 1024
  let scratch = new Float64Array(3 + 32)
  Object.defineProperty(proto, 'delays', {
    value: function delays(retryNumbers, jitter) {
      const kind = fastJitter(jitter)
      if (
        kind >= 0 &&
        (Array.isArray(retryNumbers) || retryNumbers instanceof Float64Array ||
          retryNumbers instanceof Uint32Array)
      ) {
        const n = retryNumbers.length
        let buf = scratch
        if (n + 3 > buf.length) {
          buf = new Float64Array(n + 3)
          if (n <= SCRATCH_MAX) scratch = buf
        }
        buf[0] = kind
        buf[1] = jitterValue
        buf[2] = n
        let numbers = true
        // Indexing (not .every) so that holes count as non-numbers.
        for (let i = 0; i < n && numbers; i++) {
          const x = retryNumbers[i]
          numbers = typeof x === 'number'
          buf[i + 3] = x
        }
        if (numbers && delaysInPlace.call(this, buf) >= 0) {
          const out = new Array(n)
          for (let i = 0; i < n; i++) out[i] = buf[i + 3]
          return out
        }
      }
      let ns = retryNumbers
      if (Array.isArray(ns)) {
        let numbers = true
        for (let i = 0; i < ns.length && numbers; i++) numbers = typeof ns[i] === 'number'
        if (numbers) ns = Float64Array.from(ns)
      }
      return Array.from(nativeDelays.call(this, ns, jitter))
    },
    writable: true,
    configurable: true,
  })
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

module.exports = {
  backend,
  RetryPolicy: binding.RetryPolicy,
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
