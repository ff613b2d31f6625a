#!/usr/bin/env bash
# Soak (issue 9): N random worker SIGKILLs over a long roster -> Iceberg job (append and upsert,
# concurrently by default), then `floe table verify`: kills, restarts, duplicates, missing runs,
# and the upsert table's diff against `floe roster expected`. Not part of `make test` / ctest.
#
#   bench/soak.sh [--kills 100] [--events 600000] [--rps R] [--interval '1 s'] [--seed 42]
#                 [--mode append|upsert|both] [--min-gap-ms 1000] [--max-gap-ms 5000]
#                 [--early-pct 10] [--delay '200 ms'] [--timeout-s 1800]
#
# Options are bench/soak.mjs's (it documents them). Environment: FLOE (default
# build/src/floe/cli/floe), FLOE_SOURCE (what a copied binary was built from), OUT (scratch,
# default bench/out/soak), RESULT (default bench/results/soak-<UTC date>.json; RESULT= writes
# none). Exit status 0 only when every job finished after all kills and verified clean.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench soak soak.mjs bench/out/soak "$@"
