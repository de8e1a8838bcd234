// Conformance-vector runner for the JS API (tests/vectors/README.md), used by
// the node suites until / unless the shared runner in tests/js-common is
// used instead. `runCase(api, c)` runs one case against an object exposing
// the public API of ojs-retry.d.ts and throws an AssertionError on any
// mismatch. An unknown op is a failure, never a skip.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const VECTORS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'vectors')

/** Every case of every `*.json` in tests/vectors, discovered at run time. */
export function loadCases(dir = VECTORS_DIR) {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
  assert.ok(files.length > 0, `no *.json vector files in ${dir}`)
  const cases = []
  const ids = new Set()
  for (const file of files) {
    const doc = JSON.parse(readFileSync(join(dir, file), 'utf8'))
    assert.ok(Array.isArray(doc.cases), `${file}: no "cases" array`)
    for (const c of doc.cases) {
      assert.ok(!ids.has(c.id), `duplicate case id ${c.id}`)
      ids.add(c.id)
      cases.push({ file, ...c })
    }
  }
  return cases
}

/**
 * Whether `runtime` runs case `c`; a case restricted to other runtimes must be
 * listed in `notApplicable` (by id), otherwise this throws.
 */
export function applies(c, runtime, notApplicable = new Set()) {
  if (!Array.isArray(c.runtimes) || c.runtimes.includes(runtime)) return true
  if (notApplicable.has(c.id)) return false
  throw new Error(
    `case ${c.id} is restricted to runtimes ${JSON.stringify(c.runtimes)} and ${runtime} does not list it as not applicable`,
  )
}

const camel = (s) => s.replace(/_([a-z])/g, (_, ch) => ch.toUpperCase())

function jitterArg(j) {
  if (j === undefined || j === null || j.none) return undefined
  if ('seed' in j) return { seed: BigInt(j.seed) }
  if ('u' in j) return { u: j.u }
  if ('key' in j) return { key: j.key }
  throw new Error(`unknown jitter source ${JSON.stringify(j)}`)
}

/** Expected ⊆ actual: every expected key present and equal; arrays exact. */
export function assertSubset(actual, expected, path = '$', mapKey = (k) => k) {
  if (expected === null) {
    assert.equal(actual, null, `${path}: expected null, found ${JSON.stringify(actual)}`)
    return
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array, found ${JSON.stringify(actual)}`)
    assert.equal(actual.length, expected.length, `${path}: length`)
    expected.forEach((e, i) => assertSubset(actual[i], e, `${path}[${i}]`, mapKey))
    return
  }
  if (typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: expected an object, found ${JSON.stringify(actual)}`)
    for (const [k, e] of Object.entries(expected)) {
      const ak = mapKey(k)
      assert.ok(ak in actual, `${path}: missing key ${ak}`)
      assertSubset(actual[ak], e, `${path}.${ak}`, mapKey)
    }
    return
  }
  assert.equal(actual, expected, `${path}: expected ${JSON.stringify(expected)}, found ${JSON.stringify(actual)}`)
}

function assertError(err, expected, id) {
  assert.ok(err instanceof Error, `${id}: expected an Error, found ${err}`)
  assert.equal(err.code, expected.code, `${id}: code (message: ${err.message})`)
  assert.equal(err.field, expected.field, `${id}: field (message: ${err.message})`)
  assert.ok(Array.isArray(err.faults) && err.faults.length > 0, `${id}: faults`)
  assert.equal(err.faults[0].field, err.field, `${id}: faults[0].field === field`)
  for (const f of err.faults) {
    assert.equal(typeof f.message, 'string')
    assert.ok(f.message.length > 0, `${id}: a fault without a message`)
  }
  if (expected.fields) {
    assert.deepEqual(
      err.faults.map((f) => f.field),
      expected.fields,
      `${id}: fault fields (message: ${err.message})`,
    )
  }
}

function failureArg(f) {
  const out = { attempt: f.attempt }
  if ('type' in f) out.type = f.type
  if ('code' in f) out.code = f.code
  if ('timed_out' in f) out.timedOut = f.timed_out
  return out
}

function jobErrorArg(e) {
  const out = { type: e.type, message: e.message }
  if ('code' in e) out.code = e.code
  if ('details' in e) out.details = e.details
  return out
}

