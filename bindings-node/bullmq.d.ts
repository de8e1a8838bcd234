// ojs-retry/bullmq: BullMQ (Node) workers whose retries an OJS policy decides.
// `bullmq` (5.x or 6.x) is an optional peer dependency: install it to use this module.
import type { Job, JobsOptions, MinimalJob, Queue, Worker, WorkerOptions } from "bullmq"
import type {
  Decision,
  EffectivePolicy,
  Failure,
  HandlerCode,
  Note,
  PolicyDocument,
  PresetDocument,
  RetryPolicy,
  RetryStateDocument,
} from "./index"

/** A policy layer: a document, its JSON text, or a built policy. */
export type PolicyLayer = PolicyDocument | PresetDocument | string | RetryPolicy

/** The backoff type whose delays the engine decides: `"ojs-retry"`. */
export declare const BACKOFF_TYPE: "ojs-retry"
/** BullMQ's own `attempts` on every job: never the limit (`max_attempts` is). */
export declare const ATTEMPTS: number
/** The error type of an attempt lost to a stall: `"bullmq.stalled"`. */
export declare const STALLED_TYPE: "bullmq.stalled"
/** The error type of a run that overran `timeoutMs`: `"TimeoutError"`. */
export declare const TIMEOUT_TYPE: "TimeoutError"
/** The job option carrying the job's policy layer (JSON text). */
export declare const POLICY_KEY: "ojs_retry_policy"
/** The job-hash field carrying the job's §10 retry state (JSON text). */
export declare const STATE_KEY: "ojs_retry_state"
/** The job-hash field counting the stalls already counted as attempts. */
export declare const STALLS_KEY: "ojs_retry_stalls"

/** A handler failure with an OJS error type and an optional handler code. */
export declare class JobError extends Error {
  constructor(type: string, options?: { code?: HandlerCode; message?: string; details?: unknown })
  readonly name: "JobError"
  readonly type: string
  readonly code: HandlerCode | null
  readonly details: unknown
}

/** The error type of any thrown value (see the README's rule). */
export declare function errorTypeOf(err: unknown): string
/** Any thrown value as the engine's failure (without its attempt). */
export declare function failureFromError(err: unknown): Failure & { type: string; message: string }

/**
 * A policy layer as the JSON text a job carries; an object is read by the
 * engine first, over `defaults` (the workers' canonical policy text).
 */
export declare function layerText(layer: PolicyLayer, defaults?: string | null): string

/**
 * What `policy` / `defaults` mean at enqueue time: a job's own layer is
 * validated against the workers' defaults, so it needs them (`null` when the
 * workers have none) — the helper refuses to guess.
 */
export type EnqueuePolicy =
  | { policy?: null; defaults?: PolicyLayer | null }
  | {
      /** The job's own layer, carried in its options. */
      policy: PolicyLayer
      /** The workers' defaults the layer is merged over (validated together). */
      defaults: PolicyLayer | null
    }

/** Job options as `jobOptions` returns them. */
export type OjsJobsOptions = JobsOptions & {
  attempts: number
  backoff: { type: "ojs-retry" }
  ojs_retry_policy?: string
}

/**
 * Job options carrying the job's policy layer, validated now (RET-16): throws
 * the engine's typed error (`OjsRetryError`) before anything reaches Redis.
 */
export declare function jobOptions(opts?: JobsOptions | null, policy?: EnqueuePolicy): OjsJobsOptions
/** `queue.add(name, data, jobOptions(opts, policy))`. */
export declare function addJob<D = any, R = any, N extends string = string>(
  queue: Queue<D, R, N>,
  name: N,
  data: D,
  opts?: JobsOptions | null,
  policy?: EnqueuePolicy,
): Promise<Job<D, R, N>>

/** The Redis list holding a queue's dead-lettered jobs: `<prefix>:<queue>:dead`. */
export declare function deadLetterKey(queueName: string, prefix?: string): string

