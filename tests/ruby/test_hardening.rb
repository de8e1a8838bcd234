# frozen_string_literal: true

# Ruby's own values at the boundary: each is a typed error (code, field,
# path) or read exactly — never a crash, a coercion or a replaced byte —
# and the extension keeps answering afterwards.
require_relative "helper"
require "set"
require "open3"
require "rbconfig"

class TestHardening < Minitest::Test
  O = OjsRetry
  NOW = 1_770_892_265_000

  def teardown
    assert_equal 4000, O::RetryPolicy.new({ "jitter" => false }).delay(3, u: 0.0), "still answers"
  end

  def policy_error(doc)
    assert_raises(O::PolicyError) { O::RetryPolicy.new(doc) }
  end

  def assert_fault(err, code, field, path = field)
    assert_equal [code, field, path], [err.code, err.field, err.path], err.message
  end

  def test_nan_and_infinities_are_typed_errors
    [Float::NAN, Float::INFINITY, -Float::INFINITY].each do |x|
      assert_fault policy_error({ max_attempts: x }), "validation.retry_policy_invalid", "max_attempts"
      assert_fault policy_error({ backoff_coefficient: x }), "validation.retry_policy_invalid", "backoff_coefficient"
      e = assert_raises(O::PolicyError) { O::RetryPolicy.new.delay(x) }
      assert_fault e, "validation.invalid_argument", "retry_number"
      e = assert_raises(O::PolicyError) { O::RetryPolicy.new.delay(1, u: x) }
      assert_fault e, "validation.invalid_argument", "u"
    end
  end

  def test_integers_are_exact_at_any_size
    assert_equal 2**53 - 1, O::RetryPolicy.new(max_attempts: 2**53 - 1).max_attempts
    [2**53, 2**64, 2**64 + 1, 2**127, 2**200, -(2**200)].each do |n|
      assert_fault policy_error({ max_attempts: n }), "validation.retry_policy_invalid", "max_attempts"
      e = assert_raises(O::PolicyError) { O::RetryPolicy.new.decide(n, now: NOW) }
      assert_fault e, "validation.invalid_argument", "attempt"
      e = assert_raises(O::PolicyError) { O::RetryPolicy.new.decide(1, now: n) }
      assert_fault e, "validation.invalid_argument", "now"
    end
    assert_equal O::RetryPolicy.new.delay(3, u: 0.0), O::RetryPolicy.new.delay(3.0, u: 0.0)
  end

  def test_no_coercion_of_positional_arguments
    [["3", "String"], [true, "TrueClass"], [nil, "NilClass"], [3.5, nil], [-1, nil],
     [Rational(3, 1), "Rational"], [[3], "Array"]].each do |v, cls|
      e = assert_raises(O::PolicyError) { O::RetryPolicy.new.delay(v) }
      assert_fault e, "validation.invalid_argument", "retry_number"
      assert_includes e.message, cls if cls
    end
  end

  def test_frozen_values_read_as_any_other
    doc = { "max_attempts" => 4, "non_retryable_errors" => ["a.*".freeze].freeze }.freeze
    assert_equal 4, O::RetryPolicy.new(doc).max_attempts
    text = '{"max_attempts": 4}'.freeze
    assert_equal 4, O::RetryPolicy.from_json(text).max_attempts
    assert_equal 1000, O.parse_duration("PT1S".freeze)
  end

  def test_strings_that_are_not_utf8_are_typed_errors
    bad = "auth.\xff".dup.force_encoding(Encoding::UTF_8)
    e = policy_error({ non_retryable_errors: ["ok.*", bad] })
    assert_fault e, "validation.retry_policy_invalid", "non_retryable_errors", "non_retryable_errors[1]"
    assert_match(/not valid UTF-8/, e.message)
    e = assert_raises(O::PolicyError) { O.matches(bad, ["auth.*"]) }
    assert_fault e, "validation.invalid_argument", "error_type"
    e = assert_raises(O::PolicyError) { O::RetryPolicy.new.delay(1, key: "job-\xc3".b) }
    assert_fault e, "validation.invalid_argument", "key"
    # JSON text with broken bytes: the core reports the document.
    e = policy_error("{\"max_attempts\": \xff}".b)
    assert_fault e, "validation.retry_policy_invalid", nil
    assert_match(/invalid UTF-8/, e.message)
  end

  def test_strings_in_other_encodings_are_converted_exactly
    sjis = "支払い.*".encode(Encoding::Shift_JIS)
    p = O::RetryPolicy.new(non_retryable_errors: [sjis])
    assert_equal ["支払い.*"], p.non_retryable_errors
    assert O.matches("支払い.失敗".encode(Encoding::UTF_16LE), [sjis])
    # Binary data that is ASCII is text; beyond ASCII it is refused.
    assert_equal 4, O::RetryPolicy.new('{"max_attempts": 4}'.b).max_attempts
    e = policy_error({ non_retryable_errors: ["é".b] })
    assert_fault e, "validation.retry_policy_invalid", "non_retryable_errors", "non_retryable_errors[0]"
  end

  def test_only_plain_data
    [[Set["a"], "an object that is not plain data"], [Time.at(0), "a Time"], [1..2, "a Range"],
     [Struct.new(:a).new(1), "a Struct"], [Object.new, "not plain data"], [-> {}, "a Proc"],
     [Rational(1, 2), "a Rational"], [String, "a Module or Class"]].each do |v, what|
      e = policy_error({ non_retryable_errors: [v] })
      assert_fault e, "validation.retry_policy_invalid", "non_retryable_errors", "non_retryable_errors[0]"
      assert_includes e.message, what
    end
    e = policy_error({ 1 => 2 })
    assert_equal "validation.retry_policy_invalid", e.code
    assert_match(/String or Symbol keys/, e.message)
  end

  def test_hash_subclasses_and_defaults_are_read_as_their_own_entries
    sub = Class.new(Hash) { def each(*) = raise("never called") }
    h = sub.new
    h["max_attempts"] = 7
    assert_equal 7, O::RetryPolicy.new(h).max_attempts
    with_default = Hash.new { |hash, k| hash[k] = 9 }
    with_default["jitter"] = false
    p = O::RetryPolicy.new(with_default)
    assert_equal [3, false], [p.max_attempts, p.jitter?]
    assert_equal ["jitter"], with_default.keys, "the default block never ran"
  end

  def test_an_identity_hash_repeating_a_key_is_an_error
    h = {}.compare_by_identity
    h[+"max_attempts"] = 4
    h[+"max_attempts"] = 5
    assert_equal 2, h.size
    e = policy_error(h)
    assert_fault e, "validation.retry_policy_invalid", nil
    assert_match(/duplicate key "max_attempts"/, e.message)
  end

  def test_limits_are_checked_before_copying
    e = policy_error({ non_retryable_errors: ["x" * 65_537] })
    assert_fault e, "validation.retry_policy_invalid", "non_retryable_errors", "non_retryable_errors[0]"
    e = policy_error({ non_retryable_errors: Array.new(10_001, "a") })
    assert_fault e, "validation.retry_policy_invalid", "non_retryable_errors"
    big = {}
    10_001.times { |i| big["k#{i}"] = 1 }
    assert_equal "validation.retry_policy_invalid", policy_error(big).code
    e = assert_raises(O::PolicyError) { O::RetryPolicy.new.delay(1, key: "k" * (1 << 21)) }
    assert_fault e, "validation.invalid_argument", "key"
    e = assert_raises(O::PolicyError) { O.parse_duration("PT#{'9' * (1 << 21)}S") }
    assert_fault e, "validation.duration_invalid", "duration"
    e = policy_error("{\"a\": \"#{'y' * (1 << 21)}\"}")
    assert_fault e, "validation.retry_policy_invalid", nil
    e = assert_raises(O::PolicyError) { O::RetryPolicy.merge(*Array.new(10_001, {})) }
    assert_fault e, "validation.invalid_argument", "layers"
  end

  def test_deep_and_cyclic_values_are_faults_at_their_field
    cyclic = []
    cyclic << cyclic
    e = policy_error({ non_retryable_errors: cyclic })
    # The fault is at the value too deep, as in every runtime.
    assert_fault e, "validation.retry_policy_invalid", "non_retryable_errors", "non_retryable_errors#{'[0]' * 64}"
    assert_match(/nested at most 64 levels/, e.message)
    h = {}
    h["a"] = h
    e = assert_raises(O::PolicyError) { O::RetryPolicy.new.decide(1, details: h, now: NOW) }
    assert_fault e, "validation.invalid_argument", "details", "details#{'.a' * 64}"
    deep = []
    100_000.times { deep = [deep] }
    assert_fault policy_error({ jitter: deep }), "validation.retry_policy_invalid", "jitter", "jitter#{'[0]' * 64}"
  end

  # Reading a value that makes Ruby allocate (a Shift_JIS String is
  # transcoded) with a compacting GC at every allocation: the values being
  # read are held where the GC sees and updates them. In a fresh process, so
  # that each GC walks a small heap.
  GC_STRESS = <<~RUBY
    require "ojs_retry"
    doc = { "non_retryable_errors" => Array.new(8) { |i| "支払い\#{i}.*".encode(Encoding::Shift_JIS) },
            max_attempts: 4, jitter: false }
    GC.auto_compact = true
    GC.stress = true
    p = OjsRetry::RetryPolicy.new(doc, initial_interval: "PT2S".encode(Encoding::UTF_16LE))
    d = p.decide(1, type: "支払い7.x", message: "x".encode(Encoding::UTF_16LE), now: 0, key: "k")
    GC.stress = false
    raise "patterns" unless p.non_retryable_errors == Array.new(8) { |i| "支払い\#{i}.*" }
    raise "decision" unless [p.initial_interval_ms, d.action, d.matched_pattern] == [2000, "discard", "支払い7.*"]
    puts "gc stress OK"
  RUBY

  def test_reading_survives_gc_stress_and_compaction
    skip "GC.auto_compact is not available" unless GC.respond_to?(:auto_compact=)

    out, err, status = Open3.capture3(RbConfig.ruby, "-e", GC_STRESS)
    assert status.success?, err
    assert_equal "gc stress OK\n", out
  end

  def test_state_documents
    e = assert_raises(O::PolicyError) { O::RetryState.from_json("{\"attempt\": \xff}".b) }
    assert_fault e, "validation.state_invalid", nil
    e = assert_raises(O::PolicyError) { O::RetryState.from_json({ attempt: Float::NAN }) }
    assert_equal "validation.state_invalid", e.code
    e = assert_raises(O::PolicyError) { O::RetryState.new(history_limit: "10") }
    assert_fault e, "validation.invalid_argument", "history_limit"
  end
end
