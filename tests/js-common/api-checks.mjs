// Portable API checks (no imports) for hosts without node:test — the browser
// page and the workerd worker — and for the Node package's suites (native
// and wasm fallback), run after the vectors: the error shape, the defaults
// (clock, entropy), the flat jitter options, the batch call, and that the
// instance keeps answering after each bad call. Only the public surface is
// used, so any backend of that surface can be checked.
// Returns [{ name, ok, message }].

function check(results, name, fn) {
  try {
    const message = fn();
    results.push({ name, ok: message === undefined, message: message ?? "" });
  } catch (e) {
    results.push({ name, ok: false, message: `threw ${(e && e.stack) || e}` });
  }
}

/**
 * undefined when `fn` throws an engine error with this code and field
 * (`code` null: any Error, e.g. the framework's own check of a class
 * argument; `field` undefined: any field), else what went wrong.
 */
function codedError(fn, code, field) {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof Error)) return `not an Error: ${e}`;
    if (code === null) return undefined;
    if (e.code !== code) return `code ${e.code} (want ${code}): ${e.message}`;
    if (field !== undefined && e.field !== field) return `field ${JSON.stringify(e.field)} (want ${JSON.stringify(field)}): ${e.message}`;
    if (!Array.isArray(e.faults) || e.faults.length === 0) return "no faults";
    if (e.faults[0].field !== e.field || e.faults[0].path !== e.path) return "faults[0] is not the error's field and path";
    if (!e.message.startsWith(code)) return `the message does not start with the code: ${e.message}`;
    return undefined;
  }
  return "no error thrown";
}

