# frozen_string_literal: true

# The platform gem: built by scripts/test-ruby (or by hand, see README.md)
# in a staging directory under target/ that holds this file, lib/ and the
# compiled extension at lib/ojs_retry/ojs_retry.so. It carries no source
# to compile, so installing it needs neither Rust nor rubygems.org.
require_relative "lib/ojs_retry/version"

Gem::Specification.new do |spec|
  spec.name = "ojs-retry"
  spec.version = OjsRetry::VERSION
  spec.summary = "Open Job Spec retry policies: one engine (Rust) for Ruby, Python, Node and the browser"
  spec.description = <<~TEXT
    Validate a retry policy, decide whether a failed job is retried, discarded
    or dead-lettered, and compute the exact backoff delay. The same engine
    gives the same answers in every runtime, including keyed jitter.
  TEXT
  spec.authors = ["ojs-retry developers"]
  spec.licenses = ["MIT", "Apache-2.0"]
  spec.homepage = "https://github.com/ojs-retry/ojs-retry"
  # The extension is built against this Ruby's ABI (x86_64-linux, 3.1.x).
  spec.platform = Gem::Platform.local
  spec.required_ruby_version = "~> #{RUBY_VERSION[/\A\d+\.\d+/]}.0"
  # The Sidekiq integration needs Sidekiq at run time only when required
  # (`require "ojs_retry/sidekiq"`): not a dependency of the gem.
  spec.files = %w[README.md lib/ojs_retry.rb lib/ojs_retry/version.rb lib/ojs_retry/ojs_retry.so
                  lib/ojs_retry/job_error.rb lib/ojs_retry/sidekiq.rb lib/ojs_retry/sidekiq/middleware.rb]
  spec.require_paths = ["lib"]
  spec.metadata["rubygems_mfa_required"] = "true"
end
