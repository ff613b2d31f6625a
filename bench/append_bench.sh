#!/usr/bin/env bash
# Append benchmark: floe vs DuckDB on the same roster file, in the same run.
#
#   bench/append_bench.sh [N]        (default N=2000000)
#
# Environment: FLOE (default build/src/floe/cli/floe), OUT (default bench/out), SEED (default 42),
# RESULT (default bench/results/append-<UTC date>.json; RESULT= to skip writing it).
# Prints one JSON line per engine and a summary line:
#   {"engine":"floe","rows":N,"seconds":S,"rows_per_s":R,"bytes":B}
#   {"engine":"duckdb",...}
#   {"bench":"append","rows":N,"floe_rows_per_s":R1,"duckdb_rows_per_s":R2,"ratio":R1/R2}
# and writes them, with the date, the machine and its load, to RESULT.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"

N="${1:-${N:-2000000}}"
FLOE="${FLOE:-build/src/floe/cli/floe}"
OUT="${OUT:-bench/out}"
SEED="${SEED:-42}"
RESULT="${RESULT-bench/results/append-$(date -u +%Y-%m-%d).json}"
SCHEMA="seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL, event_time TIMESTAMP NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING, city STRING, zip STRING, phone STRING, active BOOLEAN"

die() { echo "append_bench: $*" >&2; exit 1; }
[[ -x "$FLOE" ]] || die "$FLOE not found or not executable (build floe first, or set FLOE=...)"
[[ -d node_modules/@duckdb/node-api ]] || die "node_modules missing: run 'npm ci' (scripts/install-deps.sh)"

mkdir -p "$OUT"
input="$OUT/roster-$N-$SEED.jsonl"
if [[ ! -s "$input" ]]; then
  node bench/gen_roster.mjs "$N" "$input.tmp" "$SEED"
  mv "$input.tmp" "$input"
fi
load0="$(cut -d' ' -f1-3 /proc/loadavg)"
# warm the page cache for both engines alike
cat "$input" > /dev/null

wh="$OUT/warehouse"
rm -rf "$wh"
"$FLOE" table create bench.roster --warehouse "$wh" --schema "$SCHEMA" > /dev/null

t0=$(date +%s%N)
"$FLOE" table append bench.roster "$input" --warehouse "$wh" > "$OUT/floe_append.log" 2>&1 \
  || { cat "$OUT/floe_append.log" >&2; die "floe table append failed"; }
t1=$(date +%s%N)
floe_bytes=$(find "$wh" -name '*.parquet' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
floe_line=$(node -e '
  const [n, ns, bytes] = process.argv.slice(1).map(Number)
  const s = ns / 1e9
  console.log(JSON.stringify({ engine: "floe", rows: n, seconds: Number(s.toFixed(3)), rows_per_s: Math.round(n / s), bytes }))
' "$N" "$((t1 - t0))" "$floe_bytes")
echo "$floe_line"

duck_line=$(node bench/duckdb_peer.mjs "$input" "$OUT/duckdb.parquet")
echo "$duck_line"

node -e '
  const fs = require("fs"), os = require("os"), path = require("path")
  const [fl, dl, result, floe, input, load0] = process.argv.slice(1)
  const f = JSON.parse(fl), d = JSON.parse(dl)
  if (d.rows !== f.rows) console.error(`append_bench: WARNING duckdb wrote ${d.rows} rows, floe was given ${f.rows}`)
  const summary = { bench: "append", rows: f.rows, floe_rows_per_s: f.rows_per_s, duckdb_rows_per_s: d.rows_per_s,
    ratio: Number((f.rows_per_s / d.rows_per_s).toFixed(3)), floe_bytes: f.bytes, duckdb_bytes: d.bytes }
  console.log(JSON.stringify(summary))
  if (result) {
    const cpus = os.cpus()
    fs.mkdirSync(path.dirname(result), { recursive: true })
    fs.writeFileSync(result, JSON.stringify({ ...summary, date: new Date().toISOString(), input, floe,
      machine: { cpus: `${cpus.length} x ${cpus[0] ? cpus[0].model : "?"}`, loadavg_start: load0.split(" ").map(Number),
                 loadavg_end: os.loadavg().map((x) => Number(x.toFixed(2))) },
      engines: [f, d] }, null, 2) + "\n")
    console.error(`append_bench: wrote ${result}`)
  }
' "$floe_line" "$duck_line" "$RESULT" "$FLOE" "$input" "$load0"