/** The ops: each returns the actual value to compare with `expect`. */
const OPS = {
  parse_duration: (api, i) => ({ ms: api.parseDuration(i.text) }),
  format_duration: (api, i) => ({ text: api.formatDuration(i.ms) }),
  parse_timestamp: (api, i) => ({ ms: api.parseTimestamp(i.text) }),
  format_timestamp: (api, i) => ({ text: api.formatTimestamp(i.ms) }),
  jitter_sample: (api, i) => ({ bits: api.jitterSample(i.retry_number, jitterArg(i.jitter)) }),
  matches: (api, i) => ({
    matches: api.matches(i.error_type, i.patterns),
    pattern: api.firstMatch(i.error_type, i.patterns),
  }),
  policy: (api, i) => {
    const layers = i.layers ?? i.json
    assert.ok(Array.isArray(layers), 'policy case without layers or json')
    const p = api.RetryPolicy.merge(...layers)
    return { policy: p.toJSON(), canonical_json: p.toString() }
  },
  delay: (api, i) => ({
    delay_ms: new api.RetryPolicy(i.policy).delay(i.retry_number, jitterArg(i.jitter)),
  }),
  schedule: (api, i) => {
    const rows = new api.RetryPolicy(i.policy).schedule(i.count, jitterArg(i.jitter))
    return { rows }
  },
  decide: (api, i) => {
    const p = new api.RetryPolicy(i.policy)
    const opts = { now: i.now }
    const j = jitterArg(i.jitter)
    if (j !== undefined) opts.jitter = j
    return { decision: p.decide(failureArg(i.failure), opts) }
  },
  reservation: (api, i) => {
    const r = new api.Reservation(i.attempt, i.visibility_timeout_ms, i.now)
    const results = i.events.map((ev) => {
      const [[kind, now]] = Object.entries(ev)
      switch (kind) {
        case 'heartbeat': {
          const h = r.heartbeat(now)
          if (h.extended) {
            assert.deepEqual(Object.keys(h).sort(), ['deadline', 'extended'])
            return { extended: h.deadline }
          }
          assert.deepEqual(h, { extended: false })
          return 'expired'
        }
        case 'is_expired':
          return r.isExpired(now)
        case 'expiry': {
          const f = r.expiry(now)
          return f === null ? null : { attempt: f.attempt, timed_out: f.timedOut }
        }
        default:
          throw new Error(`unknown reservation event ${kind}`)
      }
    })
    return { results, deadline: r.deadline }
  },
}

/** `state` is special: an error may come from a given event, after earlier decisions. */
function runState(api, c) {
  const i = c.input
  const decisions = []
  let stage = 'setup'
  let eventIndex = -1
  try {
    const p = new api.RetryPolicy(i.policy)
    const opts = i.history_limit === undefined ? undefined : { historyLimit: i.history_limit }
    const s = i.initial === undefined ? new api.RetryState(opts) : api.RetryState.fromJSON(i.initial, opts)
    stage = 'events'
    for (const [k, ev] of i.events.entries()) {
      eventIndex = k
      const o = { now: ev.now }
      const j = jitterArg(ev.jitter)
      if (j !== undefined) o.jitter = j
      if (ev.fail) decisions.push(s.recordFailure(p, jobErrorArg(ev.fail), o))
      else if (ev.timeout) decisions.push(s.recordTimeout(p, o))
      else throw new Error(`unknown state event ${JSON.stringify(ev)}`)
    }
    if (c.error) assert.fail(`${c.id}: expected error ${c.error.code} (${c.error.field}), got success`)
    if ('decisions' in c.expect) assertSubset(decisions, c.expect.decisions, '$.decisions', camel)
    const doc = s.toJSON()
    if ('state' in c.expect) assertSubset(doc, c.expect.state, '$.state')
    // toString() is the same document as compact JSON text.
    assert.deepEqual(JSON.parse(s.toString()), JSON.parse(JSON.stringify(doc)))
    // The document reads back to the same state.
    assert.deepEqual(api.RetryState.fromJSON(s.toString(), { historyLimit: s.historyLimit }).toJSON(), doc)
  } catch (err) {
    if (!c.error || err instanceof assert.AssertionError) throw err
    assertError(err, c.error, c.id)
    if (c.error.event !== undefined) {
      assert.equal(stage, 'events', `${c.id}: the error came before the events: ${err.message}`)
      assert.equal(eventIndex, c.error.event, `${c.id}: error raised by event`)
    }
    if (c.expect_before_error) assertSubset(decisions, c.expect_before_error.decisions, '$.decisions', camel)
  }
}

export function runCase(api, c) {
  if (c.op === 'state') return runState(api, c)
  const op = OPS[c.op]
  if (!op) throw new Error(`case ${c.id}: unknown op "${c.op}" (this runner must be taught it)`)
  assert.ok(('expect' in c) !== ('error' in c), `case ${c.id}: exactly one of expect / error`)
  let actual
  try {
    actual = op(api, c.input)
  } catch (err) {
    if (c.error && !(err instanceof assert.AssertionError)) {
      assertError(err, c.error, c.id)
      return
    }
    throw err
  }
  if (c.error) assert.fail(`${c.id}: expected error ${c.error.code} (${c.error.field}), got ${JSON.stringify(actual)}`)
  const e = c.expect
  switch (c.op) {
    case 'schedule':
      assert.equal(actual.rows.length, c.input.count, 'row count')
      assertSubset(actual.rows, e.rows, '$.rows', camel)
      break
    case 'decide':
      assertSubset(actual.decision, e.decision, '$.decision', camel)
      break
    case 'policy':
      assertSubset(actual.policy, e.policy, '$.policy')
      if ('canonical_json' in e) assert.equal(actual.canonical_json, e.canonical_json)
      // toJSON() and toString() describe the same policy.
      assert.deepEqual(JSON.parse(actual.canonical_json), JSON.parse(JSON.stringify(actual.policy)))
      break
    default:
      assertSubset(actual, e)
  }
}
