#!/usr/bin/env node
// Packs the two npm packages a user installs, into <out-dir>:
//   ojs-retry-wasm  from bindings-wasm/pkg (built by scripts/build-wasm)
//   ojs-retry       from bindings-node, staged so that its dependency on
//                   ojs-retry-wasm is the wasm package's version (the repo's
//                   package.json points at ../bindings-wasm/pkg for
//                   development).
// Prints {"native": "<tgz>", "wasm": "<tgz>"} on stdout.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const ROOT = resolve(PKG, '..')
const WASM_PKG = join(ROOT, 'bindings-wasm', 'pkg')
const out = resolve(process.argv[2] ?? join(PKG, 'dist'))

function fail(msg) {
  console.error(`pack: ${msg}`)
  process.exit(1)
}

function npmPack(dir) {
  const json = execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [info] = JSON.parse(json)
  return join(out, info.filename)
}

mkdirSync(out, { recursive: true })
if (!existsSync(join(WASM_PKG, 'package.json'))) fail(`${WASM_PKG} is missing: run scripts/build-wasm`)
const wasmVersion = JSON.parse(readFileSync(join(WASM_PKG, 'package.json'), 'utf8')).version

const binaries = readdirSync(PKG).filter((f) => /^ojs-retry\..+\.node$/.test(f))
if (binaries.length === 0) fail(`no native binary (ojs-retry.<platform>.node) in ${PKG}: run npm run build there`)

const stage = mkdtempSync(join(tmpdir(), 'ojs-retry-pack-'))
try {
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'bullmq.js', 'bullmq-core.js', 'bullmq.mjs', 'bullmq.d.ts', 'README.md', ...binaries]) {
    copyFileSync(join(PKG, f), join(stage, f))
  }
  const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'))
  pkg.dependencies = { ...pkg.dependencies, 'ojs-retry-wasm': wasmVersion }
  delete pkg.devDependencies
  delete pkg.scripts
  writeFileSync(join(stage, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')
  const wasm = npmPack(WASM_PKG)
  const native = npmPack(stage)
  console.log(JSON.stringify({ native, wasm }))
} finally {
  rmSync(stage, { recursive: true, force: true })
}
