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

# ---- helpers ---------------------------------------------------------------------
log()  { printf '[services] %s\n' "$*"; }
warn() { printf '[services] WARNING: %s\n' "$*" >&2; }
die()  { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }
trap 'rc=$?; printf "[services] ERROR: command failed (exit %s) at line %s: %s\n" "$rc" "$LINENO" "$BASH_COMMAND" >&2' ERR

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

# ---- Cassandra --------------------------------------------------------------------
C_MARKER="org.apache.cassandra.service.CassandraDaemon"

java_ok() {
  command -v java >/dev/null || return 1
  local v
  v="$(java -version 2>&1 | head -n1 | sed -E 's/.*version "([0-9]+).*/\1/')"
  [[ "$v" =~ ^[0-9]+$ ]] && ((v >= 11))
}

cassandra_installed() {
  [[ -f "$C_HOME/lib/cassandra-all-$CASSANDRA_VERSION.jar" && -f "$C_HOME/.installed-$CASSANDRA_VERSION" ]]
}

cassandra_install() {
  ensure_dirs
  # A private node runs the shared install's jars; it installs nothing (no second install racing).
  if is_private; then
    cassandra_installed || die "cassandra: not installed; run scripts/services.sh install cassandra first"
    return 0
  fi
  java_ok || apt_install openjdk-17-jre-headless
  java_ok || die "Java 11+ is required for Cassandra (java -version)"
  if cassandra_installed; then
    cassandra_write_wrappers
    cassandra_install_cqlsh
    return 0
  fi
  log "cassandra: installing Apache Cassandra $CASSANDRA_VERSION into $C_HOME"
  mkdir -p "$C_HOME" "$CACHE_DIR"
  local tmp="$C_HOME/lib.tmp" tarball_url
  rm -rf "$tmp" "$C_HOME"/.installed-*
  mkdir -p "$tmp"
  # 1) binary tarball artifact org.apache.cassandra:apache-cassandra:<ver>:tar.gz:bin
  tarball_url="$MAVEN_CENTRAL/org/apache/cassandra/apache-cassandra/$CASSANDRA_VERSION/apache-cassandra-$CASSANDRA_VERSION-bin.tar.gz"
  if curl -fsSL --retry 3 --max-time 300 -o "$CACHE_DIR/apache-cassandra-$CASSANDRA_VERSION-bin.tar.gz" "$tarball_url" 2>/dev/null; then
    log "cassandra: using binary tarball $tarball_url"
    tar -xzf "$CACHE_DIR/apache-cassandra-$CASSANDRA_VERSION-bin.tar.gz" -C "$tmp" --strip-components=2 \
      "apache-cassandra-$CASSANDRA_VERSION/lib"
  else
    rm -f "$CACHE_DIR/apache-cassandra-$CASSANDRA_VERSION-bin.tar.gz"
    # 2) not published for this version (true for all 5.0.x): cassandra-all + runtime deps via Maven
    log "cassandra: no binary tarball on Maven Central for $CASSANDRA_VERSION; resolving cassandra-all + dependencies with mvn"
    command -v mvn >/dev/null || apt_install maven
    mvn -B -q -Dstyle.color=never -f "$CONF_DIR/cassandra-deps.pom.xml" \
      -Dcassandra.version="$CASSANDRA_VERSION" \
      -Dmaven.repo.local="$CACHE_DIR/m2" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" \
      >"$CACHE_DIR/cassandra-mvn.log" 2>&1 \
      || die_with_log "cassandra: mvn could not resolve org.apache.cassandra:cassandra-all:$CASSANDRA_VERSION" "$CACHE_DIR/cassandra-mvn.log"
  fi
  [[ -f "$tmp/cassandra-all-$CASSANDRA_VERSION.jar" || -n "$(ls "$tmp"/apache-cassandra-"$CASSANDRA_VERSION"*.jar 2>/dev/null)" ]] \
    || die "cassandra: install produced no cassandra jar in $tmp"
  # the tarball names the main jar apache-cassandra-<ver>.jar; normalize
  if [[ ! -f "$tmp/cassandra-all-$CASSANDRA_VERSION.jar" ]]; then
    cp "$tmp/apache-cassandra-$CASSANDRA_VERSION.jar" "$tmp/cassandra-all-$CASSANDRA_VERSION.jar"
  fi
  rm -rf "${C_HOME:?}/lib"
  mv "$tmp" "$C_HOME/lib"
  touch "$C_HOME/.installed-$CASSANDRA_VERSION"
  log "cassandra: installed $(find "$C_HOME/lib" -name '*.jar' | wc -l) jars"
  cassandra_write_wrappers
  cassandra_install_cqlsh
}

