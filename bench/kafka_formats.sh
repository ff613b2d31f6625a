#!/usr/bin/env bash
# Kafka formats bench (issue 26): the same roster rows as JSON, avro-confluent and
# protobuf-confluent, read by a bounded Kafka -> Iceberg job in turn; floe's rows and MiB per CPU
# second, Avro and Protobuf against JSON.
#
#   bash bench/kafka_formats.sh
#
# Environment: N (500000), SEED (42), REPS (3 rounds, the formats' order rotating), PARTITIONS (64),
# FLOE, OUT (bench/out/kafka-formats), INPUT_DIR (bench/out: the generated input, shared with
# the other benches), RESULT (default bench/results/kafka-formats-<UTC date>.json; RESULT= writes
# none). How it is measured: the head of bench/kafka_formats.mjs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
source "$here/common.sh"
run_node_bench kafka-formats kafka_formats.mjs bench/out/kafka-formats "$@"
