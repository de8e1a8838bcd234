// API tests for ojs-retry-wasm in Node beyond the vectors: the shared
// portable checks, the error shape, documents as objects and as text, the
// entropy source (never a constant seed), the classes, the generated types,
// and that the instance keeps answering after every bad call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import * as api from "ojs-retry-wasm";
import { apiChecks } from "../js-common/api-checks.mjs";

const { RetryPolicy, RetryState, Reservation, matches, firstMatch, parseDuration, formatDuration, formatTimestamp, parseTimestamp, jitterSample, presetSystems } = api;
const NOW = 1_770_892_265_000; // 2026-02-12T10:31:05Z

function assertOjsError(fn, code, field, path = field) {
  let caught;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof Error, `expected an Error, got ${caught}`);
  assert.ok(caught instanceof api.OjsRetryError, `expected an OjsRetryError, got ${caught}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.field, field, caught.message);
  assert.equal(caught.path, path, caught.message);
  assert.ok(Array.isArray(caught.faults) && caught.faults.length > 0);
  for (const f of caught.faults) {
    assert.deepEqual(Object.keys(f).sort(), ["field", "message", "path"]);
    assert.ok(typeof f.message === "string" && f.message.length > 0);
  }
  assert.ok(caught.message.startsWith(code), caught.message);
  return caught;
}

test("the shared API checks (tests/js-common/api-checks.mjs)", () => {
  const results = apiChecks(api);
  assert.ok(results.length >= 15, `only ${results.length} checks`);
  assert.deepEqual(results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.message}`), []);
});

test("the exports are the contract's surface", () => {
  for (const name of ["RetryPolicy", "RetryState", "Reservation", "matches", "firstMatch", "parseDuration", "formatDuration", "parseTimestamp", "formatTimestamp", "jitterSample", "presetSystems", "runTransaction"]) {
    assert.equal(typeof api[name], "function", name);
  }
  assert.ok(presetSystems().includes("sidekiq"));
});

test("policies: objects, JSON text, merge of an array of layers, fromJSON, getters, toJSON", () => {
  const p = RetryPolicy.merge([{ max_attempts: 5, non_retryable_errors: ["validation.*"] }, '{"initial_interval": "PT30S", "on_exhaustion": "dead_letter"}']);
  assert.equal(p.maxAttempts, 5);
  assert.equal(p.initialIntervalMs, 30_000);
  assert.equal(p.backoffCoefficient, 2);
  assert.equal(p.maxIntervalMs, 300_000);
  assert.equal(p.jitter, true);
  assert.deepEqual(p.nonRetryableErrors, ["validation.*"]);
  assert.equal(p.onExhaustion, "dead_letter");
  assert.equal(p.backoffStrategy, "exponential");
  assert.equal(p.maxRetries, 4);
  assert.equal(p.presetSystem, null);
  assert.equal(RetryPolicy.fromJSON(p.toString()).toString(), p.toString());
  assert.equal(new RetryPolicy(p.toJSON()).toString(), p.toString());
  assert.equal(new RetryPolicy().toString(), new RetryPolicy({}).toString());
  const sk = RetryPolicy.preset("sidekiq", { retry: 5 });
  assert.equal(sk.presetSystem, "sidekiq");
  assert.equal(new RetryPolicy(sk.toJSON()).toString(), sk.toString());
});

test("errors: code, field, path and every fault; whole-document faults are null", () => {
  const e = assertOjsError(() => new RetryPolicy({ non_retryable_errors: ["ok", ""] }), "validation.retry_policy_invalid", "non_retryable_errors", "non_retryable_errors[1]");
  assert.equal(e.faults.length, 1);
  assertOjsError(() => new RetryPolicy("{"), "validation.retry_policy_invalid", null);
  assertOjsError(() => new RetryPolicy({ initial_interval: "PT10M" }), "validation.retry_policy_invalid", "max_interval");
  assertOjsError(() => RetryState.fromJSON("{"), "validation.state_invalid", null);
  assertOjsError(() => parseDuration("PT1\ud800S"), "validation.invalid_argument", "duration");
  assertOjsError(() => matches("auth.\udfff", ["auth.*"]), "validation.invalid_argument", "error_type");
  assertOjsError(() => new RetryPolicy('{"non_retryable_errors": ["\ud83d"]}'), "validation.retry_policy_invalid", null);
  // A real U+FFFD is text like any other.
  assert.deepEqual(new RetryPolicy('{"non_retryable_errors": ["\ufffd"]}').nonRetryableErrors, ["\ufffd"]);
});

