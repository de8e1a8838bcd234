// The Redis the tests run on: REDIS_URL (run.sh sets it).
export function redisUrl() {
  const url = process.env.REDIS_URL
  if (!url) throw new Error('REDIS_URL is not set (run tests/queues/node/run.sh)')
  return url
}

/** BullMQ connection options for a redis:// URL. */
export function connectionOf(url) {
  const u = new URL(url)
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0
  return { host: u.hostname, port: Number(u.port || 6379), db, maxRetriesPerRequest: null }
}

let n = 0
/** A queue name no other test (or earlier run) uses. */
export function queueName(tag) {
  n += 1
  return `ojs-${tag}-${process.pid}-${Date.now().toString(36)}-${n}`
}

/** The raw Redis client of a BullMQ Queue (BullMQ 6: its Redis backend's). */
export function redisClient(queue) {
  const backend = typeof queue.getBackend === 'function' ? queue.getBackend() : null
  return backend && 'client' in backend ? backend.client : queue.client
}
