# frozen_string_literal: true

# What every Sidekiq process of the tests loads (`sidekiq -r` this file).
# The environment says how it runs:
#
#   OJS_SK_REDIS  the Redis URL (also Sidekiq's REDIS_URL)
#   OJS_SK_RUN    the run id: events go to Redis lists ojs-timeline:<run>:<jid>
#   OJS_SK_MODE   "engine": OjsRetry::Sidekiq.install (the one line);
#                 "native": Sidekiq's own JobRetry, its rand(10) pinned to
#                 the engine's keyed sample for the job and retry
#   OJS_SK_SCENARIO  tests/queues/scenario.json (ScenarioWorker's outcomes)
#
# Events (JSON): {"kind": "start", "attempt", "at_ms", "pid"} when a job
# starts; {"kind": "decision", "attempt", "action", "reason", "delay_ms",
# "at_ms", "timed_out"} from the integration's listener (engine mode);
# {"kind": "retry", "attempt", "delay_ms"} from Sidekiq's own delay_for
# (native mode); {"kind": "terminal", "attempt"} from Sidekiq's death
# handlers (both modes); {"kind": "succeeded", "attempt", "at_ms"}.
require "json"
require "net/http"
require "sidekiq"
require "sidekiq/scheduled"
require "ojs_retry/sidekiq"

# Debian's redis 4.8 warns of its 5.0 API on every call Sidekiq 6.4.1 makes.
Redis.silence_deprecations = true

module OjsSk
  RUN = ENV.fetch("OJS_SK_RUN")
  MODE = ENV.fetch("OJS_SK_MODE", "engine")

  def self.now_ms = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
  def self.key(jid) = "ojs-timeline:#{RUN}:#{jid}"

  def self.push(jid, event)
    Sidekiq.redis { |c| c.rpush(key(jid), JSON.generate(event)) }
  end

  # Counts and records the start of an attempt; returns its number.
  def self.start(jid)
    attempt = Sidekiq.redis { |c| c.incr("#{key(jid)}:starts") }
    push(jid, { kind: "start", attempt: attempt, at_ms: now_ms, pid: Process.pid })
    attempt
  end

  def self.scenario
    @scenario ||= JSON.parse(File.read(ENV.fetch("OJS_SK_SCENARIO")))
  end

  # The scenario's outcome for an attempt (nil: it succeeds).
  def self.outcome_for(job, attempt)
    return job["always"] if job["outcomes"] == "always"

    job["outcomes"][attempt - 1]
  end

  # The integration's listener: the decision, after it was carried out. A
  # job whose args ask for it gets a listener that raises first.
  DECIDED = lambda do |ev|
    d = ev.decision
    push(ev.job_id, { kind: "decision", attempt: ev.attempt, action: d.action, reason: d.reason,
                      delay_ms: d.delay_ms, at_ms: ev.at_ms, timed_out: ev.failure[:timed_out],
                      notes: ev.notes.map(&:first) })
  end
  RAISING = ->(ev) { raise "listener failure for #{ev.job_id}" if ev.job["args"].include?("raising-listener") }

  # The native retry's jitter pinned to the engine's keyed sample: the
  # `sidekiq` preset draws u for retry n = retry_count + 1 with key jid, and
  # Sidekiq 6.4.1's delay_for adds rand(10) * (count + 1) = floor(10u) * n.
  module PinnedRand
    private

    def attempt_retry(worker, msg, queue, exception)
      Thread.current[:ojs_sk_msg] = msg
      super
    ensure
      Thread.current[:ojs_sk_msg] = nil
    end

    def delay_for(worker, count, exception)
      delay = super
      msg = Thread.current[:ojs_sk_msg]
      OjsSk.push(msg["jid"], { kind: "retry", attempt: count + 1, delay_ms: delay * 1000 })
      delay
    end

    def rand(max = 0)
      msg = Thread.current[:ojs_sk_msg]
      return super unless msg && max == 10

      u = OjsRetry.jitter_sample(msg["retry_count"] + 1, key: msg["jid"]) / 2.0**53
      (10 * u).floor
    end
  end
end

module OjsSk
  # Sidekiq's scheduled poller's enqueuer (its `scheduled_enq` option),
  # telling the tests when this process polled first: Sidekiq's poller waits
  # up to 5 s (5 * rand) after the process starts before its first poll.
  class RecordingEnq < Sidekiq::Scheduled::Enq
    def enqueue_jobs(*)
      unless @told
        Sidekiq.redis { |c| c.sadd("ojs-sk:#{RUN}:polled", Process.pid.to_s) }
        @told = true
      end
      super
    end
  end
