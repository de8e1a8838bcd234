// API tests for ojs-retry-wasm beyond the vectors: error shape, defaults
// (clock, entropy), argument checking at the boundary, and that the wasm
// instance keeps answering after every bad call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { glue, fast, run, makePolicy, policyText, policyDelay, inChild } from "./wire.mjs";
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

test("an omitted jitter source takes the host's entropy a pool at a time, each sample once, in order", () => {
  // In a child, with crypto.getRandomValues replaced by a recorder of known
  // words. The first fill throws (as a host without entropy would): the
  // call fails and nothing is read from the unwritten pool. Then 17 000
  // delays (drawn in the module) and 100 decisions (drawn by api.js),
  // interleaved, take 17 100 samples of one 64-bit word each from one
  // pool of 8 192 words: three fills.
  const out = inChild(`
    let fills = 0;
    const words = [];
    crypto.getRandomValues = (a) => {
      if (fills++ === 0) throw new Error("no entropy here");
      for (let i = 0; i < a.length; i++) {
        a[i] = Math.imul(words.length + 1, 2654435761) >>> 0;
        words.push(a[i]);
      }
      return a;
    };
    const p = new RetryPolicy();
    try {
      p.delay(3);
      out.first = "no error";
    } catch (e) {
      out.first = e.message;
    }
    out.seq = [];
    for (let i = 0; i < 17100; i++) {
      out.seq.push(i % 171 === 0 ? ["decide", p.decide({ attempt: 3 }, { now: 0 }).delayMs] : ["delay", p.delay(3)]);
    }
    out.fills = fills;
    out.words = words;
  `);
  assert.equal(out.first, "no entropy here");
  assert.equal(out.fills, 4);
  assert.equal(out.words.length, 3 * 16384);
  const p = new RetryPolicy();
  // Sample i is the 64-bit word of u32 words 2i (low) and 2i + 1 (high):
  // its high 53 bits k, as k / 2^53.
  const u = (i) => (out.words[2 * i + 1] * 2 ** 21 + (out.words[2 * i] >>> 11)) / 2 ** 53;
  out.seq.forEach(([kind, got], i) => {
    const expected =
      kind === "delay" ? p.delay(3, u(i)) : p.decide({ attempt: 3 }, { now: 0, jitter: { u: u(i) } }).delayMs;
    assert.equal(got, expected, `${kind} ${i}`);
  });
  // The samples differ (the recorder's words do), and so do the delays.
  assert.ok(new Set(out.seq.map(([, d]) => d)).size > 1000);
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

// The raw exports, called directly below, and the full route by handle
// (wire.mjs speaks the boundary's format): a policy's handle stays private
// to the class (a `#` field), so the raw exports get a twin, the same
// document registered through the full route.
const twin = makePolicy;

function sameError(a, b, what) {
  let ea;
  let eb;
  try {
    a();
  } catch (e) {
    ea = e;
  }
  try {
    b();
  } catch (e) {
    eb = e;
  }
  assert.ok(ea instanceof Error && eb instanceof Error, `${what}: both must throw (${ea}, ${eb})`);
  assert.equal(ea.message, eb.message, what);
  assert.equal(ea.code, eb.code, what);
  assert.equal(ea.field, eb.field, what);
  assert.deepEqual(ea.faults, eb.faults, what);
}

test("the fast delay exports agree with the full path; -1 for anything invalid, including a freed handle", () => {
  const doc = { initial_interval: "PT2S", backoff_coefficient: 3, max_interval: "PT1H" };
  const p = new RetryPolicy(doc);
  const h = twin(doc);
  assert.equal(typeof h, "number");
  // The handle is no key at all: keys and JSON are the document's.
  assert.deepEqual(Object.keys(p), []);
  assert.deepEqual(Object.getOwnPropertySymbols(p), []);
  assert.deepEqual(JSON.parse(JSON.stringify(p)), p.toJSON());
  const viaFull = (j) => Object.assign(Object.create(null), j);
  // The fast exports take the handle and the retry number as wasm i32s
  // (api.js passes them only retry numbers below 2^32); the API takes
  // every retry number, those beyond through the full route.
  for (const n of [1, 2, 5, 12, 25, 1000, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1]) {
    const raw = n < 2 ** 32;
    for (const u of [0, 0.125, 0.5, 1 - 2 ** -53]) {
      const full = p.delay(n, viaFull({ u }));
      if (raw) assert.equal(fast.__delayU(h, n, u), full, `u ${n} ${u}`);
      assert.equal(p.delay(n, u), full);
      assert.equal(p.delay(n, { u }), full);
    }
    for (const seed of [0, 7, 2 ** 53 - 1]) {
      const full = p.delay(n, viaFull({ seed }));
      if (raw) assert.equal(fast.__delayS(h, n, seed), full, `seed ${n} ${seed}`);
      assert.equal(p.delay(n, { seed }), full);
    }
  }
  for (const [n, u] of [[0, 0.5], [1, 1], [1, NaN], [1, Infinity]]) {
    assert.equal(fast.__delayU(h, n, u), -1, `__delayU(${n}, ${u})`);
  }
  // A negative u there is `delay(n)`: a sample from the module's pool.
  const drawn = fast.__delayU(h, 1, -1);
  assert.ok(drawn === -2 || (drawn >= 1000 && drawn < 3000), `__delayU(1, -1) = ${drawn}`);
  for (const [n, u] of [[0, 0.5], [1.5, 0.5], [-1, 0.5], [NaN, 0.5], [Infinity, 0.5], [2 ** 53, 0.5], [1, 1], [1, -0.1], [1, -1], [1, NaN]]) {
    sameError(() => p.delay(n, u), () => p.delay(n, viaFull({ u })), `delay(${n}, ${u})`);
    sameError(() => p.delay(n, { u }), () => p.delay(n, viaFull({ u })), `delay(${n}, { u: ${u} })`);
  }
  // -0 is a sample (0), not a negative one.
  assert.equal(p.delay(3, -0), p.delay(3, viaFull({ u: 0 })));
  assert.equal(p.delay(3, { u: -0 }), p.delay(3, 0));
  for (const n of [0, 1.5, -1, NaN, 2 ** 53, "1", 2n]) {
    sameError(() => p.delay(n), () => p.delay(n, viaFull({ u: 0.5 })), `delay(${String(n)})`);
  }
  for (const seed of [-1, 1.5, NaN, 2 ** 53]) {
    assert.equal(fast.__delayS(h, 1, seed), -1, `__delayS(seed ${seed})`);
    sameError(() => p.delay(1, { seed }), () => p.delay(1, viaFull({ seed })), `seed ${seed}`);
  }
  // Handles name a slot (low 25 bits) and a generation: an integer that
  // names no live policy is -1 in the fast exports too.
  for (const bad of [h + 2 ** 25, h + 5 * 2 ** 25, 2 ** 31 - 1, 2 ** 25 - 1]) {
    assert.equal(fast.__delayU(bad, 1, 0.5), -1, `handle ${bad}`);
    assert.equal(fast.__delayS(bad, 1, 3), -1, `handle ${bad}`);
  }
  for (const bad of [-1, 0.5, NaN, Infinity, 2 ** 31, 2 ** 32, 2 ** 60, h + 2 ** 40, h + 2 ** 25, h + 0.5]) {
    assert.equal(glue.__policyNum(bad, 0), -1, `handle ${bad}`);
    assertOjsError(() => run(2, bad, [0]), "validation.invalid_argument", "policy");
    assertOjsError(() => policyText(bad), "validation.invalid_argument", "policy");
    assertOjsError(() => policyDelay(bad, 1, 0.5), "validation.invalid_argument", "policy");
  }
  glue.__release(h, true);
  // Freed: the handle is dead at once; its slot is reused only once the
  // object is collected (`__release(h, true)`, the FinalizationRegistry's
  // call), with the next generation, so the old handle stays dead.
  const hq = twin({ max_attempts: 4 });
  const expected = fast.__delayU(hq, 3, 0.5);
  glue.__release(hq, false);
  assert.equal(fast.__delayU(hq, 3, 0.5), -1);
  assert.equal(glue.__policyNum(hq, 0), -1);
  const freed = "expected a live RetryPolicy, found one already freed";
  assert.equal(assertOjsError(() => policyText(hq), "validation.invalid_argument", "policy").faults[0].message, freed);
  const other = twin({});
  assert.notEqual(other, hq); // the freed slot is not reused yet
  glue.__release(hq, true);
  glue.__release(hq, true); // twice: no effect
  const stale = "expected a live RetryPolicy, found a released or unknown policy handle";
  assert.equal(assertOjsError(() => policyText(hq), "validation.invalid_argument", "policy").faults[0].message, stale);
  const reused = Array.from({ length: 8 }, () => twin({ initial_interval: "PT7S", max_interval: "PT1H" }));
  assert.equal(fast.__delayU(hq, 3, 0.5), -1);
  assert.ok(reused.some((r) => r % 2 ** 25 === hq % 2 ** 25), "the slot is reused");
  for (const r of reused) assert.ok(Number.isInteger(r) && r >= 0 && r < 2 ** 31, `handle ${r}`);
  for (const r of reused) {
    assert.equal(fast.__delayU(r, 3, 0.5), 28_000);
    assert.notEqual(r, hq);
  }
  assert.equal(expected, 4000);
  for (const r of [...reused, other]) glue.__release(r, true);
  // A frozen policy keeps its handle (a private field).
  const f = Object.freeze(new RetryPolicy());
  assert.equal(f.delay(2, 0.5), 2000);
  assert.equal(f.delay(2, { seed: 9 }), new RetryPolicy().delay(2, { seed: 9 }));
  assert.deepEqual(f.delays([1, 2], { u: 0.5 }), [1000, 2000]);
  // merge() and preset() build policies of the class, on the same fast path.
  const m = RetryPolicy.merge({ initial_interval: "PT2S" }, { backoff_coefficient: 3, max_interval: "PT1H" });
  assert.ok(m instanceof RetryPolicy);
  assert.equal(m.delay(5, 0.25), p.delay(5, viaFull({ u: 0.25 })));
  assert.equal(m.toString(), p.toString());
  assert.ok(RetryPolicy.preset("sidekiq", {}) instanceof RetryPolicy);
});

test("delays(ns, { u } | { seed }) through the scratch buffer agrees with the full path", () => {
  const p = new RetryPolicy({ initial_interval: "PT1S", backoff_coefficient: 1.5, max_interval: "PT2H" });
  const viaFull = (j) => Object.assign(Object.create(null), j);
  const jitters = [{ u: 0 }, { u: 0.7 }, { seed: 0 }, { seed: 123456789 }];
  // Across the 1024-number chunk boundary, and empty.
  for (const len of [0, 1, 25, 1023, 1024, 1025, 3000]) {
    const ns = Array.from({ length: len }, (_, i) => (i % 60) + 1);
    for (const j of jitters) {
      const full = p.delays(ns, viaFull(j));
      assert.deepEqual(p.delays(ns, j), full, `${JSON.stringify(j)} × ${len}`);
      assert.deepEqual(p.delays(Float64Array.from(ns), j), full);
      assert.deepEqual(p.delays(Uint32Array.from(ns), j), full);
      assert.deepEqual(ns.map((n) => p.delay(n, j)), full);
    }
  }
  // Invalid entries anywhere (also past the first chunk), bad jitter values
  // (also with no numbers): the full path's errors.
  const cases = [
    [[1, 0], { seed: 1 }],
    [[1, 2.5], { u: 0.5 }],
    [[1, NaN], { u: 0.5 }],
    [[2 ** 53], { seed: 1 }],
    [Float64Array.of(1, -3), { seed: 1 }],
    [[1, "2"], { seed: 1 }],
    [[1, , 3], { seed: 1 }], // eslint-disable-line no-sparse-arrays
    [[1, 2n], { seed: 1 }],
    [[...Array(1500).fill(3), 0], { seed: 1 }],
    [[1], { u: 1 }],
    [[1], { u: -0.5 }],
    [[], { seed: 1.5 }],
    [[1], { seed: -1 }],
  ];
  for (const [ns, j] of cases) {
    sameError(() => p.delays(ns, j), () => p.delays(ns, viaFull(j)), `delays(${String(ns).slice(0, 20)}, ${JSON.stringify(j)})`);
  }
  // `[]` with { u } out of range is no error on either path (u is checked per delay).
  assert.deepEqual(p.delays([], { u: 5 }), p.delays([], viaFull({ u: 5 })));
  // The scratch buffer never moves once api.js has it: asking for more is -1.
  const at = glue.__scratch(1024);
  assert.ok(at > 0);
  assert.equal(glue.__scratch(16), at);
  assert.equal(glue.__scratch(1025), -1);
  assert.equal(glue.__scratch(NaN), -1);
  assert.equal(glue.__scratch(1024), at);
  // Invalid batch arguments of the raw export: -1, nothing written.
  const h = twin({ initial_interval: "PT1S", backoff_coefficient: 1.5, max_interval: "PT2H" });
  assert.equal(glue.__delays(h, 1, 1.5, 1), -1);
  assert.equal(glue.__delays(h, 0, 0.5, 4096), -1);
  assert.equal(glue.__delays(h, 0, 0.5, -1), -1);
  assert.equal(glue.__delays(-1, 0, 0.5, 1), -1);
  glue.__release(h, true);
});

test("delays: JS run while the numbers are read (getters) cannot corrupt the batch", () => {
  const p = new RetryPolicy({ max_interval: "PT1H" });
  const expected = [1, 2, 3, 4].map((n) => p.delay(n, { seed: 5 }));
  // A getter that calls delays() again (the scratch is busy: full path).
  const nested = [1, 2, 3, 4];
  Object.defineProperty(nested, 2, {
    get() {
      assert.deepEqual(p.delays([9, 9, 9, 9], { seed: 5 }), Array(4).fill(p.delay(9, { seed: 5 })));
      return 3;
    },
  });
  assert.deepEqual(p.delays(nested, { seed: 5 }), expected);
  // A getter that grows the wasm memory (detaching every view on it).
  const memory = fast.memory;
  const before = memory.buffer;
  const growing = [1, 2, 3, 4];
  Object.defineProperty(growing, 1, {
    get() {
      memory.grow(1);
      return 2;
    },
  });
  assert.deepEqual(p.delays(growing, { seed: 5 }), expected);
  assert.notEqual(memory.buffer, before);
  assert.equal(before.byteLength, 0); // detached
  assert.deepEqual(p.delays([1, 2, 3, 4], { seed: 5 }), expected);
  // A getter that frees the policy: the full path reports it.
  const q = new RetryPolicy();
  const freeing = [1, 2];
  Object.defineProperty(freeing, 0, {
    get() {
      q.free();
      return 1;
    },
  });
  assertOjsError(() => q.delays(freeing, { seed: 1 }), "validation.invalid_argument", "policy");
  // A throwing getter: its own error.
  const throwing = [1];
  Object.defineProperty(throwing, 0, {
    get() {
      throw new RangeError("from the getter");
    },
  });
  assert.throws(() => p.delays(throwing, { seed: 1 }), RangeError);
  assert.deepEqual(p.delays([1, 2, 3, 4], { seed: 5 }), expected);
});

test("policy text: lone surrogates are refused, a real U+FFFD is kept", () => {
  assertOjsError(() => new RetryPolicy('{"non_retryable_errors": ["a\ud800"]}'), "validation.retry_policy_invalid", "");
  assertOjsError(() => new RetryPolicy('{"non_retryable_errors": ["\udc00"], "jitter": false}'), "validation.retry_policy_invalid", "");
  const p = new RetryPolicy('{"non_retryable_errors": ["a\ufffd", "\u00e9t\u00e9.*"]}');
  assert.deepEqual(p.nonRetryableErrors, ["a\ufffd", "\u00e9t\u00e9.*"]);
  assert.equal(new RetryPolicy(p.toString()).toString(), p.toString());
  assertOjsError(() => RetryState.fromJSON('{"attempt": 1, "errors": [], "x": "\ud800"}'), "validation.state_invalid", "");
  assertOjsError(() => parseDuration("PT1S\ud800"), "validation.invalid_argument", "duration");
  assert.equal(matches("a\ufffd", ["a\ufffd"]), true);
  // Short strings and long ones (read through TextEncoder.encodeInto) alike:
  // multi-byte text comes back unchanged, lone surrogates anywhere are
  // refused, a real U+FFFD is kept.
  for (const len of [1, 47, 48, 49, 300, 5000]) {
    for (const c of ["a", "\u00e9", "\u20ac", "\ud83d\ude00", "\ufffd"]) {
      const t = `x.${c.repeat(len)}`;
      assert.equal(firstMatch(t, [t]), t, `${len} × ${JSON.stringify(c)}`);
      const p2 = new RetryPolicy(JSON.stringify({ non_retryable_errors: [t], jitter: false }));
      assert.deepEqual(p2.nonRetryableErrors, [t]);
    }
    for (const bad of ["\ud800", "\udfff", "\ud83d"]) {
      const t = `x.${"a".repeat(len)}${bad}${"b".repeat(len % 7)}`;
      assertOjsError(() => firstMatch(t, ["x.*"]), "validation.invalid_argument", "error_type");
      assertOjsError(() => new RetryPolicy(`{"non_retryable_errors": ["${t}"]}`), "validation.retry_policy_invalid", "");
    }
  }
});

test("api.js keeps wasm-bindgen's surface: getters, functions, and errors on a freed object", () => {
  // Getters (now through one export per class) are accessors on the
  // prototype, as wasm-bindgen defines them.
  const names = {
    RetryPolicy: [RetryPolicy, ["maxAttempts", "initialIntervalMs", "backoffCoefficient", "maxIntervalMs", "jitter",
      "maxRetries", "presetSystem", "onExhaustion", "backoffStrategy", "nonRetryableErrors"]],
    RetryState: [RetryState, ["attempt", "historyLimit", "nextRetryAt", "terminal"]],
    Reservation: [Reservation, ["attempt", "visibilityTimeoutMs", "deadline"]],
  };
  for (const [cls, list] of Object.values(names)) {
    for (const name of list) {
      const d = Object.getOwnPropertyDescriptor(cls.prototype, name);
      assert.equal(typeof d?.get, "function", `${cls.name}.${name}`);
      assert.equal(d.set, undefined);
      assert.equal(d.enumerable, false);
      assert.equal(d.configurable, true);
      assert.equal(d.get.name, `get ${name}`);
    }
    for (const hidden of ["__num", "__str", "__handle", "toJSON"]) {
      if (hidden !== "toJSON") assert.ok(!(hidden in cls.prototype), `${cls.name}.${hidden}`);
    }
  }
  assert.deepEqual(
    [matches, firstMatch, parseDuration, formatDuration, formatTimestamp, parseTimestamp, jitterSample].map((f) => [f.name, f.length]),
    [["matches", 2], ["firstMatch", 2], ["parseDuration", 1], ["formatDuration", 1], ["formatTimestamp", 1], ["parseTimestamp", 1], ["jitterSample", 2]],
  );
  const p = RetryPolicy.preset("sidekiq", {});
  assert.equal(p.presetSystem, "sidekiq");
  assert.equal(new RetryPolicy().presetSystem, null);
  assert.equal(new RetryPolicy({ jitter: false }).jitter, false);
  assert.equal(new RetryPolicy({ backoff_coefficient: 1.5 }).backoffCoefficient, 1.5);
  // A freed policy: the typed `policy` error from every member (freeing
  // again, or through Symbol.dispose, does nothing).
  const q = new RetryPolicy();
  q.free();
  q.free();
  if (Symbol.dispose) q[Symbol.dispose]();
  const state = new RetryState();
  for (const f of [() => q.maxAttempts, () => q.presetSystem, () => q.jitter, () => q.maxRetries, () => q.nonRetryableErrors,
    () => q.toJSON(), () => q.toString(), () => q.delay(1, 0.5), () => q.delay(1, { seed: 1 }), () => q.delay(1),
    () => q.delays([1], { seed: 1 }), () => q.delays([1]), () => q.schedule(2), () => q.decide({ attempt: 1 }),
    () => state.recordFailure(q, { type: "a", message: "b" }), () => state.recordTimeout(q)]) {
    const e = assertOjsError(f, "validation.invalid_argument", "policy");
    assert.equal(e.message, "validation.invalid_argument: policy: expected a live RetryPolicy, found one already freed");
  }
  if (Symbol.dispose) {
    const d = new RetryPolicy();
    assert.equal(RetryPolicy.prototype[Symbol.dispose], RetryPolicy.prototype.free);
    d[Symbol.dispose]();
    assertOjsError(() => d.maxAttempts, "validation.invalid_argument", "policy");
  }
  // Not a policy (a forged object, a proxy, a clone, a borrowed method):
  // the typed error too.
  const live = new RetryPolicy();
  for (const other of [Object.create(RetryPolicy.prototype), {}, new Proxy(live, {}), structuredClone(live), 5, null, undefined]) {
    for (const f of [
      () => Object.getOwnPropertyDescriptor(RetryPolicy.prototype, "maxAttempts").get.call(other),
      () => RetryPolicy.prototype.delay.call(other, 1, 0.5),
      () => RetryPolicy.prototype.toString.call(other),
      () => RetryPolicy.prototype.free.call(other),
      () => state.recordFailure(other, { type: "a", message: "b" }),
    ]) {
      assert.match(assertOjsError(f, "validation.invalid_argument", "policy").message, /expected a RetryPolicy, found /);
    }
  }
  assert.equal(live.maxAttempts, 3);
  const s = new RetryState();
  s.free();
  // RetryState and Reservation are handles too (no longer wasm-bindgen
  // objects, which threw "null pointer passed to rust"): a freed one is the
  // typed `this` error from every member.
  const freedState = "validation.invalid_argument: this: expected a live RetryState, found one already freed";
  for (const f of [() => s.attempt, () => s.nextRetryAt, () => s.terminal, () => s.toString(), () => s.toJSON(),
    () => s.recordFailure(live, { type: "a", message: "b" }), () => s.recordTimeout(live)]) {
    assert.equal(assertOjsError(f, "validation.invalid_argument", "this").message, freedState);
  }
  s.free();
  const r = new Reservation(1, 10, 0);
  r.free();
  const freedReservation = "validation.invalid_argument: this: expected a live Reservation, found one already freed";
  for (const f of [() => r.deadline, () => r.attempt, () => r.heartbeat(1), () => r.isExpired(1), () => r.expiry(1)]) {
    assert.equal(assertOjsError(f, "validation.invalid_argument", "this").message, freedReservation);
  }
});

test("decisions and schedule rows (built from JSON text / numbers) keep every value", () => {
  for (const pat of ['a"b\\c', "\u00e9.\u00fc\u2028x", "\u{1F600}.*", "x</script>", "\ufffd"]) {
    const p = new RetryPolicy({ non_retryable_errors: [pat], on_exhaustion: "dead_letter" });
    const d = p.decide({ attempt: 1, type: pat.replace(".*", ".z"), code: "RETRY" }, { now: 0 });
    assert.deepEqual(d, {
      action: "dead_letter", reason: "non_retryable", handlerCode: "RETRY", matchedPattern: pat,
      attempt: 1, timedOut: false, retryNumber: null, delayMs: null, nextRetryAt: null,
    });
  }
  const p = new RetryPolicy({ max_attempts: 30, max_interval: "PT24H" });
  const big = p.decide({ attempt: 29, timedOut: true }, { now: 253402300799999 - 10 ** 9, jitter: { u: 0.999 } });
  assert.equal(big.timedOut, true);
  assert.equal(big.nextRetryAt, 253402300799999 - 10 ** 9 + big.delayMs);
  const rows = p.schedule(30, { seed: 3 });
  assert.equal(rows.length, 30);
  let total = 0;
  rows.forEach((r, i) => {
    assert.deepEqual(Object.keys(r), ["retryNumber", "attempt", "rawMs", "cappedMs", "minMs", "maxMs", "delayMs", "cumulativeMs"]);
    assert.equal(r.retryNumber, i + 1);
    assert.equal(r.delayMs, p.delay(i + 1, { seed: 3 }));
    total += r.delayMs;
    assert.equal(r.cumulativeMs, total);
  });
  assert.ok(p.schedule(30).every((r) => r.delayMs === null));
  assert.deepEqual(p.schedule(0), []);
  assert.equal(RetryPolicy.prototype.schedule.length, 2);
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
