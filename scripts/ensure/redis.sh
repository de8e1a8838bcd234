# shellcheck shell=bash
# Real Redis servers for the tests that need one. Sourced, never executed:
#
#   . scripts/ensure/redis.sh
#   bin=$(redis_binary 7.0)   # Debian's redis-server (7.0 on Debian 12)
#   bin=$(redis_binary 8.6)   # a redis-server >= 8.6: one on PATH, or built
#                             # once into target/redis-8.6 from Debian
#                             # experimental's source package
#   redis_start "$bin" NAME   # starts it on a free loopback port; sets
#                             # NAME_PORT, NAME_PID and NAME_URL
#   redis_stop NAME           # stops it by pid
#
# ChasquiMQ 1.3.0 needs Redis >= 8.6 (XACKDEL); Debian 12 has 7.0. Debian's
# experimental source of redis 8.6 builds here in about a minute and a half
# with `make MALLOC=libc BUILD_TLS=no` (no jemalloc, no OpenSSL headers).
# OJS_REDIS86 may name a redis-server >= 8.6 to use instead.

_redis_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$_redis_here/lib.sh"

# redis_version BIN: "8.6.3", from `redis-server --version`.
redis_version() {
    "$1" --version 2>/dev/null | sed -n 's/.* v=\([0-9.]*\).*/\1/p'
}

# redis_at_least BIN MAJOR.MINOR: 0 when BIN's version is at least that.
redis_at_least() {
    local v want
    v="$(redis_version "$1")"
    [ -n "$v" ] || return 1
    want="$2"
    [ "$(printf '%s\n%s\n' "$want" "$v" | sort -V | head -1)" = "$want" ]
}

# redis_build_86: builds redis >= 8.6 from Debian experimental's source
# package into $OJS_ROOT/target/redis-8.6 (once) and prints the server path.
redis_build_86() {
    local dest="$OJS_ROOT/target/redis-8.6" work apt_dir opts orig src
    if [ -x "$dest/bin/redis-server" ] && redis_at_least "$dest/bin/redis-server" 8.6; then
        printf '%s\n' "$dest/bin/redis-server"
        return 0
    fi
    apt_ensure build-essential pkg-config >&2 || return 1
    work="$OJS_ROOT/target/redis-build"
    apt_dir="$work/apt"
    rm -rf "$work"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/src"
    printf 'deb-src http://deb.debian.org/debian experimental main\n' >"$apt_dir/sources.list"
    opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o APT::Sandbox::User=root)
    ensure_log "fetching Debian experimental's redis source package"
    apt-get "${opts[@]}" -qq update >&2 || { ensure_die "apt-get update (experimental sources) failed"; return 1; }
    (cd "$work/src" && apt-get "${opts[@]}" -qq source --download-only redis) >&2 \
        || { ensure_die "apt-get source redis failed"; return 1; }
    orig="$(ls "$work"/src/redis_*.orig.tar.gz 2>/dev/null | head -1)"
    [ -n "$orig" ] || { ensure_die "no redis orig tarball downloaded"; return 1; }
    tar -xzf "$orig" -C "$work/src" || return 1
    src="$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'redis*' | head -1)"
    [ -n "$src" ] || { ensure_die "redis source tree not found in $work/src"; return 1; }
    ensure_log "building $(basename "$orig") (make MALLOC=libc BUILD_TLS=no)"
    make -C "$src" -j"$(nproc)" MALLOC=libc BUILD_TLS=no >"$work/make.log" 2>&1 \
        || { tail -30 "$work/make.log" >&2; ensure_die "redis build failed (log: $work/make.log)"; return 1; }
    mkdir -p "$dest/bin"
    cp "$src/src/redis-server" "$src/src/redis-cli" "$dest/bin/"
    redis_at_least "$dest/bin/redis-server" 8.6 \
        || { ensure_die "built redis is $(redis_version "$dest/bin/redis-server"), not >= 8.6"; return 1; }
    rm -rf "$work"
    printf '%s\n' "$dest/bin/redis-server"
}

# redis_binary MIN: prints the path of a redis-server of at least MIN.
redis_binary() {
    local min="$1" bin
    if [ -n "${OJS_REDIS86:-}" ] && redis_at_least "$OJS_REDIS86" "$min"; then
        printf '%s\n' "$OJS_REDIS86"; return 0
    fi
    bin="$(command -v redis-server 2>/dev/null || true)"
    [ -z "$bin" ] && [ -x /usr/bin/redis-server ] && bin=/usr/bin/redis-server
    if [ -z "$bin" ]; then
        apt_ensure redis-server >&2 || return 1
        bin=/usr/bin/redis-server
    fi
    if redis_at_least "$bin" "$min"; then
        printf '%s\n' "$bin"; return 0
    fi
    if redis_at_least "$OJS_ROOT/target/redis-8.6/bin/redis-server" "$min" 2>/dev/null; then
        printf '%s\n' "$OJS_ROOT/target/redis-8.6/bin/redis-server"; return 0
    fi
    case "$min" in
        8.6|8.6.*) redis_build_86 ;;
        *) ensure_die "no redis-server >= $min (have $(redis_version "$bin"))" ;;
    esac
}

# redis_free_port: a loopback TCP port nobody listens on.
redis_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# redis_start BIN NAME: starts BIN on a free loopback port with no
# persistence, waits until it answers PING, and sets NAME_PORT, NAME_PID,
# NAME_URL. Its data directory and log are under target/redis-run/NAME.
redis_start() {
    local bin="$1" name="$2" port dir pid i
    port="$(redis_free_port)" || return 1
    dir="$OJS_ROOT/target/redis-run/$name"
    rm -rf "$dir"; mkdir -p "$dir"
    "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$dir" --logfile "$dir/redis.log" --daemonize no >/dev/null 2>&1 &
    pid=$!
    for i in $(seq 1 100); do
        if ! kill -0 "$pid" 2>/dev/null; then
            cat "$dir/redis.log" >&2 2>/dev/null
            ensure_die "redis-server ($bin) exited at start"; return 1
        fi
        if python3 - "$port" <<'PY' 2>/dev/null
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5)
s.sendall(b"PING\r\n")
sys.exit(0 if s.recv(16).startswith(b"+PONG") else 1)
PY
        then
            printf -v "${name}_PORT" '%s' "$port"
            printf -v "${name}_PID" '%s' "$pid"
            printf -v "${name}_URL" 'redis://127.0.0.1:%s/0' "$port"
            export "${name}_PORT" "${name}_PID" "${name}_URL"
            ensure_log "redis $(redis_version "$bin") on 127.0.0.1:$port (pid $pid)"
            return 0
        fi
        sleep 0.1
    done
    kill "$pid" 2>/dev/null
    ensure_die "redis-server did not answer PING on port $port"
}

# redis_stop NAME: stops the server redis_start started, by pid.
redis_stop() {
    local var="${1}_PID" pid
    pid="${!var:-}"
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    unset "${1}_PID"
}
