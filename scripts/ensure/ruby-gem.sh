#!/usr/bin/env bash
# Builds the gem `ojs-retry` and installs it into a GEM_HOME, for the suites
# that run it in a real queue (scripts/test-sidekiq, scripts/test-queues'
# Sidekiq runner, bench/sidekiq/run.sh):
#
#   scripts/ensure/ruby-gem.sh GEM_HOME [STAGE]
#
#   1. ensures Debian's ruby, ruby-dev, libclang-dev (ruby.sh);
#   2. cargo build --locked --release -p ojs-retry-ruby;
#   3. gem build in STAGE (default target/ruby-gem-install): the gemspec,
#      lib/ and the compiled extension, a platform gem;
#   4. gem install --local --no-document into GEM_HOME (created if missing;
#      the caller makes it fresh and outside the repository, and removes
#      it). Nothing comes from rubygems.org.
# Logs go to STAGE/*.log; on failure the relevant tail is printed and the
# exit status is non-zero.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

gem_home="${1:?usage: ruby-gem.sh GEM_HOME [STAGE]}"
stage="${2:-$root/target/ruby-gem-install}"

"$here/ruby.sh" >&2
cd "$root"
rm -rf "$stage"
mkdir -p "$stage" "$gem_home"
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
if ! cargo build --locked --release -p ojs-retry-ruby >"$logs/build.log" 2>&1; then
    tail -n 60 "$logs/build.log" >&2
    ensure_die "cargo build -p ojs-retry-ruby failed"
fi
cp -R bindings-ruby/lib bindings-ruby/README.md bindings-ruby/ojs-retry.gemspec "$stage/"
cp target/release/libojs_retry_ruby.so "$stage/lib/ojs_retry/ojs_retry.so"
if ! (cd "$stage" && gem build ojs-retry.gemspec >"$logs/gem-build.log" 2>&1); then
    cat "$logs/gem-build.log" >&2
    ensure_die "gem build failed"
fi
gem_file="$(ls "$stage"/ojs-retry-*.gem 2>/dev/null | head -n 1)"
[ -n "$gem_file" ] || ensure_die "no gem built in $stage"
# Only GEM_HOME and Ruby's own gem directories (where Debian's gems are).
if ! (unset GEM_PATH RUBYLIB RUBYOPT BUNDLE_GEMFILE
      GEM_HOME="$gem_home" gem install --local --no-document "$gem_file" >"$logs/gem-install.log" 2>&1); then
    cat "$logs/gem-install.log" >&2
    ensure_die "gem install --local failed"
fi
ensure_log "ojs-retry gem installed into $gem_home ($(basename "$gem_file"))"
