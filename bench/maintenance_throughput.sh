#!/usr/bin/env bash
# Maintenance throughput (issue 10, part 5): the table-health roster job unthrottled, a fixed number
# of events, into an append and an upsert table, with the sink's in-job maintenance off and on;
# records/s of each and the ratio on / off (the cost of maintenance).
#
#   bench/maintenance_throughput.sh [--events 20000000] [--interval '1 s'] [--kinds append,upsert]
#                                   [--reps 3] [--target-file-size BYTES] ...
#
# Options are bench/maintenance_throughput.mjs's (it documents how each figure is measured).
# Environment: FLOE (default build/src/floe/cli/floe), FLOE_SOURCE (what a copied binary was built
# from), OUT (scratch, default bench/out/maintenance-throughput), RESULT (default
# bench/results/maintenance-throughput-<UTC date>.json; RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench maintenance-throughput maintenance_throughput.mjs bench/out/maintenance-throughput "$@"
