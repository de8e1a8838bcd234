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

  # The adoption layer goes to the engine as a policy built once per
  # `retry` value, as the defaults: the same policy as the layer itself.
  def test_the_adoption_policy_is_the_adoption_layers_policy
    [{ "retry" => 3 }, { "retry" => true }, {}, { "retry" => false }, { "retry" => 1, "dead" => false },
     { "retry" => 3, "dead" => false }].each do |job|
      defaults, layer = S.layers_of(Class.new, job)
      assert_nil layer
      assert_equal 1, defaults.size
      assert_kind_of OjsRetry::RetryPolicy, defaults[0]
      assert_equal OjsRetry::RetryPolicy.new(S.adoption_layer(job)), defaults[0], job.inspect
      assert_same defaults[0], S.layers_of(Class.new, job)[0][0], "built once"
    end
  end

  class CachedWorker
    include Sidekiq::Worker
    sidekiq_options ojs_policy: { max_attempts: 4, jitter: false }
  end

  def policy_of(worker_class, job)
    defaults, layer = S.layers_of(worker_class, job)
    OjsRetry::RetryPolicy.merge(*defaults, *[layer].compact)
  end

  # The worker's layer is made into text once per `sidekiq_options` call:
  # a later call is read at the next failure.
  def test_a_workers_policy_is_read_again_after_sidekiq_options
    assert_equal [4, false], policy_of(CachedWorker, {}).then { |p| [p.max_attempts, p.jitter?] }
    # The payload's copy of the worker's own layer (JSON's String keys) is
    # not carried again; a job's own layer is, over the worker's.
    assert_nil S.layers_of(CachedWorker, { "ojs_policy" => { "max_attempts" => 4, "jitter" => false } })[1]
    assert_equal 2, policy_of(CachedWorker, { "ojs_policy" => { "max_attempts" => 2 } }).max_attempts
    assert_equal false, policy_of(CachedWorker, { "ojs_policy" => { "max_attempts" => 2 } }).jitter?
    CachedWorker.sidekiq_options ojs_policy: { max_attempts: 6 }
    assert_equal [6, true], policy_of(CachedWorker, {}).then { |p| [p.max_attempts, p.jitter?] }
  ensure
    CachedWorker.sidekiq_options ojs_policy: { max_attempts: 4, jitter: false }
  end

  # Only plain data goes through JSON: anything else is handed to the
  # engine as it is, which reads it (and refuses what it must).
  def test_a_layer_becomes_text_only_when_json_writes_the_same_document
    assert_equal '{"max_attempts":3,"non_retryable_errors":["a.*"]}',
                 S.send(:text_of, { max_attempts: 3, non_retryable_errors: [:"a.*"] })
    [{ max_attempts: 3, initial_interval: Time.at(0) }, { max_attempts: 3, "max_attempts" => 4 },
     { backoff_coefficient: Float::NAN }, { max_attempts: 2**70 }].each do |layer|
      assert_same layer, S.send(:text_of, layer), layer.inspect
    end
  end

  def test_install_refuses_defaults_that_are_not_a_policy
    before = S.config
    e = assert_raises(OjsRetry::PolicyError) { S.install(defaults: { max_attempts: -1 }) }
    assert_equal "max_attempts", e.field
    assert_same before, S.config, "nothing installed"
  end
end
