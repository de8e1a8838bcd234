# frozen_string_literal: true

# The cross-queue identity scenario (tests/queues/scenario.json) in Sidekiq:
# two Sidekiq processes on the engine, the scenario's job ids as jids, its
# policy carried by each job (`ojs_policy`), the scripted failures raised as
# OjsRetry::JobError. The timeline must be the one RetryPolicy#decide gives
# for those job ids — what tests/queues/python/test_cross_queue.py requires
# of the six other queues (its expected_timelines, written again below) —
# and every gap (next start − failure) at least the decision's delay and at
# most the delay + Sidekiq's scheduled-poll precision + the scenario's
# gap_slack_ms.
require_relative "helper"

class TestSidekiqTimeline < Minitest::Test
  # The scheduled poller of sidekiq_app.rb runs every 0.25 to 0.75 s: a due
  # retry waits at most 750 ms for it (then it is fetched at once).
  PRECISION_MS = 750

  def scenario = @scenario ||= JSON.parse(File.read(SkTest::SCENARIO))

  # What RetryPolicy#decide gives for the scenario, per job and attempt.
  def expected
    policy = OjsRetry::RetryPolicy.new(scenario["policy"])
    scenario["jobs"].to_h do |job|
      rows = []
      (1..).each do |attempt|
        outcome = job["outcomes"] == "always" ? job["always"] : job["outcomes"][attempt - 1]
        unless outcome
          rows << { "attempt" => attempt, "action" => "succeeded", "reason" => nil, "delay_ms" => nil }
          break
        end
        d = policy.decide(attempt, type: outcome["type"], code: outcome["code"], key: job["id"])
        rows << { "attempt" => attempt, "action" => d.action, "reason" => d.reason, "delay_ms" => d.delay_ms }
        break unless d.action == "retry"
      end
      [job["id"], rows]
    end
  end

  def run_scenario
    workers = SkTest::Workers.new(mode: "engine", count: 2)
    # A unique jid per run keeps the Redis of an earlier run out; the key
    # of the jitter is the scenario's job id, as in every other queue.
    ids = scenario["jobs"].map { |j| j["id"] }
    ids.each do |id|
      workers.push("ScenarioWorker", id, jid: id, ojs_policy: scenario["policy"])
    end
    SkTest.wait_for("every scenario job's terminal entry") do
      ids.all? { |id| SkTest.timeline(workers.events(id))[1] }
    end
    ids.to_h { |id| [id, SkTest.timeline(workers.events(id))[0]] }
  ensure
    workers&.stop
  end

  def test_timeline_is_the_engines_and_gaps_honour_the_delay
    timelines = run_scenario
    keep = %w[attempt action reason delay_ms]
    assert_equal expected, timelines.transform_values { |rows| rows.map { |r| r.slice(*keep) } }
    slack = scenario["gap_slack_ms"]
    timelines.each do |job, rows|
      rows.each_cons(2) do |row, nxt|
        gap = nxt["started_at_ms"] - row["failed_at_ms"]
        assert_operator gap, :>=, row["delay_ms"], "#{job} attempt #{nxt['attempt']} started early"
        assert_operator gap, :<=, row["delay_ms"] + PRECISION_MS + slack, "#{job}: gap #{gap} ms"
      end
    end
  end
end
