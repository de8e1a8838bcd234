# frozen_string_literal: true

# Presets in the real queue: jobs that always fail, with Sidekiq's own retry
# options (`retry: true` = 25 retries, `retry: 2`, `retry: 0`, `retry:
# false`, `retry: 1, dead: false`), run on the same Redis with the same jids twice — by Sidekiq's native
# JobRetry, and on the engine through the one line of adoption (no policy
# given: the `sidekiq` preset of the job's own options). The two timelines
# must be the same, and the preset's RetryPolicy#decide.
#
# Sidekiq 6.4.1's delay is `count**4 + 15 + rand(10) * (count + 1)` s: the
# native processes pin that rand(10) to floor(10u), u the engine's keyed
# sample for the jid and retry (sidekiq_app.rb, PinnedRand), so both draw
# the same jitter. A timeline is, per job: the runs, each retry with the
# delay Sidekiq was given (native: what delay_for returned; engine: the
# decision), the attempt at which the death handlers were told, and whether
# the job is in the dead set. The delays are 15 s and more: the test moves
# a scheduled retry to its queue at once (Sidekiq's own
# SortedEntry#add_to_queue, which keeps its retry_count); only what Sidekiq
# was asked to do is compared, not when.
require_relative "helper"

class TestSidekiqPresets < Minitest::Test
  JOBS = { "default" => ["PresetDefault", { retry: true }], "retry2" => ["PresetRetry2", { retry: 2 }], "retry0" => ["PresetRetry0", { retry: 0 }],
           "retryfalse" => ["PresetRetryFalse", { retry: false }],
           "nodead" => ["PresetNoDead", { retry: 1, dead: false }] }.freeze

  def run_mode(mode, tag)
    w = SkTest::Workers.new(mode: mode, count: 2)
    # The worker classes are not loaded here: the options go in the payload
    # as `perform_async` writes them where they are.
    jids = JOBS.map { |name, (klass, opts)| w.push(klass, jid: "#{tag}-#{name}", **opts) }
    SkTest.wait_for("#{mode}: every job told to the death handlers") do
      Sidekiq::RetrySet.new.each { |e| e.add_to_queue if jids.include?(e.jid) }
      jids.all? { |j| w.events(j).any? { |e| e["kind"] == "terminal" } }
    end
    jids.to_h { |jid| [jid.delete_prefix("#{tag}-"), timeline_of(w, jid, mode)] }
  ensure
    w&.stop
  end

  def timeline_of(w, jid, mode)
    events = w.events(jid)
    retries = if mode == "native"
                events.select { |e| e["kind"] == "retry" }.map { |e| [e["attempt"], e["delay_ms"]] }
              else
                events.select { |e| e["kind"] == "decision" && e["action"] == "retry" }
                      .map { |e| [e["attempt"], e["delay_ms"]] }
              end
    dead = Sidekiq::DeadSet.new.find_job(jid)
    { "runs" => w.starts(jid), "retries" => retries,
      "terminal" => events.select { |e| e["kind"] == "terminal" }.map { |e| e["attempt"] },
      "dead" => !dead.nil? }
  end

  # The preset's decisions for the jid, as the same timeline.
  def expected(tag)
    JOBS.to_h do |name, (_, opts)|
      jid = "#{tag}-#{name}"
      p = OjsRetry::RetryPolicy.preset("sidekiq", version: "7", max_retries: 25, dead: true, **opts)
      retries = []
      (1..).each do |n|
        d = p.decide(n, type: "RuntimeError", key: jid, now: 0)
        break @last = d unless d.action == "retry"

        retries << [n, d.delay_ms]
      end
      [name, { "runs" => retries.size + 1, "retries" => retries, "terminal" => [retries.size + 1],
               "dead" => @last.action == "dead_letter" }]
    end
  end

  def test_engine_with_the_sidekiq_preset_equals_sidekiqs_native_retry
    tag = "ojs-preset-#{SecureRandom.hex(4)}"
    native = run_mode("native", tag)
    # The same jids again (the same keyed jitter): the native run's dead
    # set entries (these jids are this test's own) are removed first.
    JOBS.each_key { |name| Sidekiq::DeadSet.new.find_job("#{tag}-#{name}")&.delete }
    engine = run_mode("engine", tag)
    assert_equal expected(tag), native
    assert_equal native, engine
  end
end
