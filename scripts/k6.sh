#!/usr/bin/env bash
# k6 for the load tests in loadtest/: built once into .services/bin by
# `scripts/services.sh install k6` (pinned K6_VERSION, from the Go module proxy), then run with
# the arguments given. A k6 of your own works too: `k6 run loadtest/…`.
#
#   scripts/k6.sh run loadtest/chat.js       # builds k6 first if it is missing
#   scripts/k6.sh install                    # only build it
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
bash "$ROOT/scripts/services.sh" install k6 >&2
[[ "${1:-}" == install ]] && exit 0
exec "$ROOT/.services/bin/k6" "$@"
