// The work every thread of tests/node/workers.test.mjs does: for each
// policy (canonical JSON) and job id, every decision up to exhaustion with
// keyed jitter, the whole RetryState run, a batch of seeded delays and a
// schedule. Returns { "<policy index>/<job>": JSON text }.
export const NOW = 1_770_892_265_000

export function workload(api, policies, jobs) {
  const out = {}
  policies.forEach((text, i) => {
    const policy = new api.RetryPolicy(text)
    for (const job of jobs) {
      const decisions = []
      for (let attempt = 1; attempt <= policy.maxAttempts + 1; attempt++) {
        decisions.push(policy.decide({ attempt, type: 'net.reset' }, { now: NOW + attempt, key: job }))
      }
      const state = new api.RetryState()
      const steps = []
      while (state.terminal === null && steps.length < 100) {
        steps.push(
          state.recordFailure(policy, { type: 'net.reset', message: job }, { now: NOW, key: job }),
        )
      }
      const seed = BigInt(job.length) * 1_000_003n
      out[`${i}/${job}`] = JSON.stringify({
        decisions,
        steps,
        state: state.toString(),
        delays: Array.from(policy.delays(Float64Array.of(1, 2, 3, 4, 5, 6, 7, 8), { seed })),
        schedule: policy.schedule(8, { key: job }),
      })
    }
  })
  return out
}
