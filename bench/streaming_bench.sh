#!/usr/bin/env bash
# Streaming bench (issue 3 §7): roster -> Iceberg append as real processes (`floe run` + worker).
#
#   bench/streaming_bench.sh
#
# 1. Throughput: N (2,000,000) roster events, unthrottled, 1 s checkpoints: rows/s of `floe run`
#    (spawn to exit) vs `floe table append` of the same rows (`floe table scan` of the streamed
#    table as JSON lines), REPS (3) paired runs, medians and their ratio.
# 2. Visibility at 1 s, 5 s, 30 s checkpoint intervals, RATE (2000) rows/s: last-record-to-
#    visible, record-to-visible over all records (mean/p50/p99/max), data files per commit.
# 3. Worker SIGKILL (pid from job.json) -> next successful commit, KILLS (3) kills, 1 s interval,
#    restart-strategy.fixed-delay.delay = 1 s.
# Takes about 5 minutes. Writes bench/results/streaming-<UTC date>.json and prints a table.
#
# The results file also records the command, commit, binary, machine and load (bench/README.md,
# "Results files").
#
# Environment: FLOE (default build/src/floe/cli/floe), FLOE_SOURCE (optional: what the binary
# was built from), OUT (default bench/out/streaming, scratch),
# RESULT (default bench/results/streaming-<date>.json; RESULT= writes none), SEED (42), N, REPS, RATE,
# INTERVALS ("1 5 30"), MIN_FEED_S (12), FEED_INTERVALS (3: feed = max(MIN_FEED_S, 3 x interval)),
# KILLS (3), KILL_INTERVAL_S (1), KILL_DELAY_MS (1000), KILL_FEED_S (30), KILL_OFFSETS_MS
# ("300 500 700": when each kill lands after a checkpoint completed), KILL_EVERY (3 checkpoints
# between kills), SINK_PARALLELISM (1), PARTS ("throughput latency kill").
# How each figure is measured: bench/README.md, "Streaming results", and streaming_bench.mjs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
BENCH_KNOBS="SEED N REPS RATE INTERVALS MIN_FEED_S FEED_INTERVALS KILLS KILL_INTERVAL_S KILL_DELAY_MS KILL_FEED_S KILL_OFFSETS_MS KILL_EVERY SINK_PARALLELISM PARTS"
export BENCH_COMMAND="$(bench_command bench/streaming_bench.sh "$@")"

export FLOE="${FLOE:-build/src/floe/cli/floe}"
export OUT="${OUT:-bench/out/streaming}"
export RESULT="${RESULT-bench/results/streaming-$(date -u +%Y-%m-%d).json}"

die() { echo "streaming_bench: $*" >&2; exit 1; }
[[ -x "$FLOE" ]] || die "$FLOE not found or not executable (build floe first, or set FLOE=...)"
command -v node > /dev/null || die "node (>= 20) not found"

mkdir -p "$OUT"
node "$here/streaming_bench.mjs"
