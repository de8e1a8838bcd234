# frozen_string_literal: true

# The Sidekiq integration's pure parts, without a Sidekiq process: the error
# type of an exception, the failure given to the engine, the `sidekiq`
# preset a job's own options become, and what install refuses.
require_relative "helper"
require "net/http"

class TestSidekiqUnit < Minitest::Test
  S = OjsRetry::Sidekiq

  module Billing
    class Declined < StandardError; end
  end

  def test_error_type_is_the_class_name_with_its_module_path
    assert_equal "Net::ReadTimeout", S.error_type_of(Net::ReadTimeout)
    assert_equal "TestSidekiqUnit::Billing::Declined", S.error_type_of(Billing::Declined)
    assert_equal "RuntimeError", S.error_type_of(Class.new(RuntimeError)), "an anonymous class: its named ancestor"
  end

  def test_failure_of_an_exception_and_of_a_job_error
    timeout = Net::ReadTimeout.new("slow")
    assert_equal({ type: "Net::ReadTimeout", timed_out: false, message: timeout.message }, S.failure_of(timeout))
    assert_equal "KeyError", S.failure_of(KeyError.new("")).fetch(:message), "an empty message: the class"
    e = OjsRetry::JobError.new("payment.card_stolen", code: "DEAD_LETTER", details: { "card" => 4 })
    assert_equal({ type: "payment.card_stolen", code: "DEAD_LETTER", timed_out: false,
                   message: "payment.card_stolen", details: { "card" => 4 } }, S.failure_of(e))
  end

  def test_a_job_error_with_an_unknown_code_is_the_engines_error
    e = assert_raises(OjsRetry::PolicyError) { OjsRetry::JobError.new("x", code: "LATER") }
    assert_equal "validation.invalid_argument", e.code
  end

  # Sidekiq's own reading (JobRetry#retry_attempts_from): an Integer is the
  # count; any other true value the global max_retries; false no retry.
  def test_adoption_layer_reads_the_job_as_sidekiq_does
    preset = ->(job) { S.adoption_layer(job)["preset"].slice("retry", "dead") }
    assert_equal({ "retry" => 3, "dead" => true }, preset.call("retry" => 3))
    assert_equal({ "retry" => true, "dead" => true }, preset.call("retry" => true))
    assert_equal({ "retry" => true, "dead" => true }, preset.call({}))
    assert_equal({ "retry" => true, "dead" => true }, preset.call("retry" => "yes"))
    assert_equal({ "retry" => false, "dead" => true }, preset.call("retry" => false))
    assert_equal({ "retry" => 1, "dead" => false }, preset.call("retry" => 1, "dead" => false))
    layer = S.adoption_layer("retry" => 5)
    assert_equal OjsRetry::RetryPolicy.preset("sidekiq", version: "7", retry: 5, max_retries: 25),
                 OjsRetry::RetryPolicy.new(layer)
  end

  def test_install_refuses_defaults_that_are_not_a_policy
    before = S.config
    e = assert_raises(OjsRetry::PolicyError) { S.install(defaults: { max_attempts: -1 }) }
    assert_equal "max_attempts", e.field
    assert_same before, S.config, "nothing installed"
  end
end
