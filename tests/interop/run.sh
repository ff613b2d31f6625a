#!/usr/bin/env bash
# Run the independent-reader interop tests (node --test) against a directory written by floe's
# C++ tests.
#
#   tests/interop/run.sh DIR          # FLOE_INTEROP_DIR=DIR node --test tests/interop/
#   tests/interop/run.sh --self-test  # build fixtures with DuckDB/avsc into a temp dir and run
#
# Needs `npm ci` in the repository root first (scripts/install-deps.sh does it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if [[ $# -ne 1 ]]; then
  echo "usage: $0 FLOE_INTEROP_DIR | --self-test" >&2
  exit 2
fi
if [[ ! -d "$repo/node_modules/icebird" ]]; then
  echo "error: $repo/node_modules is missing; run 'npm ci' in $repo (or scripts/install-deps.sh)" >&2
  exit 2
fi

cleanup=""
if [[ "$1" == "--self-test" ]]; then
  dir="$(mktemp -d "${TMPDIR:-/tmp}/floe-interop-selftest.XXXXXX")"
  cleanup="$dir"
  trap 'rm -rf "$cleanup"' EXIT
  node "$here/make_fixtures.mjs" "$dir"
else
  dir="$1"
  if [[ ! -d "$dir" ]]; then
    echo "error: $dir is not a directory" >&2
    exit 2
  fi
fi
dir="$(cd "$dir" && pwd)"

cd "$repo"
# Explicit file list: node 20's `node --test DIR` directory handling differs between minor
# versions; the *.test.mjs names are the contract.
FLOE_INTEROP_DIR="$dir" node --test tests/interop/*.test.mjs
