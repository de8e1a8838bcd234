# frozen_string_literal: true

# Shared by every file in tests/ruby: loads the INSTALLED gem (never
# bindings-ruby/lib from the checkout) and minitest from Ruby's standard
# library. scripts/test-ruby installs the gem into a fresh GEM_HOME and
# sets OJS_REQUIRE_INSTALLED=1.
require "minitest/autorun"
require "json"
require "ojs_retry"

module OjsTest
  ROOT = File.expand_path("../..", __dir__)
  VECTORS_DIR = ENV.fetch("OJS_VECTORS_DIR", File.join(ROOT, "tests", "vectors"))

  # The path the extension was loaded from.
  def self.extension_path
    $LOADED_FEATURES.find { |f| f.end_with?("ojs_retry/ojs_retry.so") }
  end
end
