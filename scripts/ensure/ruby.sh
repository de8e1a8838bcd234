#!/usr/bin/env bash
# Ensures what building and testing the Ruby binding needs, skipping what is
# present: Debian's ruby (3.1: gem, minitest as a bundled gem), ruby-dev
# (the headers rb-sys compiles against) and libclang-dev (rb-sys runs
# bindgen). scripts/test-rust needs them too: its workspace clippy builds
# bindings-ruby. Nothing comes from rubygems.org.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

apt_ensure ruby ruby-dev libclang-dev
ruby -e 'require "minitest"' 2>/dev/null || ensure_die "minitest (a gem bundled with Ruby) is missing"
