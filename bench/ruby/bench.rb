# frozen_string_literal: true

# Ruby benchmarks of ojs-retry against Sidekiq's own retry-delay
# computation, in one process so that ratios compare figures measured under
# the same conditions. Run by scripts/bench against the gem it installs
# into target/bench/gems; prints one JSON document:
#
#   {"suite": "ruby", "env": {...}, "results": [{group, name, ns, note?}]}
#
# `ns` is the median, over all samples, of the time per call; samples are
# taken in rounds that visit every benchmark in turn (a change in the
# machine's load touches a subject and its baseline alike), each sample
# running the call enough times to last ~20 ms. Information only: nothing
# asserts the timings.
#
#   ruby bench/ruby/bench.rb [--quick]
require "json"
require "etc"
require "ojs_retry"

ROOT = File.expand_path("../..", __dir__)
QUICK = ARGV.include?("--quick")
ROUNDS, REPEATS, TARGET_S = QUICK ? [1, 3, 0.002] : [7, 3, 0.02]

POLICY = OjsRetry::RetryPolicy.from_json(File.read(File.join(ROOT, "examples", "12.3-aggressive-dead-letter.json")))
SIDEKIQ = OjsRetry::RetryPolicy.preset("sidekiq", retry: 25)
JID = "b4a577edbccf1d805744efa9" # a Sidekiq jid: the jitter key
COUNT = 6 # Sidekiq's retry_count (0 at the first failure): retry 7
NOW = 1_770_892_265_000

# Sidekiq's retry delay in seconds, as lib/sidekiq/job_retry.rb computes it
# (6.2.2 - 7.x, Debian's 6.4.1 among them): `delay_for` without a
# `sidekiq_retry_in` block.
def sidekiq_delay_for(count)
  jitter = rand(10) * (count + 1)
  (count**4) + 15 + jitter
end

BENCHES = []

def bench(group, name, note = "", &blk)
  blk.call # fail loudly before timing
  BENCHES << { group: group, name: name, note: note, blk: blk, samples: [] }
end

bench("delay", "ojs_retry policy.delay(n, key: jid)") { POLICY.delay(COUNT + 1, key: JID) }
bench("delay", "ojs_retry policy.delay(n, u: 0.5)") { POLICY.delay(COUNT + 1, u: 0.5) }
bench("delay", "ojs_retry sidekiq preset .delay(n, key: jid)") { SIDEKIQ.delay(COUNT + 1, key: JID) }
bench("delay", "Sidekiq delay_for formula (Ruby)", "seconds, rand(10) jitter") { sidekiq_delay_for(COUNT) }
bench("decide", "ojs_retry policy.decide(3, type:, now:, key: jid)") do
  POLICY.decide(3, type: "external.timeout", now: NOW, key: JID)
end
bench("decide", "ojs_retry sidekiq preset .decide(n, type:, now:, key: jid)") do
  SIDEKIQ.decide(COUNT + 1, type: "Net::ReadTimeout", now: NOW, key: JID)
end
bench("parse", "ojs_retry RetryPolicy.new(hash)") { OjsRetry::RetryPolicy.new(max_attempts: 25, jitter: true) }

def clock = Process.clock_gettime(Process::CLOCK_MONOTONIC)

# Calls per sample so that one lasts about TARGET_S.
def calibrate(blk)
  n = 1
  loop do
    t0 = clock
    n.times(&blk)
    return n if clock - t0 >= TARGET_S / 4

    n *= 4
  end
end

BENCHES.each { |b| b[:n] = [calibrate(b[:blk]) * 4, 1].max }
ROUNDS.times do
  BENCHES.each do |b|
    REPEATS.times do
      blk = b[:blk]
      n = b[:n]
      t0 = clock
      n.times(&blk)
      b[:samples] << (clock - t0) / n * 1e9
    end
  end
end

def median(xs)
  s = xs.sort
  s.length.odd? ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0
end

results = BENCHES.map do |b|
  { group: b[:group], name: b[:name], ns: median(b[:samples]), note: b[:note] }
end
env = { ruby: RUBY_VERSION, platform: RUBY_PLATFORM, ojs_retry: OjsRetry::VERSION, cores: Etc.nprocessors }
puts JSON.pretty_generate({ suite: "ruby", env: env, results: results })
