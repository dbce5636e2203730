#!/usr/bin/env bash
# Builds the campaign's checker (tools/checker) into tools/checker/dist/checker and prints its
# path. Go from PATH (or /usr/local/go/bin); modules from the Go module proxy, cached with the
# build cache under .services/cache/go (git-ignored), as scripts/services.sh does for NATS.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GO="$(command -v go || true)"
[[ -z "$GO" && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go
[[ -n "$GO" ]] || { echo "build-checker: Go toolchain not found" >&2; exit 1; }
cd "$ROOT/tools/checker"
export GOMODCACHE="$ROOT/.services/cache/go/mod" GOCACHE="$ROOT/.services/cache/go/build" \
  GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0
"$GO" build -o dist/checker . >&2
echo "$ROOT/tools/checker/dist/checker"
