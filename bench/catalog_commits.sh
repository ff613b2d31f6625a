#!/usr/bin/env bash
# Commit latency per catalog (issue 13, part 4): 1,000 Iceberg commits (one snapshot adding one
# data file, as a sink's checkpoint does) through the filesystem catalog, the JDBC catalog on
# SQLite and on PostgreSQL (a throwaway server, tests/postgres/test_postgres.sh), and the REST
# catalog (`floe catalog serve` over that PostgreSQL); then two committer processes on one
# table at once through each: commits per second, conflicts retried, every commit landed.
#
#   bench/catalog_commits.sh [--commits 1000] [--concurrent-commits 500]
#
# Takes about two minutes. Environment: BENCH_BIN (default
# build/src/floe/catalog/catalog_commit_bench), FLOE_CLI (default build/src/floe/cli/floe),
# OUT (scratch, default bench/out/catalog-commits), RESULT (default
# bench/results/catalog-commits-<UTC date>.json; RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
export BENCH_BIN="${BENCH_BIN:-build/src/floe/catalog/catalog_commit_bench}"
[[ -x "$BENCH_BIN" ]] || { echo "catalog-commits: $BENCH_BIN not found (build first)" >&2; exit 2; }
FLOE="$BENCH_BIN" run_node_bench catalog-commits catalog_commits.mjs bench/out/catalog-commits "$@"
