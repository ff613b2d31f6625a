#!/usr/bin/env bash
# Table health (issue 10, part 5): a 1 s-interval roster -> Iceberg job, append and upsert at the
# same time, for N checkpoints; data files, delete files, average data file size, snapshots held,
# metadata bytes and commit time at checkpoints 10, 100, 1,000, 2,000 (and --at), then the upsert
# table's scan time against the same rows appended once. No maintenance runs: the baseline.
#
#   bench/table_health.sh [--checkpoints 2000] [--interval '1 s'] [--rps 2000] [--at K,K,...]
#                         [--seed 42] [--scan-reps 3]
#
# Options are bench/table_health.mjs's (it documents how each figure is measured). Takes about
# N x interval (2,000 checkpoints at 1 s: 34 minutes). Environment: FLOE (default
# build/src/floe/cli/floe), FLOE_SOURCE (what a copied binary was built from), OUT (scratch,
# default bench/out/table-health), RESULT (default bench/results/table-health-<UTC date>.json;
# RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench table-health table_health.mjs bench/out/table-health "$@"
