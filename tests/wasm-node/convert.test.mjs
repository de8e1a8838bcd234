// The JS side of the wasm boundary (bindings-wasm/js/api.js): JS values
// become JSON text there, and core errors come back as a compact encoding
// that api.js turns into Errors. Checked here: every value the old Rust
// walker (convert.rs) refused is refused with the same code, field, message
// and faults, and every value it took is taken (the expected outcomes were
// recorded from the package built before the port); the error encoding
// round-trips every fault, text of any kind included; RetryState and
// Reservation handles answer for themselves only, freed, stale or
// collected.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { RetryPolicy, RetryState, Reservation, firstMatch, matches, parseTimestamp } from "ojs-retry-wasm";
import { glue, run, runNumber, runRaw, inChild } from "./wire.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));

function cases() {
  const cyclic = {}; cyclic.again = { back: cyclic };
  let deep = 0; for (let i = 0; i < 65; i++) deep = [deep];
  let ok64 = 0; for (let i = 0; i < 64; i++) ok64 = [ok64];
  class Point { constructor() { this.x = 1; } }
  const policy = (v) => () => RetryPolicy.merge(v);
  const nested = (v) => () => new RetryPolicy({ non_retryable_errors: ["a", { deeper: [1, v] }] });
  const state = (v) => () => RetryState.fromJSON({ attempt: 1, errors: [], x: v });
  const details = (v) => () => new RetryState().recordFailure(new RetryPolicy(), { type: "t", message: "m", details: { list: [0, v] } }, { now: 0, jitter: { u: 0 } });
  const out = [];
  const bad = [["undefined", undefined], ["NaN", NaN], ["Infinity", Infinity], ["-Infinity", -Infinity], ["BigInt 2^64", 2n ** 64n], ["BigInt -2^63-1", -(2n ** 63n) - 1n],
    ["function", function f() {}], ["arrow", () => 0], ["symbol", Symbol("s")], ["Map", new Map()], ["Set", new Set()], ["Date", new Date(0)], ["class instance", new Point()], ["boxed number", Object(1)],
    ["cyclic", cyclic], ["65 deep", deep], ["lone high surrogate", "a\ud800"], ["lone low surrogate", "\udc00b"], ["key with lone surrogate", { ["k\ud800"]: 1 }], ["Uint8Array", new Uint8Array(2)], ["long string in a Map key", new Map([["x".repeat(60), 1]])]];
  for (const [name, v] of bad) {
    out.push([`policy document: ${name}`, policy(v)]);
    out.push([`policy value nested: ${name}`, nested(v)]);
    out.push([`state document value: ${name}`, state(v)]);
    out.push([`error details: ${name}`, details(v)]);
  }
  const good = [["null", null], ["true", true], ["-0", -0], ["2^60", 2 ** 60], ["1e21", 1e21], ["0.1", 0.1], ["BigInt 2^64-1", 2n ** 64n - 1n], ["BigInt -2^63", -(2n ** 63n)], ["64 deep", ok64],
    ["null prototype", Object.assign(Object.create(null), { a: 1 })], ["hole", [, 1]], ["undefined in array", [undefined]], ["undefined property", { a: undefined }], ["U+FFFD", "\ufffd"], ["emoji", "\u{1F600}"]];
  for (const [name, v] of good) out.push([`details accepted: ${name}`, details(v)]);
  out.push(["policy text: lone surrogate", () => new RetryPolicy('{"non_retryable_errors": ["\ud800"]}')]);
  out.push(["state text: lone surrogate", () => RetryState.fromJSON('{"attempt": 1, "x": "\udfff"}')]);
  out.push(["preset config: NaN", () => RetryPolicy.preset("sidekiq", { retry: NaN })]);
  out.push(["preset config: string", () => RetryPolicy.preset("sidekiq", "{}")]);
  out.push(["preset system: lone surrogate", () => RetryPolicy.preset("\ud800", {})]);
  out.push(["several faults", () => new RetryPolicy({ max_attempts: -1, jitter: "yes", on_exhaustion: 5 })]);
  out.push(["message with quotes, newline, non-ASCII", () => new RetryPolicy({ ['we"ird\nkey é \u{1F600}']: 1 })]);
  out.push(["unknown option with a quote", () => new RetryPolicy().decide({ attempt: 1, ['ty"pe']: "x" })]);
  out.push(["string described: long non-ASCII", () => new RetryPolicy().delay("é\u{1F600}".repeat(30))]);
  out.push(["string described: quotes and controls", () => new RetryPolicy().delay('a"b\\c\n\t\u0001\u0301')]);
  out.push(["string described: lone surrogate", () => new RetryPolicy().delay("x\ud800y")]);
  return out;
}

