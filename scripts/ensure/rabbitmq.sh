# shellcheck shell=bash
# A real RabbitMQ server for the queue tests (Celery's and Dramatiq's default
# broker). Sourced, never executed:
#
#   . scripts/ensure/rabbitmq.sh
#   rabbitmq_ensure            # Debian's rabbitmq-server (3.10 on Debian 12)
#   rabbitmq_start NAME        # its own epmd and node on free loopback ports,
#                              # in a temp dir; sets NAME_URL, NAME_PID,
#                              # NAME_EPMD_PID, NAME_NODE, NAME_DIR
#   rabbitmq_stop NAME         # stops the node, then epmd, by pid
#
# Debian's package is installed with apt; where apt's policy lets it start
# the system's own service (a machine with systemd and no policy-rc.d), that
# one runs on the default ports, apart from this node: nothing here uses it.
#
# The node runs with the consumer_timeout docs/integrations.md recommends for
# long retry delays (RABBITMQ_CONSUMER_TIMEOUT_MS): a worker holds a retry
# unacknowledged until it is due, and RabbitMQ's default (30 minutes) closes
# the channel of a consumer holding a delivery longer than that.

_rabbitmq_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$_rabbitmq_here/lib.sh"

RABBITMQ_LIB=/usr/lib/rabbitmq/bin
# The recommendation of docs/integrations.md: above the longest delay a
# policy can give (max_interval) plus the longest run of a task. 2 hours.
RABBITMQ_CONSUMER_TIMEOUT_MS="${RABBITMQ_CONSUMER_TIMEOUT_MS:-7200000}"

# rabbitmq_ensure: installs Debian's rabbitmq-server when it is missing.
rabbitmq_ensure() {
    [ -x "$RABBITMQ_LIB/rabbitmq-server" ] && command -v epmd >/dev/null 2>&1 && return 0
    apt_ensure rabbitmq-server || return 1
    [ -x "$RABBITMQ_LIB/rabbitmq-server" ] || { ensure_die "no $RABBITMQ_LIB/rabbitmq-server after apt-get install"; return 1; }
}

_rabbitmq_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# _rabbitmq_answers PORT WHAT: 0 when PORT answers as WHAT (epmd: accepts a
# connection; amqp: answers the protocol header with Connection.Start,
# which the node sends once its listener runs at the end of its boot).
_rabbitmq_answers() {
    python3 - "$1" "$2" <<'PY' 2>/dev/null
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
if sys.argv[2] == "amqp":
    s.sendall(b"AMQP\x00\x00\x09\x01")
    frame = s.recv(7)
    # A method frame (type 1) on channel 0: Connection.Start.
    sys.exit(0 if len(frame) == 7 and frame[0] == 1 and frame[1:3] == b"\x00\x00" else 1)
PY
}

# _rabbitmq_wait PID PORT WHAT LOG: waits until PORT answers as WHAT while
# PID lives (at most 120 s, a cold boot on a loaded CI machine).
_rabbitmq_wait() {
    local pid="$1" port="$2" what="$3" log="$4" i
    for i in $(seq 1 1200); do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -40 "$log" >&2 2>/dev/null
            ensure_die "$what on port $port exited at start"; return 1
        fi
        _rabbitmq_answers "$port" "$what" && return 0
        sleep 0.1
    done
    tail -40 "$log" >&2 2>/dev/null
    ensure_die "$what did not answer on port $port"
}

# rabbitmq_start NAME: see the header.
rabbitmq_start() {
    local name="$1" dir epmd_port amqp_port dist_port node epmd_pid pid got
    dir="$(mktemp -d /tmp/ojs-rabbitmq.XXXXXX)" || return 1
    epmd_port="$(_rabbitmq_free_port)" && amqp_port="$(_rabbitmq_free_port)" \
        && dist_port="$(_rabbitmq_free_port)" || return 1
    node="ojs-$name-$$@localhost"
    printf '%s\n' "listeners.tcp.default = 127.0.0.1:$amqp_port" \
        "consumer_timeout = $RABBITMQ_CONSUMER_TIMEOUT_MS" >"$dir/rabbitmq.conf"
    printf '[].\n' >"$dir/enabled_plugins"
    : >"$dir/rabbitmq-env.conf"
    printf -v "${name}_DIR" '%s' "$dir"
    # Its own epmd, in the foreground so that its pid is ours to stop (the
    # node would otherwise start a daemonized one that outlives it).
    epmd -port "$epmd_port" -address 127.0.0.1 >"$dir/epmd.log" 2>&1 &
    epmd_pid=$!
    printf -v "${name}_EPMD_PID" '%s' "$epmd_pid"
    _rabbitmq_wait "$epmd_pid" "$epmd_port" epmd "$dir/epmd.log" || return 1
    (
        export HOME="$dir" ERL_EPMD_PORT="$epmd_port" RABBITMQ_NODENAME="$node" \
            RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$amqp_port" \
            RABBITMQ_DIST_PORT="$dist_port" RABBITMQ_MNESIA_BASE="$dir/mnesia" \
            RABBITMQ_LOG_BASE="$dir/log" RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
            RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
            RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf" RABBITMQ_PID_FILE="$dir/rabbitmq.pid" \
            RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
            ERL_CRASH_DUMP="$dir/erl_crash.dump"
        # In its temp dir: nothing it writes lands in the work tree.
        cd "$dir" && exec "$RABBITMQ_LIB/rabbitmq-server"
    ) >"$dir/server.log" 2>&1 &
    pid=$!
    printf -v "${name}_PID" '%s' "$pid"
    _rabbitmq_wait "$pid" "$amqp_port" amqp "$dir/server.log" || return 1
    # The setting the docs recommend, as the running node has it.
    got="$(HOME="$dir" ERL_EPMD_PORT="$epmd_port" "$RABBITMQ_LIB/rabbitmqctl" -q -n "$node" \
        eval 'application:get_env(rabbit, consumer_timeout).' 2>&1)"
    [ "$got" = "{ok,$RABBITMQ_CONSUMER_TIMEOUT_MS}" ] \
        || { ensure_die "rabbitmq-server runs with consumer_timeout $got, not $RABBITMQ_CONSUMER_TIMEOUT_MS"; return 1; }
    printf -v "${name}_URL" 'amqp://guest:guest@127.0.0.1:%s' "$amqp_port"  # the default vhost "/"
    printf -v "${name}_NODE" '%s' "$node"
    export "${name}_URL" "${name}_PID" "${name}_EPMD_PID" "${name}_NODE" "${name}_DIR"
    ensure_log "rabbitmq-server $node on 127.0.0.1:$amqp_port (pid $pid, epmd $epmd_port pid $epmd_pid, consumer_timeout ${RABBITMQ_CONSUMER_TIMEOUT_MS} ms)"
}

# _rabbitmq_kill PID: SIGTERM (the server script stops the node gracefully),
# then SIGKILL after 30 s.
_rabbitmq_kill() {
    local pid="$1"
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# rabbitmq_stop NAME: the node, then its epmd, by pid; removes its temp dir.
rabbitmq_stop() {
    local pid_var="${1}_PID" epmd_var="${1}_EPMD_PID" dir_var="${1}_DIR"
    _rabbitmq_kill "${!pid_var:-}"
    _rabbitmq_kill "${!epmd_var:-}"
    [ -n "${!dir_var:-}" ] && rm -rf "${!dir_var}"
    unset "${1}_PID" "${1}_EPMD_PID" "${1}_DIR"
}
