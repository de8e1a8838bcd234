#!/usr/bin/env node
// Cold start of the wasm package (bindings-wasm/pkg, as scripts/build-wasm
// makes it), in Node and in Cloudflare's workerd (through miniflare, as
// tests/edge runs it). Run by scripts/bench; prints one JSON document:
//   { "suite": "coldstart", "node": {...}, "workerd": {...} }
//
// Node: in a fresh process each time (V8 caches a module compiled earlier
// in the same process): compile (`new WebAssembly.Module`), instantiate
// (the glue's `initSync`), and the first call; medians over the runs.
// workerd: the time to a fresh workerd's first response from a worker that
// imports the package (workerd compiles the imported module ahead of
// time, then the entry instantiates it), against the same for a worker
// without it; alternating, best of the runs each (workerd's own start-up
// varies more than the module costs), and the difference.
//
//   node bench/node/coldstart.mjs [--quick]
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Miniflare } from 'miniflare'

const HERE = dirname(fileURLToPath(import.meta.url))
const PKG = join(HERE, '..', '..', 'bindings-wasm', 'pkg')
const RUNS = process.argv.includes('--quick') ? 2 : 7
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

function nodeColdStart() {
  const glue = pathToFileURL(join(PKG, 'ojs_retry_wasm.js')).href
  const wasm = join(PKG, 'ojs_retry_wasm_bg.wasm')
  const script = `
    import { readFileSync } from "node:fs";
    const { initSync, RetryPolicy } = await import(${JSON.stringify(glue)});
    const bytes = readFileSync(${JSON.stringify(wasm)});
    const t0 = performance.now();
    const module = new WebAssembly.Module(bytes);
    const t1 = performance.now();
    initSync({ module });
    const t2 = performance.now();
    const d = new RetryPolicy({ jitter: false }).delay(1);
    const t3 = performance.now();
    if (d !== 1000) throw new Error("first call answered " + d);
    console.log(JSON.stringify({ compile: t1 - t0, instantiate: t2 - t1, first: t3 - t2 }));`
  const runs = []
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
    runs.push(JSON.parse(out))
  }
  return {
    compile_ms: median(runs.map((r) => r.compile)),
    instantiate_ms: median(runs.map((r) => r.instantiate)),
    first_call_ms: median(runs.map((r) => r.first)),
    runs: RUNS,
  }
}

async function workerdColdStart() {
  const ROOT = '/virtual'
  const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'))
  const entry = pkg.exports['.'].workerd.replace(/^\.\//, '')
  const modules = [{ type: 'ESModule', path: `${ROOT}/pkg/entry.js`, contents: readFileSync(join(PKG, entry), 'utf8') }]
  for (const f of readdirSync(PKG)) {
    if (f === entry) continue
    if (f.endsWith('.wasm')) modules.push({ type: 'CompiledWasm', path: `${ROOT}/pkg/${f}`, contents: readFileSync(join(PKG, f)) })
    else if (f.endsWith('.js')) modules.push({ type: 'ESModule', path: `${ROOT}/pkg/${f}`, contents: readFileSync(join(PKG, f), 'utf8') })
  }
  const time = async (script, extra) => {
    const t0 = performance.now()
    const mf = new Miniflare({
      modules: [{ type: 'ESModule', path: `${ROOT}/w.mjs`, contents: script }, ...extra],
      modulesRoot: ROOT,
      compatibilityDate: '2025-09-01',
    })
    const body = await (await mf.dispatchFetch('http://localhost/')).text()
    const ms = performance.now() - t0
    await mf.dispose()
    return { ms, body }
  }
  const bareScript = 'export default { fetch() { return new Response("1000"); } };'
  const pkgScript =
    'import { RetryPolicy } from "./pkg/entry.js";\nexport default { fetch() { return new Response(String(new RetryPolicy({ jitter: false }).delay(1))); } };'
  let bare = Infinity
  let withPkg = Infinity
  for (let i = 0; i < RUNS; i++) {
    const b = await time(bareScript, [])
    const w = await time(pkgScript, modules)
    if (w.body !== '1000') throw new Error(`the worker answered ${w.body.slice(0, 500)}`)
    bare = Math.min(bare, b.ms)
    withPkg = Math.min(withPkg, w.ms)
  }
  return { first_response_ms: withPkg, bare_first_response_ms: bare, difference_ms: withPkg - bare, runs: RUNS }
}

const node = nodeColdStart()
process.stderr.write(`coldstart node: compile ${node.compile_ms.toFixed(1)} ms, instantiate ${node.instantiate_ms.toFixed(1)} ms, first call ${node.first_call_ms.toFixed(2)} ms\n`)
let workerd
try {
  workerd = await workerdColdStart()
  process.stderr.write(`coldstart workerd: first response ${workerd.first_response_ms.toFixed(0)} ms, ${workerd.bare_first_response_ms.toFixed(0)} ms without the package\n`)
} catch (e) {
  // Reported, not fatal: the table says why it is missing.
  workerd = { error: String((e && e.message) || e).split('\n')[0] }
  process.stderr.write(`coldstart workerd: ${workerd.error}\n`)
}
process.stdout.write(JSON.stringify({ suite: 'coldstart', node, workerd }, null, 2) + '\n')