// [label, "ok"] or [label, code, field, message, faults], as the package
// built from the Rust walker answered, with one deliberate change since:
// messages quote user text as JSON escapes it (the core's `error::quote`,
// `JSON.stringify` here), no longer as Rust's `{:?}` did (`\u{1}\u{301}`
// became `\u0001` and the combining accent itself).
const EXPECTED = [
  ["policy document: undefined", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a JSON value, found undefined", [{"field": "", "message": "expected a JSON value, found undefined"}]],
  ["policy value nested: undefined", "validation.retry_policy_invalid", "non_retryable_errors[1]", "validation.retry_policy_invalid: non_retryable_errors[1]: expected an error type string, found an object", [{"field": "non_retryable_errors[1]", "message": "expected an error type string, found an object"}]],
  ["state document value: undefined", "ok"],
  ["error details: undefined", "ok"],
  ["policy document: NaN", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a finite number, found NaN", [{"field": "", "message": "expected a finite number, found NaN"}]],
  ["policy value nested: NaN", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a finite number, found NaN", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a finite number, found NaN"}]],
  ["state document value: NaN", "validation.state_invalid", "x", "validation.state_invalid: x: expected a finite number, found NaN", [{"field": "x", "message": "expected a finite number, found NaN"}]],
  ["error details: NaN", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a finite number, found NaN", [{"field": "details.list[1]", "message": "expected a finite number, found NaN"}]],
  ["policy document: Infinity", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a finite number, found Infinity", [{"field": "", "message": "expected a finite number, found Infinity"}]],
  ["policy value nested: Infinity", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a finite number, found Infinity", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a finite number, found Infinity"}]],
  ["state document value: Infinity", "validation.state_invalid", "x", "validation.state_invalid: x: expected a finite number, found Infinity", [{"field": "x", "message": "expected a finite number, found Infinity"}]],
  ["error details: Infinity", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a finite number, found Infinity", [{"field": "details.list[1]", "message": "expected a finite number, found Infinity"}]],
  ["policy document: -Infinity", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a finite number, found -Infinity", [{"field": "", "message": "expected a finite number, found -Infinity"}]],
  ["policy value nested: -Infinity", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a finite number, found -Infinity", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a finite number, found -Infinity"}]],
  ["state document value: -Infinity", "validation.state_invalid", "x", "validation.state_invalid: x: expected a finite number, found -Infinity", [{"field": "x", "message": "expected a finite number, found -Infinity"}]],
  ["error details: -Infinity", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a finite number, found -Infinity", [{"field": "details.list[1]", "message": "expected a finite number, found -Infinity"}]],
  ["policy document: BigInt 2^64", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a BigInt between -2^63 and 2^64 - 1", [{"field": "", "message": "expected a BigInt between -2^63 and 2^64 - 1"}]],
  ["policy value nested: BigInt 2^64", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a BigInt between -2^63 and 2^64 - 1", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a BigInt between -2^63 and 2^64 - 1"}]],
  ["state document value: BigInt 2^64", "validation.state_invalid", "x", "validation.state_invalid: x: expected a BigInt between -2^63 and 2^64 - 1", [{"field": "x", "message": "expected a BigInt between -2^63 and 2^64 - 1"}]],
  ["error details: BigInt 2^64", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a BigInt between -2^63 and 2^64 - 1", [{"field": "details.list[1]", "message": "expected a BigInt between -2^63 and 2^64 - 1"}]],
  ["policy document: BigInt -2^63-1", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a BigInt between -2^63 and 2^64 - 1", [{"field": "", "message": "expected a BigInt between -2^63 and 2^64 - 1"}]],
  ["policy value nested: BigInt -2^63-1", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a BigInt between -2^63 and 2^64 - 1", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a BigInt between -2^63 and 2^64 - 1"}]],
  ["state document value: BigInt -2^63-1", "validation.state_invalid", "x", "validation.state_invalid: x: expected a BigInt between -2^63 and 2^64 - 1", [{"field": "x", "message": "expected a BigInt between -2^63 and 2^64 - 1"}]],
  ["error details: BigInt -2^63-1", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a BigInt between -2^63 and 2^64 - 1", [{"field": "details.list[1]", "message": "expected a BigInt between -2^63 and 2^64 - 1"}]],
  ["policy document: function", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a JSON value, found a function", [{"field": "", "message": "expected a JSON value, found a function"}]],
  ["policy value nested: function", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a JSON value, found a function", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a JSON value, found a function"}]],
  ["state document value: function", "validation.state_invalid", "x", "validation.state_invalid: x: expected a JSON value, found a function", [{"field": "x", "message": "expected a JSON value, found a function"}]],
  ["error details: function", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a JSON value, found a function", [{"field": "details.list[1]", "message": "expected a JSON value, found a function"}]],
  ["policy document: arrow", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a JSON value, found a function", [{"field": "", "message": "expected a JSON value, found a function"}]],
  ["policy value nested: arrow", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a JSON value, found a function", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a JSON value, found a function"}]],
  ["state document value: arrow", "validation.state_invalid", "x", "validation.state_invalid: x: expected a JSON value, found a function", [{"field": "x", "message": "expected a JSON value, found a function"}]],
  ["error details: arrow", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a JSON value, found a function", [{"field": "details.list[1]", "message": "expected a JSON value, found a function"}]],
  ["policy document: symbol", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a JSON value, found a symbol", [{"field": "", "message": "expected a JSON value, found a symbol"}]],
  ["policy value nested: symbol", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a JSON value, found a symbol", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a JSON value, found a symbol"}]],
  ["state document value: symbol", "validation.state_invalid", "x", "validation.state_invalid: x: expected a JSON value, found a symbol", [{"field": "x", "message": "expected a JSON value, found a symbol"}]],
  ["error details: symbol", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a JSON value, found a symbol", [{"field": "details.list[1]", "message": "expected a JSON value, found a symbol"}]],
  ["policy document: Map", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a plain object, found an object", [{"field": "", "message": "expected a plain object, found an object"}]],
  ["policy value nested: Map", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a plain object, found an object", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a plain object, found an object"}]],
  ["state document value: Map", "validation.state_invalid", "x", "validation.state_invalid: x: expected a plain object, found an object", [{"field": "x", "message": "expected a plain object, found an object"}]],
  ["error details: Map", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a plain object, found an object", [{"field": "details.list[1]", "message": "expected a plain object, found an object"}]],
  ["policy document: Set", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a plain object, found an object", [{"field": "", "message": "expected a plain object, found an object"}]],
  ["policy value nested: Set", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a plain object, found an object", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a plain object, found an object"}]],
  ["state document value: Set", "validation.state_invalid", "x", "validation.state_invalid: x: expected a plain object, found an object", [{"field": "x", "message": "expected a plain object, found an object"}]],
  ["error details: Set", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a plain object, found an object", [{"field": "details.list[1]", "message": "expected a plain object, found an object"}]],
  ["policy document: Date", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a plain object, found an object", [{"field": "", "message": "expected a plain object, found an object"}]],
  ["policy value nested: Date", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a plain object, found an object", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a plain object, found an object"}]],
  ["state document value: Date", "validation.state_invalid", "x", "validation.state_invalid: x: expected a plain object, found an object", [{"field": "x", "message": "expected a plain object, found an object"}]],
  ["error details: Date", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a plain object, found an object", [{"field": "details.list[1]", "message": "expected a plain object, found an object"}]],
  ["policy document: class instance", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a plain object, found an object", [{"field": "", "message": "expected a plain object, found an object"}]],
  ["policy value nested: class instance", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a plain object, found an object", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a plain object, found an object"}]],
  ["state document value: class instance", "validation.state_invalid", "x", "validation.state_invalid: x: expected a plain object, found an object", [{"field": "x", "message": "expected a plain object, found an object"}]],
  ["error details: class instance", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a plain object, found an object", [{"field": "details.list[1]", "message": "expected a plain object, found an object"}]],
  ["policy document: boxed number", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a plain object, found an object", [{"field": "", "message": "expected a plain object, found an object"}]],
  ["policy value nested: boxed number", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a plain object, found an object", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a plain object, found an object"}]],
  ["state document value: boxed number", "validation.state_invalid", "x", "validation.state_invalid: x: expected a plain object, found an object", [{"field": "x", "message": "expected a plain object, found an object"}]],
  ["error details: boxed number", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a plain object, found an object", [{"field": "details.list[1]", "message": "expected a plain object, found an object"}]],
  ["policy document: cyclic", "validation.retry_policy_invalid", "again", "validation.retry_policy_invalid: again: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "again", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["policy value nested: cyclic", "validation.retry_policy_invalid", "non_retryable_errors", "validation.retry_policy_invalid: non_retryable_errors: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "non_retryable_errors", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["state document value: cyclic", "validation.state_invalid", "x", "validation.state_invalid: x: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "x", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["error details: cyclic", "validation.invalid_argument", "details", "validation.invalid_argument: details: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "details", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["policy document: 65 deep", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["policy value nested: 65 deep", "validation.retry_policy_invalid", "non_retryable_errors", "validation.retry_policy_invalid: non_retryable_errors: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "non_retryable_errors", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["state document value: 65 deep", "validation.state_invalid", "x", "validation.state_invalid: x: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "x", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["error details: 65 deep", "validation.invalid_argument", "details", "validation.invalid_argument: details: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "details", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["policy document: lone high surrogate", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["policy value nested: lone high surrogate", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["state document value: lone high surrogate", "validation.state_invalid", "x", "validation.state_invalid: x: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "x", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["error details: lone high surrogate", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "details.list[1]", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["policy document: lone low surrogate", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["policy value nested: lone low surrogate", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["state document value: lone low surrogate", "validation.state_invalid", "x", "validation.state_invalid: x: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "x", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["error details: lone low surrogate", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "details.list[1]", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["policy document: key with lone surrogate", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["policy value nested: key with lone surrogate", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["state document value: key with lone surrogate", "validation.state_invalid", "x", "validation.state_invalid: x: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "x", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["error details: key with lone surrogate", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "details.list[1]", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["policy document: Uint8Array", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a plain object, found an object", [{"field": "", "message": "expected a plain object, found an object"}]],
  ["policy value nested: Uint8Array", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a plain object, found an object", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a plain object, found an object"}]],
  ["state document value: Uint8Array", "validation.state_invalid", "x", "validation.state_invalid: x: expected a plain object, found an object", [{"field": "x", "message": "expected a plain object, found an object"}]],
  ["error details: Uint8Array", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a plain object, found an object", [{"field": "details.list[1]", "message": "expected a plain object, found an object"}]],
  ["policy document: long string in a Map key", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected a plain object, found an object", [{"field": "", "message": "expected a plain object, found an object"}]],
  ["policy value nested: long string in a Map key", "validation.retry_policy_invalid", "non_retryable_errors[1].deeper[1]", "validation.retry_policy_invalid: non_retryable_errors[1].deeper[1]: expected a plain object, found an object", [{"field": "non_retryable_errors[1].deeper[1]", "message": "expected a plain object, found an object"}]],
  ["state document value: long string in a Map key", "validation.state_invalid", "x", "validation.state_invalid: x: expected a plain object, found an object", [{"field": "x", "message": "expected a plain object, found an object"}]],
  ["error details: long string in a Map key", "validation.invalid_argument", "details.list[1]", "validation.invalid_argument: details.list[1]: expected a plain object, found an object", [{"field": "details.list[1]", "message": "expected a plain object, found an object"}]],
  ["details accepted: null", "ok"],
  ["details accepted: true", "ok"],
  ["details accepted: -0", "ok"],
  ["details accepted: 2^60", "ok"],
  ["details accepted: 1e21", "ok"],
  ["details accepted: 0.1", "ok"],
  ["details accepted: BigInt 2^64-1", "ok"],
  ["details accepted: BigInt -2^63", "ok"],
  ["details accepted: 64 deep", "validation.invalid_argument", "details", "validation.invalid_argument: details: expected a JSON value nested at most 64 levels deep (is it cyclic?)", [{"field": "details", "message": "expected a JSON value nested at most 64 levels deep (is it cyclic?)"}]],
  ["details accepted: null prototype", "ok"],
  ["details accepted: hole", "ok"],
  ["details accepted: undefined in array", "ok"],
  ["details accepted: undefined property", "ok"],
  ["details accepted: U+FFFD", "ok"],
  ["details accepted: emoji", "ok"],
  ["policy text: lone surrogate", "validation.retry_policy_invalid", "", "validation.retry_policy_invalid: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["state text: lone surrogate", "validation.state_invalid", "", "validation.state_invalid: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["preset config: NaN", "validation.retry_policy_invalid", "preset.retry", "validation.retry_policy_invalid: preset.retry: expected a finite number, found NaN", [{"field": "preset.retry", "message": "expected a finite number, found NaN"}]],
  ["preset config: string", "validation.retry_policy_invalid", "preset", "validation.retry_policy_invalid: preset: expected the system's options as an object, found the string \"{}\"", [{"field": "preset", "message": "expected the system's options as an object, found the string \"{}\""}]],
  ["preset system: lone surrogate", "validation.invalid_argument", "system", "validation.invalid_argument: system: expected well-formed Unicode text, found a string with a lone surrogate", [{"field": "system", "message": "expected well-formed Unicode text, found a string with a lone surrogate"}]],
  ["several faults", "validation.retry_policy_invalid", "max_attempts", "validation.retry_policy_invalid: max_attempts: expected a non-negative integer at most 9007199254740991, found -1; jitter: expected true or false, found the string \"yes\"; on_exhaustion: expected \"discard\" or \"dead_letter\", found the number 5", [{"field": "max_attempts", "message": "expected a non-negative integer at most 9007199254740991, found -1"}, {"field": "jitter", "message": "expected true or false, found the string \"yes\""}, {"field": "on_exhaustion", "message": "expected \"discard\" or \"dead_letter\", found the number 5"}]],
  ["message with quotes, newline, non-ASCII", "validation.retry_policy_invalid", "we\"ird\nkey \u00e9 \ud83d\ude00", "validation.retry_policy_invalid: we\"ird\nkey \u00e9 \ud83d\ude00: unknown field \"we\\\"ird\\nkey \u00e9 \ud83d\ude00\"; expected one of max_attempts, initial_interval, backoff_coefficient, max_interval, jitter, non_retryable_errors, on_exhaustion, backoff_strategy", [{"field": "we\"ird\nkey \u00e9 \ud83d\ude00", "message": "unknown field \"we\\\"ird\\nkey \u00e9 \ud83d\ude00\"; expected one of max_attempts, initial_interval, backoff_coefficient, max_interval, jitter, non_retryable_errors, on_exhaustion, backoff_strategy"}]],
  ["unknown option with a quote", "validation.invalid_argument", "ty\"pe", "validation.invalid_argument: ty\"pe: unknown option \"ty\\\"pe\" in failure; expected one of: attempt, type, code, timedOut", [{"field": "ty\"pe", "message": "unknown option \"ty\\\"pe\" in failure; expected one of: attempt, type, code, timedOut"}]],
  ["string described: long non-ASCII", "validation.invalid_argument", "retry_number", "validation.invalid_argument: retry_number: expected an integer number between 0 and 9007199254740991, found the string \"\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00...\"", [{"field": "retry_number", "message": "expected an integer number between 0 and 9007199254740991, found the string \"\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00\u00e9\ud83d\ude00...\""}]],
  ["string described: quotes and controls", "validation.invalid_argument", "retry_number", "validation.invalid_argument: retry_number: expected an integer number between 0 and 9007199254740991, found the string \"a\\\"b\\\\c\\n\\t\\u0001\u0301\"", [{"field": "retry_number", "message": "expected an integer number between 0 and 9007199254740991, found the string \"a\\\"b\\\\c\\n\\t\\u0001\u0301\""}]],
  ["string described: lone surrogate", "validation.invalid_argument", "retry_number", "validation.invalid_argument: retry_number: expected an integer number between 0 and 9007199254740991, found the string \"x\ufffdy\"", [{"field": "retry_number", "message": "expected an integer number between 0 and 9007199254740991, found the string \"x\ufffdy\""}]]
];

test("JS values as JSON documents: the old walker's answers, rejection by rejection", () => {
  const list = cases();
  assert.equal(list.length, EXPECTED.length);
  list.forEach(([label, f], i) => {
    const [elabel, ...want] = EXPECTED[i];
    assert.equal(label, elabel);
    let got;
    try {
      f();
      got = ["ok"];
    } catch (e) {
      assert.ok(e instanceof Error, label);
      got = [e.code, e.field, e.message, e.faults];
    }
    assert.deepEqual(got, want, label);
  });
});

test("accepted values become the same document as their JSON text", () => {
  const p = new RetryPolicy(JSON.stringify({ max_attempts: 4, non_retryable_errors: ["a.*"] }));
  const s = new RetryState();
  const details = { n: [1, 2.5, -0, 2 ** 60, 1e21, null, true, "\u00e9\u{1F600}\"\n"], big: 18446744073709551615n, neg: -(2n ** 63n), u: undefined, hole: [, 1] };
  s.recordFailure(p, { type: "t", message: "m", details }, { now: 0, jitter: { u: 0 } });
  assert.deepEqual(s.toJSON().errors[0].details, {
    n: [1, 2.5, 0, 2 ** 60, 1e21, null, true, "\u00e9\u{1F600}\"\n"],
    big: 18446744073709551615,
    neg: -(2 ** 63),
    hole: [null, 1],
  });
  // A given null is kept as null; an omitted one is no key.
  const t = new RetryState();
  t.recordFailure(p, { type: "t", message: "m", details: null }, { now: 0, jitter: { u: 0 } });
  t.recordFailure(p, { type: "t", message: "m" }, { now: 0, jitter: { u: 0 } });
  assert.deepEqual(t.toJSON().errors.map((e) => "details" in e), [true, false]);
  assert.equal(t.toJSON().errors[0].details, null);
});

test("core errors cross as [code, message, field, fault message, ...] and keep every fault", () => {
  const doc = JSON.stringify({ max_attempts: -1, jitter: "yes", on_exhaustion: 5, ['we"ird\nkey \u00e9 \u{1F600}']: 1 });
  const raw = runRaw(0, 0, [], [doc]).error;
  let thrown;
  try {
    new RetryPolicy(doc);
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown instanceof Error);
  assert.ok(thrown.faults.length >= 4, "every fault");
  assert.deepEqual(raw, [thrown.code, thrown.message, ...thrown.faults.flatMap((f) => [f.field, f.message])]);
  assert.equal(thrown.field, thrown.faults[0].field);
  // The message is the code and every fault, as the core renders it.
  assert.equal(thrown.message, `${thrown.code}: ${thrown.faults.map((f) => (f.field ? `${f.field}: ${f.message}` : f.message)).join("; ")}`);
  assert.deepEqual(Object.keys(thrown), ["code", "field", "faults"]);
});

test("text of every kind and length crosses both ways unchanged (short ASCII by a JS loop, the rest by TextEncoder/TextDecoder)", () => {
  for (const len of [0, 1, 62, 63, 64, 65, 127, 128, 255, 256, 257, 1000]) {
    for (const unit of ["a", "\u00e9", "\u{1F600}", "\u2028", '"', "\\", "\u0001", "\ufffd"]) {
      const t = unit.repeat(len).slice(0, Math.max(len, 1));
      if (!t.isWellFormed()) continue;
      const p = `${t}.*`;
      assert.equal(firstMatch(`${t}.x`, ["nope", p]), p, `${len} ${JSON.stringify(unit)}`);
      assert.equal(matches(`${t}.x`, [p]), true);
      const d = new RetryPolicy({ non_retryable_errors: [p] }).decide({ attempt: 1, type: `${t}.y` }, { now: 0 });
      assert.equal(d.matchedPattern, p);
      assert.deepEqual(new RetryPolicy({ non_retryable_errors: [p] }).nonRetryableErrors, [p]);
    }
  }
});

test("RetryState and Reservation: number getters (__objNum) agree with the full route; freed and borrowed objects are typed errors", () => {
  const p = new RetryPolicy({ max_attempts: 3 });
  const s = new RetryState({ historyLimit: 12 });
  const r = new Reservation(2, 30_000, 1_000);
  // The state document (the full route's text) says the same.
  const check = () => {
    const doc = s.toJSON();
    assert.deepEqual([s.attempt, s.nextRetryAt], [doc.attempt, doc.next_retry_at ? parseTimestamp(doc.next_retry_at) : null]);
  };
  check();
  assert.deepEqual([s.attempt, s.historyLimit, s.nextRetryAt, s.terminal], [1, 12, null, null]);
  const d = s.recordFailure(p, { type: "a", message: "b" }, { now: 5, jitter: { u: 0 } });
  assert.deepEqual([s.attempt, s.nextRetryAt], [2, d.nextRetryAt]);
  check();
  assert.deepEqual([r.attempt, r.visibilityTimeoutMs, r.deadline], [2, 30_000, 31_000]);
  for (const [obj, cls] of [[s, "RetryState"], [r, "Reservation"]]) {
    const other = cls === "RetryState" ? Reservation : RetryState;
    for (const name of ["attempt"]) {
      const get = Object.getOwnPropertyDescriptor(other.prototype, name).get;
      // A getter of the other class on this object: not its object.
      assert.throws(() => get.call(obj), (e) => e.code === "validation.invalid_argument" && e.field === "this" && e.message.includes(`expected a ${other.name}, found an object (${cls})`));
    }
  }
  for (const bad of [{}, null, 5, Object.create(RetryState.prototype)]) {
    assert.throws(() => RetryState.prototype.toString.call(bad), (e) => e.code === "validation.invalid_argument" && e.field === "this");
    assert.throws(() => Reservation.prototype.isExpired.call(bad, 0), (e) => e.code === "validation.invalid_argument" && e.field === "this");
  }
  r.free();
  r.free(); // twice: nothing
  assert.throws(() => r.deadline, { message: "validation.invalid_argument: this: expected a live Reservation, found one already freed" });
  if (Symbol.dispose) {
    const q = new RetryState();
    q[Symbol.dispose]();
    assert.throws(() => q.attempt, { message: "validation.invalid_argument: this: expected a live RetryState, found one already freed" });
  }
});

test("object handles: stale, forged and of the other class name no object", () => {
  const h = runNumber(6, 0, [-1]);
  const res = runNumber(11, 0, [1, 10, 0]);
  // The fast getters and the full route (`__run` 8 and 12) agree.
  for (const k of [0, 1, 2]) {
    assert.equal(glue.__objNum(h, k), JSON.parse(run(8, h, [k])) ?? -1, `state ${k}`);
    assert.equal(glue.__objNum(res, 3 + k), JSON.parse(run(12, res, [k])), `reservation ${k}`);
  }
  assert.equal(glue.__objNum(h, 0), 1);
  assert.equal(glue.__objNum(res, 5), 10);
  // The other class's numbers through the wrong handle: none.
  assert.equal(glue.__objNum(h, 5), -2);
  assert.equal(glue.__objNum(res, 0), -2);
  assert.throws(() => run(8, res, [0]), { message: "validation.invalid_argument: this: expected a live RetryState, found a released or unknown object handle" });
  glue.__release(h, false, 1);
  assert.equal(glue.__objNum(h, 0), -2);
  assert.throws(() => run(8, h, [0]), { message: "validation.invalid_argument: this: expected a live RetryState, found one already freed" });
  glue.__release(h, true, 1);
  assert.throws(() => run(8, h, [0]), { message: "validation.invalid_argument: this: expected a live RetryState, found a released or unknown object handle" });
  // The slot is reused with the next generation: the old handle stays dead.
  const again = Array.from({ length: 4 }, () => runNumber(6, 0, [-1]));
  assert.ok(again.some((x) => x % 2 ** 25 === h % 2 ** 25));
  for (const x of again) assert.ok(Number.isInteger(x) && x >= 0 && x < 2 ** 31, `handle ${x}`);
  assert.ok(!again.includes(h));
  assert.equal(glue.__objNum(h, 0), -2);
  for (const bad of [-1, 0.5, NaN, Infinity, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 60]) assert.equal(glue.__objNum(bad, 0), -2);
  for (const x of [...again, res]) glue.__release(x, true, 1);
});

test("collected RetryState and Reservation objects give their registry slots back", () => {
  const out = inChild(`
    const base = live();
    const keptState = new RetryState();
    const keptReservation = new Reservation(1, 1000, 0);
    (() => {
      for (let i = 0; i < 1000; i++) {
        const s = i % 2 ? new RetryState() : RetryState.fromJSON({ attempt: 2, errors: [] });
        const r = new Reservation(1, 10, i);
        if (i % 3 === 0) { s.free(); r.free(); }
      }
    })();
    out.afterMake = live() - base;
    await collect(base + 2);
    out.afterGc = live() - base;
    out.kept = [keptState.attempt, keptReservation.deadline, keptState.recordTimeout(new RetryPolicy(), { now: 0, jitter: { u: 0 } }).attempt];
  `);
  assert.equal(out.afterMake, 2002);
  assert.equal(out.afterGc, 2);
  assert.deepEqual(out.kept, [1, 1000, 1]);
});

test("hosts without String.prototype.isWellFormed: the fallback check finds the same lone surrogates", () => {
  const code = `
    const native = String.prototype.isWellFormed;
    delete String.prototype.isWellFormed;
    const { RetryPolicy, matches } = await import("ojs-retry-wasm");
    const texts = ["", "a", "\\ud800", "\\udc00", "\\ud800\\udc00", "\\udc00\\ud800", "a\\ud800b", "\\u{1F600}x", "\\ud800\\ud800\\udc00", "x\\udfff", "\\ud83d\\ude00\\ud83d"];
    const out = texts.map((t) => {
      let policy = "ok";
      let arg = "ok";
      try { new RetryPolicy({ non_retryable_errors: ["x" + t] }); } catch (e) { policy = e.message; }
      try { matches(t, []); } catch (e) { arg = e.message; }
      return [native.call(t), policy, arg];
    });
    process.stdout.write(JSON.stringify(out));
  `;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: HERE, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  for (const [wellFormed, policy, arg] of JSON.parse(r.stdout)) {
    if (wellFormed) {
      assert.equal(policy, "ok");
      assert.equal(arg, "ok");
    } else {
      assert.match(policy, /^validation\.retry_policy_invalid: non_retryable_errors\[0\]: expected well-formed Unicode text/);
      assert.match(arg, /^validation\.invalid_argument: error_type: expected well-formed Unicode text/);
    }
  }
});

test("RetryState.terminal: the number from __objNum names the action the full route names", () => {
  for (const terminal of ["discard", "dead_letter", null]) {
    const doc = JSON.stringify({ attempt: 2, errors: [], terminal });
    const h = runNumber(7, 0, [-1], [doc]);
    const k = glue.__objNum(h, 6);
    assert.equal(JSON.parse(run(8, h, [3])), terminal);
    assert.equal(k === -1, terminal === null);
    glue.__release(h, true, 1);
    // Through the API, twice (the second read takes the cached name).
    const s = RetryState.fromJSON(doc);
    assert.equal(s.terminal, terminal);
    assert.equal(s.terminal, terminal);
  }
  const p = new RetryPolicy({ max_attempts: 1, on_exhaustion: "dead_letter" });
  const s = new RetryState();
  assert.equal(s.terminal, null);
  s.recordFailure(p, { type: "a", message: "b" }, { now: 0, jitter: { u: 0 } });
  assert.equal(s.terminal, "dead_letter");
  s.free();
  assert.throws(() => s.terminal, { message: "validation.invalid_argument: this: expected a live RetryState, found one already freed" });
});
