# frozen_string_literal: true

module OjsRetry
  # The gem's version; the compiled extension reports its own as
  # NATIVE_VERSION, and the tests check that the two agree.
  VERSION = "0.1.0"
end