# nodetool / cqlsh wrappers in .services/cassandra/bin
cassandra_write_wrappers() {
  mkdir -p "$C_HOME/bin"
  cat >"$C_HOME/bin/nodetool" <<EOF
#!/usr/bin/env bash
# generated by scripts/services.sh: nodetool against the local node's JMX port
mapfile -t modules < <(grep -E '^--add-|^-Djdk.attach' "$CONF_DIR/cassandra-jvm.options")
exec java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \\
  -Djava.net.preferIPv4Stack=true "\${modules[@]}" \\
  -Dlogback.configurationFile="$CONF_DIR/cassandra-tools-logback.xml" \\
  -Dcassandra.storagedir="$C_HOME/data" -Dcassandra.logdir="$C_HOME/logs" \\
  -cp "$C_HOME/lib/*" org.apache.cassandra.tools.NodeTool -h $HOST -p "\${CASSANDRA_JMX_PORT:-$CASSANDRA_JMX_PORT}" "\$@"
EOF
  chmod +x "$C_HOME/bin/nodetool"
}

cassandra_install_cqlsh() {
  local venv="$C_HOME/cqlsh-venv"
  if [[ ! -x "$venv/bin/cqlsh" ]]; then
    if ! command -v python3 >/dev/null; then
      warn "cassandra: python3 not found; skipping cqlsh (readiness uses a TCP probe)"
      return 0
    fi
    log "cassandra: installing cqlsh $CQLSH_VERSION (PyPI) into $venv"
    rm -rf "$venv"
    if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check \
        "cqlsh==$CQLSH_VERSION"; } >"$C_HOME/cqlsh-install.log" 2>&1; then
      warn "cassandra: cqlsh install failed (see $C_HOME/cqlsh-install.log); use scripts/services/cql_probe.py"
      rm -rf "$venv"
      return 0
    fi
  fi
  cat >"$C_HOME/bin/cqlsh" <<EOF
#!/usr/bin/env bash
# generated by scripts/services.sh; cqlsh $CQLSH_VERSION from PyPI
if [[ \$# -eq 0 || "\$1" == -* ]]; then set -- $HOST "\${CASSANDRA_PORT:-$CASSANDRA_PORT}" "\$@"; fi
exec "$venv/bin/cqlsh" "\$@"
EOF
  chmod +x "$C_HOME/bin/cqlsh"
}

cassandra_pid() { pid_from_file "$C_PID" "$C_MARKER" || pid_from_port "$CASSANDRA_PORT" "$C_MARKER"; }

# real CQL round trip; prints release_version
cassandra_query_version() {
  if command -v python3 >/dev/null; then
    python3 "$CONF_DIR/cql_probe.py" "$HOST" "$CASSANDRA_PORT" 2>/dev/null
  else
    port_open "$CASSANDRA_PORT" && echo "$CASSANDRA_VERSION?"
  fi
}
cassandra_ready() { cassandra_query_version >/dev/null; }

# scripts/services/cassandra.yaml; with CASSANDRA_COMMITLOG_SYNC other than periodic, a copy of it
# (under the node's state dir) whose commitlog acknowledges only what it has synced.
cassandra_conf() {
  case "$CASSANDRA_COMMITLOG_SYNC" in
    periodic) echo "$CONF_DIR/cassandra.yaml"; return ;;
    group) sed -E 's/^commitlog_sync:.*/commitlog_sync: group/; s/^commitlog_sync_period:.*/commitlog_sync_group_window: 15ms/' "$CONF_DIR/cassandra.yaml" >"$C_STATE/cassandra.yaml" ;;
    batch) sed -E 's/^commitlog_sync:.*/commitlog_sync: batch/; /^commitlog_sync_period:/d' "$CONF_DIR/cassandra.yaml" >"$C_STATE/cassandra.yaml" ;;
    *) die "CASSANDRA_COMMITLOG_SYNC: periodic, group or batch, not $CASSANDRA_COMMITLOG_SYNC" ;;
  esac
  echo "$C_STATE/cassandra.yaml"
}

