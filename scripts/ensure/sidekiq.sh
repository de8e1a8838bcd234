#!/usr/bin/env bash
# Ensures what the Sidekiq integration's tests need, skipping what is
# present: Debian's ruby-sidekiq (6.4.1 on Debian 12, with ruby-redis and
# ruby-connection-pool) and redis-server. Nothing comes from rubygems.org.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

"$here/ruby.sh"
apt_ensure ruby-sidekiq redis-server
ruby -e 'require "sidekiq"; require "sidekiq/api"; require "redis"' 2>/dev/null \
    || ensure_die "ruby-sidekiq is installed but require \"sidekiq\" fails"
command -v sidekiq >/dev/null 2>&1 || ensure_die "no sidekiq command (ruby-sidekiq provides /usr/bin/sidekiq)"
