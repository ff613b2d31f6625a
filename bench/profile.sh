#!/usr/bin/env bash
# Where the CPU time of each speed path goes (issue 25): bench/profile.mjs documents the paths,
# the stages and how samples are put in them. Needs Debian's linux-perf (scripts/install-deps.sh
# test) and permission to profile (root, or kernel.perf_event_paranoid <= 1).
#
#   bench/profile.sh [--paths append,tumble,session,kafka] [--rows 1000000] [--events 5000000] ...
#
# Environment: FLOE (default build/src/floe/cli/floe), OUT (scratch, default bench/out/profile),
# RESULT (default bench/results/profile-<UTC date>.json; RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
run_node_bench profile profile.mjs bench/out/profile "$@"