cassandra_launch() {
  if cassandra_ready; then
    log "cassandra: already answering CQL on $HOST:$CASSANDRA_PORT"
    return 0
  fi
  local pid
  if pid="$(cassandra_pid)"; then
    log "cassandra: already starting (pid $pid)"
    return 0
  fi
  if port_open "$CASSANDRA_PORT"; then
    die "cassandra: port $HOST:$CASSANDRA_PORT is in use by something that does not answer CQL"
  fi
  cassandra_installed || cassandra_install
  is_private || cassandra_write_wrappers
  mkdir -p "$C_STATE/data" "$C_STATE/logs" "$C_STATE/triggers"
  cassandra_conf >/dev/null # dies here on a bad CASSANDRA_COMMITLOG_SYNC (not inside the $(…) below)
  local opts=()
  mapfile -t opts < <(grep -E '^-' "$CONF_DIR/cassandra-jvm.options")
  local jamm
  jamm="$(find "$C_HOME/lib" -maxdepth 1 -name 'jamm-*.jar' | head -n1)"
  [[ -n "$jamm" ]] && opts+=("-javaagent:$jamm")
  opts+=(
    "-Xms$CASSANDRA_HEAP" "-Xmx$CASSANDRA_HEAP"
    "-XX:MaxDirectMemorySize=$CASSANDRA_DIRECT_MEMORY"
    "-XX:ErrorFile=$C_STATE/logs/hs_err_pid%p.log"
    "-Dcassandra.config=file://$(cassandra_conf)"
    "-Dcassandra.storagedir=$C_STATE/data"
    "-Dcassandra.logdir=$C_STATE/logs"
    "-Dlogback.configurationFile=$CONF_DIR/cassandra-logback.xml"
    "-Dcassandra.native_transport_port=$CASSANDRA_PORT"
    "-Dcassandra.storage_port=$CASSANDRA_STORAGE_PORT"
    "-Dcassandra.jmx.local.port=$CASSANDRA_JMX_PORT"
    "-Dcassandra-foreground=yes"
    "-Dcassandra.home=$C_HOME"
    "-Dcassandra.triggers_dir=$C_STATE/triggers"
  )
  log "cassandra: starting $CASSANDRA_VERSION on $HOST:$CASSANDRA_PORT (heap $CASSANDRA_HEAP, log $C_LOG)"
  printf '\n===== %s starting cassandra =====\n' "$(date -Is)" >>"$C_OUT"
  mark_logs "$C_OUT" "$C_LOG"
  (cd "$C_STATE" && spawn "$C_PID" "$C_OUT" java "${opts[@]}" -cp "$C_HOME/lib/*" "$C_MARKER")
}

cassandra_wait() {
  local start=$SECONDS pid
  while ! cassandra_ready; do
    if ! pid="$(cassandra_pid)"; then
      sleep 1   # let the async logger flush
      die_with_log "cassandra: process exited during startup" "$C_OUT" "$C_LOG"
    fi
    if ((SECONDS - start >= CASSANDRA_START_TIMEOUT)); then
      die_with_log "cassandra: no CQL answer on $HOST:$CASSANDRA_PORT after ${CASSANDRA_START_TIMEOUT}s (pid $pid still running)" "$C_OUT" "$C_LOG"
    fi
    sleep 2
  done
  log "cassandra: ready on $HOST:$CASSANDRA_PORT ($((SECONDS - start))s waiting)"
  cassandra_timer_slack
  sched_batch cassandra "$(cassandra_pid)"
}

