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

  // Two calling conventions adapted here, in plain JS, because Node-API
  // makes them expensive in the addon: reading an object's property is a
  // C call (~250 ns), and so is setting each element of a result array.
  // The addon still checks every argument and reports every error.
  //  - delay(n, { u }) passes u as a number (the addon's fast path);
  //  - delays(array of numbers) passes a Float64Array, and the addon's
  //    Float64Array result becomes the plain array the API promises.
  const nativeDelay = RetryPolicy.prototype.delay
  Object.defineProperty(RetryPolicy.prototype, 'delay', {
    value: function delay(retryNumber, jitter) {
      if (
        typeof jitter === 'object' && jitter !== null && !Array.isArray(jitter) &&
        typeof jitter.u === 'number' && jitter.seed === undefined && jitter.key === undefined
      ) {
        return nativeDelay.call(this, retryNumber, jitter.u)
      }
      return nativeDelay.call(this, retryNumber, jitter)
    },
    writable: true,
    configurable: true,
  })
  const nativeDelays = RetryPolicy.prototype.delays
  Object.defineProperty(RetryPolicy.prototype, 'delays', {
    value: function delays(retryNumbers, jitter) {
      let ns = retryNumbers
      if (Array.isArray(ns)) {
        let numbers = true
        // Indexing (not .every) so that holes count as non-numbers.
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
