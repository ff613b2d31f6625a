#!/usr/bin/env node
// The append bench's summary and results file (called by bench/append_bench.sh).
//
//   node bench/append_summary.mjs RUNS.jsonl N LOAD_START.json FLOE INPUT RESULT
//
// RUNS.jsonl holds one line per engine and run. Medians: each engine's rows/s over the runs, and
// the ratio floe/DuckDB of each run (paired: both engines met the same load), then its median.
// Fails when a run is missing an engine or an engine did not write N rows.
import fs from 'node:fs'
import path from 'node:path'
import { record } from './provenance.mjs'

const [runsFile, nArg, loadFile, floe, input, result] = process.argv.slice(2)
const N = Number(nArg)
const fail = (msg) => { console.error(`append_bench: ${msg}`); process.exit(1) }
const round = (x, d) => Number(x.toFixed(d))
const median = (xs) => {
  const v = xs.filter((x) => x != null).sort((a, b) => a - b)
  return v.length ? (v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2) : null
}

const lines = fs.readFileSync(runsFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))
const runNos = [...new Set(lines.map((l) => l.run))].sort((a, b) => a - b)
const runs = runNos.map((run) => {
  const f = lines.find((l) => l.run === run && l.engine === 'floe')
  const d = lines.find((l) => l.run === run && l.engine === 'duckdb')
  if (!f || !d) fail(`run ${run} lacks an engine's line`)
  for (const e of [f, d]) {
    if (e.rows !== N) fail(`run ${run}: ${e.engine} wrote ${e.rows} rows, expected ${N}`)
    if (!(e.rows_per_s > 0) || !(e.bytes > 0)) fail(`run ${run}: ${e.engine} reported no speed or no bytes`)
  }
  return { run, floe: f, duckdb: d, ratio: round(f.rows_per_s / d.rows_per_s, 3),
    cpu_ratio: f.cpu_s && d.cpu_s ? round(d.cpu_s / f.cpu_s, 3) : null }
})
if (!runs.length) fail('no runs')

const summary = {
  bench: 'append', rows: N, runs: runs.length,
  floe_rows_per_s: Math.round(median(runs.map((r) => r.floe.rows_per_s))),
  duckdb_rows_per_s: Math.round(median(runs.map((r) => r.duckdb.rows_per_s))),
  ratio: round(median(runs.map((r) => r.ratio)), 3),
  floe_cpu_s: median(runs.map((r) => r.floe.cpu_s)),
  duckdb_cpu_s: median(runs.map((r) => r.duckdb.cpu_s)),
  // DuckDB's CPU over floe's for the same rows: how much more work the peer did, whatever the load
  duckdb_cpu_over_floe: median(runs.map((r) => r.cpu_ratio)),
  floe_bytes: runs[0].floe.bytes, duckdb_bytes: runs[0].duckdb.bytes,
}
console.log(JSON.stringify(summary))

if (result) {
  const start = JSON.parse(fs.readFileSync(loadFile, 'utf8'))
  const out = {
    ...(await record({ bench: 'append', floe, start })),
    ...summary,
    input: { file: path.basename(input), rows: N, bytes: fs.statSync(input).size },
    verified: `floe table verify --unique seq --expect-range seq:1..${N}: OK in every run`,
    per_run: runs.map((r) => ({ run: r.run, ratio: r.ratio, engines: [r.floe, r.duckdb] })),
  }
  fs.mkdirSync(path.dirname(result), { recursive: true })
  fs.writeFileSync(result, JSON.stringify(out, null, 2) + '\n')
  console.error(`append_bench: wrote ${result}`)
}
