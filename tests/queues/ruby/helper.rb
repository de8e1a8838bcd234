# frozen_string_literal: true

# Shared by the Sidekiq tests: minitest, and what sidekiq_support.rb holds
# (the real Redis scripts/test-sidekiq started, real Sidekiq processes, the
# events they write). A wait that reaches its deadline fails the test.
require "minitest/autorun"

module SkTest
  TimedOut = Class.new(Minitest::Assertion)
end
require_relative "sidekiq_support"
