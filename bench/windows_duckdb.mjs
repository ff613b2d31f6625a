#!/usr/bin/env node
// The window benchmark's peer and oracle (bench/windows.mjs): DuckDB (via @duckdb/node-api, one
// thread) computes the same window aggregate over the same events in batch, and compares floe's
// output with its own.
//
//   node bench/windows_duckdb.mjs run tumble|session IN.jsonl OUT.parquet MINUTES
//       the aggregate, into one zstd Parquet file. Prints one JSON line:
//       {"engine":"duckdb","kind":K,"seconds":S,"cpu_s":C,"rows":R,"events":E}
//       `seconds` is wall clock from just before the COPY statement to just after it returns
//       (the instance is created and configured before the clock starts); `cpu_s` is this
//       process's user+sys CPU over the same span. `rows` and `events` (the sum of the counts)
//       are read back from the file after the clock stopped.
//   node bench/windows_duckdb.mjs compare 'FLOE_GLOB' DUCK.parquet
//       floe's data files (a glob) against DuckDB's result, row for row (EXCEPT ALL both ways,
//       timestamps as epoch ms). Prints {"floe_rows","floe_events","duckdb_rows","duckdb_events",
//       "only_floe","only_duckdb","examples":[...]}.
//   node bench/windows_duckdb.mjs summary 'GLOB'
//       {"rows","events","keys"} of Parquet files with columns user_id, n.
//
// The aggregates, as floe computes them (docs/windows.md):
//   tumble   TUMBLE(MINUTES) COUNT(*) per user_id: windows [start, start + size) aligned to the
//            epoch (time_bucket with origin 1970-01-01).
//   session  SESSION(PARTITION BY user_id, gap MINUTES) COUNT(*): per user_id, events sorted by
//            time; a row more than the gap after the previous one starts a new session (a row
//            exactly a gap later touches the session and joins it, Flink's TimeWindow.intersects);
//            a session is [first ts, last ts + gap). No event is late in the bench's input, so
//            this is what floe's merging windows produce.
import fs from 'node:fs'
import { DuckDBInstance } from '@duckdb/node-api'

const q = (s) => `'${s.replaceAll("'", "''")}'`
const usage = () => {
  console.error("usage: windows_duckdb.mjs run tumble|session IN.jsonl OUT.parquet MINUTES | compare 'FLOE_GLOB' DUCK.parquet | summary 'GLOB'")
  process.exit(2)
}

const [mode, ...args] = process.argv.slice(2)
const instance = await DuckDBInstance.create(':memory:')
const conn = await instance.connect()
// DUCKDB_THREADS: the window bench's --parallelism (1 by default, as floe's one core).
await conn.run(`SET threads=${Number(process.env.DUCKDB_THREADS || 1)}`)
const one = async (sql) => (await conn.runAndReadAll(sql)).getRows()[0]

if (mode === 'run') {
  const [kind, input, output, minutesText] = args
  const minutes = Number(minutesText)
  if (!['tumble', 'session'].includes(kind) || !input || !output || !(minutes > 0)) usage()
  if (!fs.existsSync(input)) { console.error(`windows_duckdb: ${input} does not exist`); process.exit(2) }
  const events = `read_json(${q(input)}, format='newline_delimited', columns={user_id: 'VARCHAR', ts: 'TIMESTAMP'})`
  const size = `INTERVAL ${minutes} MINUTE`
  const query = kind === 'tumble'
    ? `SELECT user_id, ws AS window_start, ws + ${size} AS window_end, count(*) AS n
         FROM (SELECT user_id, time_bucket(${size}, ts, TIMESTAMP '1970-01-01 00:00:00') AS ws FROM ${events})
         GROUP BY user_id, ws`
    : `WITH e AS (SELECT user_id, ts,
                         CASE WHEN ts <= lag(ts) OVER (PARTITION BY user_id ORDER BY ts) + ${size} THEN 0 ELSE 1 END AS brk
                    FROM ${events}),
            s AS (SELECT user_id, ts,
                         sum(brk) OVER (PARTITION BY user_id ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS sid
                    FROM e)
       SELECT user_id, min(ts) AS window_start, max(ts) + ${size} AS window_end, count(*) AS n
         FROM s GROUP BY user_id, sid`
  fs.rmSync(output, { force: true })
  const sql = `COPY (${query}) TO ${q(output)} (FORMAT parquet, COMPRESSION zstd)`
  const cpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  await conn.run(sql)
  const t1 = process.hrtime.bigint()
  const cpu = process.cpuUsage(cpu0)
  const [rows, sum] = await one(`SELECT count(*), coalesce(sum(n), 0) FROM read_parquet(${q(output)})`)
  console.log(JSON.stringify({ engine: 'duckdb', kind, seconds: Number((Number(t1 - t0) / 1e9).toFixed(3)),
    cpu_s: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)), rows: Number(rows), events: Number(sum) }))
} else if (mode === 'compare') {
  const [floeGlob, duck] = args
  if (!floeGlob || !duck) usage()
  const norm = (src) => `SELECT user_id, epoch_ms(window_start) AS s, epoch_ms(window_end) AS e, n FROM read_parquet(${q(src)})`
  await conn.run(`CREATE TABLE f AS ${norm(floeGlob)}`)
  await conn.run(`CREATE TABLE d AS ${norm(duck)}`)
  const [fr, fe] = await one('SELECT count(*), coalesce(sum(n), 0) FROM f')
  const [dr, de] = await one('SELECT count(*), coalesce(sum(n), 0) FROM d')
  const [onlyF] = await one('SELECT count(*) FROM (SELECT * FROM f EXCEPT ALL SELECT * FROM d)')
  const [onlyD] = await one('SELECT count(*) FROM (SELECT * FROM d EXCEPT ALL SELECT * FROM f)')
  const examples = []
  if (Number(onlyF) || Number(onlyD)) {
    for (const [side, sql] of [['floe', 'SELECT * FROM f EXCEPT ALL SELECT * FROM d'], ['duckdb', 'SELECT * FROM d EXCEPT ALL SELECT * FROM f']]) {
      const rows = (await conn.runAndReadAll(`SELECT * FROM (${sql}) ORDER BY user_id, s LIMIT 5`)).getRows()
      for (const r of rows) examples.push({ only_in: side, user_id: r[0], window_start_ms: Number(r[1]), window_end_ms: Number(r[2]), n: Number(r[3]) })
    }
  }
  console.log(JSON.stringify({ floe_rows: Number(fr), floe_events: Number(fe), duckdb_rows: Number(dr), duckdb_events: Number(de),
    only_floe: Number(onlyF), only_duckdb: Number(onlyD), examples }))
} else if (mode === 'summary') {
  const [glob] = args
  if (!glob) usage()
  const [rows, sum, keys] = await one(`SELECT count(*), coalesce(sum(n), 0), count(DISTINCT user_id) FROM read_parquet(${q(glob)})`)
  console.log(JSON.stringify({ rows: Number(rows), events: Number(sum), keys: Number(keys) }))
} else {
  usage()
}
conn.closeSync()
