# frozen_string_literal: true

# Sidekiq's retry path on the engine against Sidekiq's native retry, same
# Redis, same run. Information only: nothing asserts the figures.
#
#   ruby bench/sidekiq/bench.rb --redis URL [--jobs N] [--rounds R]
#
# Three Sidekiq processes (`-c 5`), one per mode, all running for the whole
# run (bench/sidekiq/app.rb): natively Sidekiq's JobRetry; on the engine
# (OjsRetry::Sidekiq.install, the worker's `retry: 1` through the `sidekiq`
# preset: the failure transaction, the §10 state written into the payload);
# and the floor (a server middleware doing the integration's work without
# the decision: the payload's fields and a state text of the same length,
# the ZADD), which shows what the decision itself costs.
# A round pushes N jobs that fail to one mode's queue (push_bulk) and times
# until all N are scheduled in Sidekiq's retry set: the retry path as far as
# Sidekiq's own code goes (the retry itself is Sidekiq's poller, the same in
# all modes, and its delay is 15 s or more). Rounds alternate native /
# engine / floor; the figure is jobs per second, the median of the rounds,
# and the ratio engine / native (and floor / native). Beside it, the CPU time each Sidekiq process spent
# per job in its rounds (user + system, from /proc: less sensitive to other
# load on the machine than jobs per second). Prints one JSON document.
require "json"
require "optparse"
require "securerandom"
require "sidekiq"
require "sidekiq/api"

opts = { jobs: 2000, rounds: 5 }
OptionParser.new do |o|
  o.on("--redis URL") { |v| opts[:redis] = v }
  o.on("--jobs N", Integer) { |v| opts[:jobs] = v }
  o.on("--rounds N", Integer) { |v| opts[:rounds] = v }
  o.on("--logs DIR") { |v| opts[:logs] = v }
end.parse!
Redis.silence_deprecations = true
Sidekiq.configure_client { |c| c.redis = { url: opts.fetch(:redis) } }
REDIS = Redis.new(url: opts.fetch(:redis))
APP = File.join(__dir__, "app.rb")
def clock = Process.clock_gettime(Process::CLOCK_MONOTONIC)
TICKS = Integer(`getconf CLK_TCK`.strip, exception: false) || 100

# CPU seconds (user + system) a process has used so far.
def cpu_s(pid)
  fields = File.read("/proc/#{pid}/stat").split(") ").last.split
  (fields[11].to_i + fields[12].to_i).to_f / TICKS
end

def wait_for(what, limit_s = 300)
  t = clock + limit_s
  until yield
    raise "timed out waiting for #{what}" if clock > t

    sleep 0.005
  end
end

REDIS.flushdb
run = SecureRandom.hex(4)
MODES = %w[native engine floor].freeze
pids = MODES.to_h do |mode|
  log = File.join(opts[:logs] || Dir.tmpdir, "sidekiq-bench-#{mode}-#{run}.log")
  pid = Process.spawn({ "REDIS_URL" => opts[:redis], "OJS_SK_MODE" => mode },
                      "sidekiq", "-r", APP, "-q", "bench-#{mode}", "-c", "5", out: log, err: log, pgroup: true)
  [mode, pid]
end
begin
  wait_for("the Sidekiq processes") { Sidekiq::ProcessSet.new.size == MODES.size }
  figures = MODES.to_h { |m| [m, []] }
  cpu = MODES.to_h { |m| [m, []] }
  engine = nil
  retries = Sidekiq::RetrySet.new
  (opts[:rounds] + 1).times do |round|
    MODES.each do |mode|
      retries.clear
      c0 = cpu_s(pids[mode])
      t0 = clock
      Sidekiq::Client.push_bulk("class" => "BenchFails", "queue" => "bench-#{mode}", "retry" => 1,
                                "args" => Array.new(opts[:jobs]) { |i| [i] })
      wait_for("#{mode}: #{opts[:jobs]} jobs in the retry set") { retries.size >= opts[:jobs] }
      engine = retries.first&.item&.key?("ojs_retry_state") if mode == "engine"
      # Round 0 warms every process up and is not counted.
      next unless round.positive?

      figures[mode] << opts[:jobs] / (clock - t0)
      cpu[mode] << (cpu_s(pids[mode]) - c0) / opts[:jobs] * 1e6
    end
  end
  median = ->(xs) { xs.sort[xs.size / 2] }
  puts JSON.pretty_generate(
    "suite" => "sidekiq", "sidekiq" => Sidekiq::VERSION, "jobs" => opts[:jobs], "rounds" => opts[:rounds],
    "jobs_per_s" => figures.transform_values { |xs| xs.map { |x| x.round(1) } },
    "median" => figures.transform_values { |xs| median.call(xs).round(1) },
    "ratio" => (median.call(figures["engine"]) / median.call(figures["native"])).round(3),
    "floor_ratio" => (median.call(figures["floor"]) / median.call(figures["native"])).round(3),
    "cpu_us_per_job" => cpu.transform_values { |xs| xs.map(&:round) },
    "cpu_median_us_per_job" => cpu.transform_values { |xs| median.call(xs).round },
    "cpu_ratio" => (median.call(cpu["native"]) / median.call(cpu["engine"])).round(3),
    "floor_cpu_ratio" => (median.call(cpu["native"]) / median.call(cpu["floor"])).round(3),
    "load_average" => File.read("/proc/loadavg").split.first(3).map(&:to_f),
    "last_round_engine_wrote_state" => engine
  )
ensure
  pids.each_value do |pid|
    Process.kill("TERM", pid)
  rescue Errno::ESRCH
    nil
  end
  pids.each_value { |pid| Process.wait(pid) }
end
