# frozen_string_literal: true

# At failure time (docs/integrations.md, "At failure time"): a job that
# reaches a Sidekiq process carrying something the engine would refuse ends
# in the outcome the failure transaction defines, and the process goes on.
# Jobs are written straight into the queue's Redis list, as a producer
# without the client middleware (another app, an older deploy) would.
require_relative "helper"

class TestSidekiqFailureTime < Minitest::Test
  def raw_push(w, how, **fields)
    jid = SecureRandom.hex(12)
    job = { "class" => "E2EWorker", "args" => [how], "jid" => jid, "queue" => w.queue, "retry" => true,
            "created_at" => Time.now.to_f, "enqueued_at" => Time.now.to_f }
    fields.each { |k, v| job[k.to_s] = v }
    SkTest.redis.sadd("queues", w.queue)
    SkTest.redis.lpush("queue:#{w.queue}", JSON.generate(job))
    jid
  end

  def first_decision(w, jid)
    SkTest.wait_for("a decision for #{jid}") { w.events(jid).find { |e| e["kind"] == "decision" } }
  end

  def dead_record(jid)
    SkTest.wait_for("#{jid} in the dead set") { Sidekiq::DeadSet.new.find_job(jid) }.item["ojs_dead_letter"]
  end

  def test_each_case_ends_defined_and_the_processes_go_on
    w = SkTest::Workers.new(mode: "engine", count: 2)
    state1 = OjsRetry.run_transaction(1, key: "x", defaults: { jitter: false }, type: "a", now: 0).state_json
    jobs = {
      refused: raw_push(w, "net", ojs_policy: { "max_attempts" => "three" }),
      long: raw_push(w, "long"),
      binary: raw_push(w, "binary"),
      unreadable: raw_push(w, "net", retry_count: 0, ojs_retry_state: "{not json"),
      behind: raw_push(w, "net", retry_count: 1, ojs_retry_state: state1)
    }
    d = first_decision(w, jobs[:refused])
    assert_equal [1, "dead_letter", "policy_invalid", ["policy_refused"]], d.values_at("attempt", "action", "reason", "notes")
    assert_equal "policy_invalid", dead_record(jobs[:refused])["reason"]

    d = first_decision(w, jobs[:long])
    assert_equal [1, "retry", ["message_truncated"]], d.values_at("attempt", "action", "notes")

    d = first_decision(w, jobs[:unreadable])
    assert_equal [2, "retry", ["state_unreadable"]], d.values_at("attempt", "action", "notes")

    d = first_decision(w, jobs[:behind])
    assert_equal [3, "dead_letter", "exhausted", ["state_rebased"]], d.values_at("attempt", "action", "reason", "notes")
    assert_equal %w[a Net::ReadTimeout], dead_record(jobs[:behind])["retry_state"]["errors"].map { |e| e["type"] }

    # Bytes that are not UTF-8 are recorded scrubbed (U+FFFD), as Sidekiq
    # scrubs its error_message; the job goes on to exhaustion.
    record = dead_record(jobs[:binary])
    assert_equal ["bad \u{FFFD} byte"], record["retry_state"]["errors"].map { |e| e["message"] }.uniq
    assert_equal 3, w.starts(jobs[:binary])
    # Both processes are still running and answering.
    w.wait_ready
    w.pids.each { |pid| assert_nil Process.waitpid(pid, Process::WNOHANG) }
  ensure
    w&.stop
  end

  # A job scheduled (`perform_in`) by a producer whose defaults accept its
  # layer, due on workers whose defaults refuse it: Sidekiq's poller pushes
  # it again (not checked again: it would be lost in the poller), it runs,
  # and its failure is dead-lettered with the reason.
  def test_a_scheduled_job_the_workers_refuse_runs_and_is_dead_lettered
    w = SkTest::Workers.new(mode: "engine", count: 1, defaults: { max_interval: "PT3S" })
    jid = Sidekiq::Client.push("class" => "E2EWorker", "args" => ["net"], "queue" => w.queue,
                               "at" => Time.now.to_f + 0.5, "ojs_policy" => { "initial_interval" => "PT5S" })
    d = SkTest.wait_for("the scheduled job's decision") { w.events(jid).find { |e| e["kind"] == "decision" } }
    assert_equal [1, "dead_letter", "policy_invalid", ["policy_refused"]], d.values_at("attempt", "action", "reason", "notes")
    assert_equal 1, w.starts(jid)
  ensure
    w&.stop
  end
end
