// API tests for ojs-retry-wasm beyond the vectors: error shape, defaults
// (clock, entropy), argument checking at the boundary, and that the wasm
// instance keeps answering after every bad call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import {
  RetryPolicy,
  RetryState,
  Reservation,
  matches,
  firstMatch,
  parseDuration,
  formatDuration,
  formatTimestamp,
  parseTimestamp,
  jitterSample,
} from "ojs-retry-wasm";

const NOW = 1_770_892_265_000; // 2026-02-12T10:31:05Z

function assertOjsError(fn, code, field, faultFields) {
  let caught;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof Error, `expected an Error, got ${caught}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.field, field, caught.message);
  assert.ok(Array.isArray(caught.faults) && caught.faults.length > 0);
  assert.equal(caught.faults[0].field, field);
  for (const f of caught.faults) {
    assert.equal(typeof f.message, "string");
    assert.ok(f.message.length > 0);
  }
  if (faultFields) assert.deepEqual(caught.faults.map((f) => f.field), faultFields);
  assert.ok(caught.message.startsWith(code), caught.message);
  return caught;
}

test("a policy error carries code, field and every fault", () => {
  const e = assertOjsError(
    () => new RetryPolicy({ max_attempts: -1, jitter: "yes" }),
    "validation.retry_policy_invalid",
    "max_attempts",
    ["max_attempts", "jitter"],
  );
  assert.match(e.faults[1].message, /"yes"/);
  // JSON text reports the same faults.
  assertOjsError(
    () => new RetryPolicy('{"max_attempts": -1, "jitter": "yes"}'),
    "validation.retry_policy_invalid",
    "max_attempts",
    ["max_attempts", "jitter"],
  );
  // Validation applies to the effective policy (default max_interval PT5M).
  assertOjsError(() => new RetryPolicy({ initial_interval: "PT10M" }), "validation.retry_policy_invalid", "max_interval");
  // null is a document that is not an object, not "the defaults".
  assertOjsError(() => new RetryPolicy(null), "validation.retry_policy_invalid", "");
});

test("policies: objects, JSON text, variadic merge, getters, toJSON", () => {
  const p = RetryPolicy.merge(
    { max_attempts: 5, non_retryable_errors: ["validation.*"] },
    '{"initial_interval": "PT30S", "on_exhaustion": "dead_letter"}',
  );
  assert.equal(p.maxAttempts, 5);
  assert.equal(p.maxRetries, 4);
  assert.equal(p.initialIntervalMs, 30_000);
  assert.equal(p.maxIntervalMs, 300_000);
  assert.equal(p.backoffCoefficient, 2);
  assert.equal(p.jitter, true);
  assert.deepEqual(p.nonRetryableErrors, ["validation.*"]);
  assert.equal(p.onExhaustion, "dead_letter");
  assert.equal(p.backoffStrategy, "exponential");
  const doc = p.toJSON();
  assert.equal(Object.getPrototypeOf(doc), Object.prototype);
  assert.deepEqual(doc, {
    max_attempts: 5,
    initial_interval: "PT30S",
    backoff_coefficient: 2,
    max_interval: "PT5M",
    jitter: true,
    non_retryable_errors: ["validation.*"],
    on_exhaustion: "dead_letter",
  });
  assert.equal(
    p.toString(),
    '{"max_attempts":5,"initial_interval":"PT30S","backoff_coefficient":2.0,"max_interval":"PT5M","jitter":true,"non_retryable_errors":["validation.*"],"on_exhaustion":"dead_letter"}',
  );
  assert.deepEqual(JSON.parse(JSON.stringify(p)), doc);
  // Round trip through the canonical text.
  assert.equal(new RetryPolicy(p.toString()).toString(), p.toString());
  assert.equal(new RetryPolicy().maxAttempts, 3);
  assert.equal(RetryPolicy.merge().toString(), new RetryPolicy().toString());
  // undefined values are omitted, as JSON.stringify would.
  assert.equal(new RetryPolicy({ max_attempts: undefined }).maxAttempts, 3);
});

test("decisions and schedule rows are plain objects with camelCase keys", () => {
  const p = new RetryPolicy({ max_attempts: 5, non_retryable_errors: ["validation.*"] });
  const d = p.decide({ attempt: 2, type: "external.timeout" }, { now: NOW, jitter: { key: "job-8f3a" } });
  assert.equal(Object.getPrototypeOf(d), Object.prototype);
  assert.deepEqual(Object.keys(d), [
    "action", "reason", "handlerCode", "matchedPattern", "attempt", "timedOut", "retryNumber", "delayMs", "nextRetryAt",
  ]);
  assert.equal(d.action, "retry");
  assert.ok(d.delayMs >= 1000 && d.delayMs < 3000, `delay ${d.delayMs}`);
  assert.equal(d.nextRetryAt, NOW + d.delayMs);
  // Keyed jitter is deterministic.
  assert.deepEqual(p.decide({ attempt: 2, type: "external.timeout" }, { now: NOW, jitter: { key: "job-8f3a" } }), d);
  const rows = p.schedule(3);
  assert.equal(rows.length, 3);
  assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
  assert.equal(rows[0].delayMs, null);
  assert.deepEqual(Object.keys(rows[0]), [
    "retryNumber", "attempt", "rawMs", "cappedMs", "minMs", "maxMs", "delayMs", "cumulativeMs",
  ]);
  const nr = p.decide({ attempt: 1, type: "validation.email" }, { now: NOW });
  assert.equal(nr.reason, "non_retryable");
  assert.equal(nr.matchedPattern, "validation.*");
  assert.equal(nr.delayMs, null);
});

test("now defaults to Date.now()", () => {
  const p = new RetryPolicy({ jitter: false });
  const before = Date.now();
  const d = p.decide({ attempt: 1 });
  const after = Date.now();
  assert.equal(d.delayMs, 1000);
  assert.ok(d.nextRetryAt >= before + 1000 && d.nextRetryAt <= after + 1000, `${d.nextRetryAt} not in [${before}, ${after}] + 1000`);
  const b2 = Date.now();
  const r = new Reservation(1, 30_000);
  const a2 = Date.now();
  assert.ok(r.deadline >= b2 + 30_000 && r.deadline <= a2 + 30_000);
  assert.equal(r.isExpired(), false);
  const s = new RetryState();
  const b3 = Date.now();
  s.recordFailure(p, { type: "a.b", message: "m" });
  const a3 = Date.now();
  const ts = parseTimestamp(s.toJSON().errors[0].timestamp);
  assert.ok(ts >= b3 && ts <= a3);
});

test("an omitted jitter source draws OS entropy: varied, within the jitter range", () => {
  const p = new RetryPolicy(); // retry 3: capped 4000 ms, jitter range [2000, 5999]
  const [, , row] = p.schedule(3);
  const seen = new Set();
  for (let i = 0; i < 300; i++) {
    const d = p.delay(3);
    assert.ok(Number.isInteger(d) && d >= row.minMs && d <= row.maxMs, `delay ${d} outside [${row.minMs}, ${row.maxMs}]`);
    seen.add(d);
  }
  // 300 draws from 4000 values: a constant or badly seeded source shows up.
  assert.ok(seen.size > 200, `only ${seen.size} distinct delays in 300 draws`);
  const decisions = new Set();
  for (let i = 0; i < 50; i++) {
    const d = p.decide({ attempt: 2 }, { now: NOW }); // retry 2: range [1000, 2999]
    assert.equal(d.action, "retry");
    assert.ok(d.delayMs >= 1000 && d.delayMs <= 2999, `delay ${d.delayMs}`);
    decisions.add(d.delayMs);
  }
  assert.ok(decisions.size > 30, `only ${decisions.size} distinct decision delays in 50`);
  const rows = p.schedule(2, undefined);
  assert.equal(rows[1].delayMs, null);
});

test("seeds: number and BigInt agree; out-of-range seeds are errors", () => {
  const p = new RetryPolicy();
  assert.equal(p.delay(4, { seed: 42 }), p.delay(4, { seed: 42n }));
  assert.equal(jitterSample(1, { seed: 2n ** 64n - 1n }), jitterSample(1, { seed: 18446744073709551615n }));
  assertOjsError(() => p.delay(1, { seed: 2n ** 64n }), "validation.invalid_argument", "seed");
  assertOjsError(() => p.delay(1, { seed: -1n }), "validation.invalid_argument", "seed");
  assertOjsError(() => p.delay(1, { seed: -1 }), "validation.invalid_argument", "seed");
  assertOjsError(() => p.delay(1, { seed: 1.5 }), "validation.invalid_argument", "seed");
  assertOjsError(() => p.delay(1, { seed: 2 ** 53 }), "validation.invalid_argument", "seed");
  assertOjsError(() => p.delay(1, { seed: "42" }), "validation.invalid_argument", "seed");
  assertOjsError(() => p.delay(1, { u: 1 }), "validation.invalid_argument", "u");
  assertOjsError(() => p.delay(1, { u: NaN }), "validation.invalid_argument", "u");
  assertOjsError(() => p.delay(1, { u: "0.5" }), "validation.invalid_argument", "u");
  assertOjsError(() => p.delay(1, { key: 7 }), "validation.invalid_argument", "key");
  assertOjsError(() => p.delay(1, { u: 0.5, key: "a" }), "validation.invalid_argument", "jitter");
  assertOjsError(() => p.delay(1, {}), "validation.invalid_argument", "jitter");
  assertOjsError(() => p.delay(1, "u"), "validation.invalid_argument", "jitter");
});

test("delay(n, { u }) and delay(n, { seed }) take a shortcut in api.js with the full path's answers and errors", () => {
  const ARG = "validation.invalid_argument";
  const p = new RetryPolicy({ initial_interval: "PT3S", backoff_coefficient: 3 });
  // A null-prototype object is a valid jitter that the shortcut leaves to
  // the full path: the reference for every answer below.
  const viaFull = (j) => Object.assign(Object.create(null), j);
  for (const n of [1, 2, 7, 25]) {
    for (const j of [{ u: 0 }, { u: 0.25 }, { u: 0.999 }, { seed: 0 }, { seed: 42 }, { seed: 2 ** 53 - 1 }]) {
      assert.equal(p.delay(n, j), p.delay(n, viaFull(j)), `${n} ${JSON.stringify(j)}`);
    }
  }
  assert.equal(p.delay(3, { seed: 42 }), p.delay(3, { seed: 42n }));
  // Shapes the full path refuses must not slip through the shortcut.
  assertOjsError(() => p.delay(1, { u: 0.5, extra: 1 }), ARG, "extra");
  assertOjsError(() => p.delay(1, { seed: 1, u: 0.5 }), ARG, "jitter");
  assertOjsError(() => p.delay(1, Object.create({ u: 0.5 })), ARG, "jitter");
  class Jitter {
    constructor() {
      this.u = 0.5;
    }
  }
  assertOjsError(() => p.delay(1, new Jitter()), ARG, "jitter");
  assertOjsError(() => p.delay(1, [0.5]), ARG, "jitter");
  assertOjsError(() => p.delay(0, { u: 0.5 }), ARG, "retry_number");
  assertOjsError(() => p.delay(1.5, { seed: 3 }), ARG, "retry_number");
  assertOjsError(() => p.delay(1, { seed: NaN }), ARG, "seed");
  assertOjsError(() => p.delay(1, { u: -0.5 }), ARG, "u");
  // An enumerable property inherited from Object.prototype is not an own
  // key: `{}` stays an error, `{ seed }` stays valid.
  Object.prototype.u = 0.5; // eslint-disable-line no-extend-native
  try {
    assertOjsError(() => p.delay(1, {}), ARG, "jitter");
    assert.equal(p.delay(2, { seed: 5 }), p.delay(2, viaFull({ seed: 5 })));
  } finally {
    delete Object.prototype.u;
  }
});

// Every bad call, each followed by good calls that must still be right.
const policy = new RetryPolicy({ jitter: false });
const state = new RetryState();
const reservation = new Reservation(1, 1000, 0);
const BAD = [
  ["retry number NaN", () => policy.delay(NaN), "retry_number"],
  ["retry number string", () => policy.delay("3"), "retry_number"],
  ["retry number negative", () => policy.delay(-1), "retry_number"],
  ["retry number fractional", () => policy.delay(1.5), "retry_number"],
  ["retry number 2^53", () => policy.delay(2 ** 53), "retry_number"],
  ["retry number Infinity", () => policy.delay(Infinity), "retry_number"],
  ["retry number BigInt", () => policy.delay(3n), "retry_number"],
  ["retry number 0 (core)", () => policy.delay(0), "retry_number"],
  ["count object", () => policy.schedule({}), "count"],
  ["count too large (core)", () => policy.schedule(100_001), "count"],
  ["failure missing", () => policy.decide(), "failure"],
  ["failure attempt NaN", () => policy.decide({ attempt: NaN }), "attempt"],
  ["failure attempt missing", () => policy.decide({}), "attempt"],
  ["failure type number", () => policy.decide({ attempt: 1, type: 5 }), "type"],
  ["failure code lower case", () => policy.decide({ attempt: 1, code: "fail" }), "code"],
  ["failure timedOut string", () => policy.decide({ attempt: 1, timedOut: "yes" }), "timed_out"],
  ["failure unknown key", () => policy.decide({ attempt: 1, timed_out: true }), "timed_out"],
  ["now negative", () => policy.decide({ attempt: 1 }, { now: -1 }), "now"],
  ["now fractional", () => policy.decide({ attempt: 1 }, { now: 1.5 }), "now"],
  ["now string", () => policy.decide({ attempt: 1 }, { now: "2026-01-01" }), "now"],
  ["now after 9999 (core)", () => policy.decide({ attempt: 1 }, { now: 253402300800000 }), "now"],
  ["options not an object", () => policy.decide({ attempt: 1 }, 5), "options"],
  ["policy NaN field", () => new RetryPolicy({ backoff_coefficient: NaN }), "backoff_coefficient"],
  ["policy Map", () => new RetryPolicy(new Map([["max_attempts", 1]])), ""],
  ["policy function", () => new RetryPolicy(() => 1), ""],
  ["policy lone surrogate", () => new RetryPolicy({ non_retryable_errors: ["a\ud800"] }), "non_retryable_errors[0]"],
  ["merge layer Date", () => RetryPolicy.merge({}, new Date()), ""],
  ["state policy not a RetryPolicy", () => state.recordFailure({ max_attempts: 3 }, { type: "a", message: "b" }), "policy"],
  ["state error missing message", () => state.recordFailure(policy, { type: "a" }), "message"],
  ["state details cyclic", () => {
    const d = {};
    d.self = d;
    return state.recordFailure(policy, { type: "a", message: "b", details: d });
  }, null],
  ["state history limit 9 (core)", () => new RetryState({ historyLimit: 9 }), "history_limit"],
  ["state history limit string", () => new RetryState({ historyLimit: "12" }), "history_limit"],
  ["state fromJSON bad JSON", () => RetryState.fromJSON("{"), ""],
  ["reservation attempt 0 (core)", () => new Reservation(0, 10, 0), "attempt"],
  ["reservation timeout NaN", () => new Reservation(1, NaN, 0), "visibility_timeout_ms"],
  ["reservation heartbeat string", () => reservation.heartbeat("soon"), "now"],
  ["matches patterns not an array", () => matches("a", "a"), "patterns"],
  ["matches pattern not a string", () => firstMatch("a", ["a", 1]), "patterns[1]"],
  ["parseDuration number", () => parseDuration(1000), "duration"],
  ["parseDuration bad text (core)", () => parseDuration("PT1.5M"), "duration"],
  ["formatDuration 2^53", () => formatDuration(2 ** 53), "duration"],
  ["formatTimestamp negative", () => formatTimestamp(-1), "timestamp"],
  ["parseTimestamp bad (core)", () => parseTimestamp("yesterday"), "timestamp"],
  ["jitterSample no source", () => jitterSample(1), "jitter"],
];

for (const [name, call, field] of BAD) {
  test(`bad call is a coded error and the instance survives: ${name}`, () => {
    let caught;
    try {
      call();
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof Error, `expected an Error, got ${caught}`);
    assert.match(caught.code, /^validation\./, caught.message);
    if (field !== null) assert.equal(caught.field, field, caught.message);
    assert.ok(Array.isArray(caught.faults) && caught.faults.length >= 1);
    // Good calls right after, on the same objects and on new ones.
    assert.equal(policy.delay(3, { u: 0 }), 4000);
    assert.equal(new RetryPolicy({ max_attempts: 2 }).decide({ attempt: 1 }, { now: 0, jitter: { u: 0.5 } }).nextRetryAt, 1000);
    assert.equal(parseDuration("PT1.5S"), 1500);
    assert.equal(reservation.deadline, 1000);
    assert.equal(state.attempt, 1);
    assert.equal(RetryPolicy.merge({ max_attempts: 4 }, { jitter: false }).maxAttempts, 4);
  });
}

test("RetryState: record, serialise, read back; terminal jobs refuse failures", () => {
  const p = new RetryPolicy({ max_attempts: 2, jitter: false });
  const s = new RetryState({ historyLimit: 12 });
  assert.equal(s.historyLimit, 12);
  const d1 = s.recordFailure(p, { type: "net.reset", message: "peer reset", details: { host: "a", n: [1, 2] } }, { now: NOW });
  assert.equal(d1.action, "retry");
  assert.equal(s.attempt, 2);
  assert.equal(s.nextRetryAt, NOW + 1000);
  assert.equal(s.terminal, null);
  const doc = s.toJSON();
  assert.deepEqual(doc.errors[0].details, { host: "a", n: [1, 2] });
  assert.equal(doc.next_retry_at, "2026-02-12T10:31:06.000Z");
  const back = RetryState.fromJSON(s.toString());
  assert.equal(back.toString(), s.toString());
  assert.equal(RetryState.fromJSON(doc).toString(), s.toString());
  const d2 = back.recordTimeout(p, { now: NOW + 5000 });
  assert.equal(d2.action, "discard");
  assert.equal(d2.timedOut, true);
  assert.equal(back.terminal, "discard");
  assertOjsError(() => back.recordFailure(p, { type: "a", message: "b" }, { now: NOW }), "validation.invalid_argument", "state");
});

test("Reservation: heartbeat, expiry", () => {
  const r = new Reservation(2, 30_000, 0);
  assert.equal(r.attempt, 2);
  assert.equal(r.visibilityTimeoutMs, 30_000);
  assert.deepEqual(r.heartbeat(20_000), { extended: true, deadline: 50_000 });
  assert.equal(r.isExpired(49_999), false);
  assert.equal(r.expiry(49_999), null);
  assert.deepEqual(r.expiry(50_000), { attempt: 2, timedOut: true });
  assert.deepEqual(r.heartbeat(50_000), { extended: false });
  const d = new RetryPolicy().decide(r.expiry(50_000), { now: 50_000, jitter: { u: 0.5 } });
  assert.equal(d.timedOut, true);
  assert.equal(d.action, "retry");
});

test("the package ships the shared type surface", () => {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve("ojs-retry-wasm/package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  assert.equal(pkg.name, "ojs-retry-wasm");
  assert.equal(pkg.types, "./ojs-retry.d.ts");
  const dts = readFileSync(new URL(pkg.types, `file://${pkgPath}`), "utf8");
  assert.match(dts, /export declare class RetryPolicy/);
  for (const cond of ["workerd", "browser", "deno", "bun", "node", "import", "default"]) {
    assert.ok(cond in pkg.exports["."], `exports condition ${cond}`);
  }
});