# Cassandra's shared worker pool (SEPWorker) looks for work between tasks in parkNanos sleeps of
# 10 µs to 1 ms. When requests come steadily but not back to back, that loop wakes thousands of
# times a second and, on a 2-core machine, costs as much CPU as the requests: 0.49 cores at 500
# single inserts/s, 0.74 at 2 000/s. A 500 µs slack lets the kernel coalesce those wake-ups
# (0.16 and 0.30 cores). Set on every thread once CQL answers; threads created later inherit
# their creator's slack. docs/services.md has the measurements.
cassandra_timer_slack() {
  local pid task applied=0 total=0
  ((CASSANDRA_TIMER_SLACK_NS > 0)) || return 0
  pid="$(cassandra_pid)" || return 0
  for task in /proc/"$pid"/task/*; do
    total=$((total + 1))
    if { echo "$CASSANDRA_TIMER_SLACK_NS" >"/proc/${task##*/}/timerslack_ns"; } 2>/dev/null; then applied=$((applied + 1)); fi
  done
  if ((applied == total)); then
    log "cassandra: timer slack ${CASSANDRA_TIMER_SLACK_NS} ns on its $total threads"
  else
    log "cassandra: warning: timer slack set on $applied of $total threads (writing /proc/<tid>/timerslack_ns needs CAP_SYS_NICE); expect more idle CPU"
  fi
}

cassandra_start() { cassandra_install; cassandra_launch; cassandra_wait; }

# The services are event loops that handle what arrived and sleep again. Under SCHED_OTHER each
# one woken by a peer's write preempts the writer at once: at 2 000 msg/s the gateway and worker
# were preempted 0.75 times per message each, and every process handled fewer messages per
# wake-up. A SCHED_BATCH thread does not preempt on wake-up (only the tick does), so the writer
# finishes its turn first. Set on every thread of a running service; threads created later
# inherit it. No privilege needed (both are normal, non-real-time policies). docs/services.md.
sched_batch() {
  local name="$1" pid="$2"
  [[ "$SERVICES_SCHED_BATCH" == 1 && -n "$pid" ]] || return 0
  if ! command -v chrt >/dev/null; then
    log "$name: warning: chrt (util-linux) not found; left under SCHED_OTHER"
  elif chrt --batch --all-tasks --pid 0 "$pid" >/dev/null 2>&1; then
    log "$name: SCHED_BATCH on all threads (pid $pid)"
  else
    log "$name: warning: could not set SCHED_BATCH on pid $pid; left as is"
  fi
}

cassandra_stop() {
  local pid
  if pid="$(cassandra_pid)"; then
    note_origin cassandra "$pid" "$C_PID"
    stop_pid cassandra "$pid"
  elif cassandra_ready; then
    warn "cassandra: $HOST:$CASSANDRA_PORT answers but is not managed by services.sh; leaving it"
  else
    log "cassandra: not running"
  fi
  rm -f "$C_PID"
}

cassandra_kill() {
  local pid
  if pid="$(cassandra_pid)"; then note_origin cassandra "$pid" "$C_PID"; kill_pid cassandra "$pid"; else log "cassandra: not running"; fi
  rm -f "$C_PID"
}

# ---- Redis -------------------------------------------------------------------------
R_MARKER="redis-server"

redis_install() {
  ensure_dirs
  if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then return 0; fi
  apt_install redis-server
  # On a systemd host the package starts a system-wide instance on 6379; we run our own.
  if command -v systemctl >/dev/null && systemctl is-active --quiet redis-server 2>/dev/null; then
    log "redis: stopping and disabling the distro's redis-server.service (we run our own instance)"
    systemctl disable --now redis-server >/dev/null 2>&1 || true
  fi
  command -v redis-server >/dev/null || die "redis: redis-server not found after apt-get install"
}

