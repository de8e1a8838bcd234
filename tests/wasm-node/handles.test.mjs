// RetryPolicy in the wasm package is a plain JS class holding a handle into
// the module's registry (bindings-wasm/src/registry.rs). Checked here: the
// JSON-text fast path (`__parse` over a buffer in wasm memory) agrees with
// the full path (`__run`), errors included; policies the garbage collector
// takes give their registry slots back, freed or not, while live ones keep
// answering. The GC scenarios run in child processes started with
// --expose-gc.
import { test } from "node:test";
import assert from "node:assert/strict";
import { RetryPolicy } from "ojs-retry-wasm";

import { glue, fast, policyText, inChild } from "./wire.mjs";

/** `fn()`'s outcome: the policy's canonical text, or the error's parts. */
function outcome(fn) {
  try {
    return { ok: fn() };
  } catch (e) {
    return { message: e.message, code: e.code, field: e.field, faults: e.faults };
  }
}

const TEXTS = [
  "{}",
  " { } ",
  '{"max_attempts": 4}',
  '{"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0, "max_interval": "PT1H", "jitter": true, "non_retryable_errors": ["payment.card_stolen", "validation.*"], "on_exhaustion": "dead_letter"}',
  '{"non_retryable_errors": ["a\\u00e9"]}', // an escape: the fast reader gives up, the core's other reader reads it
  '{"non_retryable_errors": ["\u00e9t\u00e9.*", "\u{1F600}"]}',
  '{"non_retryable_errors": ["a\ufffd"]}', // a real U+FFFD: the full path tells it from a lone surrogate
  '{"non_retryable_errors": ["a\ud800"]}', // a lone surrogate
  '{"non_retryable_errors": ["\udc00"], "jitter": false}',
  "",
  " ",
  "null",
  "[]",
  "3",
  '"text"',
  "{",
  '{"max_attempts": -1, "jitter": "yes"}',
  '{"max_attempts": 4, "max_attempts": 5}',
  '{"initial_interval": "PT10M"}',
  '{"unknown": 1}',
  '{"max_attempts": 4} trailing',
  '{"backoff_coefficient": 1e400}',
  // Longer than the text buffer (16384 bytes): the full path.
  JSON.stringify({ non_retryable_errors: Array.from({ length: 1200 }, (_, i) => `error.type.${i}`) }),
  JSON.stringify({ non_retryable_errors: ["\u20ac".repeat(6000)] }),
  JSON.stringify({ non_retryable_errors: ["x".repeat(16_000)] }),
];

test("new RetryPolicy(text): the fast path agrees with the full path, errors included", () => {
  for (const text of TEXTS) {
    const fast = outcome(() => new RetryPolicy(text).toString());
    // `merge` never takes `__parse`: the full route.
    const full = outcome(() => RetryPolicy.merge(text).toString());
    assert.deepEqual(fast, full, text.slice(0, 60));
  }
});

test("new RetryPolicy() (the defaults, built directly) is the policy of an empty document", () => {
  const d = new RetryPolicy();
  for (const same of [new RetryPolicy({}), new RetryPolicy("{}"), RetryPolicy.merge(), RetryPolicy.merge({}, "{}")]) {
    assert.equal(d.toString(), same.toString());
    for (const n of [1, 2, 3, 10]) assert.equal(d.delay(n, 0.25), same.delay(n, 0.25));
  }
});

test("__parse reads the text buffer: a handle for a valid document, -1 for anything else", () => {
  // UTF-8 bytes, whatever they spell (api.js sends it ASCII text only).
  const size = 16384;
  const at = glue.__scratch(size, 1);
  assert.ok(at > 0);
  assert.equal(glue.__scratch(size, 1), at, "the buffer never moves");
  assert.equal(glue.__scratch(size + 1, 1), -1);
  const encoder = new TextEncoder();
  let taken = 0;
  for (const text of TEXTS) {
    const bytes = encoder.encode(text);
    // A lone surrogate has no UTF-8 (the encoder writes U+FFFD): api.js
    // sends only ASCII text here, and every other text to the full path.
    if (bytes.length > size || !text.isWellFormed()) continue;
    new Uint8Array(fast.memory.buffer, at, size).set(bytes);
    const h = glue.__parse(bytes.length);
    const full = outcome(() => new RetryPolicy(text).toString());
    if (h >= 0) {
      taken++;
      assert.deepEqual({ ok: policyText(h) }, full, text.slice(0, 60));
      glue.__release(h, true);
    } else {
      assert.equal(full.ok, undefined, text.slice(0, 60));
    }
  }
  assert.ok(taken >= 6, `the fast path took ${taken} documents`);
  for (const bad of [-1, 0.5, NaN, size + 1, 2 ** 53]) assert.equal(glue.__parse(bad), -1, `length ${bad}`);
  // Bytes that are not UTF-8: -1 (the JS side never writes such bytes).
  new Uint8Array(fast.memory.buffer, at, 4).set([0x7b, 0xff, 0x7d, 0x20]);
  assert.equal(glue.__parse(3), -1);
});

