// A job's scripted handler outcomes (tests/queues/scenario.json's form):
// `outcomes[i - 1]` is what attempt i does — a failure {type, code?, message?}
// thrown as a JobError, {hang: true} (never returns: its worker is killed),
// {error: 'TypeError'} (an ordinary exception of that class) — and after the
// list the handler succeeds; `outcomes: "always"` plays `always` every time.
import { JobError } from 'ojs-retry/bullmq'

export function outcomeFor(script, attempt) {
  if (script.outcomes === 'always') return script.always
  return (script.outcomes || [])[attempt - 1] || null
}

export async function playOutcome(script, attempt) {
  const o = outcomeFor(script, attempt)
  if (o === null) return
  if (o.sleepMs) await new Promise((r) => setTimeout(r, o.sleepMs))
  if (o.hang) await new Promise(() => {})
  if (o.error) throw new globalThis[o.error](o.message || o.error)
  if (o.type) throw new JobError(o.type, { code: o.code, message: o.message, details: o.details })
}
