// One usage of the JS surface, type-checked with `tsc --noEmit --strict`
// against BOTH generated declaration files: the native package's index.d.ts
// (napi-rs, tsconfig.native.json) and the wasm package's ojs_retry_wasm.d.ts
// (wasm-bindgen, tsconfig.wasm.json), each mapped to the module name
// "ojs-retry". Never executed. The @ts-expect-error lines prove both reject
// what the API rejects.
import {
  OjsRetryError as OjsRetryErrorClass,
  firstMatch,
  formatDuration,
  formatTimestamp,
  jitterSample,
  matches,
  parseDuration,
  parseTimestamp,
  presetSystems,
  Reservation,
  RetryPolicy,
  RetryState,
  runTransaction,
} from "ojs-retry";
import type {
  Note,
  Outcome,
  Action,
  DecideOptions,
  Decision,
  EffectivePolicy,
  ErrorRecord,
  Failure,
  Fault,
  HandlerCode,
  Jitter,
  OjsRetryError,
  PolicyDocument,
  PresetDocument,
  PresetSystem,
  Reason,
  RetryStateDocument,
  ScheduleRow,
} from "ojs-retry";

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
const p3: RetryPolicy = RetryPolicy.fromJSON('{"max_attempts": 2}');
const merged: RetryPolicy = RetryPolicy.merge([doc, '{"jitter": false}', {}]);
// @ts-expect-error: merge takes one array of layers
RetryPolicy.merge(doc, doc);

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
const systems: PresetSystem[] = presetSystems();
const sk: RetryPolicy = RetryPolicy.preset("sidekiq", { retry: 5, version: "7" });
const skSystem: PresetSystem | null = sk.presetSystem;
const skDoc = sk.toJSON();
const skBack: RetryPolicy = "preset" in skDoc ? new RetryPolicy(skDoc) : sk;
const skDelay: number = skBack.delay(1, { u: 0.5 });
const bull: PresetDocument = { preset: { system: "bullmq", attempts: 3, backoff: { type: "exponential", delay: 1000 } } };
const bullPolicy: RetryPolicy = new RetryPolicy(bull);
const effStrategy: "none" | "linear" | "polynomial" | undefined = eff?.backoff_strategy;
const text: string = p2.toString() + p3.toString();

const jitters: Jitter[] = [{ u: 0.5 }, { seed: 42 }, { seed: 2n ** 64n - 1n }, { seed: "42" }, { key: "job-1" }];
// @ts-expect-error: a key is a string
const badJitter: Jitter = { key: 42 };
const d1: number = p1.delay(1);
const d2: number = p1.delay(2, jitters[4]);
// @ts-expect-error: the jitter source is an object
p1.delay(3, 0.25);
const rows: ScheduleRow[] = p1.schedule(5, { key: "job-1" });
const row: ScheduleRow = rows[0];
const rowNums: number[] = [row.retryNumber, row.attempt, row.rawMs, row.cappedMs, row.minMs, row.maxMs];
const drawn: number | null = row.delayMs;
const cumulative: number | null = row.cumulativeMs;
const noJitterRows: ScheduleRow[] = p0.schedule(3);

// The batch call: a Float64Array filled in place and returned.
const batch1: Float64Array = p1.delays(Float64Array.of(1, 2, 3), { key: "job-1" });
const batch2: Float64Array = p1.delays(new Float64Array(8).fill(2));
// @ts-expect-error: retry numbers come in a Float64Array
p1.delays([1, 2, 3]);

const codes: HandlerCode[] = ["RETRY", "DISCARD", "DEAD_LETTER", "FAIL"];
const failure: Failure = { attempt: 2, type: "external.timeout", code: codes[0], timedOut: false, message: "m", details: { a: 1 } };
// Flat options: the jitter source and now side by side.
const opts: DecideOptions = { now: Date.now(), key: "job-1" };
const decision: Decision = p1.decide(failure, opts);
const decision2: Decision = p2.decide({ attempt: 1 }, { u: 0.5 });
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
// @ts-expect-error: not a handler code
const badFailure: Failure = { attempt: 1, code: "fail" };

