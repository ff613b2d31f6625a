#!/usr/bin/env bash
# Runs one bench in a smoke size (seconds), so that a change that breaks a bench fails CI
# instead of the next person who runs it. The figures mean nothing at this size; what counts is
# that the bench runs to the end, every table it verifies holds each row exactly once, and its
# results file is complete (node bench/report.mjs --validate).
#
#   FLOE=path/to/floe bench/smoke.sh append|kafka|kafka-formats|streaming|table-health|file-size|maintenance-throughput|windows|compaction-amplification|state|scale-out|profile DIR
#
# Scratch, generated input and the results file all go under DIR/<bench> (ctest gives the build
# tree): a smoke run never writes into bench/out or bench/results.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -eq 2 ]] || { echo "usage: FLOE=... bench/smoke.sh append|kafka|kafka-formats|streaming|table-health|file-size|maintenance-throughput|windows|compaction-amplification|state|scale-out|profile DIR" >&2; exit 2; }
which="$1"
dir="$(mkdir -p "$2" && cd "$2" && pwd)/$which"
: "${FLOE:?FLOE must name the floe binary}"
export FLOE
rm -rf "$dir"
mkdir -p "$dir"
result="$dir/result.json"
rows=20000

# Knobs the caller's environment might hold would change the sizes below; start clean.
unset N SEED REPS PEERS PARTITIONS BROKERS INTERVAL LAG_BYTES PRODUCER_PROPS TESTBED_CONSUMER_PROPS \
  CONSUMER_PROPS RATE INTERVALS MIN_FEED_S FEED_INTERVALS KILLS KILL_INTERVAL_S KILL_DELAY_MS \
  KILL_FEED_S KILL_OFFSETS_MS KILL_EVERY SINK_PARALLELISM PARTS

case "$which" in
  append)
    OUT="$dir" RESULT="$result" REPS=1 bash "$here/append_bench.sh" "$rows"
    ;;
  kafka)
    OUT="$dir/scratch" INPUT_DIR="$dir" RESULT="$result" REPS=1 PARTITIONS=4 \
      bash "$here/kafka_bench.sh" "$rows"
    ;;
  streaming)
    # throughput: N events once; visibility: 1 s checkpoints, 2 s of feed at 2000 rows/s;
    # kill: one SIGKILL after 2 checkpoints, 4 s of feed, restart after 200 ms
    OUT="$dir/scratch" RESULT="$result" N="$rows" REPS=1 INTERVALS=1 MIN_FEED_S=2 FEED_INTERVALS=1 \
      KILLS=1 KILL_EVERY=2 KILL_FEED_S=4 KILL_DELAY_MS=200 KILL_OFFSETS_MS=300 \
      bash "$here/streaming_bench.sh"
    ;;
  table-health)
    # 20 checkpoints every 200 ms (samples at 10 and 20), append + upsert, maintenance on, one scan each
    OUT="$dir/scratch" RESULT="$result" bash "$here/table_health.sh" --checkpoints 20 --interval '200 ms' --scan-reps 1
    ;;
  file-size)
    # two append jobs at 200 ms and 500 ms for 6 s, a 64 KiB target so that compaction runs
    OUT="$dir/scratch" RESULT="$result" bash "$here/file_size.sh" --intervals '200 ms,500 ms' --duration 6 \
      --target-file-size 65536
    ;;
  maintenance-throughput)
    # 200,000 events, 200 ms checkpoints, append + upsert, maintenance off and on once each
    OUT="$dir/scratch" RESULT="$result" bash "$here/maintenance_throughput.sh" --events 200000 --interval '200 ms' \
      --reps 1 --target-file-size 262144
    ;;
  windows)
    # throughput: 20,000 events, 100 and 2,000 keys, both windows, once; latency: 5 s of feed, 2 s
    # windows, 500 ms checkpoints; checkpoint: 2,000 keys in 1,000,000 events (several checkpoints
    # fall while the file is read), 20 ms checkpoints, 2 idle; every checkpoint retained, so that the
    # bench's 20 ms poll sees each one even on a loaded machine (with floe's retention of 1 a CI run
    # once read 2 of 5, none of them holding every key before the end of the input)
    OUT="$dir/scratch" RESULT="$result" bash "$here/windows.sh" --events "$rows" --keys 100,2000 --reps 1 --disorder 5 \
      --interval '1 s' --latency-seconds 5 --latency-window 2 --latency-delay 1 --latency-disorder-ms 500 \
      --latency-interval '500 ms' --checkpoint-keys 2000 --checkpoint-events 1000000 --checkpoint-interval '20 ms' \
      --checkpoint-idle 2 --checkpoint-retained 1000
    ;;
  compaction-amplification)
    # 40 commits of 30 rows, compacted every 10, unpartitioned and bucket-partitioned (about 3 s);
    # its driver is built beside floe
    BENCH_BIN="${BENCH_BIN:-$(dirname "$FLOE")/../iceberg/compaction_amplification_bench}" OUT="$dir/scratch" \
      RESULT="$result" bash "$here/compaction_amplification.sh" --commits 40 --cases every-10,bucket-4
    ;;
  state)
    # 2,000 keys on every backend (one floe refuses is recorded as not available), 100 ms
    # checkpoints, 2 idle and 2 churn intervals, restore; not niced, so a busy machine cannot starve it.
    # The load part reads 600,000 events: long enough for the 200 ms RSS sampling to see its worker.
    OUT="$dir/scratch" RESULT="$result" bash "$here/state.sh" --keys 2000 --load-factor 300 --interval '100 ms' \
      --idle 2 --churn 2 --nice none
    ;;
  scale-out)
    # 1 and 2 instances, 4 partitions, 500 records/s, a 3 s window, 20,000 records waiting, kill and cancel
    OUT="$dir/scratch" RESULT="$result" bash "$here/scale_out.sh" --instances 1,2 --throughput-instances 1,2 \
      --partitions 4 --rate 500 --window 3 --records "$rows"
    ;;
  kafka-formats)
    OUT="$dir/scratch" INPUT_DIR="$dir" RESULT="$result" N="$rows" REPS=1 PARTITIONS=4 \
      bash "$here/kafka_formats.sh"
    ;;
  profile)
    # every path once, small: 20,000 roster rows (append, kafka), 20,000 window events
    OUT="$dir/scratch" RESULT="$result" bash "$here/profile.sh" --rows "$rows" --events "$rows" --kafka-rows "$rows"
    ;;
  *)
    echo "smoke.sh: unknown bench '$which' (append, kafka, kafka-formats, streaming, table-health, file-size, maintenance-throughput, windows, compaction-amplification, state, scale-out or profile)" >&2
    exit 2
    ;;
esac
node "$here/report.mjs" --validate "$result" --bench "$which" --rows "$rows"