test("decisions and schedule rows are camelCase plain objects", () => {
  const p = new RetryPolicy({ max_attempts: 3, non_retryable_errors: ["auth.*"] });
  const d = p.decide({ attempt: 1, type: "net.reset" }, { now: NOW, u: 0.5 });
  assert.deepEqual(d, { action: "retry", reason: "retryable", handlerCode: null, matchedPattern: null, attempt: 1, timedOut: false, retryNumber: 1, delayMs: 1000, nextRetryAt: NOW + 1000 });
  const n = p.decide({ attempt: 1, type: "auth.expired" }, { now: NOW });
  assert.equal(n.action, "discard");
  assert.equal(n.matchedPattern, "auth.*");
  const rows = p.schedule(2);
  assert.equal(rows.length, 2);
  assert.equal(rows[0].retryNumber, 1);
  assert.equal(rows[0].delayMs, null);
  assert.equal(matches("auth.expired", ["auth.*"]), true);
  assert.equal(firstMatch("net.reset", ["auth.*"]), null);
  assert.equal(formatDuration(90_000), "PT1M30S");
  assert.equal(parseTimestamp(formatTimestamp(NOW)), NOW);
  assert.equal(jitterSample(1, { u: 0.5 }), 2 ** 52);
});

test("OS entropy: two fresh processes draw different delays (no constant seed)", () => {
  const script = `import { RetryPolicy } from "ojs-retry-wasm"; const p = new RetryPolicy({ max_attempts: 50 }); console.log(JSON.stringify(Array.from({ length: 20 }, (_, i) => p.delay(i + 1))));`;
  const run = () => execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd(), encoding: "utf8" }).trim();
  const a = run();
  const b = run();
  assert.notEqual(a, b, "two processes drew the same 20 delays");
});

test("RetryState: record failures (attempt optional), serialise, read back, terminal", () => {
  const p = new RetryPolicy({ max_attempts: 2, jitter: false });
  const s = new RetryState({ historyLimit: 12 });
  assert.equal(s.historyLimit, 12);
  const d1 = s.recordFailure(p, { type: "net.reset", message: "peer reset", details: { host: "a", n: [1, 2] } }, { now: NOW });
  assert.equal(d1.action, "retry");
  assert.equal(s.attempt, 1);
  assert.equal(s.nextAttempt, 2);
  assert.equal(s.nextRetryAt, NOW + 1000);
  assert.equal(s.terminal, null);
  assert.deepEqual(s.errors[0].details, { host: "a", n: [1, 2] });
  assert.equal(s.errors[0].timestampMs, NOW);
  const doc = s.toJSON();
  assert.equal(doc.next_retry_at, "2026-02-12T10:31:06.000Z");
  const back = RetryState.fromJSON(s.toString());
  assert.equal(back.toString(), s.toString());
  const d2 = back.recordFailure(p, { attempt: 2, timedOut: true }, { now: NOW + 5000 });
  assert.equal(d2.action, "discard");
  assert.equal(d2.timedOut, true);
  assert.equal(back.terminal, "discard");
  assert.throws(() => back.recordFailure(p, { type: "a" }, { now: NOW }), (e) => e.code === "validation.invalid_argument");
  assertOjsError(() => s.recordFailure(p, { attempt: 5, type: "a" }, { now: NOW }), "validation.invalid_argument", "attempt");
});

test("freed, copied and forged objects are the package's error, and the module keeps answering", () => {
  const p = new RetryPolicy();
  const copy = structuredClone(p);
  p.free();
  assertOjsError(() => p.delay(1, { u: 0 }), "validation.invalid_argument", "this");
  assert.ok((() => { try { p.maxAttempts; } catch (e) { return e instanceof api.OjsRetryError; } })());
  const r = new Reservation(1, 1000, 0);
  r[Symbol.dispose]();
  assertOjsError(() => r.deadline, "validation.invalid_argument", "this");
  // A structured clone is a plain object without the engine's handle.
  assert.deepEqual(Object.keys(copy), []);
  assertOjsError(() => new RetryState().recordFailure(copy, {}, { now: 0 }), "validation.invalid_argument", "policy");
  assertOjsError(() => RetryPolicy.prototype.delay.call(copy, 1), "validation.invalid_argument", "this");
  assert.equal(new RetryPolicy({ jitter: false }).delay(3), 4000);
});

