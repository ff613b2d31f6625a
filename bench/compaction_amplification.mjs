// bench/compaction_amplification.sh's body: runs compaction_amplification_bench
// (bench/compaction_amplification.cc) once per case and writes the results file. Each case is a
// new table, COMMITS small appends (a sink's one-second checkpoints, ROWS rows each) and a
// compaction after every `every` of them (the Iceberg sink's default trigger is every 10
// commits), with min-input-files `f` (floe's default unless the case says otherwise).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { record, sampleLoad } from './provenance.mjs'

const { values: opts } = parseArgs({
  options: {
    commits: { type: 'string', default: '2000' },
    rows: { type: 'string', default: '30' },
    cases: { type: 'string', default: 'every-10,every-1,bucket-4,f-5' },
  },
})
const BIN = path.resolve(process.env.FLOE)
const OUT = path.resolve(process.env.OUT)
const RESULT = process.env.RESULT
const log = (m) => console.error(`compaction-amplification: ${m}`)
const DEFAULT_F = 8 // CompactOptions::min_input_files (src/floe/iceberg/rewrite.h)
const CASES = {
  'every-10': { every: 10, f: DEFAULT_F, partition: '', what: 'the sink\'s default trigger (every 10 commits), default options' },
  'every-1': { every: 1, f: DEFAULT_F, partition: '', what: 'a compaction after every commit, default options' },
  'bucket-4': { every: 10, f: DEFAULT_F, partition: 'bucket(4, id)', what: 'four bucket partitions (tiers per partition), every 10 commits' },
  'f-5': { every: 10, f: 5, partition: '', what: 'min-input-files 5 (Iceberg\'s default), every 10 commits' },
}

const commits = Number(opts.commits)
const rows = Number(opts.rows)
const names = opts.cases.split(',')
for (const n of names) if (!CASES[n]) throw new Error(`unknown case ${n} (known: ${Object.keys(CASES).join(', ')})`)
if (!(commits >= 1 && rows >= 1)) throw new Error('--commits and --rows must be positive')
fs.rmSync(OUT, { recursive: true, force: true })
fs.mkdirSync(OUT, { recursive: true })

const load0 = await sampleLoad()
const cases = {}
for (const name of names) {
  const c = CASES[name]
  log(`${name}: ${commits} commits of ${rows} rows, compaction every ${c.every}, min-input-files ${c.f}${c.partition ? `, ${c.partition}` : ''}`)
  const args = [path.join(OUT, name), String(commits), String(c.every), String(rows), String(c.f)]
  if (c.partition) args.push(c.partition)
  const r = JSON.parse(execFileSync(BIN, args, { encoding: 'utf8' }))
  if (r.rows_written !== commits * rows) throw new Error(`${name}: ${r.rows_written} rows written, expected ${commits * rows}`)
  r.goal = { max_ratio: 3, pass: r.ratio <= 3 && r.max_rewrites <= r.bound_max_rewrites }
  log(`${name}: ${r.rows_rewritten} rows rewritten for ${r.rows_written} written: ${r.ratio} per row; ` +
      `one row at most ${r.max_rewrites} times (bound ${r.bound_max_rewrites}); ${r.data_files} data files left; ${r.seconds} s`)
  cases[name] = { what: c.what, ...r }
}
if (RESULT) {
  fs.mkdirSync(path.dirname(path.resolve(RESULT)), { recursive: true })
  const figures = {
    what: `rows rewritten by compaction per row written: ${commits} small appends of ${rows} rows committed one by one ` +
      '(one-second checkpoints of a sink), compacted by RewriteDataFiles (PrepareRewrite + CommitRewrite) on a filesystem catalog; ' +
      'rewrites of a row counted through the files each compaction replaced',
    commits,
    rows_per_commit: rows,
    cases,
  }
  const full = { ...(await record({ bench: 'compaction-amplification', floe: BIN, start: load0 })), ...figures }
  fs.writeFileSync(RESULT, JSON.stringify(full, null, 2) + '\n')
  log(`results: ${RESULT}`)
}
