#!/usr/bin/env bash
# The fault campaign (docs/faults.md, "The randomized campaign"): builds the independent checker
# (tools/checker, Go, with porcupine from the Go module proxy; caches under .services/cache/go),
# then runs N rounds of M messages per mode and prints the table of faults and anomalies.
#
#   scripts/campaign.sh [--rounds 100] [--messages 10000] [--mode embedded|distributed|both]
#                       [--seed S] [--replay <round seed>] [--service-faults] [--own-cassandra]
#                       [--only-faults k,...] [--out DIR] ...
#   npm run campaign -- <the same options>
#
# Distributed rounds need the services (scripts/services.sh up) and run in a keyspace of their
# own, seqline_campaign unless SEQLINE_E2E_KEYSPACE says otherwise: a round changes live settings
# (group tiers, hooks), and a campaign stopped mid-round must not leave them to the test suites'
# keyspace. With --service-faults each distributed round
# runs on a private Redis and NATS of its own (scripts/services.sh with SERVICES_STATE_DIR, data
# under <out>/services) and restarts, flushes and rolls back those. With --own-cassandra each
# distributed round runs on a private Cassandra node too (same state dir, ports of its own) and
# may restart it (cassandra-restart); without it Cassandra stays the shared node, never restarted.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash scripts/build-checker.sh >/dev/null
export SEQLINE_E2E_KEYSPACE="${SEQLINE_E2E_KEYSPACE:-seqline_campaign}"
exec node --conditions=source --import tsx tools/campaign/src/main.ts "$@"
