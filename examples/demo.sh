#!/usr/bin/env bash
# One command for the Flink lesson's course tile on floe: floe's Kafka dev cluster (librdkafka's
# mock cluster, its own process), generated learning.progress events, examples/course_tile.sql
# writing course.activity.tile exactly once, then the committed tiles (read_committed).
#
#   bash examples/demo.sh [EVENTS]      (FLOE: the floe binary, default build/src/floe/cli/floe)
#
# The job is a streaming job: it runs until the tiles of the windows the watermark passed are
# committed, then stops with a savepoint (windows still open stay in the savepoint's state).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
floe="${FLOE:-$root/build/src/floe/cli/floe}"
events="${1:-20000}"
dir="$(mktemp -d /tmp/floe-demo.XXXXXX)"
export FLOE_HOME="$dir/home"
"$floe" kafka dev --brokers 3 --topic learning.progress:3 --topic course.activity.tile:1 \
  --bootstrap-file "$dir/bootstrap" > "$dir/dev.log" 2>&1 &
dev=$!
trap 'kill $dev 2>/dev/null; wait $dev 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$dir/bootstrap" ] && break; sleep 0.1; done
kafka="$(cat "$dir/bootstrap")"
echo "demo: dev cluster at $kafka; work dir $dir"

node "$root/examples/generate_progress.mjs" --events "$events" > "$dir/events.jsonl"
"$floe" kafka produce --bootstrap "$kafka" --topic learning.progress "$dir/events.jsonl" > /dev/null
echo "demo: produced $events learning.progress events"

"$floe" run "$root/examples/course_tile.sql" --var KAFKA="$kafka" 2> "$dir/run.log" &
run=$!
# Wait for committed tiles, then a little longer so more checkpoints commit.
for _ in $(seq 200); do
  if ! kill -0 $run 2>/dev/null; then echo "demo: the job ended early:"; tail -5 "$dir/run.log"; exit 1; fi
  n=$("$floe" kafka consume --bootstrap "$kafka" --topic course.activity.tile --from-beginning \
        --isolation read_committed --timeout-ms 500 2>/dev/null | wc -l)
  [ "$n" -gt 0 ] && break
  sleep 0.2
done
sleep 3
job="$("$floe" list --json | node -e 'const l=require("fs").readFileSync(0,"utf8").split("\n").filter(Boolean); process.stdout.write(JSON.parse(l[0]).job_id)')"
"$floe" stop "$job" --savepoint "$dir/savepoints" > /dev/null
wait $run
"$floe" kafka consume --bootstrap "$kafka" --topic course.activity.tile --from-beginning \
  --isolation read_committed --timeout-ms 1000 > "$dir/tiles.jsonl" 2>/dev/null
echo "demo: $(wc -l < "$dir/tiles.jsonl") committed tiles in course.activity.tile, e.g.:"
head -5 "$dir/tiles.jsonl"