test("deeply nested and cyclic values are document faults, and the instance survives", () => {
  let deep = [];
  for (let i = 0; i < 2000; i++) deep = [deep];
  assert.throws(
    () => new RetryPolicy({ non_retryable_errors: deep }),
    (e) => e.code === "validation.retry_policy_invalid" && e.field === "non_retryable_errors" && e.path.startsWith("non_retryable_errors"),
  );
  // Far deeper: still a fault of the field, at the value too deep (the
  // reader stops at its depth), as in every runtime.
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assertOjsError(() => new RetryPolicy({ non_retryable_errors: deep }), "validation.retry_policy_invalid", "non_retryable_errors", `non_retryable_errors${"[0]".repeat(64)}`);
  const cyclic = {};
  cyclic.a = cyclic;
  assert.throws(() => new RetryPolicy({ non_retryable_errors: [cyclic] }), (e) => e.code === "validation.retry_policy_invalid");
  const s = new RetryState();
  assert.throws(() => s.recordFailure(new RetryPolicy(), { details: cyclic }), (e) => typeof e.code === "string");
  assert.equal(s.attempt, 0);
  assert.equal(s.recordFailure(new RetryPolicy({ jitter: false }), { type: "x" }, { now: 0 }).delayMs, 1000);
});

test("the caller's code that throws while an argument is read (getters, proxies) never unwinds through the module", () => {
  const p = new RetryPolicy({ jitter: false });
  const s = new RetryState();
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const evil = [
    () => s.recordFailure(p, new Proxy({}, { ownKeys() { throw new Error("boom"); } })),
    () => p.decide({ get type() { throw new Error("getter"); } }, { now: 0 }),
    () => p.decide({ attempt: 1 }, { get now() { throw 7; } }),
    () => p.decide(revoked.proxy),
    () => RetryPolicy.merge([{ get jitter() { throw 1; } }]),
    () => new RetryPolicy({ non_retryable_errors: [() => 1] }),
    () => matches("a", new Proxy(["a"], { get() { throw 2; } })),
    () => p.delays(new Float64Array(2), { get u() { throw 4; } }),
    () => RetryState.fromJSON({ get attempt() { throw 3; } }),
    () => parseDuration(revoked.proxy),
    () => p.delay(revoked.proxy),
    () => new Reservation(1, revoked.proxy, 0),
  ];
  // Thousands of times: an exception unwinding through wasm frames leaks
  // their borrows and stack, and a few hundred of them broke the instance.
  for (let round = 0; round < 500; round++) {
    for (const call of evil) assert.throws(call, (e) => e instanceof api.OjsRetryError && e.code.startsWith("validation."));
  }
  assert.equal(p.delay(2), 2000);
  assert.equal(s.recordFailure(p, { type: "x" }, { now: 0 }).delayMs, 1000);
  assert.equal(s.attempt, 1);
});

test("the package ships the JS layer's generated declarations and every entry", () => {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve("ojs-retry-wasm/package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  assert.equal(pkg.name, "ojs-retry-wasm");
  const entry = readFileSync(new URL(pkg.types, `file://${pkgPath}`), "utf8");
  assert.match(entry, /from "\.\/api\.js"/);
  assert.match(readFileSync(new URL("api.d.ts", `file://${pkgPath}`), "utf8"), /export \* from '\.\/surface\.js'/);
  const dts = readFileSync(new URL("surface.d.ts", `file://${pkgPath}`), "utf8");
  assert.match(dts, /export declare class RetryPolicy/);
  assert.match(dts, /decide\(failure: Failure, options\?: DecideOptions\): Decision;/);
  assert.match(dts, /export interface ScheduleRow/);
  assert.match(dts, /export declare class OjsRetryError extends Error/);
  for (const cond of ["workerd", "browser", "deno", "bun", "node", "import", "default"]) {
    assert.ok(cond in pkg.exports["."], `exports condition ${cond}`);
  }
});

test("cold start in Node: compile + instantiate of the shipped module, in a fresh process (reported, not a gate)", () => {
  // A fresh process: V8 reuses a module compiled earlier in the same one.
  const script = `
    import { readFileSync } from "node:fs";
    import { createRequire } from "node:module";
    const dir = new URL(".", "file://" + createRequire(import.meta.url).resolve("ojs-retry-wasm/package.json"));
    const raw = await import(new URL("ojs_retry_wasm.js", dir));
    const { bind } = await import(new URL("api.js", dir));
    const { initSync } = raw;
    const bytes = readFileSync(new URL("ojs_retry_wasm_bg.wasm", dir));
    const t0 = performance.now();
    const module = new WebAssembly.Module(bytes);
    const t1 = performance.now();
    initSync({ module });
    const t2 = performance.now();
    const { RetryPolicy } = bind(raw);
    const d = new RetryPolicy({ jitter: false }).delay(1);
    const t3 = performance.now();
    console.log(JSON.stringify({ d, compile: t1 - t0, instantiate: t2 - t1, first: t3 - t2, bytes: bytes.length }));`;
  const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd(), encoding: "utf8" }));
  assert.equal(out.d, 1000);
  console.log(
    `cold start [wasm-node]: compile ${out.compile.toFixed(1)} ms, instantiate ${out.instantiate.toFixed(1)} ms, first call ${out.first.toFixed(2)} ms (${out.bytes} B)`,
  );
});
