#!/usr/bin/env node
// Runs the blocks tests/docs/fences.py found for a runner in the current
// directory (a fresh project, with the packed tarballs in its dist/): first
// the README's install line (the one sh block, with bash), then each JS
// block as a module of its own, checking what it prints against its output
// block.
//
//   python3 tests/docs/fences.py RUNNER > blocks.json
//   node tests/docs/run-blocks.mjs blocks.json [PACKAGE]   # PACKAGE: each JS block must import it
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

const [file, pkg] = process.argv.slice(2)
const all = JSON.parse(readFileSync(file, 'utf8'))
const install = all.filter((b) => b.lang === 'sh')
const blocks = all.filter((b) => b.lang === 'js')
if (install.length !== 1) throw new Error(`${file}: one install block (sh) is marked for this runner, not ${install.length}`)
if (!blocks.some((b) => b.heading === 'Quick start')) throw new Error(`no quick start block in ${file}`)

execFileSync('bash', ['-euo', 'pipefail', '-c', install[0].code], {
  stdio: ['ignore', process.stderr, 'inherit'],
  env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_loglevel: 'error' },
})
console.error(`${install[0].path}:${install[0].line}: ran`)
for (const b of blocks) {
  const where = `${b.path}:${b.line}`
  if (pkg && !b.code.includes(`from "${pkg}"`) && !b.code.includes(`from '${pkg}'`)) {
    throw new Error(`${where} does not import ${pkg}`)
  }
  writeFileSync(`block-${b.line}.mjs`, b.code)
  const out = execFileSync(process.execPath, [`block-${b.line}.mjs`], { encoding: 'utf8' })
  process.stdout.write(out)
  if (b.output !== null && out !== b.output) {
    throw new Error(`${where} printed ${JSON.stringify(out)}; its output block shows ${JSON.stringify(b.output)}`)
  }
  console.error(`${where}: ran`)
}
