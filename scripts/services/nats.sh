# shellcheck shell=bash
# NATS JetStream: install (pinned Go module), start, readiness, stop. Sourced by scripts/services.sh, which sets the configuration it reads;
# not run on its own.

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