const state = new RetryState();
const state2 = new RetryState({ historyLimit: 20 });
const sd1: Decision = state.recordFailure(merged, { type: "net.reset", message: "peer reset", code: "RETRY", details: { host: "a" } }, { now: 0, u: 0.5 });
const sd2: Decision = state2.recordFailure(merged, { timedOut: true });
const sd3: Decision = state2.recordFailure(merged);
const records: ErrorRecord[] = state.errors;
const rec: ErrorRecord = records[0];
const recFields: [number, string | null, string | null, HandlerCode | null, number, unknown] = [
  rec.attempt,
  rec.type,
  rec.message,
  rec.code,
  rec.timestampMs,
  rec.details,
];
const sdoc: RetryStateDocument = state.toJSON();
const nextAt: string | null = sdoc.next_retry_at;
const term: "discard" | "dead_letter" | null = sdoc.terminal;
const back1: RetryState = RetryState.fromJSON(sdoc);
const back2: RetryState = RetryState.fromJSON(state.toString(), { historyLimit: 10 });
const sa: number = back1.attempt + back1.nextAttempt;
const snra: number | null = back1.nextRetryAt;
const st: "discard" | "dead_letter" | null = back1.terminal;
const shl: number = back2.historyLimit;
// @ts-expect-error: the policy is a RetryPolicy
state.recordFailure({}, {});

const r1 = new Reservation(1, 30_000);
const r2 = new Reservation(2, 30_000, Date.now());
const ra: number = r1.attempt + r1.visibilityTimeoutMs + r1.deadline;
const hb = r1.heartbeat();
const hbDeadline: number | null = hb.extended ? hb.deadline : null;
const hb2: boolean = r2.heartbeat(Date.now()).extended;
const expired: boolean = r1.isExpired() || r2.isExpired(0);
const exp: Failure | null = r1.expiry() ?? r2.expiry(Date.now());
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
  const field: string | null = oe2.field;
  const path: string | null = oe2.path;
  const faults: Fault[] = oe2.faults;
  const fault: Fault = faults[0];
  const parts: [string | null, string | null, string, string] = [fault.field, fault.path, fault.message, oe2.message];
  const isError: Error = oe2;
}

// The error class is exported by both packages: `instanceof` narrows.
try {
  new RetryPolicy({ max_attempts: -1 });
} catch (e) {
  if (e instanceof OjsRetryErrorClass) {
    const c: string = e.code;
    const f: string | null = e.field;
    const all: Fault[] = e.faults;
    void [c, f, all];
  }
}
// herd and nearestPlain on both packages; free() releases early.
const herdPeak: number = new RetryPolicy().herd(100, 3, 1000).peakPerSecond;
const plain: RetryPolicy = RetryPolicy.preset("sidekiq", { retry: 5 }).nearestPlain();
plain.free();

// The failure transaction: the outcome's fields and the engine objects it makes.
const outcome: Outcome = runTransaction(2, { key: "job-1", defaults: [{ max_attempts: 5 }], state: null, type: "net.reset" });
const outAction: Action = outcome.action;
const outDelay: number | null = outcome.decision.delayMs;
const outState: RetryState = outcome.state;
const outText: string = outcome.stateJson;
const outNotes: string[] = outcome.notes.map((n: Note) => n.kind);
const outRecord: string | null = outcome.deadLetter;
const outPolicy: number = outcome.policy.maxAttempts;
// @ts-expect-error the job id is required
runTransaction(1, { type: "x" });
// @ts-expect-error the outcome is read-only
outcome.stateJson = "{}";

export {
  outAction, outDelay, outState, outText, outNotes, outRecord, outPolicy,
  herdPeak,
  systems, skSystem, skDelay, bullPolicy, badDoc, n, j, nre, oe, bs, effStrategy, text, badJitter, d1, d2,
  rowNums, drawn, cumulative, noJitterRows, batch1, batch2, decision2, action, reason, hc, mp, att, to, rn, dm,
  nra, badAction, badFailure, sd1, sd2, sd3, recFields, nextAt, term, sa, snra, st, shl, ra, hbDeadline, hb2,
  expired, m, fm, ms, iso, ts, epoch, bits,
};
