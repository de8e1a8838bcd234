# frozen_string_literal: true

# Every conformance vector in tests/vectors/*.json, run through the public
# Ruby API of the installed gem (one test per case). A case whose op this
# runner does not know fails; nothing is skipped silently: a case restricted
# to other runtimes by its "runtimes" list must be named in NOT_APPLICABLE
# below, and is then reported (by id, with the reason) and skipped.
require_relative "helper"

module OjsVectors
  BIGINT = "BigInt is a JavaScript type; Ruby Integers of every size are covered by the number cases"
  # Cases whose "runtimes" list excludes Ruby, by id, with the reason.
  NOT_APPLICABLE = {
    # The case's message is a Python str holding one lone surrogate, which
    # the engine records as one U+FFFD. A Ruby String cannot hold one as a
    # character: its form here (ED B3 BF) is three bytes that are not
    # UTF-8, each replaced by U+FFFD as String#scrub does
    # (test_transaction.rb pins that).
    "transaction-lone-surrogate-replaced" => "a lone surrogate is a Python str's; in Ruby it is " \
                                             "three invalid bytes, scrubbed (test_transaction.rb)",
    "hostile-bigint-retry-number" => BIGINT,
    "hostile-bigint-attempt" => BIGINT,
    "hostile-bigint-now" => BIGINT,
    "hostile-bigint-in-policy" => BIGINT,
    "hostile-bigint-in-policy-2pow53" => BIGINT,
    "hostile-bigint-in-policy-2pow64" => BIGINT,
    "hostile-bigint-coefficient" => BIGINT
  }.freeze

  CASES = Dir[File.join(OjsTest::VECTORS_DIR, "*.json")].sort.flat_map do |f|
    JSON.parse(File.read(f, encoding: "UTF-8"))["cases"].map { |c| [File.basename(f), c] }
  end.freeze

  SPECIAL = { "NaN" => Float::NAN, "Infinity" => Float::INFINITY,
              "-Infinity" => -Float::INFINITY, "-0" => -0.0 }.freeze

  # The vector input with the hostile-input encodings (tests/vectors/README.md)
  # turned into the Ruby values they denote.
  def self.expand(v)
    case v
    when Array then v.map { |x| expand(x) }
    when Hash then expand_hash(v)
    else v
    end
  end

  def self.expand_hash(v)
    return SPECIAL.fetch(v["$special"]) if v.key?("$special")
    return v["$repeat"] * v["times"] if v.key?("$repeat")
    return Array.new(v["times"]) { expand(v["$array"]) } if v.key?("$array")
    return keys(v["$keys"], expand(v["value"])) if v.key?("$keys")
    return concat(v["$concat"]) if v.key?("$concat")
    return [v["$bytes"]].pack("H*") if v.key?("$bytes")
    return lone_surrogate(v["$lone_surrogate"]) if v.key?("$lone_surrogate")
    return nest(v["$nest"], v["kind"]) if v.key?("$nest")
    return v["$object"].to_h { |k, x| [expand(k), expand(x)] } if v.key?("$object")

    unknown = v.keys.select { |k| k.start_with?("$") }
    raise "the Ruby runner cannot express #{unknown}" unless unknown.empty?

    v.transform_values { |x| expand(x) }
  end

  def self.keys(count, value)
    h = {}
    (count - 1).downto(0) { |i| h[format("k%07d", i)] = value }
    h
  end

  def self.concat(parts)
    parts = parts.map { |p| expand(p) }
    raise "$concat parts are strings" unless parts.all?(String)

    parts.each_with_object(+"") { |p, out| out << p.b }.force_encoding(Encoding::UTF_8)
  end

  # Ruby's form of a lone UTF-16 surrogate: a UTF-8 String holding the
  # surrogate's three-byte encoding (ED A0 80 for D800), which UTF-8
  # forbids: Ruby flags the String as not valid_encoding?.
  def self.lone_surrogate(hex)
    cp = hex.to_i(16)
    s = [0xE0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3F), 0x80 | (cp & 0x3F)].pack("C*")
    s.force_encoding(Encoding::UTF_8)
    raise "not an invalid string" if s.valid_encoding?

    s
  end

  def self.nest(depth, kind)
    out = []
    depth.times { out = kind == "object" ? { "a" => out } : [out] }
    out
  end

  # Keyword arguments for a vector's jitter source; absent: {u: 0.0}, or no
  # source at all with absent == :none (a schedule's bounds only).
  def self.jitter(j, absent: :u0)
    return(absent == :none ? {} : { u: 0.0 }) if j.nil?
    return { u: j["u"] } if j.key?("u")
    return { seed: Integer(j["seed"], 10) } if j.key?("seed")
    return { key: j["key"] } if j.key?("key")
    return { u: 0.0 } if j.key?("none")

    raise "unknown jitter source #{j.inspect}"
  end

  # A raised PolicyError of a state case, with the event that raised it.
  class StateError < StandardError
    attr_reader :err, :event, :partial

    def initialize(err, event, partial)
      super(err.message)
      @err = err
      @event = event
      @partial = partial
    end
  end
