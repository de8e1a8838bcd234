# frozen_string_literal: true

# The vector ops (tests/vectors/README.md "Ops") through the Ruby API: each
# takes a case's expanded input and returns what the case's "expect"
# compares, with the API's own consistency checks on the way.
module OjsVectors
  # One case's calls; its assertions count toward the test's.
  class Ops
    include Minitest::Assertions

    attr_accessor :assertions

    def initialize
      @assertions = 0
    end

    O = OjsRetry

    def make_policy(inp)
      p = inp["policy"]
      # Not a Hash (or absent): merge() hands it to the core as a layer.
      p.is_a?(Hash) ? O::RetryPolicy.new(p) : O::RetryPolicy.merge(p)
    end

    def decision_hash(d)
      h = d.to_h
      # The readers and to_h agree.
      h.each do |k, v|
        reader = k == "timed_out" ? :timed_out? : k.to_sym
        assert_equal v, d.public_send(reader), k unless v.nil?
        assert_nil d.public_send(reader), k if v.nil?
      end
      h
    end

    def parse_duration(i) = { "ms" => O.parse_duration(i["text"]) }
    def format_duration(i) = { "text" => O.format_duration(i["ms"]) }
    def parse_timestamp(i) = { "ms" => O.parse_timestamp(i["text"]) }
    def format_timestamp(i) = { "text" => O.format_timestamp(i["ms"]) }

    def policy(i)
      layers = i.key?("layers") ? i["layers"] : i["json"]
      p = O::RetryPolicy.merge(*layers)
      # One Hash / one text: the constructor and from_json agree with merge.
      if layers.length == 1 && (layers[0].is_a?(Hash) || layers[0].is_a?(String))
        assert_equal p, O::RetryPolicy.new(layers[0])
        assert_equal p, O::RetryPolicy.from_json(layers[0]) if i.key?("json")
      end
      # The canonical JSON round-trips (a policy whose JSON would pass the
      # document limit is refused when it is built); to_h is its parse.
      assert_equal p, O::RetryPolicy.from_json(p.to_json)
      assert_equal JSON.parse(p.to_json), p.to_h
      { "policy" => p.to_h, "canonical_json" => p.to_json }
    end

    def delay(i)
      p = make_policy(i)
      { "delay_ms" => p.delay(i["retry_number"], **OjsVectors.jitter(i["jitter"])) }
    end

    def schedule(i)
      p = make_policy(i)
      rows = p.schedule(i["count"], **OjsVectors.jitter(i["jitter"], absent: :none))
      { "rows" => rows.map do |r|
        h = r.to_h
        h.each { |k, v| assert_equal(v, r.public_send(k.to_sym), k) unless v.nil? }
        h
      end }
    end

    # Every field of the failure but its attempt, as decide's keywords.
    def failure_kw(f)
      f.reject { |k, _| k == "attempt" }.transform_keys(&:to_sym)
    end

    def decide(i)
      p = make_policy(i)
      f = i["failure"]
      d = p.decide(f["attempt"], **failure_kw(f), now: i["now"], **OjsVectors.jitter(i["jitter"]))
      { "decision" => decision_hash(d) }
    end

    def matches(i)
      m = O.first_match(i["error_type"], i["patterns"])
      assert_equal !m.nil?, O.matches(i["error_type"], i["patterns"])
      { "matches" => !m.nil?, "pattern" => m }
    end

    def jitter_sample(i)
      { "bits" => O.jitter_sample(i["retry_number"], **OjsVectors.jitter(i["jitter"])) }
    end

    def state_setup(i)
      p = make_policy(i)
      limit = i.fetch("history_limit", 10)
      return [p, O::RetryState.new(history_limit: limit)] unless i.key?("initial")

      s = O::RetryState.from_json(i["initial"], history_limit: limit)
      # The text form gives the same state.
      text = JSON.generate(i["initial"], allow_nan: true)
      assert_equal s.to_json, O::RetryState.from_json(text, history_limit: limit).to_json
      [p, s]
    end

    def state_event(p, s, ev)
      kw = OjsVectors.jitter(ev["jitter"])
      if ev.key?("fail")
        # The failure's keys are record_failure's keywords (those of
        # decide); its attempt is the state's next one.
        fail_kw = ev["fail"].transform_keys(&:to_sym)
        s.record_failure(p, now: ev["now"], **kw, **fail_kw)
      elsif ev.key?("timeout")
        s.record_failure(p, timed_out: true, now: ev["now"], **kw)
      else
        raise "unknown state event #{ev.inspect}"
      end
    end

    def state(i)
      begin
        p, s = state_setup(i)
      rescue O::PolicyError => e
        raise StateError.new(e, nil, nil)
      end
      decisions = []
      i["events"].each_with_index do |ev, n|
        decisions << decision_hash(state_event(p, s, ev))
      rescue O::PolicyError => e
        raise StateError.new(e, n, { "decisions" => decisions })
      end
      { "decisions" => decisions, "state" => checked_state(s) }
    end

    # The state's document, checked against its readers.
    def checked_state(s)
      state = s.to_h
      assert_equal JSON.parse(s.to_json), state
      assert_equal(state["errors"].map { |e| e["attempt"] }, s.errors.map { |e| e[:attempt] })
      assert_equal(state["errors"].map { |e| O.parse_timestamp(e["timestamp"]) },
                   s.errors.map { |e| e[:timestamp_ms] })
      assert_equal state["attempt"], s.attempt
      assert_equal s.attempt + 1, s.next_attempt
      state["terminal"].nil? ? assert_nil(s.terminal) : assert_equal(state["terminal"], s.terminal)
      nra = state["next_retry_at"]
      nra.nil? ? assert_nil(s.next_retry_at) : assert_equal(O.parse_timestamp(nra), s.next_retry_at)
      state
    end

    def reservation(i)
      r = O::Reservation.new(i["attempt"], i["visibility_timeout_ms"], i["now"])
      results = i["events"].map { |ev| reservation_event(r, ev) }
      { "results" => results, "deadline" => r.deadline }
    end

    def reservation_event(r, ev)
      if ev.key?("heartbeat")
        status, deadline = r.heartbeat(ev["heartbeat"])
        return "expired" if status == "expired" && deadline.nil?

        assert_equal ["extended", r.deadline], [status, deadline]
        { "extended" => deadline }
      elsif ev.key?("is_expired")
        r.expired?(ev["is_expired"])
      elsif ev.key?("expiry")
        r.expiry(ev["expiry"])&.transform_keys(&:to_s)
      else
        raise "unknown reservation event #{ev.inspect}"
      end
    end

    def preset(i)
      p = O::RetryPolicy.preset(i["system"], i["config"])
      doc = p.to_h
      q = O::RetryPolicy.new(doc)
      out = { "policy" => doc, "round_trip" => q == p && q.to_json == p.to_json }
      u = i.fetch("u", 0.0)
      out["delays"] = i["retry_numbers"].map { |n| q.delay(n, u: u) } if i.key?("retry_numbers")
      if i.key?("failures")
        out["decisions"] = i["failures"].map do |f|
          decision_hash(q.decide(f["attempt"], **failure_kw(f), now: 0, u: u))
        end
      end
      out
    end

    # The failure transaction: what it writes, it reads back.
    def transaction(i)
      f = i["failure"]
      limit = i.fetch("history_limit", 10)
      out = O.run_transaction(
        i["attempt"], key: i["key"], defaults: i["defaults"],
        layer: i.fetch("layer_json", i["layer"]), state: i.fetch("state_json", i["state"]),
        type: f["type"], ancestors: f["ancestors"], code: f["code"], timed_out: f.fetch("timed_out", false),
        message: f["message"], details: f["details"], now: i["now"],
        history_limit: limit, queue: i.fetch("queue", ""), job: i["job"]
      )
      assert out.frozen?
      assert_equal out.state_json, O::RetryState.from_json(out.state_json, history_limit: limit).to_json
      assert_equal out.state_json, out.state.to_json
      assert_equal out.decision.action, out.action
      { "decision" => decision_hash(out.decision), "state" => JSON.parse(out.state_json),
        "notes" => out.notes.map(&:first),
        "dead_letter" => out.dead_letter && JSON.parse(out.dead_letter) }
    end

    NAMES = %w[transaction preset parse_duration format_duration parse_timestamp format_timestamp policy
               delay schedule decide matches jitter_sample state reservation].freeze
  end
end
