#!/usr/bin/env node
// The bullmq-node timeline of the cross-queue identity scenario (issue 17):
//
//   node tests/queues/node/timeline.mjs --redis URL --scenario FILE [--workers 2] [--out FILE]
//
// Prints the timeline document (format: tests/queues/scenario.json's
// consumers, see lib/timeline.mjs): per job and attempt the engine's action,
// reason and delay_ms, when the attempt started and when it failed. Runs
// install.sh first (npm ci from the committed lock, skipped when current),
// so it works before run.sh has run.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

async function main() {
  const { values } = parseArgs({
    options: {
      redis: { type: 'string' },
      scenario: { type: 'string' },
      workers: { type: 'string', default: '2' },
      out: { type: 'string' },
    },
  })
  if (!values.redis || !values.scenario) {
    console.error('usage: timeline.mjs --redis URL --scenario FILE [--workers N] [--out FILE]')
    process.exit(2)
  }
  execFileSync(new URL('./install.sh', import.meta.url).pathname, { stdio: ['ignore', 2, 2] })
  const { runTimeline } = await import('./lib/timeline.mjs')
  const scenario = JSON.parse(readFileSync(values.scenario, 'utf8'))
  const doc = await runTimeline({ redisUrl: values.redis, scenario, workers: Number(values.workers) })
  const text = JSON.stringify(doc, null, 2) + '\n'
  if (values.out) writeFileSync(values.out, text)
  else process.stdout.write(text)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
