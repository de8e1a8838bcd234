# frozen_string_literal: true

# Open Job Spec retry policies, one engine for every runtime.
#
# The engine is written once in Rust (crate ojs-retry); this gem is a thin
# binding over it (bindings-ruby/src, magnus). See README.md for a quick
# start.
require_relative "ojs_retry/version"
require_relative "ojs_retry/ojs_retry"

module OjsRetry
  # Every error of the engine: a bad policy, a bad argument, a malformed
  # state. A bad policy is a bad argument, hence ArgumentError.
  #
  # code   - one of ERROR_CODES, e.g. "validation.retry_policy_invalid"
  # field  - the policy or argument field of the first fault (nil: the
  #          whole document)
  # path   - where inside that field, e.g. "non_retryable_errors[0]"
  # faults - every fault, first one first: {field:, path:, message:}
  class PolicyError
    attr_reader :code, :field, :path, :faults
  end

  # Immutable values: as for an Integer, a copy is the value itself (the
  # wrapped classes have no allocator for Object#dup to copy into).
  [RetryPolicy, Decision, ScheduleRow].each do |klass|
    klass.class_eval do
      def dup = self
      def clone(**) = self
    end
  end

  class RetryPolicy
    # Marshal (Rails.cache, DRb) writes a policy as its canonical JSON.
    def _dump(_level) = to_json
    def self._load(text) = from_json(text)
  end

  class RetryState
    # Marshal writes the history limit and the §10 document.
    def _dump(_level) = "#{history_limit}\n#{to_json}"

    def self._load(data)
      limit, text = data.split("\n", 2)
      from_json(text, history_limit: Integer(limit, 10))
    end
  end

  # What a queue does with a failed job: the result of
  # OjsRetry.run_transaction (frozen).
  #
  # decision    - the Decision (retry after delay_ms, discard, dead_letter)
  # state       - the job's new RetryState
  # state_json  - that state as the §10 text the queue stores (it always
  #               reads back with RetryState.from_json)
  # policy      - the RetryPolicy that decided (the defaults' when the
  #               job's layer was refused)
  # notes       - what the engine changed or could not use:
  #               [[kind, message], ...] (e.g. "message_truncated")
  # dead_letter - for a dead letter, the record to write (JSON text)
  Outcome = Struct.new(:decision, :state, :state_json, :policy, :notes, :dead_letter) do
    # "retry", "discard" or "dead_letter".
    def action = decision.action
  end

  # A forked child must not repeat its parent's entropy draws (Resque forks
  # a child per job; Sidekiq Enterprise forks its workers). Process._fork
  # (Ruby >= 3.1) is the hook every fork goes through.
  module ForkReseed
    def _fork
      pid = super
      OjsRetry._after_fork if pid.zero?
      pid
    end
  end
  private_constant :ForkReseed
  Process.singleton_class.prepend(ForkReseed)
end
