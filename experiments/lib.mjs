// What every experiment shares: its arguments (--quick, --out, --result), the floe binary, the
// harness of the multi-process tests (dev cluster, `floe run`, kills), the counts read back by
// icebird (a reader floe did not write), and the results file (bench/provenance.mjs: machine,
// load, commit, command). experiments/README.md says how they are run and read.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { sampleLoad, writeResults } from '../bench/provenance.mjs'

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

// Starts experiment `name`: parses its arguments, points the harness at the floe binary and
// returns what the experiment needs. `sizes` is { quick: {...}, full: {...} }: the knobs of
// each size (the quick one runs in CI).
export async function experiment(name, usage, sizes) {
  const { values: opts } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      out: { type: 'string', default: path.join(REPO, 'experiments', 'out', name) },
      result: { type: 'string' },
      floe: { type: 'string', default: process.env.FLOE || path.join(REPO, 'build/src/floe/cli/floe') },
      help: { type: 'boolean', default: false },
    },
  })
  if (opts.help) {
    console.log(`usage: node experiments/${name}/run.mjs [--quick] [--out DIR] [--result FILE.json] [--floe PATH]\n${usage}`)
    process.exit(0)
  }
  const floe = path.resolve(opts.floe)
  if (!fs.existsSync(floe)) die(name, `${floe} not found (build floe first: make build, or --floe PATH)`)
  process.env.FLOE_BIN = floe
  const size = opts.quick ? 'quick' : 'full'
  const date = new Date().toISOString().slice(0, 10)
  const result = opts.result ?? path.join(REPO, 'experiments', 'results',
    `${name}-${date}${opts.quick ? '-quick' : ''}.json`)
  fs.rmSync(opts.out, { recursive: true, force: true })
  fs.mkdirSync(opts.out, { recursive: true })
  const harness = await import('../tests/integration/harness.mjs')
  const { icebirdRows } = await import('../tests/integration/icebird_read.mjs')
  const start = await sampleLoad()
  const t0 = Date.now()
  const log = (line) => console.log(`${name}: ${line}`)
  return {
    name, size, knobs: sizes[size], out: opts.out, floe, harness, log,
    // Every row of demo.<table> in warehouse `wh`, as icebird reads it.
    rows: (wh, table) => icebirdRows({ location: path.join(wh, 'demo', table) }),
    // Writes the results file (unless --result ''), prints the figures, exits 1 on a problem.
    async finish(figures, problems) {
      const command = `node experiments/${name}/run.mjs${opts.quick ? ' --quick' : ''}`
      process.env.BENCH_COMMAND = command
      const all = { experiment: name, size, knobs: sizes[size], ...figures }
      await writeResults({ result, bench: name, floe, start, t0, figures: all, problems })
      if (result) log(`wrote ${path.relative(process.cwd(), result)}`)
      for (const p of problems) console.error(`${name}: PROBLEM: ${p}`)
      process.exit(problems.length === 0 ? 0 : 1)
    },
  }
}

// A floe job writing the roster connector's first `n` events (the study's workload, seed 42) to
// the Kafka topic `topic`, `rowsPerSecond` a second (0: as fast as it goes): its sandbox, with
// the job file written (run it with CHK and KAFKA).
export function rosterFeeder(x, name, topic, n, rowsPerSecond = 0) {
  const { sandbox, ROSTER_COLUMNS } = x.harness
  const f = sandbox(x.out, name)
  fs.writeFileSync(f.job, `SET 'execution.checkpointing.interval' = '1 s';
SET 'execution.checkpointing.dir' = '\${CHK}';
CREATE TABLE roster (${ROSTER_COLUMNS}) WITH ('connector' = 'roster', 'seed' = '42', 'events' = '${n}'${
  rowsPerSecond > 0 ? `, 'rows-per-second' = '${Math.round(rowsPerSecond)}'` : ''});
CREATE TABLE feed (${ROSTER_COLUMNS}) WITH ('connector' = 'kafka', 'topic' = '${topic}', 'format' = 'json',
  'properties.bootstrap.servers' = '\${KAFKA}');
INSERT INTO feed SELECT * FROM roster;
`)
  return f
}

// The roster connector's first `n` events as JSON lines in generator order: written by
// rosterFeeder to the one-partition topic `raw` of the dev cluster at `kafka`, and read back.
export function rosterLines(x, kafka, n, raw = 'roster.raw') {
  const f = rosterFeeder(x, 'feed', raw, n)
  const r = x.harness.floe(['run', f.job, '--var', `CHK=${f.chk}`, '--var', `KAFKA=${kafka}`], { FLOE_HOME: f.home })
  if (r.code !== 0) throw new Error(`the feed job failed: ${r.err}`)
  const lines = x.harness.consumeTopic(kafka, raw).map((m) => m.value)
  if (lines.length !== n) throw new Error(`topic ${raw} holds ${lines.length} records, not ${n}`)
  return lines
}

// The offsets consumer group `group` committed for `topic`, summed over its partitions.
export function committedOffsets(x, kafka, group, topic) {
  const r = x.harness.floe(['kafka', 'offsets', '--bootstrap', kafka, '--group', group, '--topic', topic])
  if (r.code !== 0) throw new Error(r.err)
  return Object.values(JSON.parse(r.out)).reduce((a, v) => a + Math.max(0, Number(v)), 0)
}

export function die(name, message) {
  console.error(`${name}: ${message}`)
  process.exit(2)
}

// Sorted integers as runs: [1,2,3,7] -> "1..3, 7".
export function runsOf(xs) {
  const out = []
  for (let i = 0; i < xs.length;) {
    let j = i
    while (j + 1 < xs.length && xs[j + 1] === xs[j] + 1) j++
    out.push(i === j ? `${xs[i]}` : `${xs[i]}..${xs[j]}`)
    i = j + 1
  }
  return out.join(', ')
}

// What a table's rows say about a feed of seq 1..n: rows, duplicate rows (rows beyond the first
// of each seq: extra rows, not repeated values), the missing seqs as runs, and the rows that
// share a key value with an earlier row (`key`, e.g. npi).
export function seqCounts(rows, n, key) {
  const seen = new Map()
  const keys = new Set()
  for (const r of rows) {
    const s = Number(r.seq)
    seen.set(s, (seen.get(s) ?? 0) + 1)
    keys.add(String(r[key]))
  }
  let duplicates = 0
  for (const c of seen.values()) duplicates += c - 1
  const missing = []
  for (let s = 1; s <= n; s++) if (!seen.has(s)) missing.push(s)
  return { rows: rows.length, duplicate_rows: duplicates, missing_runs: runsOf(missing),
           missing_rows: missing.length, [`rows_sharing_${key}`]: rows.length - keys.size }
}

export const tmpRoot = (prefix) => fs.mkdtempSync(path.join(os.tmpdir(), prefix))
