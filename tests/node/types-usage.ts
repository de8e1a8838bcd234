// Exercises every declaration of the `ojs-retry` package's index.d.ts (the
// shared ojs-retry.d.ts plus `backend` and `RetryPolicy#delays`). Checked
// with `tsc --noEmit --strict` (tests/node/tsconfig.json); never executed.
// The @ts-expect-error lines prove the types reject what the API rejects.
import {
  backend,
  firstMatch,
  formatDuration,
  formatTimestamp,
  jitterSample,
  matches,
  parseDuration,
  parseTimestamp,
  Reservation,
  RetryPolicy,
  RetryState,
} from "ojs-retry";
import type {
  Action,
  DecideOptions,
  Decision,
  EffectivePolicy,
  PresetDocument,
  PresetSystem,
  Fault,
  FailureInput,
  HandlerCode,
  HeartbeatResult,
  Jitter,
  JobErrorInput,
  OjsRetryError,
  PolicyDocument,
  Reason,
  RetryStateDocument,
  ScheduleRow,
} from "ojs-retry";

const which: "native" | "wasm" = backend;

const doc: PolicyDocument = {
  max_attempts: 5,
  initial_interval: "PT1S",
  backoff_coefficient: 2,
  max_interval: "PT5M",
  jitter: true,
  non_retryable_errors: ["validation.*"],
  on_exhaustion: "dead_letter",
  backoff_strategy: "polynomial",
};
// @ts-expect-error: not a strategy
const badDoc: PolicyDocument = { backoff_strategy: "fibonacci" };

const p0 = new RetryPolicy();
const p1 = new RetryPolicy(doc);
const p2 = new RetryPolicy('{"max_attempts": 2}');
const merged: RetryPolicy = RetryPolicy.merge(doc, '{"jitter": false}', {});

const n: number =
  p1.maxAttempts + p1.initialIntervalMs + p1.backoffCoefficient + p1.maxIntervalMs + p1.maxRetries;
const j: boolean = p1.jitter;
const nre: string[] = p1.nonRetryableErrors;
const oe: "discard" | "dead_letter" = p1.onExhaustion;
const bs: "none" | "linear" | "exponential" | "polynomial" = p1.backoffStrategy;
// @ts-expect-error: read-only
p1.maxAttempts = 3;

const doc1 = p1.toJSON();
const eff: EffectivePolicy | null = "preset" in doc1 ? null : doc1;
const sk: RetryPolicy = RetryPolicy.preset("sidekiq", { retry: 5, version: "7" });
const skSystem: PresetSystem | null = sk.presetSystem;
const skDoc = sk.toJSON();
const skBack: RetryPolicy = "preset" in skDoc ? new RetryPolicy(skDoc) : sk;
const skDelay: number = skBack.delay(1, { u: 0.5 });
const bull: PresetDocument = { preset: { system: "bullmq", attempts: 3, backoff: { type: "exponential", delay: 1000 } } };
const bullPolicy: RetryPolicy = new RetryPolicy(bull);
const effStrategy: "none" | "linear" | "polynomial" | undefined = eff?.backoff_strategy;
const text: string = p1.toString();

const jitters: Jitter[] = [{ u: 0.5 }, { seed: 42 }, { seed: 2n ** 64n - 1n }, { key: "job-1" }];
// @ts-expect-error: a key is a string
const badJitter: Jitter = { key: 42 };
const d1: number = p1.delay(1);
const d2: number = p1.delay(2, jitters[3]);
const d3: number = p1.delay(3, 0.25); // a plain number is `u`
const rows: ScheduleRow[] = p1.schedule(5, { key: "job-1" });
const row: ScheduleRow = rows[0];
const rowNums: number[] = [
  row.retryNumber,
  row.attempt,
  row.rawMs,
  row.cappedMs,
  row.minMs,
  row.maxMs,
  row.cumulativeMs,
];
const drawn: number | null = row.delayMs;
const noJitterRows: ScheduleRow[] = p0.schedule(3);

// The batch extension of this package.
const batch1: number[] = p1.delays([1, 2, 3], { key: "job-1" });
const batch2: number[] = p1.delays(Uint32Array.of(1, 2, 3));
const batch3: number[] = p1.delays(Float64Array.of(1, 2, 3), { seed: 7n });
// @ts-expect-error: retry numbers are numbers
p1.delays(["1"]);

