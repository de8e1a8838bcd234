#!/usr/bin/env bash
# Sidekiq's retry path on the engine against its native retry
# (bench/sidekiq/bench.rb), on a redis-server started here on a free
# loopback port and stopped by pid. Information only.
#
#   bench/sidekiq/run.sh [--quick]
#
# Builds the gem and installs it into target/bench/sidekiq-gems
# (scripts/ensure/ruby-gem.sh; nothing from rubygems.org; Debian's
# ruby-sidekiq, scripts/ensure/sidekiq.sh); writes target/bench/sidekiq.json
# (jobs per second and CPU per job, one Sidekiq process per mode: native,
# engine, floor) and target/bench/sidekiq-cpu.json (bench/sidekiq/cpu.rb:
# CPU time per failure in one process) and prints them.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT="$ROOT/target/bench"
ARGS=()
[ "${1:-}" = "--quick" ] && ARGS=(--jobs 200 --rounds 1)
mkdir -p "$OUT/sidekiq-logs"
scripts/ensure/sidekiq.sh >&2
rm -rf "$OUT/sidekiq-gems"
scripts/ensure/ruby-gem.sh "$OUT/sidekiq-gems" "$OUT/sidekiq-gem"
unset GEM_PATH RUBYLIB RUBYOPT BUNDLE_GEMFILE
export GEM_HOME="$OUT/sidekiq-gems"

# shellcheck source=../../scripts/ensure/redis.sh
. "$ROOT/scripts/ensure/redis.sh"
trap 'redis_stop BSK' EXIT
redis_start "$(redis_binary 7.0)" BSK
ruby bench/sidekiq/bench.rb --redis "$BSK_URL" --logs "$OUT/sidekiq-logs" "${ARGS[@]}" >"$OUT/sidekiq.json.part"
REDIS_URL="$BSK_URL" ruby bench/sidekiq/cpu.rb >"$OUT/sidekiq-cpu.json.part"
mv "$OUT/sidekiq.json.part" "$OUT/sidekiq.json"
mv "$OUT/sidekiq-cpu.json.part" "$OUT/sidekiq-cpu.json"
cat "$OUT/sidekiq.json" "$OUT/sidekiq-cpu.json"
