#!/usr/bin/env bash
# Append benchmark: floe vs DuckDB on the same roster file, in the same run.
#
#   bench/append_bench.sh [N]        (default N=2000000)
#
# REPS (default 3) paired runs: floe, then DuckDB, on the same file; the summary has the medians
# of each engine's rows/s and of the per-run ratios. Every floe table is verified (each seq 1..N
# exactly once) and DuckDB must report N rows, else the bench fails.
# Environment: FLOE (default build/src/floe/cli/floe), FLOE_SOURCE (optional: what the binary was
# built from, for the results file), OUT (default bench/out), SEED (default 42), REPS (3),
# RESULT (default bench/results/append-<UTC date>.json; RESULT= to skip writing it).
# Prints one JSON line per engine and run, and a summary line:
#   {"engine":"floe","run":1,"rows":N,"seconds":S,"rows_per_s":R,"cpu_s":C,"bytes":B}
#   {"engine":"duckdb","run":1,...}
#   {"bench":"append","rows":N,"floe_rows_per_s":R1,"duckdb_rows_per_s":R2,"ratio":...}
# and writes them with the command, commit, binary, machine and load to RESULT
# (bench/README.md, "Results files").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
source "$here/common.sh"
BENCH_KNOBS="SEED REPS"
export BENCH_COMMAND="$(bench_command bench/append_bench.sh "$@")"

N="${1:-${N:-2000000}}"
FLOE="${FLOE:-build/src/floe/cli/floe}"
OUT="${OUT:-bench/out}"
SEED="${SEED:-42}"
REPS="${REPS:-3}"
RESULT="${RESULT-bench/results/append-$(date -u +%Y-%m-%d).json}"
SCHEMA="seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL, event_time TIMESTAMP NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING, city STRING, zip STRING, phone STRING, active BOOLEAN"

die() { echo "append_bench: $*" >&2; exit 1; }
[[ -x "$FLOE" ]] || die "$FLOE not found or not executable (build floe first, or set FLOE=...)"
[[ -d node_modules/@duckdb/node-api ]] || die "node_modules missing: run 'npm ci' (scripts/install-deps.sh)"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer"

mkdir -p "$OUT"
input="$OUT/roster-$N-$SEED.jsonl"
if [[ ! -s "$input" ]]; then
  node bench/gen_roster.mjs "$N" "$input.tmp" "$SEED"
  mv "$input.tmp" "$input"
fi
# warm the page cache for both engines alike
cat "$input" > /dev/null
node bench/provenance.mjs load > "$OUT/load-start.json"

# CPU seconds (user+sys) of floe's process, less sensitive to a busy machine than wall clock.
timer=()
[[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f '%U %S' -o "$OUT/floe_append.cpu")

lines="$OUT/append-runs.jsonl"
: > "$lines"
wh="$OUT/warehouse"
for run in $(seq 1 "$REPS"); do
  rm -rf "$wh" "$OUT/floe_append.cpu"
  "$FLOE" table create bench.roster --warehouse "$wh" --schema "$SCHEMA" > /dev/null

  t0=$(date +%s%N)
  "${timer[@]}" "$FLOE" table append bench.roster "$input" --warehouse "$wh" > "$OUT/floe_append.log" 2>&1 \
    || { cat "$OUT/floe_append.log" >&2; die "floe table append failed"; }
  t1=$(date +%s%N)
  # outside the clock: a speed for a table that lost or doubled rows means nothing
  "$FLOE" table verify bench.roster --warehouse "$wh" --unique seq --expect-range "seq:1..$N" \
    > "$OUT/floe_verify.log" 2>&1 && grep -q 'result: OK' "$OUT/floe_verify.log" \
    || { cat "$OUT/floe_verify.log" >&2; die "run $run: floe's table does not hold each seq 1..$N exactly once"; }
  floe_bytes=$(find "$wh" -name '*.parquet' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
  cpu=null
  [[ -s "$OUT/floe_append.cpu" ]] && cpu=$(tail -n 1 "$OUT/floe_append.cpu" | awk '{printf "%.2f", $1 + $2}')
  node -e '
    const [run, n, ns, cpu, bytes] = process.argv.slice(1)
    const s = Number(ns) / 1e9
    console.log(JSON.stringify({ engine: "floe", run: Number(run), rows: Number(n), seconds: Number(s.toFixed(3)),
      rows_per_s: Math.round(Number(n) / s), cpu_s: JSON.parse(cpu), bytes: Number(bytes) }))
  ' "$run" "$N" "$((t1 - t0))" "$cpu" "$floe_bytes" | tee -a "$lines"

  duck=$(node bench/duckdb_peer.mjs "$input" "$OUT/duckdb.parquet") || die "duckdb_peer.mjs failed"
  node -e '
    const { engine, ...d } = JSON.parse(process.argv[1])
    console.log(JSON.stringify({ engine, run: Number(process.argv[2]), ...d }))
  ' "$duck" "$run" | tee -a "$lines"
done

node bench/append_summary.mjs "$lines" "$N" "$OUT/load-start.json" "$FLOE" "$input" "$RESULT"
