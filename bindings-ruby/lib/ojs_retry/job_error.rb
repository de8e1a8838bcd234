# frozen_string_literal: true

require "ojs_retry"

module OjsRetry
  # A handler failure with an OJS error type and an optional handler code
  # (spec §7): what a job raises to name its error type
  # ("payment.card_stolen") and, when it knows better than the policy,
  # what happens next:
  #
  #   raise OjsRetry::JobError.new("payment.card_stolen", code: "DEAD_LETTER")
  #
  # code    - "RETRY", "DISCARD", "DEAD_LETTER" or "FAIL"; an unknown code
  #           raises OjsRetry::PolicyError here, where the handler raised
  #           it, not later in the worker
  # message - the text recorded in the job's history (default: the type)
  # details - structured data recorded with it (plain JSON data)
  class JobError < StandardError
    HANDLER_CODES = %w[RETRY DISCARD DEAD_LETTER FAIL].freeze

    attr_reader :type, :code, :details

    def initialize(type, code: nil, message: nil, details: nil)
      # The engine's own check, so the error is its typed one.
      RetryPolicy.new.decide(1, type: type, code: code, now: 0, u: 0.0) unless code.nil? || HANDLER_CODES.include?(code)
      super(message || type)
      @type = type
      @code = code
      @details = details
    end
  end
end
