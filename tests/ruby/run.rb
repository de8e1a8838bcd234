# frozen_string_literal: true

# Runs every tests/ruby/test_*.rb in one minitest process:
#   ruby tests/ruby/run.rb [minitest options]
# Its last line is minitest's summary (MT_NO_SKIP_MSG keeps the "skipped
# tests" hint from following it; the n/a cases are printed by name anyway).
ENV["MT_NO_SKIP_MSG"] ||= "1"
Dir[File.join(__dir__, "test_*.rb")].sort.each { |f| require f }
