// One usage of ojs-retry/bullmq's declarations (bindings-node/bullmq.d.ts),
// type-checked by run.sh with `tsc -p tsconfig.json` (strict) against the
// package as installed next to the real bullmq. Never executed. The
// expected-error lines (ts-expect-error) prove the declarations reject what
// the API rejects.
import { Queue, Worker, type Job } from "bullmq"
import { RetryPolicy, type Decision } from "ojs-retry"
import {
  addJob,
  adoptionText,
  ATTEMPTS,
  BACKOFF_TYPE,
  createProcessor,
  createWorker,
  deadLetterKey,
  deadLetters,
  errorTypeOf,
  failureFromError,
  JobError,
  jobOptions,
  layerText,
  Processor,
  workerOptions,
  type DeadLetterRecord,
  type DecisionEvent,
  type OjsJobsOptions,
} from "ojs-retry/bullmq"

interface Order {
  id: number
}

const connection = { host: "127.0.0.1", port: 6379 }
const queue = new Queue<Order, string, "charge">("orders", { connection })
const defaults = { max_attempts: 5, non_retryable_errors: ["validation.*"], on_exhaustion: "dead_letter" as const }

async function producer(): Promise<void> {
  const job: Job<Order, string, "charge"> = await addJob(queue, "charge", { id: 1 }, { jobId: "o-1" }, {
    policy: { max_attempts: 3 },
    defaults,
  })
  const opts: OjsJobsOptions = jobOptions({ priority: 2 }, { policy: '{"initial_interval": "PT1S"}', defaults })
  const attempts: number = opts.attempts
  const type: "ojs-retry" = opts.backoff.type
  await addJob(queue, "charge", { id: 2 }, null, { policy: RetryPolicy.preset("bullmq", { attempts: 3 }), defaults: null })
  // @ts-expect-error a job's layer needs the workers' defaults (null for none)
  jobOptions({}, { policy: { max_attempts: 2 } })
  // @ts-expect-error the data must be an Order
  await addJob(queue, "charge", { id: "2" })
  // @ts-expect-error a policy layer is a document, its text or a RetryPolicy
  jobOptions({}, { policy: 3, defaults: null })
  // The one-line adoption: the preset document a plain job runs under (null: enqueued for the engine).
  const adopted: string | null = adoptionText({ attempts: 3, backoff: { type: "exponential", delay: 100, jitter: 0.5 } }, "node")
  // @ts-expect-error the runtime is "node" or "python"
  adoptionText({ attempts: 3 }, "deno")
  void job, attempts, type, adopted
}

async function handler(job: Job<Order, string, "charge">, token?: string, signal?: AbortSignal): Promise<string> {
  if (job.data.id < 0) throw new JobError("validation.bad_order", { message: "negative id", details: { id: job.data.id } })
  if (signal?.aborted) throw new JobError("payment.card_stolen", { code: "DEAD_LETTER" })
  // @ts-expect-error not a handler code
  new JobError("x", { code: "LATER" })
  return `charged ${job.data.id} (${token ?? "no token"})`
}

const events: DecisionEvent[] = []
const worker: Worker<Order, string, "charge"> = createWorker("orders", handler, { connection, concurrency: 4 }, {
  policy: defaults,
  listeners: [(e: DecisionEvent) => events.push(e)],
  timeoutMs: 30_000,
  jitterKey: (job) => `${job.name}:${job.id}`,
})

const processor: Processor<Order, string, "charge"> = createProcessor(handler, { policy: defaults })
const manual = new Worker<Order, string, "charge">("orders", processor.process, workerOptions(processor, { connection }))
const delay: number = processor.backoffStrategy(1, BACKOFF_TYPE, new Error("x"))
const direct = new Worker<Order, string, "charge">("orders", processor.process, {
  connection,
  maxStalledCount: ATTEMPTS,
  settings: { backoffStrategy: processor.backoffStrategy },
})
const carried: string = layerText({ max_attempts: 2 }, null)

async function inspect(): Promise<void> {
  const dead: DeadLetterRecord[] = await deadLetters(queue)
  for (const r of dead) {
    const why: Decision["reason"] = r.decision.reason
    const attempt: number = r.retry_state.attempt
    const errors: number = r.retry_state.errors.length
    void why, attempt, errors
  }
  const key: string = deadLetterKey("orders", "bull")
  const t: string = errorTypeOf(new TypeError("x"))
  const f = failureFromError(new Error("x"))
  const ft: string = f.type
  void key, t, ft, ATTEMPTS
}

void producer, inspect, worker, manual, direct, delay, carried
