# frozen_string_literal: true

# Sidekiq's failure path in one process, CPU time per failed job (less
# sensitive to a loaded machine than jobs per second): Sidekiq's own
# JobRetry#global and #local, as its Processor runs them (native: its
# attempt_retry, the ZADD into the retry set) against the same with the
# integration's server middleware inside them (the failure transaction,
# the ZADD), then the transaction alone. Medians of 5
# alternating rounds of 3000 failures. Information only.
#
#   REDIS_URL=... ruby bench/sidekiq/cpu.rb
require "json"
require "ojs_retry/sidekiq"
require "sidekiq/job_retry"

Redis.silence_deprecations = true
Sidekiq.logger.level = Logger::WARN

# Fails every time, with Sidekiq's `retry: 1`: its failure takes the retry path.
class CpuBenchFails
  include Sidekiq::Worker
  sidekiq_options retry: 1

  def perform(_n) = raise("bench failure")
end

JOB = { "class" => "CpuBenchFails", "args" => [1], "retry" => 1, "queue" => "q",
        "jid" => "b4a577edbccf1d805744efa9", "created_at" => 1.0, "enqueued_at" => 1.0 }.freeze
JOBSTR = Sidekiq.dump_json(JOB)
WORKER = CpuBenchFails.new.tap { |w| w.jid = JOB["jid"] }
MIDDLEWARE = OjsRetry::Sidekiq::ServerMiddleware.new
RETRIER = Sidekiq::JobRetry.new
N = 3000

def cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)

def per_failure_us
  t0 = cpu
  N.times { yield }
  (cpu - t0) / N * 1e6
end

# As Sidekiq's Processor runs a job: JobRetry#global around #local around
# the server middleware; what reaches the Processor is a Handled.
def failing(&blk)
  RETRIER.global(JOBSTR, "q") { RETRIER.local(WORKER, JOBSTR, "q", &blk) }
rescue Sidekiq::JobRetry::Handled
  nil
end

native = []
engine = []
transaction = []
# What the middleware passes for this job: its `retry` option's preset, built once.
defaults = OjsRetry::Sidekiq.adoption_policy(JOB)
6.times do |round|
  # Both parse the payload once, as Sidekiq's processor does.
  n = per_failure_us { failing { Sidekiq.load_json(JOBSTR) && WORKER.perform(1) } }
  e = per_failure_us { failing { MIDDLEWARE.call(WORKER, Sidekiq.load_json(JOBSTR), "q") { WORKER.perform(1) } } }
  t = per_failure_us do
    OjsRetry.run_transaction(1, key: JOB["jid"], defaults: defaults, history_limit: 10, queue: "q",
                                job: { "class" => JOB["class"], "args" => JOB["args"] },
                                type: "RuntimeError", message: "bench failure")
  end
  Sidekiq.redis { |c| c.del("retry") }
  next if round.zero? # warm-up

  native << n
  engine << e
  transaction << t
end
median = ->(xs) { xs.sort[xs.size / 2].round(1) }
puts JSON.pretty_generate(
  "suite" => "sidekiq-cpu", "failures_per_round" => N, "rounds" => native.size,
  "cpu_us_per_failure" => { "native" => median.call(native), "engine" => median.call(engine),
                            "run_transaction_alone" => median.call(transaction) },
  "ratio" => (median.call(native) / median.call(engine)).round(3)
)