redis_pid() { pid_from_file "$R_PID" "$R_MARKER" || pid_from_port "$REDIS_PORT" "$R_MARKER"; }
redis_ready() { [[ "$(timeout 3 redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null)" == "PONG" ]]; }

redis_start() {
  redis_install
  if redis_ready; then
    log "redis: already answering PING on $HOST:$REDIS_PORT"
    sched_batch redis "$(redis_pid || true)"
    return 0
  fi
  local pid
  if ! pid="$(redis_pid)"; then
    if port_open "$REDIS_PORT"; then
      die "redis: port $HOST:$REDIS_PORT is in use by something that does not answer PING"
    fi
    mkdir -p "$R_HOME/data" "$R_HOME/logs"
    rm -f "$R_PID"
    mark_logs "$R_HOME/logs/stdout.log" "$R_LOG"
    log "redis: starting $(redis_version_bin) on $HOST:$REDIS_PORT (AOF everysec, dir $R_HOME/data)"
    if ! redis-server "$CONF_DIR/redis.conf" --port "$REDIS_PORT" --bind "$HOST" \
        --dir "$R_HOME/data" --pidfile "$R_PID" --logfile "$R_LOG" --daemonize yes \
        >>"$R_HOME/logs/stdout.log" 2>&1 </dev/null 9>&-; then
      die_with_log "redis: redis-server failed to start" "$R_HOME/logs/stdout.log" "$R_LOG"
    fi
  fi
  local start=$SECONDS
  while ! redis_ready; do
    if ((SECONDS - start >= 3)) && ! redis_pid >/dev/null; then
      die_with_log "redis: process exited during startup" "$R_HOME/logs/stdout.log" "$R_LOG"
    fi
    if ((SECONDS - start >= REDIS_START_TIMEOUT)); then
      die_with_log "redis: no PONG on $HOST:$REDIS_PORT after ${REDIS_START_TIMEOUT}s" "$R_LOG"
    fi
    sleep 0.2
  done
  log "redis: ready on $HOST:$REDIS_PORT"
  sched_batch redis "$(redis_pid)"
}

redis_stop() {
  local pid
  if pid="$(redis_pid)"; then
    note_origin redis "$pid" "$R_PID"
    stop_pid redis "$pid" 60   # SIGTERM: redis fsyncs the AOF and exits
  elif redis_ready; then
    warn "redis: $HOST:$REDIS_PORT answers but is not managed by services.sh; leaving it"
  else
    log "redis: not running"
  fi
  rm -f "$R_PID"
}

redis_kill() {
  local pid
  if pid="$(redis_pid)"; then note_origin redis "$pid" "$R_PID"; kill_pid redis "$pid"; else log "redis: not running"; fi
  rm -f "$R_PID"
}

redis_version_bin() { redis-server --version 2>/dev/null | grep -o 'v=[0-9.]*' | cut -d= -f2 | sed 's/^/redis /'; }

# ---- NATS --------------------------------------------------------------------------
N_MARKER="nats-server"

nats_installed() { [[ -x "$N_BIN" ]] && [[ "$("$N_BIN" --version 2>/dev/null)" == "nats-server: $NATS_VERSION" ]]; }

# Builds <module>@<version> with the Go module proxy into $BIN_DIR/<binary> (no prebuilt binary
# is fetched); caches under .services/cache. Usage: go_install_pinned <what> <module> <version> <binary>
go_install_pinned() {
  local what="$1" module="$2" version="$3" binary="$4"
  command -v go >/dev/null || die "$what: Go toolchain not found (needed to build $binary $version)"
  log "$what: building $binary $version with $(go version | awk '{print $3}') (go install via the Go module proxy)"
  local gotmp="$CACHE_DIR/go-bin.tmp" build_log="$CACHE_DIR/$what-build.log"
  rm -rf "$gotmp"
  mkdir -p "$gotmp"
  if ! GOBIN="$gotmp" GOMODCACHE="$CACHE_DIR/go/mod" GOCACHE="$CACHE_DIR/go/build" \
      GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 \
      go install "$module@$version" >"$build_log" 2>&1; then
    die_with_log "$what: go install $module@$version failed" "$build_log"
  fi
  mv -f "$gotmp/$binary" "$BIN_DIR/$binary"
  rm -rf "$gotmp"
}

