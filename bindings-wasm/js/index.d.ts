// The declarations of ojs-retry-wasm: the shared JS layer's (api.d.ts, which
// tsc emits from js/api.ts, the one source both packages ship).
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
} from "./api.js";
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
} from "./api.js";

/** Which implementation answers: this package is always WebAssembly. */
export declare const backend: "wasm";