end

require_relative "vector_ops"

class TestVectors < Minitest::Test
  O = OjsRetry

  def test_vectors_are_there
    refute_empty OjsVectors::CASES, "no vector files in #{OjsTest::VECTORS_DIR}"
    ids = OjsVectors::CASES.map { |_, c| c["id"] }
    assert_equal ids.uniq.length, ids.length, "duplicate case ids"
    OjsVectors::NOT_APPLICABLE.each_key { |id| assert_includes ids, id, "NOT_APPLICABLE names an unknown case" }
  end

  # A good call after every case: the extension still answers correctly.
  def still_answers
    assert_equal 4000, O::RetryPolicy.new({ "jitter" => false }).delay(3, u: 0.0)
    assert_equal 1500, O.parse_duration("PT1.5S")
  end

  def check_error(err, want)
    assert_kind_of ArgumentError, err
    assert_equal want["code"], err.code, "code (#{err.message})"
    want["field"].nil? ? assert_nil(err.field, err.message) : assert_equal(want["field"], err.field, err.message)
    path = want.fetch("path", want["field"])
    path.nil? ? assert_nil(err.path, err.message) : assert_equal(path, err.path, err.message)
    refute_empty err.faults
    assert_equal [err.field, err.path], [err.faults[0][:field], err.faults[0][:path]]
    assert_equal(want["paths"], err.faults.map { |f| f[:path] }, err.message) if want.key?("paths")
    err.faults.each { |f| check_fault(f) }
    refute_empty err.message
    assert_includes O::ERROR_CODES, err.code
  end

  def check_fault(f)
    assert_equal %i[field path message], f.keys
    assert_kind_of String, f[:message]
    refute_empty f[:message]
    # The field is the path's first segment.
    f[:path].nil? ? assert_nil(f[:field]) : assert(f[:path].start_with?(f[:field]), f.inspect)
  end

  # Every key of `expected` is in `actual` and equal (recursively); arrays
  # by length and element-wise; numbers by value; a boolean never a number.
  def subset(expected, actual, path = "expect")
    case expected
    when Hash
      assert_kind_of Hash, actual, path
      expected.each do |k, ev|
        assert actual.key?(k), "#{path}.#{k}: missing in #{actual.inspect[0, 300]}"
        subset(ev, actual[k], "#{path}.#{k}")
      end
    when Array
      assert_kind_of Array, actual, path
      assert_equal expected.length, actual.length, "#{path}: #{actual.inspect[0, 300]}"
      expected.each_with_index { |ev, i| subset(ev, actual[i], "#{path}[#{i}]") }
    when Numeric
      assert_kind_of Numeric, actual, path
      refute actual.is_a?(Float) && actual.nan?, "#{path}: NaN"
      assert_equal expected, actual, path
    when nil then assert_nil actual, path
    else
      assert_equal expected.class, actual.class, path
      assert_equal expected, actual, path
    end
  end

  def run_case(c, inp)
    ops = OjsVectors::Ops.new
    # Hostile-input encodings are expanded in "expect" too (tests/vectors/README.md).
    return subset(OjsVectors.expand(c["expect"]), ops.public_send(c["op"], inp)) if c.key?("expect")

    want = c["error"]
    actual = ops.public_send(c["op"], inp)
    flunk "expected error #{want}, got #{actual.inspect[0, 300]}"
  rescue OjsVectors::StateError => e
    check_error(e.err, want)
    assert_equal want["event"], e.event, "the event that raised" if want.key?("event")
    subset(c["expect_before_error"], e.partial, "expect_before_error") if c.key?("expect_before_error")
  rescue O::PolicyError => e
    raise if want.nil?

    check_error(e, want)
    refute want.key?("event"), "expected the error at an event"
  ensure
    self.assertions += ops.assertions if ops
  end

  OjsVectors::CASES.each do |file, c|
    id = c["id"]
    define_method("test_vector #{file}::#{id}") do
      runtimes = c["runtimes"]
      if runtimes && !runtimes.include?("ruby")
        reason = OjsVectors::NOT_APPLICABLE[id]
        flunk "#{id} is restricted to #{runtimes}; list it in NOT_APPLICABLE with a reason" unless reason
        puts "\nNOT APPLICABLE to Ruby: #{id}: #{reason}"
        skip "NOT APPLICABLE to Ruby: #{id}: #{reason}"
      end
      flunk "unknown op #{c['op'].inspect} in case #{id}: this runner must learn it" \
        unless OjsVectors::Ops::NAMES.include?(c["op"])
      assert c.key?("expect") ^ c.key?("error"), "a case needs exactly one of expect / error"
      begin
        run_case(c, OjsVectors.expand(c["input"]))
      ensure
        still_answers
      end
    end
  end
end
