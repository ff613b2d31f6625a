#!/usr/bin/env bash
# File size (issue 10, part 5, the study's file-size experiment): roster -> Iceberg append jobs at
# checkpoint intervals 1 s, 10 s and 60 s with the sink's maintenance on and one target file size;
# the average data file size after maintenance against the target (goal: within 2x).
#
#   bench/file_size.sh [--intervals '1 s,10 s,60 s'] [--duration 720] [--rps 2000] [--sequential]
#                      [--target-file-size BYTES] [--maintenance on|off] ...
#
# Options are bench/file_size.mjs's (it documents how each figure is measured). Takes about
# --duration seconds (the jobs run at the same time) plus up to one interval. Environment: FLOE
# (default build/src/floe/cli/floe), FLOE_SOURCE (what a copied binary was built from), OUT
# (scratch, default bench/out/file-size), RESULT (default bench/results/file-size-<UTC date>.json;
# RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench file-size file_size.mjs bench/out/file-size "$@"