/**
 * The one-line adoption: the `bullmq` preset document (JSON text) of a job's
 * own `attempts` / `backoff`, which decides a job with no OJS policy
 * anywhere; null for a job enqueued for the engine (backoff type
 * "ojs-retry"), which keeps the spec's default policy.
 *
 * @example
 * adoptionText({ attempts: 3, backoff: { type: 'fixed', delay: 500 } }, 'node')
 * // '{"preset":{"system":"bullmq","runtime":"node","attempts":3,"backoff":{"type":"fixed","delay":500}}}'
 */
export declare function adoptionText(opts: JobsOptions | null | undefined, runtime: 'node' | 'python'): string | null
/** A dead-lettered job's record: its §10 state, why, the policy, the job. */
export interface DeadLetterRecord {
  queue: string
  job_id: string
  /** Epoch ms. */
  dead_lettered_at: number
  /** Why: the decision's reason. */
  reason: Decision["reason"]
  retry_state: RetryStateDocument
  decision: {
    action: Decision["action"]
    reason: Decision["reason"]
    handler_code: HandlerCode | null
    matched_pattern: string | null
    attempt: number
    timed_out: boolean
    retry_number: number | null
    delay_ms: number | null
    next_retry_at: number | null
  }
  policy: EffectivePolicy | PresetDocument
  /** What the engine changed or could not use (a truncated message, a refused layer, ...). */
  notes: Note[]
  job: { name: string; data: unknown; opts: JobsOptions } | null
}

/** The dead-letter records of a queue (a Queue or a Worker), oldest first. */
export declare function deadLetters(queue: Queue | Worker): Promise<DeadLetterRecord[]>

/** One decision a processor carried out. */
export interface DecisionEvent {
  queue: string
  jobId: string
  attempt: number
  failure: Failure & { attempt: number }
  decision: Decision
  /** What the engine changed or could not use for this failure. */
  notes: Note[]
  /** The instant the engine decided at, epoch ms. */
  atMs: number
}
export type Listener = (event: DecisionEvent) => void

/** The job handler a processor runs. */
export type Handler<D = any, R = any, N extends string = string> = (
  job: Job<D, R, N>,
  token?: string,
  signal?: AbortSignal,
) => Promise<R>

export interface ProcessorOptions<D = any, R = any, N extends string = string> {
  /**
   * The queue's default policy layer (each job's own layer goes over it).
   * None: a job without a layer of its own keeps its BullMQ `attempts` /
   * `backoff`, read through the `bullmq` preset (the one-line adoption).
   */
  policy?: PolicyLayer | null
  /** Called with every decision carried out. */
  listeners?: Listener[]
  /** Bounds each run: an overrun is a timed-out failure (`TimeoutError`). */
  timeoutMs?: number
  /** The jitter key of a job: its id unless given. */
  jitterKey?: (job: Job<D, R, N>) => string
}

/** The worker's processor: runs the handler and decides its failures. */
export declare class Processor<D = any, R = any, N extends string = string> {
  constructor(handler: Handler<D, R, N>, options?: ProcessorOptions<D, R, N>)
  /** The function to give `new Worker(name, processor.process, ...)`. */
  readonly process: (job: Job<D, R, N>, token?: string, signal?: AbortSignal) => Promise<R>
  /** `settings.backoffStrategy` for the backoff type `"ojs-retry"`. */
  readonly backoffStrategy: (attemptsMade: number, type?: string, err?: Error, job?: MinimalJob) => number
}

/** A processor for `handler`. */
export declare function createProcessor<D = any, R = any, N extends string = string>(
  handler: Handler<D, R, N>,
  options?: ProcessorOptions<D, R, N>,
): Processor<D, R, N>

/**
 * Worker options running `processor`: `settings.backoffStrategy`, and a
 * `maxStalledCount` BullMQ never reaches unless given.
 */
export declare function workerOptions<O extends WorkerOptions>(processor: Processor<any, any, any>, opts: O): O

/** A `Worker` running `handler` under a `Processor` with `workerOptions`. */
export declare function createWorker<D = any, R = any, N extends string = string>(
  name: string,
  handler: Handler<D, R, N>,
  opts: WorkerOptions,
  options?: ProcessorOptions<D, R, N>,
): Worker<D, R, N>
