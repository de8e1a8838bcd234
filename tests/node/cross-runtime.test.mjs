// Stateless keyed jitter gives the same delay for the same (key, retry
// number) in every runtime: the native addon, the wasm build (through the
// package's forced fallback), the Python module and the Rust CLI. A runtime
// that is not available FAILS this test (it never passes vacuously).
//
//   OJS_VENV         the virtualenv with `ojs_retry` installed (default <repo>/.venv)
//   OJS_RETRY_CLI    a built `ojs-retry` binary (default: cargo run -q -p ojs-retry-cli)
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const PKG = join(ROOT, 'bindings-node')

const CASES = [
  { policy: { max_attempts: 8, initial_interval: 'PT2S' }, key: 'job-8f3a' },
  { policy: { max_attempts: 10, backoff_strategy: 'polynomial', max_interval: 'PT1H' }, key: '018f6b2e-7c1d-7a00-b3b5-9e1f2d3c4b5a' },
  { policy: { max_attempts: 6, backoff_strategy: 'linear', initial_interval: 'PT0.25S' }, key: 'jöb-日本-🚀' },
  { policy: { max_attempts: 5 }, key: '' },
]
const RETRIES = (c) => c.policy.max_attempts - 1

function sh(cmd, args, opts = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 24, ...opts })
}

function nativeDelays() {
  delete process.env.OJS_RETRY_FORCE_WASM
  const api = createRequire(import.meta.url)(join(PKG, 'index.js'))
  assert.equal(api.backend, 'native', 'the native addon must load for this test')
  return CASES.map((c) => {
    const p = new api.RetryPolicy(c.policy)
    return Array.from({ length: RETRIES(c) }, (_, i) => p.delay(i + 1, { key: c.key }))
  })
}

function wasmDelays() {
  const script = `
    const api = require(${JSON.stringify(join(PKG, 'index.js'))});
    if (api.backend !== 'wasm') throw new Error('expected the wasm backend, got ' + api.backend);
    const cases = JSON.parse(process.argv[1]);
    console.log(JSON.stringify(cases.map((c) => {
      const p = new api.RetryPolicy(c.policy);
      return Array.from({ length: c.policy.max_attempts - 1 }, (_, i) => p.delay(i + 1, { key: c.key }));
    })));
  `
  const r = sh(process.execPath, ['-e', script, JSON.stringify(CASES)], {
    env: { ...process.env, OJS_RETRY_FORCE_WASM: '1' },
  })
  if (r.status !== 0) throw new Error(`wasm runtime unavailable: ${r.stderr || r.error}`)
  return JSON.parse(r.stdout)
}

function pythonDelays() {
  const venv = process.env.OJS_VENV ? resolve(ROOT, process.env.OJS_VENV) : join(ROOT, '.venv')
  const py = join(venv, 'bin', 'python')
  if (!existsSync(py)) {
    throw new Error(`Python runtime unavailable: no virtualenv interpreter at ${py} (create it with scripts/ensure/python.sh and install bindings-python with maturin)`)
  }
  const script = `
import json, sys
import ojs_retry
cases = json.loads(sys.argv[1])
out = []
for c in cases:
    p = ojs_retry.RetryPolicy(c["policy"])
    out.append([p.delay(n, key=c["key"]) for n in range(1, c["policy"]["max_attempts"])])
print(json.dumps(out))
`
  const r = sh(py, ['-c', script, JSON.stringify(CASES)])
  if (r.status !== 0) {
    throw new Error(`Python runtime unavailable: ${py} could not run ojs_retry (is bindings-python installed in the venv?):\n${r.stderr || r.error}`)
  }
  return JSON.parse(r.stdout)
}

function rustDelays() {
  const dir = mkdtempSync(join(tmpdir(), 'ojs-retry-cross-'))
  try {
    return CASES.map((c, i) => {
      const file = join(dir, `policy-${i}.json`)
      writeFileSync(file, JSON.stringify(c.policy))
      const args = ['schedule', file, '--key', c.key, '--retries', String(RETRIES(c)), '--json']
      const r = process.env.OJS_RETRY_CLI
        ? sh(process.env.OJS_RETRY_CLI, args)
        : sh('cargo', ['run', '-q', '-p', 'ojs-retry-cli', '--', ...args], { cwd: ROOT })
      if (r.status !== 0) {
        throw new Error(`Rust CLI unavailable: ojs-retry ${args.join(' ')} failed:\n${r.stderr || r.error}`)
      }
      const out = JSON.parse(r.stdout)
      assert.ok(Array.isArray(out.rows), `unexpected CLI output: ${r.stdout.slice(0, 200)}`)
      return out.rows.map((row) => row.delay_ms)
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('keyed jitter: native, wasm, Python and the Rust CLI give the same delays', () => {
  const results = {}
  const missing = []
  for (const [name, fn] of Object.entries({
    native: nativeDelays,
    wasm: wasmDelays,
    python: pythonDelays,
    rust: rustDelays,
  })) {
    try {
      results[name] = fn()
    } catch (e) {
      missing.push(`${name}: ${e.message}`)
    }
  }
  assert.equal(missing.length, 0, `runtimes not available (this test needs all four):\n${missing.join('\n')}`)
  const ref = results.native
  CASES.forEach((c, i) => {
    assert.equal(ref[i].length, RETRIES(c))
    for (const d of ref[i]) assert.ok(Number.isSafeInteger(d) && d >= 0)
  })
  for (const [name, got] of Object.entries(results)) {
    assert.deepEqual(got, ref, `${name} differs from native`)
  }
  // Not all the same value: the key really drives the jitter.
  assert.ok(new Set(ref[0]).size > 1)
})