export function apiChecks(api) {
  const { RetryPolicy, RetryState, Reservation, parseDuration } = api;
  const results = [];
  const policy = new RetryPolicy({ jitter: false });

  check(results, "policy error carries code, field, path, faults", () => {
    try {
      new RetryPolicy({ max_attempts: -1, jitter: "yes", non_retryable_errors: [""] });
    } catch (e) {
      const fields = JSON.stringify(e.faults.map((f) => f.field));
      if (e.code !== "validation.retry_policy_invalid" || e.field !== "max_attempts" || e.path !== "max_attempts") {
        return `got ${e.code} ${e.field} ${e.path}`;
      }
      if (fields !== '["max_attempts","jitter","non_retryable_errors"]') return `fault fields ${fields}`;
      if (e.faults[2].path !== "non_retryable_errors[0]") return `fault path ${e.faults[2].path}`;
      return undefined;
    }
    return "no error thrown";
  });

  check(results, "a fault of the whole document has field and path null", () => {
    const m = codedError(() => new RetryPolicy("{"), "validation.retry_policy_invalid", null);
    if (m) return m;
    try {
      new RetryPolicy("[1]");
    } catch (e) {
      return e.path === null ? undefined : `path ${e.path}`;
    }
    return "no error thrown";
  });

  check(results, "now defaults to Date.now()", () => {
    const before = Date.now();
    const d = policy.decide({ attempt: 1 });
    const after = Date.now();
    if (!(d.nextRetryAt >= before + 1000 && d.nextRetryAt <= after + 1000)) {
      return `nextRetryAt ${d.nextRetryAt} not in [${before}, ${after}] + 1000`;
    }
    return undefined;
  });

  check(results, "omitted jitter draws entropy: varied and within bounds", () => {
    const p = new RetryPolicy();
    const row = p.schedule(3)[2];
    const seen = new Set();
    for (let i = 0; i < 300; i++) {
      const d = p.delay(3);
      if (!(Number.isInteger(d) && d >= row.minMs && d <= row.maxMs)) return `delay ${d} outside [${row.minMs}, ${row.maxMs}]`;
      seen.add(d);
    }
    return seen.size > 200 ? undefined : `only ${seen.size} distinct delays in 300 draws`;
  });

  check(results, "the jitter source is passed flat, the same way to delay, schedule and decide", () => {
    const p = new RetryPolicy();
    const a = p.decide({ attempt: 2 }, { now: 0, key: "job-8f3a" });
    const b = p.decide({ attempt: 2 }, { now: 0, key: "job-8f3a" });
    if (a.delayMs !== b.delayMs) return "keyed delays differ";
    if (p.delay(2, { key: "job-8f3a" }) !== a.delayMs) return "delay and decide disagree for the same key";
    if (p.schedule(2, { key: "job-8f3a" })[1].delayMs !== a.delayMs) return "schedule and decide disagree for the same key";
    if (p.delay(4, { seed: 42 }) !== p.delay(4, { seed: 42n })) return "seed 42 vs 42n differ";
    if (p.delay(4, { seed: "42" }) !== p.delay(4, { seed: 42n })) return "seed '42' vs 42n differ";
    if (p.delay(1, { u: 0 }) !== 500 || p.delay(1, { u: 0.5 }) !== 1000) return "default policy retry 1: want 500 and 1000";
    return undefined;
  });

  check(results, "at most one jitter source; unknown option keys are errors", () => {
    const p = new RetryPolicy();
    try {
      p.delay(1, { u: 0.5, seed: 1 });
      return "two sources accepted";
    } catch (e) {
      if (e.code !== "validation.invalid_argument") return `code ${e.code}`;
    }
    try {
      p.delay(1, { jitter: { u: 0.5 } });
      return "the old nested { jitter } accepted";
    } catch (e) {
      if (e.code !== "validation.invalid_argument") return `code ${e.code}`;
    }
    return undefined;
  });

  check(results, "delays() fills the Float64Array in place with delay() for each slot", () => {
    const p = new RetryPolicy();
    for (const len of [0, 1, 25, 1025]) {
      const ns = Array.from({ length: len }, (_, i) => (i % 60) + 1);
      for (const j of [{ u: 0.3 }, { seed: 77 }, { key: "job-8f3a" }]) {
        const single = ns.map((n) => p.delay(n, j));
        const arr = Float64Array.from(ns);
        const got = p.delays(arr, j);
        if (got !== arr) return "delays() did not return the array it was given";
        if (JSON.stringify(Array.from(arr)) !== JSON.stringify(single)) return `delays(${len}, ${JSON.stringify(j)}) differs from delay()`;
      }
    }
    try {
      p.delays(Float64Array.from([1, 0]), { u: 0.5 });
      return "retry number 0 accepted";
    } catch (e) {
      if (e.code !== "validation.invalid_argument" || !String(e.field).startsWith("retry_number")) return `wrong error ${e.code} ${e.field}`;
    }
    const m = codedError(() => p.delays([1, 2], { u: 0.5 }), "validation.invalid_argument", "retry_numbers");
    return m ? `a plain array: ${m}` : undefined;
  });

  check(results, "results are plain objects, never Maps", () => {
    const d = policy.decide({ attempt: 1 }, { now: 0 });
    const r = policy.schedule(1)[0];
    const doc = policy.toJSON();
    for (const o of [d, r, doc]) if (Object.getPrototypeOf(o) !== Object.prototype) return "not a plain object";
    if (d.retryNumber !== 1 || d.matchedPattern !== null) return `decision ${JSON.stringify(d)}`;
    return undefined;
  });

  check(results, "RetryState: attempt is the attempt that last ran; errors are epoch-ms records", () => {
    const p = new RetryPolicy({ max_attempts: 5, jitter: false });
    const s = new RetryState();
    if (s.attempt !== 0 || s.nextAttempt !== 1) return `fresh state attempt ${s.attempt}, next ${s.nextAttempt}`;
    for (let i = 0; i < 3; i++) s.recordFailure(p, { type: "net.reset", message: "reset" }, { now: 1000 * i });
    if (s.attempt !== 3 || s.nextAttempt !== 4) return `after three failures attempt ${s.attempt}, next ${s.nextAttempt}`;
    const errors = s.errors;
    if (!Array.isArray(errors) || errors.length !== 3) return `errors ${JSON.stringify(errors)}`;
    if (errors[2].timestampMs !== 2000 || errors[2].attempt !== 3) return `errors[2] ${JSON.stringify(errors[2])}`;
    if (s.nextRetryAt !== 2000 + 4000) return `nextRetryAt ${s.nextRetryAt}`;
    const back = RetryState.fromJSON(s.toString());
    if (back.toString() !== s.toString() || RetryState.fromJSON(s.toJSON()).toString() !== s.toString()) return "round trip differs";
    const d = back.recordFailure(p, { timedOut: true }, { now: 9000 });
    if (d.timedOut !== true || d.attempt !== 4) return `timeout decision ${JSON.stringify(d)}`;
    return undefined;
  });

  check(results, "Reservation: heartbeat, expiry as the failure decide takes", () => {
    const r = new Reservation(2, 30_000, 0);
    const h = r.heartbeat(20_000);
    if (h.extended !== true || h.deadline !== 50_000) return `heartbeat ${JSON.stringify(h)}`;
    if (r.isExpired(49_999) || r.expiry(49_999) !== null) return "expired early";
    const f = r.expiry(50_000);
    if (f.attempt !== 2 || f.timedOut !== true) return `expiry ${JSON.stringify(f)}`;
    const late = r.heartbeat(50_000);
    if (late.extended !== false || late.deadline !== null) return `late heartbeat ${JSON.stringify(late)}`;
    const d = new RetryPolicy().decide(f, { now: 50_000, u: 0.5 });
    return d.timedOut === true && d.action === "retry" ? undefined : `decision ${JSON.stringify(d)}`;
  });

  check(results, "throwing getters and proxies in arguments: an Error each time, and the instance keeps answering", () => {
    const s = new RetryState();
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const calls = [
      () => s.recordFailure(policy, new Proxy({}, { ownKeys() { throw new Error("boom"); } })),
      () => policy.decide({ get type() { throw new Error("getter"); } }, { now: 0 }),
      () => policy.delay(1, { get u() { throw new Error("getter"); } }),
      () => policy.decide(revoked.proxy),
      () => RetryPolicy.merge([{ get jitter() { throw new Error("getter"); } }]),
    ];
    for (let round = 0; round < 300; round++) {
      for (const [i, call] of calls.entries()) {
        try {
          call();
          return `call ${i} did not throw`;
        } catch (e) {
          if (!(e instanceof Error)) return `call ${i} threw a non-Error: ${e}`;
        }
      }
    }
    if (s.recordFailure(policy, { type: "x" }, { now: 0 }).delayMs !== 1000) return "the state answers wrong afterwards";
    return policy.delay(3, { u: 0 }) === 4000 ? undefined : "the policy answers wrong afterwards";
  });

  const state = new RetryState();
  state.recordFailure(policy, { type: "a", message: "b" }, { now: 0 });
  const ARG = "validation.invalid_argument";
  const bad = [
    ["retry number NaN", () => policy.delay(NaN), ARG, "retry_number"],
    ["retry number string", () => policy.delay("3"), ARG, "retry_number"],
    ["retry number BigInt", () => policy.delay(3n), ARG, "retry_number"],
    ["retry number -1", () => policy.delay(-1), ARG, "retry_number"],
    ["retry number 1.5", () => policy.delay(1.5), ARG, "retry_number"],
    ["retry number 2^53", () => policy.delay(2 ** 53), ARG, "retry_number"],
    ["u 1", () => policy.delay(1, { u: 1 }), ARG, "u"],
    ["seed 2^64", () => policy.delay(1, { seed: 2n ** 64n }), ARG, "seed"],
    ["now NaN", () => policy.decide({ attempt: 1 }, { now: NaN }), ARG, "now"],
    ["policy NaN field", () => new RetryPolicy({ backoff_coefficient: NaN }), "validation.retry_policy_invalid", "backoff_coefficient"],
    ["policy null", () => new RetryPolicy(null), "validation.retry_policy_invalid", null],
    ["merge not an array", () => RetryPolicy.merge({}), ARG, "layers"],
    ["state policy not a RetryPolicy", () => state.recordFailure({}, { type: "a", message: "b" }), null, null],
    ["state details cyclic", () => {
      const d = {};
      d.self = d;
      return state.recordFailure(policy, { type: "a", message: "b", details: d });
    }, null, null],
    ["reservation timeout string", () => new Reservation(1, "5", 0), ARG, "visibility_timeout_ms"],
    ["duration text", () => parseDuration("PT1.5M"), "validation.duration_invalid", "duration"],
    ["duration not a string", () => parseDuration(1000), ARG, "duration"],
  ];
  for (const [name, fn, code, field] of bad) {
    check(results, `bad call then good calls: ${name}`, () => {
      const m = codedError(fn, code, field);
      if (m) return m;
      if (policy.delay(3, { u: 0 }) !== 4000) return "good delay wrong after the bad call";
      if (new RetryPolicy({ max_attempts: 2 }).decide({ attempt: 1 }, { now: 0, u: 0.5 }).nextRetryAt !== 1000) {
        return "good decide wrong after the bad call";
      }
      if (state.attempt !== 1) return "state changed by a bad call";
      if (state.recordFailure === undefined || state.toJSON().attempt === undefined) return "state unusable after the bad call";
      return undefined;
    });
  }
  return results;
}
