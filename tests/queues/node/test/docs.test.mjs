// The BullMQ (Node) example of docs/integrations.md runs as written, on the
// test Redis: pay-1 retried once then charged, pay-2 dead-lettered by its
// handler code.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { Queue } from 'bullmq'
import { connectionOf, redisUrl } from '../lib/redis.mjs'

const DOC = new URL('../../../../docs/integrations.md', import.meta.url)

function example() {
  const text = readFileSync(DOC, 'utf8')
  const section = text.slice(text.indexOf('## BullMQ (Node)'))
  const m = section.match(/```js\n([\s\S]*?)```/)
  assert.ok(m, 'docs/integrations.md has a js example in its BullMQ (Node) section')
  return m[1]
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
