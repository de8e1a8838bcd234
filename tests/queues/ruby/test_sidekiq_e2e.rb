# frozen_string_literal: true

# Sidekiq on the engine end to end: two real Sidekiq processes
# (sidekiq_app.rb, OjsRetry::Sidekiq.install) on the real Redis. Each job's
# decisions are checked against RetryPolicy#decide for its jid, and where it
# ended against Sidekiq's own sets (found by jid: other tests' jobs may be
# there too).
require_relative "helper"

class TestSidekiqE2E < Minitest::Test
  O = OjsRetry
  POLICY = { max_attempts: 3, initial_interval: "PT0.3S", backoff_coefficient: 2, jitter: true,
             non_retryable_errors: ["Billing::CardDeclined"], on_exhaustion: "dead_letter" }.freeze
  PRECISION_MS = 750
  SLACK_MS = 2000

  def decide(jid, attempt, **failure)
    O::RetryPolicy.new(POLICY).decide(attempt, key: jid, **failure)
  end

  def decisions(workers, jid)
    workers.events(jid).select { |e| e["kind"] == "decision" }
  end

  def dead(jid) = Sidekiq::DeadSet.new.find_job(jid)
  def retrying(jid) = Sidekiq::RetrySet.new.find_job(jid)

  def wait_terminal(workers, jids)
    SkTest.wait_for("terminal decisions of #{jids}") do
      jids.all? { |j| SkTest.timeline(workers.events(j))[1] }
    end
  end

  def test_retries_exhaustion_non_retryable_handler_codes_and_listeners
    w = SkTest::Workers.new(mode: "engine", count: 2)
    jobs = { net: w.push("E2EWorker", "net"), declined: w.push("E2EWorker", "declined"),
             stolen: w.push("E2EWorker", "stolen"), discard: w.push("E2EWorker", "discard"),
             ok: w.push("E2EWorker", "ok-after"), raising: w.push("E2EWorker", "net", "raising-listener") }
    wait_terminal(w, jobs.values)
    check_exhausted(w, jobs[:net])
    # A listener and a sidekiq_retries_exhausted block that raise change
    # nothing: the same outcome, and the next listener was still told.
    check_exhausted(w, jobs[:raising])
    check_one(w, jobs[:declined], "dead_letter", type: "Billing::CardDeclined")
    check_one(w, jobs[:stolen], "dead_letter", type: "payment.card_stolen", code: "DEAD_LETTER")
    check_one(w, jobs[:discard], "discard", type: "payment.noop", code: "DISCARD")
    rows, = SkTest.timeline(w.events(jobs[:ok]))
    assert_equal [%w[retry retryable], ["succeeded", nil]], rows.map { |r| [r["action"], r["reason"]] }
    assert_nil dead(jobs[:ok])
  ensure
    w&.stop
  end

  # Exactly max_attempts runs, each decision the engine's, the gaps within
  # Sidekiq's poll precision, and a dead set entry carrying the record.
  def check_exhausted(w, jid)
    assert_equal 3, w.starts(jid)
    got = decisions(w, jid)
    assert_equal((1..3).map { |n| decide(jid, n, type: "Net::ReadTimeout").to_h.values_at("action", "reason", "delay_ms") },
                 got.map { |d| d.values_at("action", "reason", "delay_ms") })
    rows, = SkTest.timeline(w.events(jid))
    rows.each_cons(2) do |row, nxt|
      gap = nxt["started_at_ms"] - row["failed_at_ms"]
      assert_operator gap, :>=, row["delay_ms"]
      assert_operator gap, :<=, row["delay_ms"] + PRECISION_MS + SLACK_MS
    end
    entry = SkTest.wait_for("#{jid} in the dead set") { dead(jid) }
    assert_equal ["Net::ReadTimeout", 2], [entry.item["error_class"], entry.item["retry_count"]]
    record = entry.item[O::Sidekiq::DEAD_LETTER_KEY]
    assert_equal [jid, "exhausted"], record.values_at("job_id", "reason")
    assert_equal [1, 2, 3], record["retry_state"]["errors"].map { |e| e["attempt"] }
    assert_equal ["Net::ReadTimeout"], record["retry_state"]["errors"].map { |e| e["type"] }.uniq
    assert_equal "E2EWorker", record["job"]["class"]
    assert_equal JSON.parse(entry.item[O::Sidekiq::STATE_KEY]), record["retry_state"]
    assert_equal 1, w.events(jid).count { |e| e["kind"] == "terminal" }
  end

  def check_one(w, jid, action, **failure)
    assert_equal 1, w.starts(jid)
    want = decide(jid, 1, **failure)
    assert_equal action, want.action
    assert_equal [want.to_h.values_at("action", "reason", "delay_ms")],
                 decisions(w, jid).map { |d| d.values_at("action", "reason", "delay_ms") }
    assert_nil retrying(jid)
    if action == "dead_letter"
      entry = SkTest.wait_for("#{jid} in the dead set") { dead(jid) }
      assert_equal want.reason, entry.item[O::Sidekiq::DEAD_LETTER_KEY]["reason"]
    else
      assert_nil dead(jid)
    end
  end

  # Refused when pushed, with the typed error: nothing reaches Redis (a
  # queue no process reads).
  def test_bad_policy_refused_at_push
    queue = "ojs-refused-#{SecureRandom.hex(4)}"
    e = assert_raises(O::PolicyError) do
      Sidekiq::Client.push("class" => "E2EWorker", "args" => ["net"], "queue" => queue,
                           "ojs_policy" => { "max_attempts" => "three" })
    end
    assert_equal ["validation.retry_policy_invalid", "max_attempts"], [e.code, e.field]
    assert_raises(O::PolicyError) do
      Sidekiq::Client.push("class" => "E2EWorker", "args" => ["net"], "queue" => queue,
                           "ojs_policy" => '{"max_attempts": 3, "jitter": "yes"}')
    end
    assert_equal 0, SkTest.redis.llen("queue:#{queue}")
    refute SkTest.redis.sismember("queues", queue)
  end

  # A process stopped with TERM gives a running job its `-t` timeout (5 s
  # here), then raises Sidekiq::Shutdown in it and pushes it back onto its
  # queue: nothing is decided (the middleware lets Shutdown through), and
  # the next run is the same attempt — Sidekiq's retry_count is unchanged.
  def test_a_job_pushed_back_at_shutdown_runs_again_as_the_same_attempt
    first = SkTest::Workers.new(mode: "engine", count: 1)
    jid = first.push("E2EWorker", "sleep-once")
    SkTest.wait_for("the first run") { first.starts(jid) == 1 }
    first.stop
    assert_empty decisions(first, jid)
    second = SkTest::Workers.new(mode: "engine", count: 1, queue: first.queue, run: first.run)
    d = SkTest.wait_for("the second run's decision") { decisions(second, jid).first }
    assert_equal [1, "retry"], d.values_at("attempt", "action")
    # Two runs before that decision (the retry it decided may have started since).
    events = second.events(jid)
    assert_equal 2, events.take_while { |e| e["kind"] != "decision" }.count { |e| e["kind"] == "start" }
  ensure
    first&.stop
    second&.stop
  end

  # Sidekiq's BasicFetch (open-source Sidekiq) takes a job off its queue
  # with BRPOP: when the process running it is killed (SIGKILL, the OOM
  # killer), the job is in no queue, no retry set and no dead set — lost,
  # as Sidekiq documents (Sidekiq Pro's super_fetch recovers it). The
  # engine is never asked: no attempt is counted and nothing is decided.
  def test_a_killed_process_loses_its_job_undecided
    w = SkTest::Workers.new(mode: "engine", count: 1)
    jid = w.push("E2EWorker", "kill")
    pid = w.pids.first
    SkTest.wait_for("the Sidekiq process to die") { Process.waitpid(pid, Process::WNOHANG) }
    assert_equal 1, w.starts(jid)
    assert_empty decisions(w, jid)
    assert_nil retrying(jid)
    assert_nil dead(jid)
    refute_includes SkTest.redis.lrange("queue:#{w.queue}", 0, -1).map { |j| JSON.parse(j)["jid"] }, jid
  ensure
    w&.stop
  end
end
