// ojs-retry for Node.js: the native addon (napi-rs) for this platform, or the
// WebAssembly build (`ojs-retry-wasm`) where no native binary loads. Both are
// the same binding crate (bindings-wasm/src) built two ways, with the same
// exports; the public API over them is one JS layer (`ojs-retry-wasm/api`,
// from bindings-wasm/js/api.ts) that both packages use, so the classes, the
// error class `OjsRetryError` and the declarations (index.d.ts re-exports
// api.d.ts) are one. This file only chooses and binds.
//
//   OJS_RETRY_FORCE_WASM=1   skip the native addon and use the wasm build
//
// `backend` says which one loaded: 'native' or 'wasm'.
'use strict'

const { existsSync } = require('node:fs')
const { join } = require('node:path')

const PACKAGE = 'ojs-retry'

/** The napi-rs platform suffix: linux-x64-gnu, darwin-arm64, win32-x64-msvc... */
function platformSuffix() {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
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

/** The addon next to this file, or napi-rs's per-platform package (`ojs-retry-linux-x64-gnu`). */
function loadNative() {
  const suffix = platformSuffix()
  const file = join(__dirname, `${PACKAGE}.${suffix}.node`)
  if (existsSync(file)) return require(file)
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

function firstLine(e) {
  return e && e.message ? e.message.split('\n')[0] : String(e)
}

let api
let backend
const forced = /^(1|true|yes)$/i.test(process.env.OJS_RETRY_FORCE_WASM || '')
let nativeError = forced ? new Error('skipped: OJS_RETRY_FORCE_WASM is set') : null

if (!forced) {
  try {
    const raw = loadNative()
    // The JS layer, from the wasm package (an ES module; loading it does not
    // instantiate the wasm module).
    api = require('ojs-retry-wasm/api').bind(raw)
    backend = 'native'
  } catch (e) {
    nativeError = e
  }
}
if (backend === undefined) {
  try {
    api = require('ojs-retry-wasm')
    backend = 'wasm'
  } catch (wasmError) {
    const err = new Error(
      `ojs-retry: no backend could be loaded.\n` +
        `  native addon (${PACKAGE}.${platformSuffix()}.node): ${firstLine(nativeError)}\n` +
        `  wasm fallback (ojs-retry-wasm): ${firstLine(wasmError)}`,
    )
    err.code = 'OJS_RETRY_NO_BACKEND'
    err.nativeError = nativeError
    err.wasmError = wasmError
    throw err
  }
}

// The shared surface (index.d.ts), whichever backend loaded it.
module.exports = {
  backend,
  RetryPolicy: api.RetryPolicy,
  RetryState: api.RetryState,
  Reservation: api.Reservation,
  OjsRetryError: api.OjsRetryError,
  matches: api.matches,
  firstMatch: api.firstMatch,
  parseDuration: api.parseDuration,
  formatDuration: api.formatDuration,
  parseTimestamp: api.parseTimestamp,
  formatTimestamp: api.formatTimestamp,
  jitterSample: api.jitterSample,
  presetSystems: api.presetSystems,
  runTransaction: api.runTransaction,
}