test("collected policies give their registry slots back; live ones keep answering", () => {
  const out = inChild(`
    const base = live();
    const kept = new RetryPolicy('{"max_attempts": 7, "jitter": false}');
    const keptMerged = RetryPolicy.merge({ max_attempts: 8 }, '{"jitter": false}');
    (() => {
      for (let i = 0; i < 2000; i++) {
        const p = i % 3 === 0 ? new RetryPolicy({ max_attempts: i }) : i % 3 === 1 ? new RetryPolicy('{"max_attempts": 5}') : RetryPolicy.preset("sidekiq", { retry: 3 });
        if (p.maxAttempts < 0) throw new Error("unreachable");
      }
    })();
    out.afterMake = live() - base;
    await collect(base + 2);
    out.afterGc = live() - base;
    out.kept = [kept.maxAttempts, kept.delay(2, 0.5), keptMerged.maxAttempts, keptMerged.delay(3)];
    // Freed ones keep their slot until collected (a handle never outlives
    // its slot), then give it back.
    (() => {
      for (let i = 0; i < 500; i++) new RetryPolicy('{"max_attempts": 6}').free();
    })();
    out.afterFree = live() - base;
    await collect(base + 2);
    out.afterFreeGc = live() - base;
    // Slots are reused: new policies answer for themselves.
    const fresh = Array.from({ length: 100 }, (_, i) => new RetryPolicy({ max_attempts: i + 1 }));
    out.fresh = fresh.every((p, i) => p.maxAttempts === i + 1);
    out.kept2 = [kept.maxAttempts, keptMerged.maxAttempts, new RetryState().recordFailure(kept, { type: "a", message: "b" }, { now: 0 }).delayMs];
  `);
  assert.equal(out.afterMake, 2002);
  assert.equal(out.afterGc, 2);
  assert.deepEqual(out.kept, [7, 2000, 8, 4000]);
  assert.equal(out.afterFree, 502);
  assert.equal(out.afterFreeGc, 2);
  assert.equal(out.fresh, true);
  assert.deepEqual(out.kept2, [7, 8, 1000]);
});

test("RetryPolicy keeps the surface it had as a wasm-bindgen class", () => {
  assert.equal(RetryPolicy.name, "RetryPolicy");
  assert.equal(RetryPolicy.length, 1);
  const methods = { free: 0, delay: 2, delays: 2, schedule: 2, decide: 2, toString: 0, toJSON: 0 };
  for (const [name, length] of Object.entries(methods)) {
    const d = Object.getOwnPropertyDescriptor(RetryPolicy.prototype, name);
    assert.equal(typeof d?.value, "function", name);
    assert.equal(d.value.length, length, name);
    assert.equal(d.enumerable, false, name);
    assert.equal(d.writable, true, name);
  }
  assert.equal(RetryPolicy.preset.length, 2);
  assert.equal(typeof RetryPolicy.merge, "function");
  if (Symbol.dispose) assert.equal(RetryPolicy.prototype[Symbol.dispose], RetryPolicy.prototype.free);
  // Nothing of the machinery shows: no own keys, no symbols, no hidden
  // members on the prototype.
  const p = new RetryPolicy();
  assert.deepEqual(Reflect.ownKeys(p), []);
  for (const hidden of ["__wbg_ptr", "__handle", "__num", "__str", "__schedule", "__destroy_into_raw"]) {
    assert.ok(!(hidden in p), hidden);
  }
  // Subclasses get a handle too, and are accepted wherever a policy is.
  class Mine extends RetryPolicy {
    twice(n) {
      return 2 * this.delay(n, 0.5);
    }
  }
  const m = new Mine('{"max_attempts": 7, "jitter": false}');
  assert.ok(m instanceof Mine && m instanceof RetryPolicy);
  assert.equal(m.maxAttempts, 7);
  assert.equal(m.twice(1), 2000);
  assert.equal(m.schedule(1)[0].cappedMs, 1000);
});
