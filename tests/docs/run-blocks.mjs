#!/usr/bin/env node
// Runs the JS blocks tests/docs/fences.py found for a runner, each as a
// module of its own in the current directory (a project with the packages
// installed), and checks what each prints against its output block.
//
//   python3 tests/docs/fences.py RUNNER > blocks.json
//   node tests/docs/run-blocks.mjs blocks.json [PACKAGE]   # PACKAGE: each block must import it
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

const [file, pkg] = process.argv.slice(2)
const blocks = JSON.parse(readFileSync(file, 'utf8'))
if (!blocks.some((b) => b.heading === 'Quick start')) throw new Error(`no quick start block in ${file}`)
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
