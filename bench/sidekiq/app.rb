# frozen_string_literal: true

# The Sidekiq processes of bench/sidekiq/bench.rb (`sidekiq -r` this file).
# OJS_SK_MODE=engine installs the integration (the one line: the job's own
# `retry: 1` through the `sidekiq` preset); native leaves Sidekiq's JobRetry;
# floor installs FloorMiddleware (below): what the integration does around
# the decision, without the decision.
require "json"
require "sidekiq"
require "ojs_retry/sidekiq"

# Debian's redis 4.8 warns of its 5.0 API on every call Sidekiq 6.4.1 makes.
Redis.silence_deprecations = true
Sidekiq.logger.level = Logger::WARN
# The scheduled poller polls once (within 5 s of the start), then not for
# an hour: the retries a round schedules (15 s and more) stay in the retry
# set, however long the round takes on a loaded machine, instead of
# running again as retries a bench round would count.
Sidekiq.configure_server { |c| c.options[:poll_interval_average] = 3600 }

# The floor of a retry path through a server middleware: the integration's
# work without the engine — the payload copied, the fields Sidekiq's retry
# writes and a state text as long as the engine's written into it, the
# ZADD at Sidekiq's own delay, Skip raised without a backtrace.
class FloorMiddleware
  STATE = JSON.generate({ "attempt" => 1, "errors" => [{ "attempt" => 1, "type" => "RuntimeError",
                                                         "message" => "bench failure", "code" => "RETRY",
                                                         "timestamp" => "2026-11-27T17:24:08.321Z" }],
                          "next_retry_at" => "2026-11-27T17:24:32.321Z", "terminal" => nil }).freeze

  def call(_worker, job, queue)
    yield
  rescue StandardError => e
    msg = job.dup
    msg["queue"] = msg["retry_queue"] || queue
    message = e.message.to_s[0, 10_000]
    message.force_encoding(Encoding::UTF_8).scrub!
    msg["error_message"] = message
    msg["error_class"] = e.class.name
    msg["failed_at"] = Time.now.to_f
    msg["retry_count"] = 0
    msg["ojs_retry_state"] = STATE
    at = Time.now.to_f + 15 + rand(10)
    payload = Sidekiq.dump_json(msg)
    Sidekiq.redis { |conn| conn.zadd("retry", at.to_s, payload) }
    raise Sidekiq::JobRetry::Skip, "Sidekiq::JobRetry::Skip", []
  end
end

case ENV.fetch("OJS_SK_MODE")
when "engine" then OjsRetry::Sidekiq.install
when "floor" then Sidekiq.configure_server { |c| c.server_middleware { |ch| ch.add(FloorMiddleware) } }
end

# Fails every time: its first failure takes the retry path (one retry left).
class BenchFails
  include Sidekiq::Worker
  sidekiq_options retry: 1

  def perform(_n)
    raise "bench failure"
  end
end
