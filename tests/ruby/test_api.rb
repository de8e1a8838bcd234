# frozen_string_literal: true

# The Ruby API beyond the vectors: the installed gem, names and readers,
# equality, JSON, keyword arguments, threads, fork, and keyed jitter equal
# to the Rust CLI's.
require_relative "helper"
require "open3"
require "tmpdir"

class TestApi < Minitest::Test
  O = OjsRetry
  NOW = 1_770_892_265_000

  def test_the_installed_gem_is_loaded
    spec = Gem.loaded_specs["ojs-retry"]
    refute_nil spec, "ojs-retry was not activated as a gem"
    assert_equal O::VERSION, spec.version.to_s
    refute_equal "ruby", spec.platform.to_s, "a platform gem carries its extension"
    assert_equal O::VERSION, O::NATIVE_VERSION
    return unless ENV["OJS_REQUIRE_INSTALLED"] == "1"

    path = OjsTest.extension_path
    assert path&.start_with?(File.realpath(ENV.fetch("GEM_HOME"))) || path&.start_with?(ENV.fetch("GEM_HOME")),
           "the extension came from #{path.inspect}, not the fresh GEM_HOME"
    refute path.start_with?(OjsTest::ROOT), "loaded from the checkout"
  end

  def test_constants
    assert_equal %w[validation.retry_policy_invalid validation.duration_invalid
                    validation.invalid_argument validation.state_invalid], O::ERROR_CODES
    assert O::ERROR_CODES.frozen? && O::PRESET_SYSTEMS.frozen?
    assert_includes O::PRESET_SYSTEMS, "sidekiq"
    assert_equal 2**53 - 1, O::MAX_MS
    assert_equal 10_000, O::MAX_SCHEDULE_ROWS
    assert_equal O.parse_timestamp("9999-12-31T23:59:59.999Z"), O::MAX_INSTANT_MS
  end

  def test_policy_readers_and_defaults
    p = O::RetryPolicy.new
    assert_equal [3, 1000, 2.0, 300_000, true, [], "discard", "exponential", 2, nil],
                 [p.max_attempts, p.initial_interval_ms, p.backoff_coefficient, p.max_interval_ms,
                  p.jitter?, p.non_retryable_errors, p.on_exhaustion, p.backoff_strategy,
                  p.max_retries, p.preset_system]
    assert_equal p, O::RetryPolicy.new(nil)
    assert_equal p, O::RetryPolicy.merge
  end

  def test_string_and_symbol_keys_and_values_read_the_same
    a = O::RetryPolicy.new({ "max_attempts" => 4, "on_exhaustion" => "dead_letter" })
    b = O::RetryPolicy.new({ max_attempts: 4, on_exhaustion: :dead_letter })
    c = O::RetryPolicy.new(max_attempts: 4, on_exhaustion: "dead_letter")
    assert_equal a, b
    assert_equal a, c
    assert_equal a.hash, c.hash
    assert a.eql?(b)
    assert_equal 1, { a => 1 }[b]
  end

  def test_keywords_layer_over_the_policy
    p = O::RetryPolicy.new({ max_attempts: 4, jitter: true }, jitter: false)
    assert_equal [4, false], [p.max_attempts, p.jitter?]
  end

  def test_repeated_key_after_folding_is_an_error
    e = assert_raises(O::PolicyError) { O::RetryPolicy.new({ :max_attempts => 4, "max_attempts" => 5 }) }
    assert_equal "validation.retry_policy_invalid", e.code
    assert_match(/duplicate key "max_attempts"/, e.message)
  end

  def test_to_h_is_the_parsed_json_and_json_generate_writes_the_document
    p = O::RetryPolicy.new(max_attempts: 6, non_retryable_errors: ["a.*"])
    assert_equal JSON.parse(p.to_json), p.to_h
    assert_equal p.to_h.keys, %w[max_attempts initial_interval backoff_coefficient max_interval jitter
                                 non_retryable_errors on_exhaustion]
    assert_equal({ "p" => p.to_h }, JSON.parse(JSON.generate({ "p" => p })))
    assert p.non_retryable_errors.frozen?
    assert p.non_retryable_errors.all?(&:frozen?)
    assert_match(/\A#<OjsRetry::RetryPolicy \{"max_attempts":6/, p.inspect)
  end

  def test_marshal_and_copies
    p = O::RetryPolicy.new(max_attempts: 6, jitter: false)
    assert_equal p, Marshal.load(Marshal.dump(p))
    assert_same p, p.dup
    assert_same p, p.clone
    s = O::RetryState.new(history_limit: 12)
    s.record_failure(p, type: "x", now: NOW, u: 0.5)
    t = Marshal.load(Marshal.dump(s))
    assert_equal [s.to_json, 12], [t.to_json, t.history_limit]
  end

  def test_decision_readers_predicates_and_equality
    p = O::RetryPolicy.new(max_attempts: 3, non_retryable_errors: ["auth.*"])
    d = p.decide(1, type: "auth.denied", now: NOW)
    assert_equal "dead_letter", p.decide(1, type: "x", code: "DEAD_LETTER", now: NOW).action
    assert_equal ["discard", "non_retryable", "auth.*", false, nil], [d.action, d.reason, d.matched_pattern, d.timed_out?, d.delay_ms]
    assert_equal d, p.decide(1, type: "auth.denied", now: NOW)
    assert_equal d.hash, p.decide(1, type: "auth.denied", now: NOW).hash
    refute_equal d, p.decide(2, type: "auth.denied", now: NOW)
    assert_match(/non-retryable entry "auth\.\*"/, d.explain)
  end

  def test_handler_code_and_message_and_details
    p = O::RetryPolicy.new
    d = p.decide(1, type: "x", code: "DISCARD", message: "no", details: { "a" => [1, nil, "b"] }, now: NOW)
    assert_equal %w[discard handler_code DISCARD], [d.action, d.reason, d.handler_code]
    e = assert_raises(O::PolicyError) { p.decide(1, code: "MAYBE", now: NOW) }
    assert_equal %w[validation.invalid_argument code], [e.code, e.field]
    e = assert_raises(O::PolicyError) { p.decide(1, details: { "x" => Float::NAN }, now: NOW) }
    assert_equal "details", e.field
  end

  def test_unknown_keywords_are_rubys_argument_error
    p = O::RetryPolicy.new
    e = assert_raises(ArgumentError) { p.delay(1, kye: "job") }
    refute_kind_of O::PolicyError, e
    assert_match(/unknown keyword: :kye/, e.message)
    assert_raises(ArgumentError) { p.decide(1, error_type: "x") }
    assert_raises(ArgumentError) { p.delay }
  end

  def test_at_most_one_jitter_source
    e = assert_raises(O::PolicyError) { O::RetryPolicy.new.delay(1, u: 0.5, key: "k") }
    assert_equal %w[validation.invalid_argument u], [e.code, e.field]
  end

  def test_seed_is_an_integer_up_to_64_bits
    p = O::RetryPolicy.new
    assert_kind_of Integer, p.delay(1, seed: 2**64 - 1)
    e = assert_raises(O::PolicyError) { p.delay(1, seed: 2**64) }
    assert_equal "seed", e.field
    e = assert_raises(O::PolicyError) { p.delay(1, seed: -1) }
    assert_equal "seed", e.field
  end

  def test_state_record_failure_history_and_round_trip
    p = O::RetryPolicy.new(max_attempts: 2)
    s = O::RetryState.new(history_limit: 12)
    d = s.record_failure(p, type: "net.reset", message: "boom", now: NOW, key: "job-1")
    assert_equal ["retry", 1, 2, 12], [d.action, s.attempt, s.next_attempt, s.history_limit]
    d = s.record_failure(p, type: "net.reset", now: NOW + 10, key: "job-1")
    assert_equal ["discard", "discard"], [d.action, s.terminal]
    assert_equal [{ attempt: 1, type: "net.reset", message: "boom", code: "RETRY", timestamp_ms: NOW, details: nil }],
                 s.errors.take(1)
    t = O::RetryState.from_json(s.to_json, history_limit: 12)
    assert_equal s.to_json, t.to_json
    assert_equal s.to_json, O::RetryState.from_json(s.to_h, history_limit: 12).to_json
    e = assert_raises(O::PolicyError) { s.record_failure(p, now: NOW) }
    assert_equal "validation.invalid_argument", e.code
    assert_raises(TypeError) { s.record_failure("not a policy", now: NOW) }
    assert_match(/\A#<OjsRetry::RetryState /, s.inspect)
  end

  def test_state_shared_by_threads_records_each_failure_once
    p = O::RetryPolicy.new(max_attempts: 1000)
    s = O::RetryState.new(history_limit: 1000)
    threads = Array.new(8) { Thread.new { 25.times { s.record_failure(p, now: NOW, u: 0.5) } } }
    threads.each(&:join)
    assert_equal 200, s.attempt
    assert_equal (1..200).to_a, s.errors.map { |e| e[:attempt] }
  end

  def test_reservation
    r = O::Reservation.new(2, 30_000, NOW)
    assert_equal [2, 30_000, NOW + 30_000], [r.attempt, r.visibility_timeout_ms, r.deadline]
    assert_equal ["extended", NOW + 40_000], r.heartbeat(NOW + 10_000)
    refute r.expired?(NOW + 39_999)
    assert_nil r.expiry(NOW)
    failure = r.expiry(NOW + 40_000)
    assert_equal({ attempt: 2, timed_out: true }, failure)
    d = O::RetryPolicy.new(max_attempts: 5).decide(failure[:attempt], timed_out: failure[:timed_out],
                                                   now: NOW + 40_000, u: 0.5)
    assert_equal ["retry", true], [d.action, d.timed_out?]
    assert_equal ["expired", nil], r.heartbeat(NOW + 50_000)
  end

  def test_functions
    assert O.matches("payment.card_declined", ["payment.*"])
    refute O.matches("payments", ["payment.*"])
    assert_equal "b.*", O.first_match("b.c", ["a.*", "b.*", "b.c"])
    assert_nil O.first_match("z", ["a.*"])
    assert_equal 1500, O.parse_duration("PT1.5S")
    assert_equal "PT1M30S", O.format_duration(90_000)
    assert_equal "2026-02-12T10:31:05.000Z", O.format_timestamp(NOW)
    assert_equal NOW, O.parse_timestamp("2026-02-12T10:31:05Z")
    e = assert_raises(O::PolicyError) { O.matches("a", "a.*") }
    assert_equal "patterns", e.field
  end

  def test_presets_with_options_and_keywords
    a = O::RetryPolicy.preset("sidekiq", { "retry" => 3 }, retry: 5)
    b = O::RetryPolicy.preset("sidekiq", retry: 5)
    assert_equal b, a
    assert_equal b, O::RetryPolicy.preset("sidekiq", { retry: 3 }, **{ "retry" => 5 })
    assert_equal "sidekiq", a.preset_system
    e = assert_raises(O::PolicyError) { O::RetryPolicy.preset("nope") }
    assert_equal "validation.retry_policy_invalid", e.code
  end

  # Ruby, Rust (the CLI) — and through scripts/test-node's check Python,
  # Node and wasm — give the same keyed delays.
  KEYED = [
    [{ "max_attempts" => 8, "initial_interval" => "PT2S" }, "job-8f3a"],
    [{ "max_attempts" => 10, "backoff_strategy" => "polynomial", "max_interval" => "PT1H" },
     "018f6b2e-7c1d-7a00-b3b5-9e1f2d3c4b5a"],
    [{ "max_attempts" => 6, "backoff_strategy" => "linear", "initial_interval" => "PT0.25S" }, "jöb-日本-🚀"],
    [{ "max_attempts" => 5 }, ""]
  ].freeze

  def cli_delays(policy, key, dir)
    file = File.join(dir, "policy.json")
    File.write(file, JSON.generate(policy))
    args = ["schedule", file, "--key", key, "--retries", (policy["max_attempts"] - 1).to_s, "--json"]
    cli = ENV["OJS_RETRY_CLI"]
    cmd = cli ? [cli, *args] : ["cargo", "run", "-q", "-p", "ojs-retry-cli", "--", *args]
    out, err, status = Open3.capture3(*cmd, chdir: OjsTest::ROOT)
    assert status.success?, "the Rust CLI failed (#{cmd.join(' ')}):\n#{err}"
    JSON.parse(out).fetch("rows").map { |r| r["delay_ms"] }
  end

  def test_keyed_jitter_equals_the_rust_cli
    Dir.mktmpdir("ojs-ruby-keyed") do |dir|
      KEYED.each do |policy, key|
        p = O::RetryPolicy.new(policy)
        ruby = (1...policy["max_attempts"]).map { |n| p.delay(n, key: key) }
        assert_equal cli_delays(policy, key, dir), ruby, "keyed jitter for #{key.inspect}"
        assert_equal ruby, p.schedule(ruby.length, key: key).map(&:delay_ms)
      end
    end
  end

  # Without the Process._fork hook a child's entropy generator is its
  # parent's copy, and both would draw the same samples.
  def test_a_forked_child_draws_its_own_entropy
    skip "fork is not available on this platform" unless Process.respond_to?(:fork)

    # A draw first: the parent's generator exists (and is copied) at the fork.
    O.jitter_sample(1)
    rd, wr = IO.pipe
    pid = fork do
      rd.close
      wr.write(JSON.generate(Array.new(4) { O.jitter_sample(1) }))
      wr.close
      exit!(0)
    end
    wr.close
    parent = Array.new(4) { O.jitter_sample(1) }
    child = JSON.parse(rd.read)
    Process.wait(pid)
    assert_equal 4, child.length
    refute_equal parent, child, "the child repeated its parent's entropy draws"
  end
end
