// The exports of the binding crate (bindings-wasm/src), the same in both
// builds: what the JS layer calls. Not a public API; tests/node/raw-types.ts
// checks the declarations napi-rs and wasm-bindgen generate against `Raw`.


/** An engine object's handle (an `External` natively, a wasm-bindgen object in wasm). */
export type Handle = object

/**
 * The exports of the binding crate, the same in both builds (what this
 * layer calls; not a public API). `Val` arguments are read by the engine
 * as they are; `ctx` is the readers of `host.js`; `out` lends numbers.
 */
export interface Raw {
  flavor(): string
  names(): string
  argumentError(field: string, message: string): string
  unreadableError(code: string, message: string): string
  checkLength(field: string, len: number): void
  matches(errorType: unknown, patterns: unknown, ctx: unknown): boolean
  firstMatch(errorType: unknown, patterns: unknown, ctx: unknown): string | null | undefined
  parseDuration(text: unknown, ctx: unknown): number
  formatDuration(ms: unknown, ctx: unknown): string
  parseTimestamp(text: unknown, ctx: unknown): number
  formatTimestamp(ms: unknown, ctx: unknown): string
  jitterSample(retryNumber: unknown, options: unknown, ctx: unknown): number
  policyNew(policy: unknown, ctx: unknown): Handle
  policyFromJson(text: unknown, ctx: unknown): Handle
  policyMerge(layers: unknown, ctx: unknown): Handle
  policyPreset(system: unknown, options: unknown, ctx: unknown): Handle
  policyProps(policy: Handle): string
  policyText(policy: Handle): string
  policyDelay(policy: Handle, n: number, u?: number, seed?: number, key?: string): number
  policyDelayWith(policy: Handle, n: unknown, options: unknown, ctx: unknown): number
  policyDelays(policy: Handle, slots: unknown, u?: number, seed?: number, key?: string): void
  policyDelaysWith(policy: Handle, slots: unknown, options: unknown, ctx: unknown): void
  policySchedule(policy: Handle, count: unknown, options: unknown, ctx: unknown): string
  policyDecide(
    policy: Handle, attempt: number, type: string | undefined, code: string | undefined,
    timedOut: boolean | undefined, message: string | undefined,
    u: number | undefined, seed: number | undefined, key: string | undefined, now: number, out: unknown,
  ): string | null | undefined
  policyDecideWith(policy: Handle, failure: unknown, options: unknown, now: number, ctx: unknown, out: unknown): string | null | undefined
  policyHerd(policy: Handle, jobs: unknown, retries: unknown, bucketMs: unknown, ctx: unknown): string
  policyNearestPlain(policy: Handle): Handle
  stateNew(options: unknown, ctx: unknown): Handle
  stateFromJson(state: unknown, options: unknown, ctx: unknown): Handle
  stateAttempt(state: Handle): number
  stateNextAttempt(state: Handle): number
  stateNextRetryAt(state: Handle): number | null | undefined
  stateTerminal(state: Handle): string | null | undefined
  stateHistoryLimit(state: Handle): number
  stateErrors(state: Handle): string
  stateText(state: Handle): string
  stateRecord(
    state: Handle, policy: Handle, attempt: number | undefined, type: string | undefined,
    code: string | undefined, timedOut: boolean | undefined, message: string | undefined,
    u: number | undefined, seed: number | undefined, key: string | undefined, now: number, out: unknown,
  ): string | null | undefined
  stateRecordWith(state: Handle, policy: Handle, failure: unknown, options: unknown, now: number, ctx: unknown, out: unknown): string | null | undefined
  reservationNew(attempt: unknown, visibilityTimeoutMs: unknown, now: unknown, ctx: unknown): Handle
  reservationProps(reservation: Handle, out: unknown): void
  reservationHeartbeat(reservation: Handle, now: unknown, ctx: unknown): number
  reservationIsExpired(reservation: Handle, now: unknown, ctx: unknown): boolean
  transactionRun(
    attempt: unknown, defaults: unknown, layer: unknown, state: unknown, details: unknown, ancestors: unknown, job: unknown,
    now: unknown, historyLimit: unknown, key: string, queue: string | undefined, type: string | undefined,
    code: string | undefined, timedOut: boolean | undefined, message: string | undefined,
    clock: number, ctx: unknown, out: unknown,
  ): string
  reservationExpiry(reservation: Handle, now: unknown, ctx: unknown): string | null | undefined
}
