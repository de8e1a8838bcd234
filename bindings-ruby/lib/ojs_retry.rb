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
