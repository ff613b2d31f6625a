#!/usr/bin/env bash
# Window benchmark (issue 11, part 5): event-time windows as real processes (`floe run` + worker).
#
# 1. Throughput: TUMBLE(5 min) and SESSION(10 min gap) COUNT(*) per key over a JSON-lines file with
#    10,000 and 1,000,000 distinct keys, floe on one core (taskset, parallelism 1) against DuckDB
#    (1 thread, the same core) computing the same aggregate in batch in the same run: events/s and
#    the ratio floe / DuckDB. floe's table must equal DuckDB's result row for row.
# 2. Latency: from the moment a window can close (the record that lets the watermark pass its end
#    is in Kafka) to its rows being visible in a Kafka topic (exactly-once) and an Iceberg table.
# 3. Checkpoint duration with 1,000,000 keys of window state.
#
#   bench/windows.sh [--parts throughput,latency,checkpoint] [--events 5000000] [--keys 10000,1000000]
#                    [--kinds tumble,session] [--reps 3] [--interval '10 s'] [--cpu N|none] ...
#
# Options are bench/windows.mjs's (it documents how each figure is measured). Needs node_modules
# (npm ci) for @duckdb/node-api and taskset. Environment: FLOE (default build/src/floe/cli/floe),
# FLOE_SOURCE (what a copied binary was built from), OUT (scratch, default bench/out/windows; the
# generated inputs are cached in OUT/input), RESULT (default bench/results/windows-<UTC date>.json;
# RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench windows windows.mjs bench/out/windows "$@"
