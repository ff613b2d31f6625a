#!/usr/bin/env bash
# Compaction's write amplification under streaming appends (issue 21): rows rewritten by
# compaction per row written, over 2,000 one-second checkpoints (small appends committed through
# the iceberg module, compacted as the Iceberg sink's maintenance does), for the default options
# and a few variations. Goal: at most 3 on average, and no row rewritten more than
# ceil(log_f(checkpoints)) times (f = min-input-files).
#
#   bench/compaction_amplification.sh [--commits 2000] [--rows 30] [--cases every-10,every-1,bucket-4,f-5]
#
# Takes about ten minutes on 2 cores. Environment: BENCH_BIN (default
# build/src/floe/iceberg/compaction_amplification_bench), OUT (scratch, default
# bench/out/compaction-amplification), RESULT (default
# bench/results/compaction-amplification-<UTC date>.json; RESULT= writes none).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
export BENCH_BIN="${BENCH_BIN:-build/src/floe/iceberg/compaction_amplification_bench}"
[[ -x "$BENCH_BIN" ]] || { echo "compaction-amplification: $BENCH_BIN not found (build first)" >&2; exit 2; }
FLOE="$BENCH_BIN" run_node_bench compaction-amplification compaction_amplification.mjs bench/out/compaction-amplification "$@"
