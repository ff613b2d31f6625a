#!/usr/bin/env bash
# Writes files and tables with floe, then reads every one of them with readers floe did not
# write (hyparquet, parquet-wasm, avsc, icebird): tests/interop/*.test.mjs.
# usage: run_all.sh BUILD_DIR [KEEP_DIR]
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${2:-$(mktemp -d /tmp/floe-interop.XXXXXX)}
mkdir -p "$dir"
export FLOE_INTEROP_DIR=$dir
floe=$build/src/floe/cli/floe
wh=$dir/warehouse
mkdir -p "$dir/expected"

echo "== C++ tests writing interop files into $dir"
for t in src/floe/format/parquet/parquet_test src/floe/format/avro/avro_test \
         src/floe/iceberg/iceberg_manifest_test src/floe/iceberg/iceberg_data_test; do
  "$build/$t" --gtest_brief=1 > "$dir/$(basename "$t").log" 2>&1 || {
    cat "$dir/$(basename "$t").log"; echo "FAILED: $t"; exit 1; }
done

echo "== floe CLI tables"
scan() { "$floe" table scan "$1" --warehouse "$wh" > "$dir/expected/$1.jsonl"; }
"$floe" demo --warehouse "$wh" --events 3000 > "$dir/demo.log"
scan demo.roster_append
scan demo.roster_upsert
types_table() {
"$floe" table create "$1" --warehouse "$wh" \
  --schema "id BIGINT NOT NULL, i INT, f FLOAT, d DOUBLE, s STRING, b BYTES, dt DATE, tm TIME(6), ts TIMESTAMP(6), tz TIMESTAMP_LTZ(6), dec DECIMAL(9, 2), big DECIMAL(30, 5), ok BOOLEAN" \
  --primary-key id --property write.parquet.compression-codec=snappy > /dev/null
node -e '
const rows = [];
for (let i = 0; i < 500; i++) {
  const n = i % 7 === 0;
  rows.push(JSON.stringify({ id: i, i: n ? null : i * 3 - 700, f: n ? null : i / 8, d: n ? null : i * 1.25e10,
    s: n ? null : (i % 5 === 0 ? "" : "s" + i + "é"), b: n ? null : Buffer.from("b" + i).toString("base64"),
    dt: n ? null : `19${10 + (i % 80)}-0${1 + (i % 9)}-1${i % 10}`,
    tm: n ? null : `${String(i % 24).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}:0${i % 10}${i % 3 ? "" : ".00012" + (i % 10)}`,
    ts: n ? null : `2023-05-0${1 + (i % 9)}T1${i % 10}:2${i % 10}:00.12345${i % 10}`,
    tz: n ? null : `2023-05-0${1 + (i % 9)}T0${i % 10}:00:00.5Z`,
    dec: n ? null : ((i - 250) * 1.25).toFixed(2), big: n ? null : `${i}12345678901234567890.12345`,
    ok: n ? null : i % 2 === 0 }));
}
require("fs").writeFileSync(process.argv[1], rows.join("\n") + "\n");' "$dir/types.jsonl"
"$floe" table append "$1" "$dir/types.jsonl" --warehouse "$wh" > /dev/null
head -c 0 /dev/null
node -e '
const rows = [];
for (let i = 480; i < 520; i++) rows.push(JSON.stringify({ id: i, s: "upserted" + i, ok: true }));
require("fs").writeFileSync(process.argv[1], rows.join("\n") + "\n");' "$dir/types-up.jsonl"
"$floe" table upsert "$1" "$dir/types-up.jsonl" --warehouse "$wh" > /dev/null
printf '{"id": 3}\n{"id": 485}\n' > "$dir/types-del.jsonl"
"$floe" table delete "$1" "$dir/types-del.jsonl" --warehouse "$wh" > /dev/null
}
types_table cli.types
scan cli.types
# The same table compacted: every file rewritten with its deletes applied (all types).
types_table cli.types_compacted
"$floe" table compact cli.types_compacted --rewrite-all --warehouse "$wh" > "$dir/compact.log"
scan cli.types_compacted

echo "== independent readers"
cd "$root"
node --test tests/interop/
