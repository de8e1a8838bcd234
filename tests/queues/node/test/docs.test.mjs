// The blocks of the docs marked `<!-- run: tests/queues/node/test/docs.test.mjs -->`
// (found by tests/docs/fences.py: docs/integrations.md's BullMQ (Node)
// example) run as written, on the test Redis: pay-1 retried once then
// charged, pay-2 dead-lettered by its handler code.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { Queue } from 'bullmq'
import { connectionOf, redisUrl } from '../lib/redis.mjs'

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url))
const BLOCKS = JSON.parse(
  execFileSync('python3', [`${ROOT}tests/docs/fences.py`, 'tests/queues/node/test/docs.test.mjs'], { encoding: 'utf8' }),
)

function example() {
  assert.equal(BLOCKS.length, 1, 'the BullMQ (Node) example is the one block marked for this test')
  assert.equal(BLOCKS[0].heading, 'BullMQ (Node) (`ojs-retry/bullmq`)')
  return BLOCKS[0].code
}

test('the docs example runs', async () => {
  const queue = new Queue('payments', { connection: connectionOf(redisUrl()) })
  await queue.obliterate({ force: true })
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', example()], {
      cwd: new URL('..', import.meta.url),
      env: { ...process.env, REDIS_URL: redisUrl() },
      timeout: 30000,
    })
    const lines = stdout.trim().split('\n')
    assert.match(lines[0], /^pay-[12] 1 /)
    assert.ok(lines.some((l) => /^pay-1 1 retry \d+$/.test(l)), stdout)
    assert.ok(lines.includes('pay-2 1 dead_letter null'), stdout)
    assert.equal(lines.at(-1), "pay-2 handler_code [ 'payment.card_stolen' ]")
    assert.equal(await (await queue.getJob('pay-1')).getState(), 'completed')
  } finally {
    await queue.obliterate({ force: true })
    await queue.close()
  }
})
