#!/usr/bin/env bash
# State benchmark (issue 22, part 6): the session job's keyed state per state backend, as real
# processes (`floe run` + worker) on one core at low priority.
#
# Per backend and key count: the stream's pause at a checkpoint (the synchronous part) and the
# asynchronous part, the checkpoint's size, the bytes of a checkpoint with 1% of the keys changed
# against a full one (incremental checkpoints), the worker's peak RSS, events/s, and the restore
# time from the last checkpoint. A backend floe refuses is "not available in this build".
#
#   bench/state.sh [--backends hashmap,rocksdb] [--keys 1000000,10000000] [--parts load,idle,restore]
#                  [--interval '1 s'] [--idle 5] [--churn 5] [--churn-pct 1] [--cpu N|none] [--nice 10] ...
#
# Options are bench/state.mjs's (it documents how each figure is measured). Needs taskset.
# Environment: FLOE (default build/src/floe/cli/floe), FLOE_SOURCE (what a copied binary was built
# from), OUT (scratch, default bench/out/state; the generated inputs are cached in OUT/input),
# RESULT (default bench/results/state-<UTC date>.json; RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench state state.mjs bench/out/state "$@"