nats_install() {
  ensure_dirs
  nats_installed && return 0
  go_install_pinned nats github.com/nats-io/nats-server/v2 "$NATS_VERSION" nats-server
  nats_installed || die "nats: built binary does not report $NATS_VERSION: $("$N_BIN" --version 2>&1)"
  log "nats: installed $N_BIN"
}

# scripts/services/nats.conf (docker-compose.yml runs it too); with NATS_SYNC_INTERVAL other than
# "always", a copy of it with that sync_interval. Address, ports and store dir are flags.
nats_conf() {
  if [[ "$NATS_SYNC_INTERVAL" == always ]]; then
    echo "$CONF_DIR/nats.conf"
    return
  fi
  mkdir -p "$N_HOME"
  # quoted: unquoted, the config reads 2m as the number 2 000 000 (seconds)
  sed -E "s/^([[:space:]]*sync_interval:).*/\1 \"$NATS_SYNC_INTERVAL\"/" "$CONF_DIR/nats.conf" >"$N_HOME/nats.conf"
  echo "$N_HOME/nats.conf"
}

nats_pid() { pid_from_file "$N_PID" "$N_MARKER" || pid_from_port "$NATS_PORT" "$N_MARKER"; }
nats_ready() { curl -fsS --max-time 3 "http://$HOST:$NATS_HTTP_PORT/healthz" 2>/dev/null | grep -q '"ok"'; }

nats_start() {
  nats_install
  if nats_ready; then
    log "nats: already healthy on $HOST:$NATS_PORT (monitoring $HOST:$NATS_HTTP_PORT)"
    sched_batch nats "$(nats_pid || true)"
    return 0
  fi
  local pid
  if ! pid="$(nats_pid)"; then
    local p
    for p in "$NATS_PORT" "$NATS_HTTP_PORT"; do
      port_open "$p" && die "nats: port $HOST:$p is in use by something that is not a healthy nats-server"
    done
    mkdir -p "$N_HOME/store" "$N_HOME/logs"
    log "nats: starting nats-server $NATS_VERSION on $HOST:$NATS_PORT, monitoring $HOST:$NATS_HTTP_PORT (JetStream sync_interval=$NATS_SYNC_INTERVAL)"
    printf '\n===== %s starting nats-server =====\n' "$(date -Is)" >>"$N_LOG"
    mark_logs "$N_LOG"
    spawn "$N_PID" "$N_LOG" "$N_BIN" -c "$(nats_conf)" -a "$HOST" -p "$NATS_PORT" -m "$NATS_HTTP_PORT" -sd "$N_HOME/store"
  fi
  local start=$SECONDS
  while ! nats_ready; do
    if ! nats_pid >/dev/null; then
      die_with_log "nats: process exited during startup" "$N_LOG"
    fi
    if ((SECONDS - start >= NATS_START_TIMEOUT)); then
      die_with_log "nats: /healthz on $HOST:$NATS_HTTP_PORT not ok after ${NATS_START_TIMEOUT}s" "$N_LOG"
    fi
    sleep 0.2
  done
  log "nats: ready on $HOST:$NATS_PORT"
  sched_batch nats "$(nats_pid)"
}

nats_stop() {
  local pid
  if pid="$(nats_pid)"; then
    note_origin nats "$pid" "$N_PID"
    stop_pid nats "$pid" 60   # SIGTERM: graceful JetStream shutdown
  elif nats_ready; then
    warn "nats: $HOST:$NATS_PORT answers but is not managed by services.sh; leaving it"
  else
    log "nats: not running"
  fi
  rm -f "$N_PID"
}

nats_kill() {
  local pid
  if pid="$(nats_pid)"; then note_origin nats "$pid" "$N_PID"; kill_pid nats "$pid"; else log "nats: not running"; fi
  rm -f "$N_PID"
}

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
