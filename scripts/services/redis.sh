# shellcheck shell=bash
# Redis: install (Debian package), start, readiness, stop. Sourced by scripts/services.sh, which sets the configuration it reads;
# not run on its own.

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
