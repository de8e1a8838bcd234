// The conformance-vector runner shared by every JS runtime: wasm in Node,
// wasm in Chromium, wasm in workerd, and the native Node package.
//
// Pure ESM with no imports: it runs wherever the host can load it. The host
// loads the vector files itself (Node: node:fs; browser: fetch; workerd: a
// JSON module) and passes them in as data.
//
//   import { runVectors } from "./vectors.mjs";
//   const report = runVectors(api, { vectors, runtime: "wasm-node" });
//   // report: { total, passed, failed, notApplicable, results: [...] }
//
// `api` is an object exposing the public JS surface (RetryPolicy,
// RetryState, Reservation, matches, firstMatch, parseDuration,
// formatDuration, formatTimestamp, parseTimestamp, jitterSample) — the
// module namespace of `ojs-retry-wasm` or of `ojs-retry` (native or its wasm
// fallback): the runner only uses that surface.
//
// `vectors` is an array of `{ file, cases }` (the parsed tests/vectors/*.json
// files, `file` being the file name). Every case runs. A case fails when its
// op is unknown, when the call's result or error differs from the vector, or
// when it is restricted to other runtimes (`"runtimes": [...]`) without being
// listed in `notApplicable` (`{ [id]: "why" }`): nothing is skipped silently.
// Zero cases is a failure too (a runner that found no vectors proves nothing).
//
// Options: `runtime` (name matched against a case's `runtimes`),
// `notApplicable`, `only` (a predicate on cases, for debugging; cases it
// rejects are counted as failures so a filtered run can never look green),
// `assert` (optional: an object with `equal(actual, expected, message)`, e.g.
// node:assert; when given, runVectors asserts zero failures and the case
// count itself).

/** Result keys: vectors use snake_case, the JS API camelCase. */
export function camel(key) {
  return key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function show(v) {
  try {
    return JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));
  } catch {
    return String(v);
  }
}

/**
 * Compares an actual value with a vector's expectation (README "Comparing
 * objects"): every key of an expected object must be present and match
 * (keys it leaves out are not compared); arrays match element-wise with the
 * same length; numbers by value; `null` means null. `keys` maps expected
 * keys to actual keys (identity for documents, camel() for API results).
 * Returns null on a match, else a description of the first difference.
 */
