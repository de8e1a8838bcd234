// The loader of the ojs-retry package (bindings-node/index.js), each scenario
// in a fresh child process: native by default, wasm when forced, wasm when
// the native binary is missing, a clear error naming both failures when
// neither loads, and the ESM entry sharing the CommonJS module.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const PKG = join(ROOT, 'bindings-node')
const WASM_PKG = join(ROOT, 'bindings-wasm', 'pkg')
// The built addon for this platform, e.g. ojs-retry.linux-x64-gnu.node.
const BINARY = readdirSync(PKG).find((f) => /^ojs-retry\..+\.node$/.test(f))
const SUFFIX = BINARY && BINARY.slice('ojs-retry.'.length, -'.node'.length)
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

test('the native addon is built', () => {
  assert.ok(BINARY, `no ojs-retry.<platform>.node in ${PKG}`)
})

const PROBE = `
const o = require(process.argv[1]);
const p = new o.RetryPolicy({ max_attempts: 4 });
console.log(JSON.stringify({ backend: o.backend, delays: Array.from(p.delays(Float64Array.of(1, 2, 3), { key: 'job-1' })) }));
`

function run(args, env = {}) {
  const childEnv = { ...process.env, ...env }
  if (!('OJS_RETRY_FORCE_WASM' in env)) delete childEnv.OJS_RETRY_FORCE_WASM
  const r = spawnSync(process.execPath, args, { env: childEnv, encoding: 'utf8' })
  return r
}

function probe(entry, env) {
  const r = run(['-e', PROBE, entry], env)
  assert.equal(r.status, 0, `child failed: ${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').at(-1))
}

/** A copy of the package's JS files in a temp dir, optionally with the wasm dependency. */
function stage({ withWasm, withNative }) {
  const dir = mkdtempSync(join(tmpdir(), 'ojs-retry-loader-'))
  for (const f of ['index.js', 'index.mjs', 'package.json']) copyFileSync(join(PKG, f), join(dir, f))
  if (withNative) {
    copyFileSync(join(PKG, BINARY), join(dir, BINARY))
  }
  if (withWasm) {
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(WASM_PKG, join(dir, 'node_modules', 'ojs-retry-wasm'), 'dir')
  }
  return dir
}

test('native by default', () => {
  const out = probe(PKG)
  assert.equal(out.backend, 'native')
})

test('OJS_RETRY_FORCE_WASM=1 loads the wasm build, same answers', () => {
  const native = probe(PKG)
  const wasm = probe(PKG, { OJS_RETRY_FORCE_WASM: '1' })
  assert.equal(wasm.backend, 'wasm')
  assert.deepEqual(wasm.delays, native.delays)
})

test('OJS_RETRY_FORCE_WASM=0 does not force', () => {
  assert.equal(probe(PKG, { OJS_RETRY_FORCE_WASM: '0' }).backend, 'native')
})

test('a missing native binary falls back to wasm', (t) => {
  const dir = stage({ withWasm: true, withNative: false })
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const out = probe(dir)
  assert.equal(out.backend, 'wasm')
  assert.deepEqual(out.delays, probe(PKG).delays)
})

test('a native binary that cannot load (wrong platform / corrupt) falls back to wasm', (t) => {
  const dir = stage({ withWasm: true, withNative: false })
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, BINARY), 'not a shared object')
  assert.equal(probe(dir).backend, 'wasm')
})

test('neither backend: one clear error naming both failures', (t) => {
  const dir = stage({ withWasm: false, withNative: false })
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const r = run(['-e', PROBE, dir])
  assert.notEqual(r.status, 0)
  assert.match(r.stderr, /ojs-retry: no backend could be loaded/)
  assert.match(r.stderr, new RegExp(`native addon \\(${esc(BINARY)}\\): no native binary for ${esc(SUFFIX)}`))
  assert.match(r.stderr, /wasm fallback \(ojs-retry-wasm\): .*ojs-retry-wasm/)
  assert.match(r.stderr, /code: 'OJS_RETRY_NO_BACKEND'/)
})

test('forced wasm without the wasm package: the error says native was skipped', (t) => {
  const dir = stage({ withWasm: false, withNative: true })
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const r = run(['-e', PROBE, dir], { OJS_RETRY_FORCE_WASM: '1' })
  assert.notEqual(r.status, 0)
  assert.match(r.stderr, /native addon .*: skipped: OJS_RETRY_FORCE_WASM is set/)
  assert.match(r.stderr, /wasm fallback \(ojs-retry-wasm\)/)
})

test('a native addon without the wasm package (which holds the JS layer): one clear error', (t) => {
  const dir = stage({ withWasm: false, withNative: true })
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const r = run(['-e', PROBE, dir])
  assert.notEqual(r.status, 0)
  assert.match(r.stderr, /ojs-retry: no backend could be loaded/)
  assert.match(r.stderr, /native addon .*ojs-retry-wasm\/api/)
})

test('OjsRetryError is one class whichever backend threw', () => {
  const script = `
    const o = require(process.argv[1]);
    let e;
    try { new o.RetryPolicy({ max_attempts: -1 }) } catch (x) { e = x }
    const w = require('ojs-retry-wasm/api');
    console.log(JSON.stringify({ backend: o.backend, mine: e instanceof o.OjsRetryError, shared: o.OjsRetryError === w.OjsRetryError, error: e instanceof Error, code: e.code }));
  `
  for (const env of [{}, { OJS_RETRY_FORCE_WASM: '1' }]) {
    const r = spawnSync(process.execPath, ['-e', script, PKG], { env: { ...process.env, ...env }, encoding: 'utf8', cwd: PKG })
    assert.equal(r.status, 0, r.stderr)
    const out = JSON.parse(r.stdout.trim())
    assert.deepEqual(out, { backend: env.OJS_RETRY_FORCE_WASM ? 'wasm' : 'native', mine: true, shared: true, error: true, code: 'validation.retry_policy_invalid' })
  }
})

test('the ESM entry is the same module as the CommonJS one', () => {
  const script = `
    import * as esm from ${JSON.stringify(join(PKG, 'index.mjs'))};
    import { createRequire } from 'node:module';
    const cjs = createRequire(import.meta.url)(${JSON.stringify(join(PKG, 'index.js'))});
    const same = esm.RetryPolicy === cjs.RetryPolicy && esm.default === cjs && esm.backend === cjs.backend;
    console.log(JSON.stringify({ same, backend: esm.backend, keys: Object.keys(esm).sort() }));
  `
  for (const env of [{}, { OJS_RETRY_FORCE_WASM: '1' }]) {
    const r = run(['--input-type=module', '-e', script], env)
    assert.equal(r.status, 0, r.stderr)
    const out = JSON.parse(r.stdout.trim())
    assert.equal(out.same, true)
    assert.equal(out.backend, env.OJS_RETRY_FORCE_WASM ? 'wasm' : 'native')
    assert.deepEqual(out.keys, [
      'OjsRetryError',
      'Reservation',
      'RetryPolicy',
      'RetryState',
      'backend',
      'default',
      'firstMatch',
      'formatDuration',
      'formatTimestamp',
      'jitterSample',
      'matches',
      'parseDuration',
      'parseTimestamp',
      'presetSystems',
      'runTransaction',
    ])
  }
})
