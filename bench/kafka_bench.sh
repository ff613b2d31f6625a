#!/usr/bin/env bash
# Kafka bench (issue 4 §4): Kafka (dev cluster, `floe kafka dev` as its own process) -> Iceberg
# append throughput with one worker, in MiB/s and rows/s, against peers measured in the same run:
# the same rows through the filesystem source into the same sink, and DuckDB writing them to
# Parquet (as bench/append_bench.sh). Every floe table is verified to hold each seq exactly once.
#
#   bench/kafka_bench.sh [N]         (default N=2000000)
#
# The dev cluster keeps ~5 MiB per partition and drops older records silently, so the producer
# (`floe kafka produce --group G --max-lag L`) never runs more than LAG_BYTES (4 MiB) per
# partition ahead of the job's committed group offsets.
# Environment: FLOE (default build/src/floe/cli/floe), OUT (default bench/out/kafka, scratch),
# FLOE_SOURCE (optional: what the binary was built from, for the results file),
# INPUT_DIR (bench/out: the generated input is cached there, shared with append_bench.sh), SEED
# (42), PARTITIONS (64), BROKERS (3), INTERVAL ('1 s'), LAG_BYTES (4194304), REPS (3 rounds;
# medians), PEERS ("filesystem duckdb"), PRODUCER_PROPS ("linger.ms=100"), TESTBED_CONSUMER_PROPS
# ("fetch.wait.max.ms=10": the mock's Fetch wait), CONSUMER_PROPS (none: floe's defaults;
# e.g. "queued.min.messages=100000 queued.max.messages.kbytes=65536" for librdkafka's), CHAINING
# (true or false: 'pipeline.operator-chaining.enabled' of the jobs; unset, floe's default), RESULT (default
# bench/results/kafka-<UTC date>.json; RESULT= writes none). The results file also records the
# command, commit, binary, machine and load (bench/README.md, "Results files").
# How each figure is measured: the head of bench/kafka_bench.mjs and bench/README.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
BENCH_KNOBS="N SEED PARTITIONS BROKERS INTERVAL LAG_BYTES REPS PEERS PRODUCER_PROPS TESTBED_CONSUMER_PROPS CONSUMER_PROPS CHAINING"
export BENCH_COMMAND="$(bench_command bench/kafka_bench.sh "$@")"

export N="${1:-${N:-2000000}}"
export FLOE="${FLOE:-build/src/floe/cli/floe}"
export OUT="${OUT:-bench/out/kafka}"
export RESULT="${RESULT-bench/results/kafka-$(date -u +%Y-%m-%d).json}"

die() { echo "kafka_bench: $*" >&2; exit 1; }
[[ -x "$FLOE" ]] || die "$FLOE not found or not executable (build floe first, or set FLOE=...)"
command -v node > /dev/null || die "node (>= 20) not found"
if [[ " ${PEERS:-filesystem duckdb} " == *" duckdb "* && ! -d node_modules/@duckdb/node-api ]]; then
  die "node_modules missing: run 'npm ci' (scripts/install-deps.sh), or PEERS=filesystem"
fi
mkdir -p "$OUT"
node "$here/kafka_bench.mjs"
