# frozen_string_literal: true

# Every block of the docs marked `<!-- run: tests/ruby/test_readme.rb -->`
# (found by tests/docs/fences.py: bindings-ruby/README.md's and the main
# README's Ruby) runs, each in its own Ruby process against the installed
# gem, and prints the output block that follows it, or else its "... OK" line.
require_relative "helper"
require "json"
require "open3"
require "rbconfig"

class TestReadme < Minitest::Test
  FENCES = File.join(OjsTest::ROOT, "tests", "docs", "fences.py")
  BLOCKS = JSON.parse(IO.popen(["python3", FENCES, "tests/ruby/test_readme.rb"], &:read)).freeze

  def test_the_docs_have_blocks_for_this_runner
    assert_operator BLOCKS.count { |b| b["path"] == "bindings-ruby/README.md" }, :>=, 3,
                    "the gem README's quick start, presets and failure transaction blocks"
    assert(BLOCKS.all? { |b| b["lang"] == "ruby" }, "every block marked for this runner is Ruby")
  end

  BLOCKS.each do |block|
    where = "#{block['path']}:#{block['line']}"
    define_method("test_block_#{where.tr('^A-Za-z0-9', '_')}") do
      out, err, status = Open3.capture3(RbConfig.ruby, "-e", block["code"])
      assert status.success?, "#{where} failed:\n#{err}"
      if block["output"]
        assert_equal block["output"], out, "#{where} prints its output block"
      else
        assert_match(/ OK\b/, out.lines.last.to_s, "#{where} prints its OK line")
      end
    end
  end
end