export function mismatch(expected, actual, keys = (k) => k, path = "") {
  if (expected === null) {
    return actual === null ? null : `${path || "value"}: expected null, found ${show(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path || "value"}: expected an array, found ${show(actual)}`;
    if (actual.length !== expected.length) {
      return `${path || "value"}: expected ${expected.length} items, found ${actual.length}: ${show(actual)}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const m = mismatch(expected[i], actual[i], keys, `${path}[${i}]`);
      if (m) return m;
    }
    return null;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return `${path || "value"}: expected an object, found ${show(actual)}`;
    for (const [k, v] of Object.entries(expected)) {
      const ak = keys(k);
      const p = path ? `${path}.${ak}` : ak;
      if (!(ak in actual)) return `${p}: missing (expected ${show(v)})`;
      const m = mismatch(v, actual[ak], keys, p);
      if (m) return m;
    }
    return null;
  }
  if (typeof expected === "number" && typeof actual === "number") {
    return expected === actual ? null : `${path || "value"}: expected ${expected}, found ${actual}`;
  }
  return Object.is(expected, actual) || expected === actual
    ? null
    : `${path || "value"}: expected ${show(expected)}, found ${show(actual)}`;
}

const SPECIAL = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity, "-0": -0 };

/**
 * The vector input with the hostile-input encodings (tests/vectors/README.md
 * "Hostile-input encodings") turned into the JS values they denote: NaN,
 * ±Infinity, -0, BigInt, lone surrogates, 10 MB strings, values nested
 * 100 000 deep. An unknown `$` key is a runner error.
 */
export function expand(v) {
  if (Array.isArray(v)) return v.map(expand);
  if (!isObject(v)) return v;
  if ("$special" in v) {
    if (!Object.prototype.hasOwnProperty.call(SPECIAL, v.$special)) throw new RunnerError(`unknown $special ${show(v.$special)}`);
    return SPECIAL[v.$special];
  }
  if ("$repeat" in v) return String(v.$repeat).repeat(v.times);
  if ("$array" in v) return Array.from({ length: v.times }, () => expand(v.$array));
  if ("$keys" in v) {
    const out = {};
    const value = expand(v.value);
    for (let i = v.$keys - 1; i >= 0; i--) out[`k${String(i).padStart(7, "0")}`] = value;
    return out;
  }
  if ("$concat" in v) {
    const parts = v.$concat.map(expand);
    if (!parts.every((p) => typeof p === "string")) throw new RunnerError("$concat parts must be strings");
    return parts.join("");
  }
  if ("$lone_surrogate" in v) return String.fromCharCode(parseInt(v.$lone_surrogate, 16));
  if ("$bigint" in v) return BigInt(v.$bigint);
  if ("$nest" in v) {
    let out = [];
    for (let i = 0; i < v.$nest; i++) out = v.kind === "object" ? { a: out } : [out];
    return out;
  }
  if ("$object" in v) {
    const out = {};
    for (const [k, x] of v.$object) out[expand(k)] = expand(x);
    return out;
  }
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith("$")) throw new RunnerError(`the JS runner cannot express ${k}`);
    out[k] = expand(x);
  }
  return out;
}

/**
 * A good call after every case: the runtime (for wasm, the same instance)
 * still answers correctly. Returns null, or what went wrong.
 */
export function stillAnswers(api) {
  try {
    const d = new api.RetryPolicy({ jitter: false }).delay(3, { u: 0 });
    const ms = api.parseDuration("PT1.5S");
    return d === 4000 && ms === 1500 ? null : `a good call after this case answered delay ${d}, duration ${ms}`;
  } catch (e) {
    return `a good call after this case threw: ${String((e && e.stack) || e)}`;
  }
}

/** A vector's jitter as the API takes it; `undefined` for absent / none. */
export function jitterArg(j) {
  if (j === undefined || j === null) return undefined;
  if (!isObject(j)) return j; // let the API reject it
  if ("none" in j) return undefined;
  if ("seed" in j && typeof j.seed === "string") {
    let seed;
    try {
      seed = BigInt(j.seed);
    } catch {
      seed = j.seed; // not an integer: the API must reject it
    }
    return { ...j, seed };
  }
  return j;
}

function failureArg(f) {
  if (!isObject(f)) return f;
  const out = {};
  for (const [k, v] of Object.entries(f)) out[camel(k)] = v;
  return out;
}

/** The option bag of decide / recordFailure: `{ now?, u? | seed? | key? }` (flat). */
function decideOptions(input) {
  const j = jitterArg(input.jitter);
  const o = j === undefined ? {} : isObject(j) ? { ...j } : j; // a non-object: let the API reject it
  if (input.now !== undefined) {
    if (!isObject(o)) return o;
    o.now = input.now;
  }
  return o;
}

const camelKeys = (k) => camel(k);

/** Runs one op; returns the actual result in the vector's expect shape. */
const OPS = {
  parse_duration(api, i) {
    return { ms: api.parseDuration(i.text) };
  },
  format_duration(api, i) {
    return { text: api.formatDuration(i.ms) };
  },
  format_timestamp(api, i) {
    return { text: api.formatTimestamp(i.ms) };
  },
  parse_timestamp(api, i) {
    return { ms: api.parseTimestamp(i.text) };
  },
  policy(api, i) {
    const layers = "json" in i ? i.json : i.layers;
    if (!Array.isArray(layers)) throw new Error("runner: policy input needs `layers` or `json`");
    const p = layers.length === 1 ? new api.RetryPolicy(layers[0]) : api.RetryPolicy.merge(layers);
    // Everything the engine writes reads back: its text and its object.
    for (const back of [new api.RetryPolicy(p.toString()), new api.RetryPolicy(p.toJSON())]) {
      if (back.toString() !== p.toString()) throw new Error(`runner: the policy does not read back from its own JSON: ${back.toString().slice(0, 200)}`);
    }
    return { policy: p.toJSON(), canonical_json: p.toString() };
  },
  delay(api, i) {
    const p = new api.RetryPolicy(i.policy);
    return { delay_ms: p.delay(i.retry_number, jitterArg(i.jitter)) };
  },
  schedule(api, i) {
    const p = new api.RetryPolicy(i.policy);
    return { rows: p.schedule(i.count, jitterArg(i.jitter)) };
  },
  decide(api, i) {
    const p = new api.RetryPolicy(i.policy);
    return { decision: p.decide(failureArg(i.failure), decideOptions(i)) };
  },
  matches(api, i) {
    return { matches: api.matches(i.error_type, i.patterns), pattern: api.firstMatch(i.error_type, i.patterns) };
  },
  jitter_sample(api, i) {
    return { bits: api.jitterSample(i.retry_number, jitterArg(i.jitter)) };
  },
  preset(api, i) {
    const p = api.RetryPolicy.preset(i.system, i.config);
    const doc = p.toJSON();
    // Round trip: rebuild from the document; the rebuilt policy answers.
    const q = new api.RetryPolicy(doc);
    const out = { policy: doc, round_trip: q.toString() === p.toString() && q.presetSystem === i.system };
    const jitter = { u: i.u === undefined ? 0 : i.u };
    if (i.retry_numbers) out.delays = i.retry_numbers.map((n) => q.delay(n, jitter));
    if (i.failures) out.decisions = i.failures.map((f) => q.decide(failureArg(f), { now: 0, ...jitter }));
    return out;
  },
  reservation(api, i, ctx) {
    const r = new api.Reservation(i.attempt, i.visibility_timeout_ms, i.now);
    const results = [];
    ctx.partial = { results };
    (i.events || []).forEach((ev, n) => {
      ctx.event = n;
      if ("heartbeat" in ev) {
        const h = r.heartbeat(ev.heartbeat);
        results.push(h.extended ? { extended: h.deadline } : "expired");
      } else if ("is_expired" in ev) {
        results.push(r.isExpired(ev.is_expired));
      } else if ("expiry" in ev) {
        const f = r.expiry(ev.expiry);
        results.push(f === null ? null : { attempt: f.attempt, timed_out: f.timedOut });
      } else {
        throw new RunnerError(`unknown reservation event ${show(ev)}`);
      }
    });
    ctx.event = undefined;
    return { results, deadline: r.deadline };
  },
  transaction(api, i) {
    const f = i.failure || {};
    const out = api.runTransaction(i.attempt, {
      key: i.key,
      defaults: i.defaults,
      layer: "layer_json" in i ? i.layer_json : i.layer,
      state: "state_json" in i ? i.state_json : i.state,
      type: f.type,
      ancestors: f.ancestors,
      code: f.code,
      timedOut: f.timed_out,
      message: f.message,
      details: f.details,
      now: i.now,
      historyLimit: i.history_limit,
      queue: i.queue,
      job: i.job,
    });
    // What the transaction writes, it reads back.
    const opts = i.history_limit !== undefined ? { historyLimit: i.history_limit } : undefined;
    if (api.RetryState.fromJSON(out.stateJson, opts).toString() !== out.stateJson) {
      throw new RunnerError("the outcome's stateJson does not read back unchanged");
    }
    if (out.state.toString() !== out.stateJson || out.action !== out.decision.action) {
      throw new RunnerError("the outcome's state / action disagree with stateJson / decision");
    }
    return {
      decision: out.decision,
      state: JSON.parse(out.stateJson),
      notes: out.notes.map((n) => n.kind),
      dead_letter: out.deadLetter === null ? null : JSON.parse(out.deadLetter),
    };
  },
  state(api, i, ctx) {
    const policy = new api.RetryPolicy(i.policy);
    const opts = i.history_limit !== undefined ? { historyLimit: i.history_limit } : undefined;
    const state = i.initial !== undefined ? api.RetryState.fromJSON(i.initial, opts) : new api.RetryState(opts);
    const decisions = [];
    ctx.partial = { decisions };
    (i.events || []).forEach((ev, n) => {
      ctx.event = n;
      const options = decideOptions(ev);
      if ("fail" in ev) {
        decisions.push(state.recordFailure(policy, failureArg(ev.fail), options));
      } else if (ev.timeout === true) {
        decisions.push(state.recordFailure(policy, { timedOut: true }, options));
      } else {
        throw new RunnerError(`unknown state event ${show(ev)}`);
      }
    });
    ctx.event = undefined;
    return { decisions, state: state.toJSON() };
  },
};

/** How each op's expected keys map to the API's result keys. */
function keyMap(op, topKey) {
  // Decisions and schedule rows are API results (camelCase); documents
  // (effective policy, §10 state) keep snake_case in JS too.
  if ((op === "decide" || op === "transaction") && topKey === "decision") return camelKeys;
  if (op === "schedule" && topKey === "rows") return camelKeys;
  if ((op === "state" || op === "preset") && topKey === "decisions") return camelKeys;
  return (k) => k;
}

class RunnerError extends Error {}

function compareExpect(c, actual) {
  // The transaction's expected texts are hostile-input encodings too (README).
  const expect = c.op === "transaction" ? expand(c.expect) : c.expect;
  for (const [k, v] of Object.entries(expect)) {
    if (!(k in actual)) return `runner produced no ${k} for op ${c.op}`;
    const m = mismatch(v, actual[k], keyMap(c.op, k), k);
    if (m) return m;
  }
  return null;
}

function compareError(c, err, ctx) {
  const want = c.error;
  if (err instanceof RunnerError) return err.message;
  if (err === null || typeof err !== "object" || !(err instanceof Error) && !("code" in err)) {
    return `expected an Error with code ${want.code}, caught ${show(err)}`;
  }
  if (err.code !== want.code) {
    return `expected error code ${want.code}, found ${show(err.code)} (${err.message})`;
  }
  if (err.field !== want.field) {
    return `expected error field ${show(want.field)}, found ${show(err.field)} (${err.message})`;
  }
  // A case that leaves `path` out expects it to equal `field`.
  const wantPath = want.path !== undefined ? want.path : want.field;
  if (err.path !== wantPath) {
    return `expected error path ${show(wantPath)}, found ${show(err.path)} (${err.message})`;
  }
  if (!Array.isArray(err.faults) || err.faults.length === 0) {
    return `error has no faults list: ${show(err.faults)}`;
  }
  if (err.faults[0].field !== err.field) return `error.field differs from faults[0].field`;
  if (err.faults[0].path !== err.path) return `error.path differs from faults[0].path`;
  const nullOrString = (x) => x === null || typeof x === "string";
  for (const f of err.faults) {
    if (!nullOrString(f.field) || !nullOrString(f.path) || typeof f.message !== "string" || f.message === "") {
      return `malformed fault ${show(f)}`;
    }
  }
  if (want.fields !== undefined) {
    const got = err.faults.map((f) => f.field);
    if (show(got) !== show(want.fields)) return `expected fault fields ${show(want.fields)}, found ${show(got)}`;
  }
  if (want.paths !== undefined) {
    const got = err.faults.map((f) => f.path);
    if (show(got) !== show(want.paths)) return `expected fault paths ${show(want.paths)}, found ${show(got)}`;
  }
  if (want.event !== undefined && ctx.event !== want.event) {
    return `expected the error at event ${want.event}, raised ${ctx.event === undefined ? "outside the events" : `at event ${ctx.event}`}`;
  }
  if (want.event === undefined && ctx.event !== undefined) {
    return `expected the error before any event, raised at event ${ctx.event}`;
  }
  if (c.expect_before_error !== undefined) {
    for (const [k, v] of Object.entries(c.expect_before_error)) {
      const got = ctx.partial && ctx.partial[k];
      if (got === undefined) return `runner kept no ${k} before the error`;
      const m = mismatch(v, got, keyMap(c.op, k), k);
      if (m) return `before the error: ${m}`;
    }
  }
  return null;
}

/** Runs one case, then a good call; returns { status: "passed" | "failed" | "not_applicable", message }. */
export function runCase(api, c, options = {}) {
  const r = runOne(api, c, options);
  if (r.status === "not_applicable") return r;
  const broken = stillAnswers(api);
  return broken ? { status: "failed", message: r.status === "failed" ? `${r.message}; ${broken}` : broken } : r;
}

function runOne(api, c, { runtime, notApplicable = {} } = {}) {
  if (!isObject(c) || typeof c.id !== "string") return { status: "failed", message: "malformed case (no id)" };
  if (Array.isArray(c.runtimes) && !c.runtimes.includes(runtime)) {
    if (Object.prototype.hasOwnProperty.call(notApplicable, c.id)) {
      return { status: "not_applicable", message: notApplicable[c.id] };
    }
    return {
      status: "failed",
      message: `case is restricted to runtimes ${show(c.runtimes)}; runtime ${show(runtime)} must list it as not applicable`,
    };
  }
  const run = Object.prototype.hasOwnProperty.call(OPS, c.op) ? OPS[c.op] : undefined;
  if (!run) return { status: "failed", message: `unknown op ${show(c.op)}` };
  const hasExpect = c.expect !== undefined;
  const hasError = c.error !== undefined;
  if (hasExpect === hasError) return { status: "failed", message: "case needs exactly one of expect / error" };
  const ctx = { event: undefined, partial: undefined };
  let actual;
  try {
    actual = run(api, expand(c.input || {}), ctx);
  } catch (err) {
    if (!hasError) {
      const detail = err && err.code ? `${err.code} ${show(err.field)}: ${err.message}` : String(err && err.stack || err);
      return { status: "failed", message: `unexpected error: ${detail}` };
    }
    const m = compareError(c, err, ctx);
    return m ? { status: "failed", message: m } : { status: "passed" };
  }
  if (hasError) {
    return { status: "failed", message: `expected error ${c.error.code} (${show(c.error.field)}), got ${show(actual)}` };
  }
  const m = compareExpect(c, actual);
  return m ? { status: "failed", message: m } : { status: "passed" };
}

/** Runs every case of every file. */
export function runVectors(api, options = {}) {
  const { vectors, runtime, notApplicable = {}, only, assert, log } = options;
  if (!Array.isArray(vectors)) throw new TypeError("runVectors: options.vectors must be an array of {file, cases}");
  const results = [];
  const seen = new Set();
  for (const file of vectors) {
    const name = file.file ?? file.title ?? "?";
    if (!Array.isArray(file.cases)) {
      results.push({ file: name, id: "(file)", op: null, status: "failed", message: "file has no cases array" });
      continue;
    }
    for (const c of file.cases) {
      let r;
      if (only && !only(c, name)) {
        r = { status: "failed", message: "filtered out by `only` (a filtered run never passes)" };
      } else {
        r = runCase(api, c, { runtime, notApplicable });
      }
      if (c && seen.has(c.id)) r = { status: "failed", message: `duplicate case id ${show(c.id)}` };
      if (c) seen.add(c.id);
      results.push({ file: name, id: c && c.id, op: c && c.op, ...r });
      if (log && r.status !== "passed") log(`${r.status.toUpperCase()} ${name} ${c && c.id}: ${r.message}`);
    }
  }
  for (const id of Object.keys(notApplicable)) {
    if (!seen.has(id)) {
      results.push({ file: "(runner)", id, op: null, status: "failed", message: "listed as not applicable but no such case" });
    }
  }
  const count = (s) => results.filter((r) => r.status === s).length;
  const report = {
    runtime,
    total: results.length,
    cases: seen.size,
    passed: count("passed"),
    failed: count("failed"),
    notApplicable: count("not_applicable"),
    results,
  };
  if (report.cases === 0) {
    report.failed += 1;
    report.results.push({ file: "(runner)", id: "(none)", op: null, status: "failed", message: "no vector cases found" });
  }
  if (assert) {
    const failures = results.filter((r) => r.status === "failed");
    assert.equal(
      report.failed,
      0,
      `${report.failed} vector case(s) failed:\n` + failures.map((r) => `  ${r.file} ${r.id}: ${r.message}`).join("\n"),
    );
    assert.equal(report.passed + report.notApplicable, report.cases);
  }
  return report;
}

/** One line: "vectors [runtime]: N passed, N failed, N not applicable (of N cases)". */
export function summary(report) {
  return `vectors [${report.runtime ?? "?"}]: ${report.passed} passed, ${report.failed} failed, ${report.notApplicable} not applicable (of ${report.cases} cases)`;
}
