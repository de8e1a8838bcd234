// The declarations of ojs-retry: the shared JS layer's (api.d.ts of
// ojs-retry-wasm, which tsc emits from bindings-wasm/js/api.ts — the one
// declaration source both packages ship), and `backend`.
export {
  RetryPolicy,
  RetryState,
  Reservation,
  OjsRetryError,
  matches,
  firstMatch,
  parseDuration,
  formatDuration,
  parseTimestamp,
  formatTimestamp,
  jitterSample,
  presetSystems,
  runTransaction,
} from "ojs-retry-wasm/api";
export type {
  PresetSystem,
  PolicyDocument,
  PresetDocument,
  EffectivePolicy,
  Jitter,
  DecideOptions,
  StateOptions,
  HandlerCode,
  Action,
  Reason,
  Failure,
  Decision,
  TransactionOptions,
  Note,
  Outcome,
  ScheduleRow,
  ErrorRecord,
  RetryStateDocument,
  Fault,
  HerdRound,
  Herd,
  HeartbeatResult,
  ExpiredFailure,
} from "ojs-retry-wasm/api";

/** Which implementation loaded: the native addon, or the wasm fallback. */
export declare const backend: "native" | "wasm";
