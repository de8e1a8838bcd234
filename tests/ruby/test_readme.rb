# frozen_string_literal: true

# Every ```ruby block of bindings-ruby/README.md runs, each in its own Ruby
# process against the installed gem, and prints its "... OK" line.
require_relative "helper"
require "open3"
require "rbconfig"

class TestReadme < Minitest::Test
  README = File.join(OjsTest::ROOT, "bindings-ruby", "README.md")
  BLOCKS = File.read(README, encoding: "UTF-8").scan(/^```ruby\n(.*?)^```$/m).map(&:first).freeze

  def test_readme_has_ruby_blocks
    assert_operator BLOCKS.length, :>=, 2, "the README's quick start and presets blocks"
  end

  # Every fenced block is Ruby, and so runs here: the README shows nothing
  # that is not executed.
  def test_every_code_block_is_ruby
    fences = File.read(README, encoding: "UTF-8").scan(/^```(\S*)$/).flatten.each_slice(2).map(&:first)
    assert_equal ["ruby"] * BLOCKS.length, fences
  end

  BLOCKS.each_with_index do |code, i|
    define_method("test_readme_block_#{i}") do
      out, err, status = Open3.capture3(RbConfig.ruby, "-e", code)
      assert status.success?, "README block #{i} failed:\n#{err}"
      assert_match(/ OK\b/, out.lines.last.to_s, "README block #{i} prints its OK line")
    end
  end
end
