#!/usr/bin/env bash
# Monitoring benchmark (issue 12): what the coordinator's metrics and web UI cost, and how the
# stall alarm behaves, as real processes (`floe run` + worker).
#
# 1. Cost: records/s of a bounded filesystem -> Iceberg job (--rows roster JSON lines) with
#    monitoring on (and /metrics and api/job scraped once a second, as Prometheus and an open UI
#    would) against 'floe.monitoring.enabled' = 'false', --pairs paired runs; ratio on / off.
# 2. Stall: --trials Kafka -> Iceberg jobs (1 s checkpoints, the default threshold) whose committer
#    stops committing at checkpoint --hold-at (FLOE_HOLD_AT) while input flows: time from the last
#    commit to the STALLED line on stderr.
# 3. False alarms: one healthy Kafka -> Iceberg job for --duration seconds of bursty input (random
#    bursts and idle gaps, some longer than the threshold): STALLED lines (expected 0), commits,
#    gaps between commits while input flowed; the table verified exactly once at the end.
#
#   bench/monitoring.sh [--only cost,stall,false-alarms] [--rows 5000000] [--pairs 3] [--trials 5]
#                       [--duration 1800] [--hold-at 5] [--seed 42]
#
# Options are bench/monitoring.mjs's (it documents how each figure is measured). The defaults take
# about 40 minutes (the false-alarm job alone --duration). Environment: FLOE (default
# build/src/floe/cli/floe), FLOE_SOURCE (what a copied binary was built from), OUT (scratch,
# default bench/out/monitoring), INPUT_DIR (bench/out: the roster input is cached there, shared
# with kafka_bench.sh and append_bench.sh), RESULT (default
# bench/results/monitoring-<UTC date>.json; RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench monitoring monitoring.mjs bench/out/monitoring "$@"
