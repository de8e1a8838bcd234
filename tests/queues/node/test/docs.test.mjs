// The blocks of the docs marked `<!-- run: tests/queues/node/test/docs.test.mjs -->`
// (found by tests/docs/fences.py) run as written on the test Redis, only its
// address replaced: docs/integrations.md's BullMQ (Node) one-line adoption
// (a plain queue.add's own exponential backoff, retried twice by a worker
// given no policy) and example to their end (pay-1 retried once then
// charged, pay-2 dead-lettered by its handler code), and the package README's worker, which runs until stopped: stopped
// by pid once the job it added was charged.
import assert from 'node:assert/strict'
import { execFile, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { Queue } from 'bullmq'
import { connectionOf, redisUrl } from '../lib/redis.mjs'

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url))
const BLOCKS = JSON.parse(
  execFileSync('python3', [`${ROOT}tests/docs/fences.py`, 'tests/queues/node/test/docs.test.mjs'], { encoding: 'utf8' }),
)

/** docs/integrations.md's BullMQ (Node) blocks, in order: the one-line adoption, then the example. */
function section() {
  const found = BLOCKS.filter((b) => b.path === 'docs/integrations.md')
  assert.equal(found.length, 2, "docs/integrations.md's BullMQ (Node) adoption and example are marked for this test")
  for (const b of found) assert.equal(b.heading, 'BullMQ (Node) (`ojs-retry/bullmq`)')
  return found.map((b) => b.code)
}
const example = () => section()[1]

/** Runs a block as an ES module on the test Redis; its stdout. */
async function runBlock(code) {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
    cwd: new URL('..', import.meta.url),
    env: { ...process.env, REDIS_URL: redisUrl() },
    timeout: 30000,
  })
  return stdout
}

test('the one-line adoption runs: the job keeps its own attempts and exponential backoff', async () => {
  const queue = new Queue('emails', { connection: connectionOf(redisUrl()) })
  await queue.obliterate({ force: true })
  try {
    const stdout = await runBlock(section()[0])
    // What the block's comment says it prints: BullMQ's own delays for attempts: 3, exponential 100.
    assert.deepEqual(stdout.trim().split('\n'), ['mail-1 1 100', 'mail-1 2 200'])
    const job = await queue.getJob('mail-1')
    assert.deepEqual([await job.getState(), job.attemptsMade], ['completed', 3])
  } finally {
    await queue.obliterate({ force: true })
    await queue.close()
  }
})

/** The blocks that start a worker and never end: each package README's. */
const WORKERS = BLOCKS.filter((b) => b.path !== 'docs/integrations.md')

test('the docs example runs', async () => {
  const queue = new Queue('payments', { connection: connectionOf(redisUrl()) })
  await queue.obliterate({ force: true })
  try {
    const stdout = await runBlock(example())
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

test('the package README has its worker block marked for this test', () => {
  assert.deepEqual(WORKERS.map((b) => b.path), ['bindings-node/README.md'])
})

for (const block of WORKERS) {
  test(`${block.path}:${block.line}: the worker charges the job it added`, async () => {
    const { host, port } = connectionOf(redisUrl())
    const address = "host: '127.0.0.1', port: 6379"
    assert.ok(block.code.includes(address), `${block.path}:${block.line} connects to ${address}`)
    const code = block.code.replace(address, `host: '${host}', port: ${port}`)
    const queue = new Queue('payments', { connection: connectionOf(redisUrl()) })
    await queue.obliterate({ force: true })
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd: new URL('..', import.meta.url),
      stdio: ['ignore', 'inherit', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    let exited = false
    child.on('exit', () => (exited = true))
    try {
      const deadline = Date.now() + 60_000
      while ((await queue.getCompletedCount()) === 0) {
        assert.ok(!exited, `the worker block exited before charging its job:\n${stderr}`)
        assert.ok(Date.now() < deadline, `no job charged after 60 s:\n${stderr}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const [job] = await queue.getCompleted()
      assert.equal(job.returnvalue, 'charged')
      assert.equal(job.name, 'charge')
      assert.ok(!exited, 'a worker runs until it is stopped')
    } finally {
      if (!exited) {
        child.kill('SIGTERM')
        await once(child, 'exit')
      }
      await queue.obliterate({ force: true })
      await queue.close()
    }
  })
}
