// One call at every documented limit (README "Limits on input") through
// the native addon and the wasm package, best of three, and 10^6 policies
// created in a loop without free() (time per 100 000 and memory), for
// bench/RESULTS.md: `node --expose-gc bench/node/limits.mjs` after
// scripts/test-node has built both.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const require = createRequire(import.meta.url)
const native = require(join(ROOT, 'bindings-node', 'index.js'))
const wasm = await import(pathToFileURL(join(ROOT, 'bindings-wasm', 'pkg', 'node.js')).href)

const MIB = 1 << 20
const KIB64 = 1 << 16
const big = 'x'.repeat(KIB64)
const last = MIB - (1 + 20 + 1 + 16 + 15 * KIB64)
const doc = { non_retryable_errors: [...Array(15).fill(big), 'y'.repeat(last)] }
const many = { non_retryable_errors: Array(10_000).fill('a.*') }

function time(f) {
  let best = Infinity
  for (let i = 0; i < 3; i++) {
    const t = performance.now()
    try { f() } catch (e) { if (!String(e.code).startsWith('validation.')) throw e }
    best = Math.min(best, performance.now() - t)
  }
  return best
}

const rows = [
  ['new RetryPolicy(1 MiB object: 16 × 64 KiB patterns)', (api) => new api.RetryPolicy(doc)],
  ['new RetryPolicy(10 000 patterns)', (api) => new api.RetryPolicy(many)],
  ['merge(16 × the same 10 000-pattern object)', (api) => api.RetryPolicy.merge(Array(16).fill(many))],
  ['merge(16 × the same 1 MiB object): refused (over 1 MiB together)', (api) => api.RetryPolicy.merge(Array(16).fill(doc))],
  ['merge(17 layers): refused at layers', (api) => api.RetryPolicy.merge(Array(17).fill({}))],
  ['decide: ~1 MiB of details', (api) => new api.RetryPolicy().decide({ attempt: 1, details: Array(15).fill(big) }, { now: 0, u: 0.5 })],
  ['matches: 64 KiB type, 10 000 patterns', (api) => api.matches(big, Array.from({ length: 10_000 }, (_, i) => `p${i}.*`))],
  ['schedule(10 000) keyed by a 64 KiB key', (api) => new api.RetryPolicy().schedule(10_000, { key: big })],
]
// The herd is the wasm build's.
const herd = (api) => new api.RetryPolicy({ max_attempts: 11 }).herd(100_000, 10, 1000)
console.log('| call at the limit | native | wasm |\n|---|---|---|')
for (const [name, f] of rows) {
  console.log(`| ${name} | ${time(() => f(native)).toFixed(1)} ms | ${time(() => f(wasm)).toFixed(1)} ms |`)
}

console.log(`| herd(100 000 jobs, 10 retries): 1 000 000 decisions | — | ${time(() => herd(wasm)).toFixed(1)} ms |`)

// Churn: 10^6 policies in a synchronous loop, never freed.
for (const [label, api] of [['native', native], ['wasm', wasm]]) {
  globalThis.gc?.()
  const rss0 = process.memoryUsage().rss
  const per = []
  for (let k = 0; k < 10; k++) {
    const t = performance.now()
    for (let i = 0; i < 100_000; i++) new api.RetryPolicy({ max_attempts: 5, initial_interval: 'PT1S' })
    per.push(((performance.now() - t) / 100).toFixed(2))
  }
  const rss1 = process.memoryUsage().rss
  globalThis.gc?.()
  await new Promise((r) => setTimeout(r, 100))
  const rss2 = process.memoryUsage().rss
  const mem = api.__wasm?.memory?.buffer?.byteLength
  console.log(`churn ${label}: µs per object per 100 000: ${per.join(' ')}; RSS ${(rss0 / 1e6).toFixed(0)} → ${(rss1 / 1e6).toFixed(0)} MB, after gc ${(rss2 / 1e6).toFixed(0)} MB${mem ? `; wasm memory ${(mem / 1e6).toFixed(0)} MB` : ''}`)
}
