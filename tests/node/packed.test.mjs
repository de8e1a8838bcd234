// The packages a user installs: `npm pack` ojs-retry-wasm (bindings-wasm/pkg)
// and ojs-retry (bindings-node), install both tarballs into a fresh project
// outside the repo, and run the README's quick start there — with the
// native addon, and again with OJS_RETRY_FORCE_WASM=1 — plus a CommonJS and a
// TypeScript consumer.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const PKG = join(ROOT, 'bindings-node')

/** The README blocks marked `<!-- run: tests/node/packed.test.mjs -->`,
 * found by tests/docs/fences.py, each with the output block that follows it. */
function readmeBlocks() {
  const json = execFileSync('python3', [join(ROOT, 'tests', 'docs', 'fences.py'), 'tests/node/packed.test.mjs'], {
    encoding: 'utf8',
  })
  return JSON.parse(json)
}
const BLOCKS = readmeBlocks().filter((b) => b.lang === 'js')
const [INSTALL] = readmeBlocks().filter((b) => b.lang === 'sh')
assert.ok(BLOCKS.length >= 4, 'the README quick start, errors, presets and runTransaction blocks')
assert.ok(INSTALL, "the README's install line is marked for this test")

/** A block's file in the app: CommonJS when it `require`s, else an ES module. */
function fileOf(block) {
  return `block-${block.line}.${/\brequire\(/.test(block.code) ? 'cjs' : 'mjs'}`
}

/** The first block under "Quick start". */
function quickStart() {
  const block = BLOCKS.find((b) => b.heading === 'Quick start')
  assert.ok(block, 'the README has a run block under "## Quick start"')
  return block.code
}

let work
let tarballs

before(() => {
  work = mkdtempSync(join(tmpdir(), 'ojs-retry-user-'))
  const app = join(work, 'app')
  // The tarballs in the app's dist/, where the README's install line takes them from.
  tarballs = JSON.parse(
    execFileSync(process.execPath, [join(PKG, 'scripts', 'pack.mjs'), join(app, 'dist')], { encoding: 'utf8' }).trim(),
  )
  for (const t of [tarballs.wasm, tarballs.native]) {
    assert.ok(INSTALL.code.includes(`./dist/${basename(t)}`), `the README's install line names ${basename(t)}`)
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', INSTALL.code], {
    cwd: app,
    encoding: 'utf8',
    env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' },
  })
  assert.equal(r.status, 0, `the README's install line failed:\n${INSTALL.code}\n${r.stderr}`)
  writeFileSync(join(app, 'quickstart.mjs'), quickStart())
  for (const b of BLOCKS) writeFileSync(join(app, fileOf(b)), b.code)
  writeFileSync(
    join(app, 'consumer.cjs'),
    `const ojs = require('ojs-retry');
const p = new ojs.RetryPolicy({ max_attempts: 4 });
console.log(JSON.stringify({ backend: ojs.backend, delays: Array.from(p.delays(Float64Array.of(1, 2, 3), { key: 'job-1' })), esm: require.resolve('ojs-retry') }));
`,
  )
})

after(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

function inApp(args, env = {}) {
  const e = { ...process.env, ...env }
  if (!('OJS_RETRY_FORCE_WASM' in env)) delete e.OJS_RETRY_FORCE_WASM
  return spawnSync(process.execPath, args, { cwd: join(work, 'app'), env: e, encoding: 'utf8' })
}

test('the installed packages are outside the repo and complete', () => {
  const app = join(work, 'app')
  assert.ok(!app.startsWith(ROOT))
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'README.md', 'package.json']) {
    assert.ok(existsSync(join(app, 'node_modules', 'ojs-retry', f)), f)
  }
  const pkg = JSON.parse(readFileSync(join(app, 'node_modules', 'ojs-retry', 'package.json'), 'utf8'))
  assert.equal(pkg.dependencies['ojs-retry-wasm'], '0.1.0')
  // The wasm package is a real install, not a link back into the repo.
  const wasmPkg = JSON.parse(readFileSync(join(app, 'node_modules', 'ojs-retry-wasm', 'package.json'), 'utf8'))
  assert.equal(wasmPkg.name, 'ojs-retry-wasm')
  assert.equal(
    readFileSync(join(app, 'node_modules', 'ojs-retry', 'index.d.ts'), 'utf8'),
    readFileSync(join(PKG, 'index.d.ts'), 'utf8'),
    'the package ships the generated index.d.ts',
  )
})

let nativeOut
test('the README quick start runs with the native addon', () => {
  const r = inApp(['quickstart.mjs'])
  assert.equal(r.status, 0, r.stderr)
  nativeOut = r.stdout.trim()
  assert.match(nativeOut, /^native \[/)
})

test('the README quick start runs with OJS_RETRY_FORCE_WASM=1, same delays', () => {
  const r = inApp(['quickstart.mjs'], { OJS_RETRY_FORCE_WASM: '1' })
  assert.equal(r.status, 0, r.stderr)
  const out = r.stdout.trim()
  assert.match(out, /^wasm \[/)
  assert.ok(nativeOut, 'the native run came first')
  assert.equal(out.replace(/^wasm/, ''), nativeOut.replace(/^native/, ''))
})

for (const block of BLOCKS) {
  test(`README block ${block.path}:${block.line} runs in the app, with both backends`, () => {
    for (const force of ['0', '1']) {
      const r = inApp([fileOf(block)], force === '1' ? { OJS_RETRY_FORCE_WASM: '1' } : {})
      assert.equal(r.status, 0, `${block.path}:${block.line} failed:\n${r.stderr}`)
      if (block.output !== null) assert.equal(r.stdout, block.output, `${block.path}:${block.line} printed something else`)
    }
  })
}

test('a CommonJS consumer gets the same answers from both backends', () => {
  const a = inApp(['consumer.cjs'])
  const b = inApp(['consumer.cjs'], { OJS_RETRY_FORCE_WASM: '1' })
  assert.equal(a.status, 0, a.stderr)
  assert.equal(b.status, 0, b.stderr)
  const na = JSON.parse(a.stdout)
  const wb = JSON.parse(b.stdout)
  assert.equal(na.backend, 'native')
  assert.equal(wb.backend, 'wasm')
  assert.deepEqual(na.delays, wb.delays)
  assert.ok(na.esm.endsWith(join('node_modules', 'ojs-retry', 'index.js')))
})

test('a TypeScript consumer type-checks against the installed package', () => {
  const app = join(work, 'app')
  writeFileSync(
    join(app, 'check.ts'),
    `import { RetryPolicy, backend, type Decision } from 'ojs-retry';
const p = new RetryPolicy({ max_attempts: 3 });
const d: Decision = p.decide({ attempt: 1 }, { key: 'k' });
const ds: Float64Array = p.delays(Float64Array.of(1, 2));
const b: 'native' | 'wasm' = backend;
export { d, ds, b };
`,
  )
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        lib: ['es2022'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        types: [],
      },
      files: ['check.ts'],
    }),
  )
  const tsc = join(PKG, 'node_modules', 'typescript', 'bin', 'tsc')
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8' })
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`)
})
