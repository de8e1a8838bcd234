# frozen_string_literal: true

# OjsRetry.run_transaction beyond the vectors (tests/vectors/transaction.json
# runs in test_vectors.rb): Ruby's own values at failure time — text that is
# not UTF-8, engine objects as the carried layer and state, a call the
# program got wrong — and the Outcome's shape.
require_relative "helper"

class TestTransaction < Minitest::Test
  O = OjsRetry
  NOW = 1_770_892_265_000
  DEFAULTS = { max_attempts: 3, jitter: false }.freeze

  def run_tx(attempt = 1, **kw)
    O.run_transaction(attempt, key: "job-1", defaults: DEFAULTS, now: NOW, **kw)
  end

  def test_outcome_shape
    out = run_tx(type: "net.reset", message: "m")
    assert_kind_of O::Outcome, out
    assert out.frozen?
    assert_equal "retry", out.action
    assert_kind_of O::Decision, out.decision
    assert_equal 1_000, out.decision.delay_ms
    assert_kind_of O::RetryState, out.state
    assert_equal out.state.to_json, out.state_json
    assert_equal O::RetryPolicy.new(DEFAULTS), out.policy
    assert_equal [], out.notes
    assert_nil out.dead_letter
  end

  # A Ruby String whose bytes are not UTF-8 (a lone surrogate's three bytes,
  # a Latin-1 byte read as UTF-8) is recorded with each invalid byte as
  # U+FFFD, as String#scrub does: recorded, never refused.
  def test_invalid_bytes_are_scrubbed
    message = "bad \xED\xB3\xBF byte \xFF".dup.force_encoding(Encoding::UTF_8)
    refute message.valid_encoding?
    out = run_tx(type: "io.decode", message: message)
    assert_equal "retry", out.action
    assert_equal message.scrub, JSON.parse(out.state_json)["errors"][0]["message"]
  end

  # Another encoding is the same text in UTF-8.
  def test_other_encodings_are_transcoded
    out = run_tx(type: "caf\u00e9".encode(Encoding::ISO_8859_1))
    assert_equal "caf\u00e9", out.state.errors[0][:type]
  end

  def test_engine_objects_as_layer_and_state
    first = run_tx(type: "a")
    layer = O::RetryPolicy.new(max_attempts: 2, jitter: false)
    out = O.run_transaction(2, key: "job-1", defaults: [DEFAULTS], layer: layer,
                               state: first.state, now: NOW, type: "b")
    assert_equal "discard", out.action
    assert_equal 2, out.policy.max_attempts
    assert_equal %w[a b], out.state.errors.map { |e| e[:type] }
    # A Hash and JSON text are the same carried documents.
    same = O.run_transaction(2, key: "job-1", defaults: DEFAULTS, layer: layer.to_json,
                                state: JSON.parse(first.state_json), now: NOW, type: "b")
    assert_equal out.state_json, same.state_json
  end

  def test_refused_layer_is_a_dead_letter_with_its_record
    out = run_tx(layer: { max_attempts: "three" }, type: "x", queue: "q", job: { "class" => "W", "args" => [1] })
    assert_equal ["dead_letter", "policy_invalid"], [out.action, out.decision.reason]
    assert_equal ["policy_refused"], out.notes.map(&:first)
    record = JSON.parse(out.dead_letter)
    assert_equal ["q", "job-1", NOW, "policy_invalid"],
                 record.values_at("queue", "job_id", "dead_lettered_at", "reason")
    assert_equal({ "class" => "W", "args" => [1] }, record["job"])
    assert_equal JSON.parse(out.state_json), record["retry_state"]
  end

  def test_hostile_counters_are_noted_not_raised
    assert_equal ["attempt_out_of_range"], run_tx(-5).notes.map(&:first)
    assert_equal ["attempt_out_of_range"], run_tx(2**80).notes.map(&:first)
  end

  def test_a_call_the_program_got_wrong_raises
    assert_raises(ArgumentError) { O.run_transaction(1, defaults: DEFAULTS) } # no key:
    assert_raises(ArgumentError) { O.run_transaction(1, key: "k", colour: "red") }
    e = assert_raises(O::PolicyError) { O.run_transaction(1, key: :k) }
    assert_equal "key", e.field
    e = assert_raises(O::PolicyError) { O.run_transaction(1, key: "k", timed_out: "yes") }
    assert_equal "timed_out", e.field
  end
end