end

Sidekiq.configure_server do |config|
  # The scheduled poller: every 0.25 to 0.75 s (Sidekiq draws ±50 % of the
  # average; a set average also skips its 10 s initial wait).
  config.options[:poll_interval_average] = 0.5
  config.options[:scheduled_enq] = OjsSk::RecordingEnq
  config.death_handlers << lambda { |job, _ex|
    # retry_count is the attempt that failed last, minus 1 (absent: attempt 1).
    OjsSk.push(job["jid"], { kind: "terminal", attempt: (job["retry_count"] || 0) + 1 })
  }
end

if OjsSk::MODE == "engine"
  # OJS_SK_DEFAULTS: the workers' defaults (JSON), for the tests where the
  # producer pushed under other ones.
  defaults = ENV["OJS_SK_DEFAULTS"] && JSON.parse(ENV["OJS_SK_DEFAULTS"])
  OjsRetry::Sidekiq.install(defaults: defaults, listeners: [OjsSk::RAISING, OjsSk::DECIDED])
else
  Sidekiq::JobRetry.prepend(OjsSk::PinnedRand)
end

# The cross-queue scenario's handler (tests/queues/scenario.json).
class ScenarioWorker
  include Sidekiq::Worker

  def perform(job_id)
    attempt = OjsSk.start(jid)
    job = OjsSk.scenario["jobs"].find { |j| j["id"] == job_id }
    outcome = OjsSk.outcome_for(job, attempt)
    raise OjsRetry::JobError.new(outcome["type"], code: outcome["code"], message: "attempt #{attempt}") if outcome

    OjsSk.push(jid, { kind: "succeeded", attempt: attempt, at_ms: OjsSk.now_ms })
  end
end

module Billing
  # A failure the end-to-end policy names non-retryable.
  class CardDeclined < StandardError; end
end

# The end-to-end jobs: args[0] says how it fails.
class E2EWorker
  include Sidekiq::Worker
  sidekiq_options ojs_policy: { max_attempts: 3, initial_interval: "PT0.3S", backoff_coefficient: 2,
                                jitter: true, non_retryable_errors: ["Billing::CardDeclined"],
                                on_exhaustion: "dead_letter" }
  sidekiq_retries_exhausted { |msg, _ex| raise "exhausted hook failure" if msg["args"].include?("raising-listener") }

  def perform(how, *_rest)
    attempt = OjsSk.start(jid)
    case how
    when "net" then raise Net::ReadTimeout, "read timeout (attempt #{attempt})"
    when "declined" then raise Billing::CardDeclined, "declined"
    when "stolen" then raise OjsRetry::JobError.new("payment.card_stolen", code: "DEAD_LETTER")
    when "discard" then raise OjsRetry::JobError.new("payment.noop", code: "DISCARD")
    when "kill" then Process.kill("KILL", Process.pid)
    when "long" then raise "<html>#{'x' * 70_000}"
    when "sleep-once"
      # The first run outlives its process's shutdown timeout.
      sleep 120 if attempt == 1
      raise Net::ReadTimeout, "after a shutdown"
    when "binary" then raise (+"bad \xFF byte").force_encoding(Encoding::BINARY)
    when "ok-after" then raise "transient" if attempt < 2
    end
    OjsSk.push(jid, { kind: "succeeded", attempt: attempt, at_ms: OjsSk.now_ms })
  end
end

# The presets-in-the-queue jobs: always fail; the Sidekiq options differ.
class AlwaysFails
  def perform(*)
    OjsSk.start(jid)
    raise "always fails"
  end
end

class PresetDefault < AlwaysFails
  include Sidekiq::Worker
end

class PresetRetry2 < AlwaysFails
  include Sidekiq::Worker
  sidekiq_options retry: 2
end

class PresetRetry0 < AlwaysFails
  include Sidekiq::Worker
  sidekiq_options retry: 0
end

class PresetRetryFalse < AlwaysFails
  include Sidekiq::Worker
  sidekiq_options retry: false
end

class PresetNoDead < AlwaysFails
  include Sidekiq::Worker
  sidekiq_options retry: 1, dead: false
end
