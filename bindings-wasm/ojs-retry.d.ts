// The public TypeScript surface shared by the npm packages `ojs-retry-wasm`
// and `ojs-retry` (native, falling back to wasm). One shape for both: the
// node package ships this same file. Hand-written, checked by `tsc` against
// tests/node/types-usage.ts.

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

/**
 * A preset policy's document (`RetryPolicy#toJSON()` of a preset): the
 * system's options with every default filled in. A document holding
 * `preset` holds nothing else and is the only layer.
 */
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
 * Where the jitter sample comes from. Omitted: fresh OS entropy.
 * - `{ u }`: an explicit uniform sample in [0, 1)
 * - `{ seed }`: the documented SplitMix64 stream (a u64: number ≤ 2^53−1 or bigint)
 * - `{ key }`: stateless deterministic jitter from e.g. the job id
 */
export type Jitter = { u: number } | { seed: number | bigint } | { key: string };

export type HandlerCode = "RETRY" | "DISCARD" | "DEAD_LETTER" | "FAIL";
export type Action = "retry" | "discard" | "dead_letter";
export type Reason = "handler_code" | "non_retryable" | "exhausted" | "retryable";

export interface FailureInput {
  /** The attempt that failed, 1-based. */
  attempt: number;
  /** Dot-namespaced error type. */
  type?: string;
  code?: HandlerCode;
  /** The reservation's visibility timeout expired (no handler code allowed). */
  timedOut?: boolean;
}

export interface DecideOptions {
  /** Epoch milliseconds; defaults to Date.now(). */
  now?: number;
  jitter?: Jitter;
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
  /** The smallest delay jitter can produce (inclusive). */
  minMs: number;
  /** The largest delay jitter can produce (inclusive, after the cap): 1.5 × cappedMs is never reached. */
  maxMs: number;
  /** The drawn delay; null when schedule() was called without a jitter source. */
  delayMs: number | null;
  cumulativeMs: number;
}

export interface Fault {
  field: string;
  message: string;
}

/** Every error the engine throws. */
export interface OjsRetryError extends Error {
  /** e.g. "validation.retry_policy_invalid", "validation.invalid_argument" */
  code: string;
  /** The first offending field ("" for the document itself). */
  field: string;
  /** Every fault, first one first. */
  faults: Fault[];
}

export declare class RetryPolicy {
  /** A partial document (object or JSON text) merged over the defaults; none gives the §8 default. */
  constructor(policy?: PolicyDocument | PresetDocument | string);
  /** Layers merged in order: defaults ← first ← … ← last, then validated. */
  static merge(...layers: Array<PolicyDocument | string>): RetryPolicy;
  /**
   * A preset: another system's own retry configuration (in that system's
   * vocabulary, e.g. `{ retry: 5 }` for Sidekiq), evaluated exactly as that
   * system does. Its `toJSON()` is `{ preset: { system, ...options } }`,
   * which `new RetryPolicy(doc)` accepts back. See docs/presets.md.
   */
  static preset(system: PresetSystem, config?: Record<string, unknown>): RetryPolicy;
  /** The preset's system name, or null for a plain OJS policy. */
  readonly presetSystem: PresetSystem | null;

  readonly maxAttempts: number;
  readonly initialIntervalMs: number;
  readonly backoffCoefficient: number;
  readonly maxIntervalMs: number;
  readonly jitter: boolean;
  readonly nonRetryableErrors: string[];
  readonly onExhaustion: "discard" | "dead_letter";
  readonly backoffStrategy: "none" | "linear" | "exponential" | "polynomial";
  /** max(maxAttempts, 1) − 1 */
  readonly maxRetries: number;

  /** The canonical effective policy as an object. */
  /** The canonical document: an effective OJS policy, or a preset's document. */
  toJSON(): EffectivePolicy | PresetDocument;
  /** The canonical effective policy as compact JSON text. */
  toString(): string;

  /**
   * The delay in ms before retry `retryNumber` (1-based); ignores maxAttempts.
   * `jitter` may also be a plain number `u` in [0, 1), the same as `{ u }`
   * (the fastest call).
   */
  delay(retryNumber: number, jitter?: Jitter | number): number;
  /** Retries 1..count. Without a jitter source, rows have delayMs null. */
  schedule(count: number, jitter?: Jitter): ScheduleRow[];
  /**
   * The delay in ms before each of `retryNumbers` (1-based), in one call (one
   * boundary crossing): `delays(ns, j)[i] === delay(ns[i], j)` for a
   * deterministic source. A bad entry throws `validation.invalid_argument`
   * with field `retry_numbers[i]`. Without a jitter source each entry draws
   * fresh OS entropy.
   */
  delays(retryNumbers: readonly number[] | Uint32Array | Float64Array, jitter?: Jitter): number[];
  /** Retry, discard or dead-letter after a failure. */
  decide(failure: FailureInput, options?: DecideOptions): Decision;
}

export interface JobErrorInput {
  type: string;
  message: string;
  code?: HandlerCode;
  details?: unknown;
}

/** The §10 state document (`RetryState#toJSON()`), snake_case like every document. */
export interface RetryStateDocument {
  attempt: number;
  errors: Array<{
    attempt: number;
    type: string;
    message: string;
    code: HandlerCode;
    timestamp: string;
    details?: unknown;
  }>;
  next_retry_at: string | null;
  terminal: "discard" | "dead_letter" | null;
}

export declare class RetryState {
  /** A fresh job at attempt 1; historyLimit ≥ 10 (default 10). */
  constructor(options?: { historyLimit?: number });
  static fromJSON(state: RetryStateDocument | string, options?: { historyLimit?: number }): RetryState;
  readonly attempt: number;
  /** Epoch ms, or null when not retrying. */
  readonly nextRetryAt: number | null;
  readonly terminal: "discard" | "dead_letter" | null;
  readonly historyLimit: number;
  recordFailure(policy: RetryPolicy, error: JobErrorInput, options?: DecideOptions): Decision;
  recordTimeout(policy: RetryPolicy, options?: DecideOptions): Decision;
  toJSON(): RetryStateDocument;
  toString(): string;
}

export type HeartbeatResult = { extended: true; deadline: number } | { extended: false };

export declare class Reservation {
  /** `now` defaults to Date.now(). */
  constructor(attempt: number, visibilityTimeoutMs: number, now?: number);
  readonly attempt: number;
  readonly visibilityTimeoutMs: number;
  /** Epoch ms. */
  readonly deadline: number;
  heartbeat(now?: number): HeartbeatResult;
  isExpired(now?: number): boolean;
  /** The failure to pass to decide() once expired, else null. */
  expiry(now?: number): FailureInput | null;
}

export declare function matches(errorType: string, patterns: string[]): boolean;
export declare function firstMatch(errorType: string, patterns: string[]): string | null;
export declare function parseDuration(text: string): number;
export declare function formatDuration(ms: number): string;
export declare function formatTimestamp(ms: number): string;
export declare function parseTimestamp(text: string): number;
/** The 53-bit sample k (u = k / 2^53) a jitter source gives for a retry. */
export declare function jitterSample(retryNumber: number, jitter: Jitter): number;
