#!/usr/bin/env bash
# Scale-out benchmark (issue 23, part 4): N `floe run` instances of one Kafka -> Iceberg job
# (SET 'floe.scale-out' = 'kafka-group') on this machine: the table's commits per second and the
# conflicts retried per commit with 1, 4 and 8 instances; records/s with 1, 2 and 4 instances;
# the time from an instance's SIGKILL (or cancel) to the survivor committing its partitions.
#
#   bench/scale_out.sh [--instances 1,4,8] [--throughput-instances 1,2,4] [--partitions 32]
#                      [--rate 4000] [--window 20] [--records 1500000] [--interval '1 s']
#                      [--session-timeout-ms 6000] [--parts commits,throughput,rebalance]
#
# Options are bench/scale_out.mjs's (it documents how each figure is measured). Takes about
# five minutes. Environment: FLOE (default build/src/floe/cli/floe), OUT (scratch, default
# bench/out/scale-out), RESULT (default bench/results/scale-out-<UTC date>.json; RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench scale-out scale_out.mjs bench/out/scale-out "$@"
