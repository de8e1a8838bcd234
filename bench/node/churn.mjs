// Memory under churn, for bench/RESULTS.md: three rounds of 10^6 policies
// made in a synchronous loop without free(), then the event loop turned
// (with gc()) so the finalizers run: the time per round, and the RSS each
// round leaves. `node --expose-gc bench/node/churn.mjs [native|wasm]` after
// scripts/test-node has built both.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const which = process.argv[2] ?? 'wasm'
const api = which === 'native'
  ? createRequire(import.meta.url)(join(ROOT, 'bindings-node', 'index.js'))
  : await import(pathToFileURL(join(ROOT, 'bindings-wasm', 'pkg', 'node.js')).href)
for (let round = 0; round < 3; round++) {
  const t = performance.now()
  for (let i = 0; i < 1_000_000; i++) new api.RetryPolicy({ max_attempts: 5, initial_interval: 'PT1S' })
  const dt = ((performance.now() - t) / 1000).toFixed(1)
  for (let k = 0; k < 20; k++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 50)) }
  console.log(`${which} round ${round}: ${dt} s; RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB after finalizers`)
}
