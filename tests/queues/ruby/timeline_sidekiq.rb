# frozen_string_literal: true

# The Sidekiq runner of the cross-queue identity test
# (tests/queues/python/test_cross_queue.py), with the command line every
# runner has (tests/queues/python/timeline_common.py):
#
#   ruby timeline_sidekiq.rb --redis URL [--scenario FILE] [--workers 2]
#
# Starts `workers` real Sidekiq processes on the engine (sidekiq_app.rb:
# OjsRetry::Sidekiq.install, the scenario's scripted failures raised as
# OjsRetry::JobError), pushes the scenario's jobs through Sidekiq's client
# with the integration installed (jids exactly the scenario's job ids, its
# policy carried by each job as `ojs_policy`), waits for every job's
# terminal entry, stops the processes by pid, checks that Sidekiq holds
# nothing left to run for the run (its queue, retry set and schedule set),
# and prints the timeline document {"queue", "precision_ms", "jobs"}.
#
# Precision: Sidekiq's scheduled poller moves a due retry from the retry set
# every 0.25 to 0.75 s (sidekiq_app.rb sets poll_interval_average to 0.5 s):
# a retry starts up to 750 ms after it is due, never before.
#
# Needs the installed gem (GEM_HOME; scripts/test-queues installs it) and
# Debian's Sidekiq.
require "json"
require "optparse"

opts = { workers: 2, scenario: File.expand_path("../scenario.json", __dir__) }
OptionParser.new do |o|
  o.on("--redis URL") { |v| opts[:redis] = v }
  o.on("--scenario FILE") { |v| opts[:scenario] = File.expand_path(v) }
  o.on("--workers N", Integer) { |v| opts[:workers] = v }
  o.on("--out FILE") { |v| opts[:out] = v }
end.parse!
abort "timeline_sidekiq.rb: --redis URL is required" unless opts[:redis]
ENV["OJS_REDIS_URL"] = opts[:redis]
require_relative "sidekiq_support"

QUEUE = "sidekiq"
PRECISION_MS = 750

scenario = JSON.parse(File.read(opts[:scenario]))
ids = scenario["jobs"].map { |j| j["id"] }
workers = SkTest::Workers.new(mode: "engine", count: opts[:workers], scenario: opts[:scenario])
begin
  ids.each { |id| workers.push("ScenarioWorker", id, jid: id, ojs_policy: scenario["policy"]) }
  SkTest.wait_for("every scenario job's terminal entry") do
    ids.all? { |id| SkTest.timeline(workers.events(id))[1] }
  end
ensure
  workers.stop
end

# Read once the processes have stopped: nothing can start any more, and a
# job the engine ended that Sidekiq would still run is one of these.
pending = SkTest.redis.llen("queue:#{workers.queue}") +
          [Sidekiq::RetrySet.new, Sidekiq::ScheduledSet.new].sum { |set| set.count { |e| e.queue == workers.queue } }
unless pending.zero?
  events = ids.to_h { |id| [id, workers.events(id)] }
  abort "timeline_sidekiq.rb: #{pending} job(s) left to run after every job ended: #{JSON.generate(events)}"
end
doc = { "queue" => QUEUE, "precision_ms" => PRECISION_MS,
        "jobs" => ids.to_h { |id| [id, SkTest.timeline(workers.events(id))[0]] },
        "run" => workers.run, "redis_queue" => workers.queue }
text = JSON.pretty_generate(doc)
opts[:out] ? File.write(opts[:out], text) : puts(text)
