// Worker processes (lib/worker-child.mjs) and the events they report.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CHILD = fileURLToPath(new URL('./worker-child.mjs', import.meta.url))

export class Fleet {
  constructor(config) {
    this.config = config
    this.children = new Map()
    this.events = []
    this.waiters = []
    this.exits = []
  }

  /** Starts one worker process; resolves once its worker is ready. */
  start() {
    const child = fork(CHILD, [JSON.stringify(this.config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    this.children.set(child.pid, child)
    child.on('message', (msg) => this.push(msg))
    child.on('exit', (code, signal) => {
      this.children.delete(child.pid)
      this.exits.push({ pid: child.pid, code, signal })
    })
    return this.until((e) => e.ev === 'ready' && e.pid === child.pid, 20000).then(() => child)
  }

  push(msg) {
    this.events.push(msg)
    for (const w of [...this.waiters]) {
      if (w.pred(msg)) {
        this.waiters.splice(this.waiters.indexOf(w), 1)
        clearTimeout(w.timer)
        w.resolve(msg)
      }
    }
  }

  /** The first event (past or future) for which `pred` holds. */
  until(pred, timeoutMs = 30000) {
    const seen = this.events.find(pred)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const w = { pred, resolve }
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1)
        reject(new Error(`no such event within ${timeoutMs} ms; events: ${JSON.stringify(this.events.slice(-20))}`))
      }, timeoutMs)
      this.waiters.push(w)
    })
  }

  /** Kills a worker process outright (SIGKILL): its job stalls. */
  kill(pid) {
    const child = this.children.get(pid)
    if (!child) return Promise.resolve()
    const gone = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    return gone
  }

  /** Closes every worker and waits for its process to exit. */
  async close() {
    const all = [...this.children.values()]
    await Promise.all(
      all.map((c) => {
        const gone = new Promise((r) => c.once('exit', r))
        if (c.connected) c.send('close')
        const t = setTimeout(() => c.kill('SIGKILL'), 5000)
        return gone.then(() => clearTimeout(t))
      }),
    )
  }

  /** The events of one job, in order. */
  of(jobId, ev) {
    return this.events.filter((e) => e.jobId === jobId && (ev === undefined || e.ev === ev))
  }
}

/** Whether a job's decision events end it (anything but a retry). */
export const isTerminal = (e) => (e.ev === 'decision' && e.action !== 'retry') || e.ev === 'succeeded'

/** BullMQ has put the job in its completed or failed set (no retry pending). */
export const isSettled = (e) => e.ev === 'bullmq-completed' || (e.ev === 'bullmq-failed' && e.delay === null)
