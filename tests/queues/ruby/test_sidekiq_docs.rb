# frozen_string_literal: true

# Every block of the docs marked `<!-- run: tests/queues/ruby/test_sidekiq_docs.rb -->`
# (found by tests/docs/fences.py: docs/integrations.md's Sidekiq blocks) runs as
# written, each in its own Ruby process against the installed gem and the
# real Redis (Sidekiq's client reads REDIS_URL), and prints its "... OK"
# line; then the jobs it pushed are in Redis with what they carry.
require_relative "helper"
require "json"
require "open3"
require "rbconfig"

class TestSidekiqDocs < Minitest::Test
  FENCES = File.join(SkTest::ROOT, "tests", "docs", "fences.py")
  FOUND = JSON.parse(IO.popen(["python3", FENCES, "tests/queues/ruby/test_sidekiq_docs.rb"], &:read)).freeze
  BLOCKS = FOUND.map { |b| b["code"] }.freeze

  def test_the_sidekiq_section_has_its_blocks
    assert_operator BLOCKS.length, :>=, 2
    assert(FOUND.all? { |b| b["lang"] == "ruby" && b["heading"].start_with?("Sidekiq") }, "Sidekiq's Ruby blocks")
  end

  BLOCKS.each_with_index do |code, i|
    define_method("test_doc_block_#{i}") do
      SkTest.redis.del("queue:docs-example")
      out, err, status = Open3.capture3({ "REDIS_URL" => SkTest::REDIS_URL }, RbConfig.ruby, "-e", code)
      assert status.success?, "docs/integrations.md ruby block #{i} failed:\n#{err}"
      assert_match(/ OK\b/, out.lines.last.to_s, "block #{i} prints its OK line")
      jobs = SkTest.redis.lrange("queue:docs-example", 0, -1).map { |j| JSON.parse(j) }
      refute_empty jobs, "block #{i} pushed its jobs"
      jobs.each { |j| assert j.key?("ojs_policy"), "each job carries its policy layer" }
    end
  end
end
