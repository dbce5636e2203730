# shellcheck shell=bash
# Logging, processes, pid files, locks and the private-instance checks of the services. Sourced by scripts/services.sh, which sets the configuration it reads;
# not run on its own.

log()  { printf '[services] %s\n' "$*"; }
warn() { printf '[services] WARNING: %s\n' "$*" >&2; }
die()  { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }
trap 'rc=$?; printf "[services] ERROR: command failed (exit %s) at %s:%s: %s\n" "$rc" "${BASH_SOURCE[0]##*/}" "$LINENO" "$BASH_COMMAND" >&2' ERR

# Remember the current size of log files, so that a failure report shows only
# what this start attempt wrote (see die_with_log).
mark_logs() {
  local f
  for f in "$@"; do
    mkdir -p "$(dirname "$f")"
    file_size "$f" >"$f.start-offset"
  done
}

# die with the tail (last 40 lines) of log files; for files marked with
# mark_logs only the part written since the mark is shown
die_with_log() {
  local msg="$1" f off part
  shift
  printf '[services] ERROR: %s\n' "$msg" >&2
  for f in "$@"; do
    [[ -s "$f" ]] || continue
    off=0
    [[ -s "$f.start-offset" ]] && off="$(<"$f.start-offset")"
    (($(file_size "$f") >= off)) || off=0
    part="$(tail -c +"$((off + 1))" "$f" | tail -n 40 || true)"
    [[ -n "${part//[[:space:]]/}" ]] || continue
    printf '[services] ---- %s (last 40 lines of this start) ----\n%s\n' "$f" "$part" >&2
    printf '[services] ---- end of %s ----\n' "$f" >&2
  done
  exit 1
}

file_size() { stat -c %s "$1" 2>/dev/null || echo 0; }

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }

# pid from a pid file if that process is alive and its command line matches $2
pid_from_file() {
  local file="$1" marker="$2" pid
  [[ -s "$file" ]] || return 1
  pid="$(tr -dc '0-9' <"$file")"
  [[ -n "$pid" ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$marker" || return 1
  echo "$pid"
}

# pid of the process listening on 127.0.0.1:$1, if its command line matches $2
pid_from_port() {
  local port="$1" marker="$2" pid
  pid="$(ss -Hltnp "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2 || true)"
  [[ -n "$pid" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$marker" || return 1
  echo "$pid"
}

# Start "$@" detached (own session, survives the calling shell), stdout+stderr
# appended to $2, pid written to $1 (the pid of the exec'd program itself).
spawn() {
  local pidfile="$1" logfile="$2"; shift 2
  rm -f "$pidfile"
  # shellcheck disable=SC2016 # $$/$0/$@ are meant for the inner bash
  nohup setsid bash -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" >>"$logfile" 2>&1 </dev/null 9>&- &
  local i
  for i in $(seq 1 50); do [[ -s "$pidfile" ]] && return 0; sleep 0.1; done
  die "could not launch $* (no pid file $pidfile)"
}

# SIGTERM, wait up to $STOP_TIMEOUT s, then SIGKILL.
stop_pid() {
  local name="$1" pid="$2" timeout="${3:-$STOP_TIMEOUT}" i
  log "$name: stopping (pid $pid, SIGTERM)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 5; i++)); do
    kill -0 "$pid" 2>/dev/null || { log "$name: stopped"; return 0; }
    sleep 0.2
  done
  warn "$name: still alive after ${timeout}s, sending SIGKILL"
  kill_pid "$name" "$pid"
}

kill_pid() {
  local name="$1" pid="$2" i
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || { log "$name: killed (pid $pid, SIGKILL)"; return 0; }
    sleep 0.1
  done
  die "$name: pid $pid did not die after SIGKILL"
}

# warn when the process was found by its port rather than by our pid file
# (e.g. started from another checkout of the repo)
note_origin() {
  [[ "$(tr -dc '0-9' 2>/dev/null <"$3")" == "$2" ]] \
    || warn "$1: pid $2 listens on our port but was not started from this checkout ($3 missing); acting on it anyway"
}

apt_install() {
  command -v apt-get >/dev/null || die "apt-get not found; install $* manually"
  log "apt-get install $*"
  if ! apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>"$SVC_DIR/apt.err"; then
    log "apt-get install failed, running apt-get update and retrying"
    apt-get update -q >/dev/null || die "apt-get update failed"
    apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>"$SVC_DIR/apt.err" \
      || { cat "$SVC_DIR/apt.err" >&2; die "apt-get install $* failed"; }
  fi
}

ensure_dirs() { mkdir -p "$SVC_DIR" "$BIN_DIR" "$CACHE_DIR"; }

# serialize mutating commands (parallel CI jobs, fault tests); a private instance has its own lock
take_lock() {
  ensure_dirs
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/.lock"
  if ! flock -n 9; then
    log "waiting for another services.sh to finish (lock $STATE_DIR/.lock)"
    flock -w 900 9 || die "could not acquire $STATE_DIR/.lock within 900s"
  fi
}

is_private() { [[ "$STATE_DIR" != "$SVC_DIR" ]]; }

# A private instance (SERVICES_STATE_DIR) listens on ports that are not the shared services'
# defaults — every port of each service named: a stop or kill finds its process by pid file or by
# port, and must never reach the shared one.
check_private() {
  is_private || return 0
  local p ports=()
  if has redis "$@"; then ports+=("$REDIS_PORT"); fi
  if has nats "$@"; then ports+=("$NATS_PORT" "$NATS_HTTP_PORT"); fi
  if has cassandra "$@"; then ports+=("$CASSANDRA_PORT" "$CASSANDRA_STORAGE_PORT" "$CASSANDRA_JMX_PORT"); fi
  for p in "${ports[@]}"; do
    case "$p" in 6379 | 4222 | 8222 | 9042 | 7000 | 7001 | 7199) die "SERVICES_STATE_DIR: port $p is the shared services'; give the private instance ports of its own" ;; esac
  done
}
