#!/usr/bin/env bash
# Seqline local/CI backing services: Apache Cassandra 5.0, Redis, NATS JetStream.
#
#   scripts/services.sh up      [svc...]   install what is missing, start, wait until healthy
#   scripts/services.sh down    [svc...]   graceful stop (SIGTERM, then SIGKILL after a timeout)
#   scripts/services.sh status  [svc...]   state of each; exit 1 if any is not healthy
#   scripts/services.sh start   <svc...>   same as up, for the named services
#   scripts/services.sh stop    <svc...>   same as down, for the named services
#   scripts/services.sh restart <svc...>   stop + start
#   scripts/services.sh kill    <svc...>   SIGKILL (crash simulation), no graceful shutdown
#   scripts/services.sh logs    <svc> [n]  last n (default 50) lines of the service's log
#   scripts/services.sh install [svc...]   only install binaries
#
# svc is one of: cassandra redis nats (default: all three).
# Everything (binaries, data, logs, pid files, caches) lives under <repo>/.services.
# Every service listens on 127.0.0.1 only. See docs/services.md.
#
# A private Redis / NATS / Cassandra (e.g. the fault campaign's, which restarts and rolls them back)
# runs from the same binaries and config with SERVICES_STATE_DIR=<dir> (its data, logs, pid files
# and lock) and ports of its own: REDIS_PORT, NATS_PORT, NATS_HTTP_PORT, CASSANDRA_PORT,
# CASSANDRA_STORAGE_PORT, CASSANDRA_JMX_PORT (never the shared defaults).
set -Eeuo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SVC_DIR="$ROOT/.services"
CONF_DIR="$ROOT/scripts/services"
BIN_DIR="$SVC_DIR/bin"
CACHE_DIR="$SVC_DIR/cache"
# Where the Redis and NATS instances keep their state: .services (the shared ones) or a private dir.
STATE_DIR="${SERVICES_STATE_DIR:-$SVC_DIR}"

# ---- configuration (env overridable) -------------------------------------------
CASSANDRA_VERSION="${CASSANDRA_VERSION:-5.0.9}"
CASSANDRA_PORT="${CASSANDRA_PORT:-9042}"
CASSANDRA_STORAGE_PORT="${CASSANDRA_STORAGE_PORT:-7000}"
CASSANDRA_JMX_PORT="${CASSANDRA_JMX_PORT:-7199}"
CASSANDRA_HEAP="${CASSANDRA_HEAP:-1G}"
CASSANDRA_DIRECT_MEMORY="${CASSANDRA_DIRECT_MEMORY:-512M}"
CASSANDRA_START_TIMEOUT="${CASSANDRA_START_TIMEOUT:-180}"
# Timer slack of every Cassandra thread, in ns (0: leave the kernel default, 50 µs). See cassandra_timer_slack.
CASSANDRA_TIMER_SLACK_NS="${CASSANDRA_TIMER_SLACK_NS:-500000}"
# periodic (cassandra.yaml: acks before the commitlog is synced, so a kill -9 of the JVM loses the
# last acknowledged writes), group (acks once synced, in groups every 15 ms) or batch (each synced).
CASSANDRA_COMMITLOG_SYNC="${CASSANDRA_COMMITLOG_SYNC:-periodic}"
# 1: run every service's threads under SCHED_BATCH (no wake-up preemption); 0: leave SCHED_OTHER.
# See sched_batch and docs/services.md.
SERVICES_SCHED_BATCH="${SERVICES_SCHED_BATCH:-1}"
CQLSH_VERSION="${CQLSH_VERSION:-6.2.2}"
REDIS_PORT="${REDIS_PORT:-6379}"
REDIS_START_TIMEOUT="${REDIS_START_TIMEOUT:-60}"
NATS_VERSION="${NATS_VERSION:-v2.11.17}"
NATS_PORT="${NATS_PORT:-4222}"
NATS_HTTP_PORT="${NATS_HTTP_PORT:-8222}"
NATS_SYNC_INTERVAL="${NATS_SYNC_INTERVAL:-always}"
NATS_START_TIMEOUT="${NATS_START_TIMEOUT:-60}"
STOP_TIMEOUT="${STOP_TIMEOUT:-90}"

HOST=127.0.0.1
ALL_SERVICES=(cassandra redis nats)
MAVEN_CENTRAL="https://repo1.maven.org/maven2"

C_HOME="$SVC_DIR/cassandra"
# Where the Cassandra node keeps its data, logs and pid file: C_HOME (the shared one) or the
# private state dir; the jars and wrappers stay in C_HOME.
C_STATE="$STATE_DIR/cassandra"
C_PID="$C_STATE/cassandra.pid"
C_LOG="$C_STATE/logs/system.log"
C_OUT="$C_STATE/logs/stdout.log"
R_HOME="$STATE_DIR/redis"
R_PID="$R_HOME/redis.pid"
R_LOG="$R_HOME/logs/redis.log"
N_HOME="$STATE_DIR/nats"
N_PID="$N_HOME/nats.pid"
N_LOG="$N_HOME/logs/nats.log"
N_BIN="$BIN_DIR/nats-server"

export DEBIAN_FRONTEND=noninteractive

# ---- the services (each a file of its own; one shell, one set of settings) --------
for part in common cassandra redis nats; do
  # shellcheck source=/dev/null
  source "$CONF_DIR/$part.sh"
