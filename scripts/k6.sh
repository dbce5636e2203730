#!/usr/bin/env bash
# k6 for the load tests in loadtest/: built once from the Go module proxy into .services/bin
# (no prebuilt binary is fetched), then run with the arguments given.
#
#   scripts/k6.sh run loadtest/chat.js       # builds k6 first if it is missing
#   scripts/k6.sh install                    # only build it
#
# K6_VERSION (default below) picks the version. A k6 of your own works too: `k6 run loadtest/…`.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
K6_VERSION="${K6_VERSION:-v1.4.2}"
BIN_DIR="$ROOT/.services/bin"
CACHE_DIR="$ROOT/.services/cache"
BIN="$BIN_DIR/k6"

log() { printf '[k6] %s\n' "$*" >&2; }

installed() { [[ -x "$BIN" ]] && [[ "$("$BIN" version 2>/dev/null | awk '{print $2}')" == "$K6_VERSION" ]]; }

install() {
  installed && return 0
  command -v go >/dev/null || { log "Go toolchain not found (needed to build k6 $K6_VERSION)"; exit 1; }
  mkdir -p "$BIN_DIR" "$CACHE_DIR"
  log "building k6 $K6_VERSION with $(go version | awk '{print $3}') (go install via the Go module proxy; a few minutes the first time)"
  local gotmp="$CACHE_DIR/k6-bin.tmp" build_log="$CACHE_DIR/k6-build.log"
  rm -rf "$gotmp"
  mkdir -p "$gotmp"
  if ! GOBIN="$gotmp" GOMODCACHE="$CACHE_DIR/go/mod" GOCACHE="$CACHE_DIR/go/build" \
      GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 \
      go install "go.k6.io/k6@$K6_VERSION" >"$build_log" 2>&1; then
    log "go install go.k6.io/k6@$K6_VERSION failed; last lines of $build_log:"
    tail -n 30 "$build_log" >&2
    exit 1
  fi
  mv -f "$gotmp/k6" "$BIN"
  rm -rf "$gotmp"
  installed || { log "built binary does not report $K6_VERSION: $("$BIN" version 2>&1)"; exit 1; }
  log "installed $BIN ($("$BIN" version))"
}

if [[ "${1:-}" == "install" ]]; then
  install
  exit 0
fi
install
exec "$BIN" "$@"
