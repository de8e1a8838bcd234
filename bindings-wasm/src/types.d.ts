/** The systems `RetryPolicy.preset` reproduces. */
export type PresetSystem =
  | "sidekiq" | "faktory" | "celery" | "bullmq" | "temporal" | "oban" | "rq"
  | "dramatiq" | "aws" | "aws_jitter" | "ratchet" | "zzz_jobs" | "chasquimq";

/** A retry policy document (spec §2): every field optional, merged over the §8 defaults. */
export interface PolicyDocument {
  max_attempts?: number;
  initial_interval?: string;
  backoff_coefficient?: number;
  max_interval?: string;
  jitter?: boolean;
  non_retryable_errors?: string[];
  on_exhaustion?: "discard" | "dead_letter";
  backoff_strategy?: "none" | "constant" | "linear" | "exponential" | "polynomial";
}

/** A preset policy's document: the system's own options; the only layer when present. */
export interface PresetDocument {
  preset: { system: PresetSystem; [option: string]: unknown };
}

/** The canonical effective policy (`RetryPolicy#toJSON()`). */
export interface EffectivePolicy {
  max_attempts: number;
  initial_interval: string;
  backoff_coefficient: number;
  max_interval: string;
  jitter: boolean;
  non_retryable_errors: string[];
  on_exhaustion: "discard" | "dead_letter";
  /** Present only when not the default "exponential". */
  backoff_strategy?: "none" | "linear" | "polynomial";
}

/**
 * Where the jitter sample comes from (at most one key). None: fresh OS entropy.
 * - `u`: an explicit uniform sample in [0, 1)
 * - `seed`: the documented SplitMix64 stream (a u64: number ≤ 2^53 − 1, bigint, or decimal string)
 * - `key`: stateless deterministic jitter, e.g. from the job id
 */
export type Jitter = { u?: number; seed?: number | bigint | string; key?: string };

/** A jitter source and the instant of the failure (epoch ms; default `Date.now()`). */
export type DecideOptions = Jitter & { now?: number };

export type HandlerCode = "RETRY" | "DISCARD" | "DEAD_LETTER" | "FAIL";
export type Action = "retry" | "discard" | "dead_letter";
export type Reason = "handler_code" | "non_retryable" | "exhausted" | "retryable";

/** A failed attempt, as `decide` and `recordFailure` take it. */
export interface Failure {
  /** The attempt that failed, 1-based (optional in `recordFailure`: the next attempt). */
  attempt?: number;
  /** Dot-namespaced error type. */
  type?: string;
  code?: HandlerCode;
  /** The reservation's visibility timeout expired. */
  timedOut?: boolean;
  message?: string;
  details?: unknown;
}

export interface Decision {
  action: Action;
  reason: Reason;
  handlerCode: HandlerCode | null;
  matchedPattern: string | null;
  attempt: number;
  timedOut: boolean;
  retryNumber: number | null;
  delayMs: number | null;
  /** Epoch milliseconds. */
  nextRetryAt: number | null;
}

export interface ScheduleRow {
  retryNumber: number;
  attempt: number;
  rawMs: number;
  cappedMs: number;
  minMs: number;
  maxMs: number;
  /** The drawn delay; null when `schedule()` was called without a jitter source. */
  delayMs: number | null;
  cumulativeMs: number | null;
}

/** One entry of a job's error history. */
export interface ErrorRecord {
  attempt: number;
  type: string | null;
  message: string | null;
  code: HandlerCode | null;
  /** Epoch milliseconds. */
  timestampMs: number;
  details: unknown;
  timedOut: boolean;
}

/** The spec's §10 state document. */
export interface RetryStateDocument {
  attempt: number;
  errors: Array<{ [key: string]: unknown }>;
  next_retry_at: string | null;
  terminal: "discard" | "dead_letter" | null;
  [key: string]: unknown;
}

export interface Fault {
  /** The policy or argument field; null for the whole document. */
  field: string | null;
  /** Where inside the field (`non_retryable_errors[0]`); null for the whole document. */
  path: string | null;
  message: string;
}

/** Every error the engine throws. */
export interface OjsRetryError extends Error {
  /** e.g. "validation.retry_policy_invalid", "validation.invalid_argument" */
  code: string;
  field: string | null;
  path: string | null;
  /** Every fault, first one first. */
  faults: Fault[];
}

/** One retry round of a herd: the arrivals of retry `retryNumber`, in ms after the failure. */
export interface HerdRound {
  retryNumber: number;
  /** Jobs retried in this round (the sum of `counts`). */
  jobs: number;
  firstMs: number;
  lastMs: number;
  /** The first bucket's start: a multiple of the herd's `bucketMs`. */
  startMs: number;
  /** Arrivals per bucket of `bucketMs`, from `startMs` on. */
  counts: number[];
  /** The most arrivals of this round in any window [t, t + 1000 ms). */
  peakPerSecond: number;
}

/** `RetryPolicy#herd(jobs, retries, bucketMs)`: jobs keyed "1" … "jobs" failing at instant 0. */
export interface Herd {
  jobs: number;
  bucketMs: number;
  /** The most arrivals in any window [t, t + 1000 ms), all rounds together. */
  peakPerSecond: number;
  /** Where that window starts, in ms after the failure. */
  peakAtMs: number;
  rounds: HerdRound[];
}
