// Shared by lib/handles-gc.mjs and lib/handles-worker.mjs (no side effects:
// a worker imports it).
export const TEXT = '{"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4, "max_interval": "PT1H"}'
export const DOCS = [
  TEXT,
  '{"max_attempts": 5, "backoff_strategy": "linear", "jitter": false}',
  { max_attempts: 9, non_retryable_errors: ['auth.*'], on_exhaustion: 'dead_letter' },
]

/** Collects until this thread's table holds `target` entries (bounded). */
export async function collectUntil(api, target) {
  for (let i = 0; i < 200 && api.__livePolicies() > target; i++) {
    globalThis.gc()
    // FinalizationRegistry callbacks run from the event loop.
    await new Promise((r) => setTimeout(r, 1))
  }
  return api.__livePolicies()
}

/** What a policy answers (deterministic sources only). */
export function answers(p) {
  return [
    p.maxAttempts,
    p.delay(2, { seed: 1 }),
    p.delay(3, 0.25),
    ...p.delays([1, 2, 3, 4, 5], { seed: 9 }),
    p.decide({ attempt: 2, type: 'net.reset' }, { now: 5, jitter: { key: 'job-1' } }).delayMs,
  ]
}