const codes: HandlerCode[] = ["RETRY", "DISCARD", "DEAD_LETTER", "FAIL"];
const failure: FailureInput = { attempt: 2, type: "external.timeout", code: codes[0], timedOut: false };
const opts: DecideOptions = { now: Date.now(), jitter: { key: "job-1" } };
const decision: Decision = p1.decide(failure, opts);
const decision2: Decision = p2.decide({ attempt: 1 });
const action: Action = decision.action;
const reason: Reason = decision.reason;
const hc: HandlerCode | null = decision.handlerCode;
const mp: string | null = decision.matchedPattern;
const att: number = decision.attempt;
const to: boolean = decision.timedOut;
const rn: number | null = decision.retryNumber;
const dm: number | null = decision.delayMs;
const nra: number | null = decision.nextRetryAt;
// @ts-expect-error: not an action
const badAction: Action = "retry_later";

const state = new RetryState();
const state2 = new RetryState({ historyLimit: 20 });
const err: JobErrorInput = { type: "net.reset", message: "peer reset", code: "RETRY", details: { host: "a" } };
const sd1: Decision = state.recordFailure(merged, err, { now: 0, jitter: { u: 0.5 } });
const sd2: Decision = state2.recordTimeout(merged);
const sd3: Decision = state2.recordTimeout(merged, { now: 1 });
const sdoc: RetryStateDocument = state.toJSON();
const first = sdoc.errors[0];
const fields: [number, string, string, HandlerCode, string, unknown] = [
  first.attempt,
  first.type,
  first.message,
  first.code,
  first.timestamp,
  first.details,
];
const nextAt: string | null = sdoc.next_retry_at;
const term: "discard" | "dead_letter" | null = sdoc.terminal;
const back1: RetryState = RetryState.fromJSON(sdoc);
const back2: RetryState = RetryState.fromJSON(state.toString(), { historyLimit: 10 });
const sa: number = back1.attempt;
const snra: number | null = back1.nextRetryAt;
const st: "discard" | "dead_letter" | null = back1.terminal;
const shl: number = back2.historyLimit;

const r1 = new Reservation(1, 30_000);
const r2 = new Reservation(2, 30_000, Date.now());
const ra: number = r1.attempt + r1.visibilityTimeoutMs + r1.deadline;
const hb: HeartbeatResult = r1.heartbeat();
if (hb.extended) {
  const deadline: number = hb.deadline;
} else {
  // @ts-expect-error: no deadline when not extended
  hb.deadline;
}
const hb2: HeartbeatResult = r2.heartbeat(Date.now());
const expired: boolean = r1.isExpired() || r2.isExpired(0);
const exp: FailureInput | null = r1.expiry() ?? r2.expiry(Date.now());
if (exp) p1.decide(exp);

const m: boolean = matches("auth.forbidden", ["auth.*"]);
const fm: string | null = firstMatch("auth.forbidden", ["auth.*"]);
const ms: number = parseDuration("PT1.5S");
const iso: string = formatDuration(1500);
const ts: string = formatTimestamp(0);
const epoch: number = parseTimestamp("2026-02-12T10:31:05.250Z");
const bits: number = jitterSample(1, { seed: 1234567n });

try {
  new RetryPolicy({ max_attempts: -1 });
} catch (e) {
  const oe2 = e as OjsRetryError;
  const code: string = oe2.code;
  const field: string = oe2.field;
  const faults: Fault[] = oe2.faults;
  const fault: Fault = faults[0];
  const parts: [string, string, string] = [fault.field, fault.message, oe2.message];
  const isError: Error = oe2;
}

export {
  skSystem, skDelay, bullPolicy,
  which, badDoc, n, j, nre, oe, bs, effStrategy, text, badJitter, d1, d2, rowNums, drawn, noJitterRows,
  batch1, batch2, batch3, decision2, action, reason, hc, mp, att, to, rn, dm, nra, badAction, sd1, sd2, sd3,
  fields, nextAt, term, sa, snra, st, shl, ra, hb2, expired, m, fm, ms, iso, ts, epoch, bits,
};
