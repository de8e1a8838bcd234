# frozen_string_literal: true

# Shared by the Sidekiq tests (helper.rb) and the cross-queue runner
# (timeline_sidekiq.rb): the real Redis the test script started
# (OJS_REDIS_URL), real Sidekiq processes (Debian's ruby-sidekiq, the
# `sidekiq` command) loading sidekiq_app.rb, started here and stopped by
# pid, and the events they write (see sidekiq_app.rb).
require "json"
require "securerandom"
require "tmpdir"
require "redis"
require "sidekiq"
require "sidekiq/api"
require "ojs_retry"
require "ojs_retry/sidekiq"

# Debian's redis 4.8 warns of its 5.0 API on every call Sidekiq 6.4.1 makes.
Redis.silence_deprecations = true

module SkTest
  HERE = __dir__
  ROOT = File.expand_path("../../..", HERE)
  SCENARIO = File.join(ROOT, "tests", "queues", "scenario.json")
  REDIS_URL = ENV.fetch("OJS_REDIS_URL")
  LOGS = ENV["OJS_SK_LOGS"] || ENV["OJS_QUEUES_LOGS"] || Dir.tmpdir
  # What a wait that reaches its deadline raises (helper.rb makes it a
  # minitest failure).
  TimedOut = Class.new(RuntimeError) unless const_defined?(:TimedOut)

  # The overall deadline of a wait: generous (a loaded 2-core machine); a
  # wait that reaches it fails the test.
  DEADLINE_S = 120

  Sidekiq.configure_client { |c| c.redis = { url: REDIS_URL } }
  # The one line: in this (client) process, the client middleware that
  # validates a job's policy when it is pushed.
  OjsRetry::Sidekiq.install

  def self.redis = @redis ||= Redis.new(url: REDIS_URL)
  def self.now_ms = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)

  # Waits until the block returns a true value (its value), polling; fails
  # with `what` at the deadline.
  def self.wait_for(what, deadline_s: DEADLINE_S)
    limit = Process.clock_gettime(Process::CLOCK_MONOTONIC) + deadline_s
    loop do
      v = yield
      return v if v
      raise TimedOut, "timed out after #{deadline_s}s waiting for #{what}" \
        if Process.clock_gettime(Process::CLOCK_MONOTONIC) > limit

      sleep 0.05
    end
  end

  # Real Sidekiq processes of one run.
  class Workers
    attr_reader :run, :pids, :queue

    def initialize(mode:, count: 2, queue: nil, concurrency: 2, defaults: nil, run: nil, scenario: SCENARIO)
      @run = run || SecureRandom.hex(6)
      @queue = queue || "ojs-sk-#{@run}"
      @pids = []
      env = { "REDIS_URL" => REDIS_URL, "OJS_SK_RUN" => @run, "OJS_SK_MODE" => mode,
              "OJS_SK_SCENARIO" => scenario, "OJS_SK_DEFAULTS" => defaults && JSON.generate(defaults) }
      count.times do |i|
        log = File.join(LOGS, "sidekiq-#{mode}-#{@run}-#{i}.log")
        @pids << Process.spawn(env, "sidekiq", "-r", File.join(HERE, "sidekiq_app.rb"), "-q", @queue,
                               "-c", concurrency.to_s, "-t", "5", out: log, err: log, pgroup: true)
      end
      wait_ready
    end

    # Every process has sent its first heartbeat (it fetches from then on)
    # and its scheduled poller has polled once (it polls every 0.25 to
    # 0.75 s from then on: sidekiq_app.rb).
    def wait_ready
      SkTest.wait_for("#{@pids.size} Sidekiq processes") do
        alive = Sidekiq::ProcessSet.new.map { |p| p["pid"] }
        polled = SkTest.redis.smembers("ojs-sk:#{@run}:polled").map(&:to_i)
        @pids.all? { |pid| alive.include?(pid) && polled.include?(pid) }
      end
    end

    # Stops each process by its pid: TERM, then KILL after a deadline.
    def stop
      @pids.each { |pid| signal("TERM", pid) }
      @pids.each do |pid|
        limit = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 15
        until Process.waitpid(pid, Process::WNOHANG)
          if Process.clock_gettime(Process::CLOCK_MONOTONIC) > limit
            signal("KILL", pid)
            Process.waitpid(pid)
            break
          end
          sleep 0.05
        end
      rescue Errno::ECHILD
        next
      end
    end

    def key(jid) = "ojs-timeline:#{@run}:#{jid}"
    def events(jid) = SkTest.redis.lrange(key(jid), 0, -1).map { |e| JSON.parse(e) }
    def starts(jid) = SkTest.redis.get("#{key(jid)}:starts").to_i

    # Pushes a job to this run's queue (Sidekiq's client: the client
    # middleware runs when the engine is installed in this process).
    def push(klass, *args, **opts)
      item = { "class" => klass, "args" => args, "queue" => @queue }
      opts.each { |k, v| item[k.to_s] = v }
      Sidekiq::Client.push(item)
    end

    private

    def signal(sig, pid)
      Process.kill(sig, pid)
    rescue Errno::ESRCH
      nil
    end
  end

  # The entries of a job's timeline (as tests/queues/python/timeline_common
  # builds them) and whether the last one is terminal.
  def self.timeline(events)
    starts = {}
    rows = []
    events.each do |ev|
      next starts[ev["attempt"]] = ev["at_ms"] if ev["kind"] == "start"
      next unless %w[decision succeeded].include?(ev["kind"])

      row = { "attempt" => ev["attempt"], "action" => "succeeded", "reason" => nil, "delay_ms" => nil }
      row.merge!(ev.slice("action", "reason", "delay_ms", "timed_out")) if ev["kind"] == "decision"
      row["started_at_ms"] = starts[ev["attempt"]]
      row["failed_at_ms"] = ev["kind"] == "decision" ? ev["at_ms"] : nil
      rows << row
    end
    [rows, !rows.empty? && rows.last["action"] != "retry"]
  end
end
