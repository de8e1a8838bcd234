# frozen_string_literal: true

# The Sidekiq processes of bench/sidekiq/bench.rb (`sidekiq -r` this file).
# OJS_SK_MODE=engine installs the integration (the one line: the job's own
# `retry: 1` through the `sidekiq` preset); native leaves Sidekiq's JobRetry.
require "sidekiq"
require "ojs_retry/sidekiq"

# Debian's redis 4.8 warns of its 5.0 API on every call Sidekiq 6.4.1 makes.
Redis.silence_deprecations = true
Sidekiq.logger.level = Logger::WARN
OjsRetry::Sidekiq.install if ENV.fetch("OJS_SK_MODE") == "engine"

# Fails every time: its first failure takes the retry path (one retry left).
class BenchFails
  include Sidekiq::Worker
  sidekiq_options retry: 1

  def perform(_n)
    raise "bench failure"
  end
end