done

# ---- status ------------------------------------------------------------------------
# prints one line per service; returns non-zero if not healthy
status_one() {
  local svc="$1" pid="" ver=""
  case "$svc" in
    cassandra)
      pid="$(cassandra_pid || true)"
      if ver="$(cassandra_query_version)"; then
        printf '%-10s RUNNING  %-16s cql=%s:%s jmx=%s storage=%s pid=%s\n' cassandra "cassandra $ver" "$HOST" "$CASSANDRA_PORT" "$CASSANDRA_JMX_PORT" "$CASSANDRA_STORAGE_PORT" "${pid:-?}"
        return 0
      fi
      ;;
    redis)
      pid="$(redis_pid || true)"
      if command -v redis-cli >/dev/null && redis_ready; then
        ver="$(timeout 3 redis-cli -h "$HOST" -p "$REDIS_PORT" info server 2>/dev/null | tr -d '\r' | sed -n 's/^redis_version://p')"
        printf '%-10s RUNNING  %-16s port=%s:%s aof=%s pid=%s\n' redis "redis $ver" "$HOST" "$REDIS_PORT" \
          "$(timeout 3 redis-cli -h "$HOST" -p "$REDIS_PORT" config get appendfsync 2>/dev/null | tail -n1)" "${pid:-?}"
        return 0
      fi
      ;;
    nats)
      pid="$(nats_pid || true)"
      if nats_ready; then
        ver="$(curl -fsS --max-time 3 "http://$HOST:$NATS_HTTP_PORT/varz" 2>/dev/null | grep -o '"version": *"[^"]*"' | head -n1 | sed 's/.*: *"\(.*\)"/\1/')"
        printf '%-10s RUNNING  %-16s client=%s:%s http=%s:%s jetstream=on pid=%s\n' nats "nats-server $ver" "$HOST" "$NATS_PORT" "$HOST" "$NATS_HTTP_PORT" "${pid:-?}"
        return 0
      fi
      ;;
  esac
  if [[ -n "$pid" ]]; then
    printf '%-10s STARTING (pid %s alive but not answering yet)\n' "$svc" "$pid"
  else
    printf '%-10s DOWN\n' "$svc"
  fi
  return 1
}

cmd_status() {
  local rc=0 svc
  for svc in "$@"; do status_one "$svc" || rc=1; done
  return $rc
}

# ---- commands ----------------------------------------------------------------------
check_services() {
  local s
  for s in "$@"; do
    case "$s" in cassandra | redis | nats) ;; *) die "unknown service '$s' (expected: ${ALL_SERVICES[*]})" ;; esac
  done
}

has() { local x="$1"; shift; local s; for s in "$@"; do [[ "$s" == "$x" ]] && return 0; done; return 1; }

cmd_up() {
  local t0=$SECONDS
  take_lock
  log "ports: CASSANDRA_PORT=$CASSANDRA_PORT REDIS_PORT=$REDIS_PORT NATS_PORT=$NATS_PORT NATS_HTTP_PORT=$NATS_HTTP_PORT (all on $HOST)"
  # Cassandra is slowest: launch it first, install/start the others while it boots.
  if has cassandra "$@"; then cassandra_install; cassandra_launch; fi
  if has redis "$@"; then redis_start; fi
  if has nats "$@"; then nats_start; fi
  if has cassandra "$@"; then cassandra_wait; fi
  log "all requested services are up ($((SECONDS - t0))s)"
  cmd_status "$@"
}

cmd_down() {
  take_lock
  local s
  for s in "$@"; do "${s}_stop"; done
}

cmd_kill() {
  take_lock
  local s
  for s in "$@"; do "${s}_kill"; done
}

cmd_install() {
  take_lock
  local s
  for s in "$@"; do "${s}_install"; done
}

cmd_logs() {
  local n="${2:-50}"
  case "$1" in
    cassandra) tail -n "$n" "$C_LOG" ;;
    redis) tail -n "$n" "$R_LOG" ;;
    nats) tail -n "$n" "$N_LOG" ;;
  esac
}

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
}

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  local svcs=("$@")
  case "$cmd" in
    up | down | status | install)
      [[ ${#svcs[@]} -gt 0 ]] || svcs=("${ALL_SERVICES[@]}") ;;
    start | stop | restart | kill)
      [[ ${#svcs[@]} -gt 0 ]] || die "usage: $0 $cmd <cassandra|redis|nats>..." ;;
    logs)
      [[ ${#svcs[@]} -ge 1 ]] || die "usage: $0 logs <cassandra|redis|nats> [lines]"
      check_services "${svcs[0]}"
      cmd_logs "${svcs[@]}"
      return ;;
    -h | --help | help) usage; return 0 ;;
    "") usage >&2; exit 2 ;;
    *) usage >&2; die "unknown command '$cmd'" ;;
  esac
  check_services "${svcs[@]}"
  check_private "${svcs[@]}"
  case "$cmd" in
    up | start) cmd_up "${svcs[@]}" ;;
    down | stop) cmd_down "${svcs[@]}" ;;
    restart) cmd_down "${svcs[@]}"; flock -u 9; cmd_up "${svcs[@]}" ;;
    kill) cmd_kill "${svcs[@]}" ;;
    install) cmd_install "${svcs[@]}" ;;
    status) cmd_status "${svcs[@]}" || exit 1 ;;
  esac
}

main "$@"
