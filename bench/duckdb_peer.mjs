#!/usr/bin/env node
// The append benchmark's peer: DuckDB (via @duckdb/node-api, single thread) converts the same
// roster JSON-lines file to one zstd Parquet file, with the column types of floe's table.
//
//   node bench/duckdb_peer.mjs IN.jsonl OUT.parquet
//
// Prints one JSON line: {"engine":"duckdb","rows":N,"seconds":S,"rows_per_s":R,"cpu_s":C,"bytes":B}
// `seconds` is wall clock from just before the COPY statement to just after it returns (the
// instance is created and configured before the clock starts); `cpu_s` is this process's
// user+sys CPU over the same span (DuckDB's thread and node's, which idles meanwhile).
import fs from 'node:fs'
import { DuckDBInstance } from '@duckdb/node-api'

const [input, output] = process.argv.slice(2)
if (!input || !output) {
  console.error('usage: duckdb_peer.mjs IN.jsonl OUT.parquet')
  process.exit(2)
}
if (!fs.existsSync(input)) {
  console.error(`duckdb_peer: ${input} does not exist`)
  process.exit(2)
}
const q = s => `'${s.replaceAll("'", "''")}'`
const columns = {
  seq: 'BIGINT', npi: 'VARCHAR', source: 'VARCHAR', revision: 'INTEGER', event_time: 'TIMESTAMP',
  first_name: 'VARCHAR', last_name: 'VARCHAR', specialty: 'VARCHAR', state: 'VARCHAR', city: 'VARCHAR',
  zip: 'VARCHAR', phone: 'VARCHAR', active: 'BOOLEAN',
}
const columnsSql = `{${Object.entries(columns).map(([k, v]) => `${k}: '${v}'`).join(', ')}}`

const instance = await DuckDBInstance.create(':memory:')
const conn = await instance.connect()
await conn.run('SET threads=1')
await conn.run("SET preserve_insertion_order=true")
fs.rmSync(output, { force: true })

const sql = `COPY (FROM read_json(${q(input)}, format='newline_delimited', columns=${columnsSql})) TO ${q(output)} (FORMAT parquet, COMPRESSION zstd)`
const cpu0 = process.cpuUsage()
const t0 = process.hrtime.bigint()
const reader = await conn.runAndReadAll(sql)
const t1 = process.hrtime.bigint()
const cpu = process.cpuUsage(cpu0)
const seconds = Number(t1 - t0) / 1e9
// COPY returns the number of rows written as its single value
const rows = Number(reader.getRows()[0][0])
const bytes = fs.statSync(output).size
console.log(JSON.stringify({ engine: 'duckdb', rows, seconds: Number(seconds.toFixed(3)), rows_per_s: Math.round(rows / seconds),
  cpu_s: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)), bytes }))
conn.closeSync()
