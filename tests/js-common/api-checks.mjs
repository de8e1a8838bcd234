// Portable API checks (no imports) for hosts without node:test — the browser
// page and the workerd worker — run after the vectors: error shape, the
// defaults (clock, entropy), boundary checks, and that the instance keeps
// answering after each bad call. Returns [{ name, ok, message }].

function check(results, name, fn) {
  try {
    const message = fn();
    results.push({ name, ok: message === undefined, message: message ?? "" });
  } catch (e) {
    results.push({ name, ok: false, message: `threw ${e && e.stack || e}` });
  }
}

function codedError(fn, code, field) {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof Error)) return `not an Error: ${e}`;
    if (e.code !== code) return `code ${e.code} (want ${code}): ${e.message}`;
    if (e.field !== field) return `field ${JSON.stringify(e.field)} (want ${JSON.stringify(field)}): ${e.message}`;
    if (!Array.isArray(e.faults) || e.faults.length === 0 || e.faults[0].field !== field) return "bad faults";
    return undefined;
  }
  return "no error thrown";
}

export function apiChecks(api) {
  const { RetryPolicy, RetryState, Reservation, parseDuration } = api;
  const results = [];
  const policy = new RetryPolicy({ jitter: false });

  check(results, "policy error carries code, field, faults", () => {
    try {
      new RetryPolicy({ max_attempts: -1, jitter: "yes" });
    } catch (e) {
      const fields = JSON.stringify(e.faults.map((f) => f.field));
      if (e.code !== "validation.retry_policy_invalid" || e.field !== "max_attempts" || fields !== '["max_attempts","jitter"]') {
        return `got ${e.code} ${e.field} ${fields}`;
      }
      return undefined;
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

  check(results, "keyed jitter is deterministic; BigInt and number seeds agree", () => {
    const p = new RetryPolicy();
    const a = p.decide({ attempt: 2 }, { now: 0, jitter: { key: "job-8f3a" } });
    const b = p.decide({ attempt: 2 }, { now: 0, jitter: { key: "job-8f3a" } });
    if (a.delayMs !== b.delayMs) return "keyed delays differ";
    if (p.delay(4, { seed: 42 }) !== p.delay(4, { seed: 42n })) return "seed 42 vs 42n differ";
    return undefined;
  });

  check(results, "delay(n, u) with a plain number is delay(n, { u }); bad numbers are coded errors", () => {
    const p = new RetryPolicy({ max_attempts: 10 });
    for (const [n, u] of [[1, 0], [2, 0.25], [3, 0.5], [9, 1 - 2 ** -53], [4294967295, 0.75]]) {
      const a = p.delay(n, u);
      const b = p.delay(n, { u });
      if (a !== b) return `delay(${n}, ${u}) = ${a} but delay(${n}, { u: ${u} }) = ${b}`;
    }
    if (p.delay(1, 0) !== 500 || p.delay(1, 0.5) !== 1000) return "default policy retry 1: want 500 and 1000";
    for (const [n, u, field] of [
      [1, 1, "u"], [1, -0.5, "u"], [1, NaN, "u"], [1, Infinity, "u"],
      [0, 0.5, "retry_number"], [1.5, 0.5, "retry_number"], [-1, 0.5, "retry_number"], [2 ** 53, 0.5, "retry_number"],
      ["1", 0.5, "retry_number"],
    ]) {
      const m = codedError(() => p.delay(n, u), "validation.invalid_argument", field);
      if (m) return `delay(${String(n)}, ${u}): ${m}`;
    }
    return undefined;
  });

  check(results, "delays() is delay() for each entry, in one call", () => {
    const p = new RetryPolicy();
    const ns = [1, 2, 3, 10, 4294967295];
    const single = ns.map((n) => p.delay(n, { key: "job-8f3a" }));
    for (const input of [ns, Uint32Array.from(ns), Float64Array.from(ns)]) {
      const got = p.delays(input, { key: "job-8f3a" });
      if (!Array.isArray(got) || JSON.stringify(got) !== JSON.stringify(single)) return `delays gave ${got}, delay gave ${single}`;
    }
    try {
      p.delays([1, 0]);
      return "retry number 0 accepted";
    } catch (e) {
      if (e.code !== "validation.invalid_argument" || e.field !== "retry_numbers[1]") return `wrong error ${e.code} ${e.field}`;
    }
    return undefined;
  });

  check(results, "delays() with { u } / { seed }: every batch size and input type agrees with delay()", () => {
    const p = new RetryPolicy({ initial_interval: "PT1S", backoff_coefficient: 1.5, max_interval: "PT2H" });
    // Curves whose capped delays the core tables at construction (default:
    // 9 retries; §12.3-like: 4; linear and constant; jitter off), and one
    // without a table (1.5).
    const policies = [
      p,
      new RetryPolicy(),
      new RetryPolicy({ initial_interval: "PT15S", backoff_coefficient: 4, max_interval: "PT1H" }),
      new RetryPolicy({ backoff_strategy: "linear", initial_interval: "PT7S", max_interval: "PT1M", jitter: false }),
      new RetryPolicy({ backoff_strategy: "none", initial_interval: "PT3S" }),
    ];
    for (const q of policies) {
      for (const len of [0, 1, 25, 1024, 1025, 2100]) {
        const ns = Array.from({ length: len }, (_, i) => (i % 60) + 1);
        for (const j of [{ u: 0.3 }, { seed: 77 }]) {
          const single = ns.map((n) => q.delay(n, j));
          for (const input of [ns, Float64Array.from(ns), Uint32Array.from(ns)]) {
            const got = q.delays(input, j);
            if (!Array.isArray(got) || JSON.stringify(got) !== JSON.stringify(single)) {
              return `delays(${input.constructor.name} × ${len}, ${JSON.stringify(j)}) differs from delay() for ${q}`;
            }
          }
        }
      }
    }
    for (const [ns, j, field] of [
      [[1, 0], { seed: 1 }, "retry_numbers[1]"],
      [[1, 2.5], { u: 0.5 }, "retry_numbers[1]"],
      [[...Array(1100).fill(2), -1], { u: 0.5 }, "retry_numbers[1100]"],
      [[1, "2"], { seed: 1 }, "retry_numbers[1]"],
      [[1], { u: 1 }, "u"],
      [[], { seed: 1.5 }, "seed"],
    ]) {
      const m = codedError(() => p.delays(ns, j), "validation.invalid_argument", field);
      if (m) return `delays(${ns.length} numbers, ${JSON.stringify(j)}): ${m}`;
    }
    return undefined;
  });

  check(results, "results are plain objects, never Maps", () => {
    const d = policy.decide({ attempt: 1 }, { now: 0 });
    const r = policy.schedule(1)[0];
    const doc = policy.toJSON();
    for (const o of [d, r, doc]) if (Object.getPrototypeOf(o) !== Object.prototype) return "not a plain object";
    return undefined;
  });

  const state = new RetryState();
  const bad = [
    ["retry number NaN", () => policy.delay(NaN), "validation.invalid_argument", "retry_number"],
    ["retry number string", () => policy.delay("3"), "validation.invalid_argument", "retry_number"],
    ["retry number -1", () => policy.delay(-1), "validation.invalid_argument", "retry_number"],
    ["retry number 1.5", () => policy.delay(1.5), "validation.invalid_argument", "retry_number"],
    ["retry number 2^53", () => policy.delay(2 ** 53), "validation.invalid_argument", "retry_number"],
    ["seed 2^64", () => policy.delay(1, { seed: 2n ** 64n }), "validation.invalid_argument", "seed"],
    ["now NaN", () => policy.decide({ attempt: 1 }, { now: NaN }), "validation.invalid_argument", "now"],
    ["policy NaN field", () => new RetryPolicy({ backoff_coefficient: NaN }), "validation.retry_policy_invalid", "backoff_coefficient"],
    ["state policy not a RetryPolicy", () => state.recordFailure({}, { type: "a", message: "b" }), "validation.invalid_argument", "policy"],
    ["reservation timeout 0", () => new Reservation(1, 0, 0), "validation.invalid_argument", "visibility_timeout_ms"],
    ["duration text", () => parseDuration("PT1.5M"), "validation.duration_invalid", "duration"],
  ];
  for (const [name, fn, code, field] of bad) {
    check(results, `bad call then good calls: ${name}`, () => {
      const m = codedError(fn, code, field);
      if (m) return m;
      if (policy.delay(3, { u: 0 }) !== 4000) return "good delay wrong after the bad call";
      if (new RetryPolicy({ max_attempts: 2 }).decide({ attempt: 1 }, { now: 0, jitter: { u: 0.5 } }).nextRetryAt !== 1000) {
        return "good decide wrong after the bad call";
      }
      if (state.attempt !== 1) return "state changed by a bad call";
      return undefined;
    });
  }
  return results;
}
