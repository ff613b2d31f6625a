#!/usr/bin/env node
// Writes experiments/REPORT.md from the results files: per experiment, the newest full-size run
// (a --quick one when none exists, marked so) beside the study's figure, quoted with its
// section, and the verdict.
//
//   node experiments/report.mjs            print the report
//   node experiments/report.mjs --write    write experiments/REPORT.md
//   node experiments/report.mjs --check    exit 1 when REPORT.md differs from the results
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const RESULTS = path.join(HERE, 'results')
const REPORT = path.join(HERE, 'REPORT.md')
const n = (x) => (typeof x === 'number' ? x.toLocaleString('en-US') : String(x))
const list = (xs) => xs.map(n).join(' / ')

// The newest results file of `name`: full size first.
function newest(name) {
  if (!fs.existsSync(RESULTS)) return null
  const files = fs.readdirSync(RESULTS).filter((f) => f.startsWith(`${name}-`) && f.endsWith('.json'))
    .map((f) => ({ file: f, j: JSON.parse(fs.readFileSync(path.join(RESULTS, f), 'utf8')) }))
    .filter((x) => x.j.experiment === name)
    .sort((a, b) => (a.j.size === b.j.size ? (a.j.date < b.j.date ? 1 : -1) : a.j.size === 'full' ? -1 : 1))
  return files[0] ?? null
}

function provenance({ file, j }) {
  const load = j.load?.start?.loadavg?.[0]
  return `From \`experiments/results/${file}\` (${j.size === 'quick' ? '**quick size only** (CI)' : 'full size'}): ` +
    `\`${j.command}\`, floe at ${j.git?.commit?.slice(0, 7) ?? '?'}${j.git?.dirty ? ' + uncommitted changes' : ''}, ` +
    `${j.machine?.cores} cores (${j.machine?.cpu_model}), load average ${load ?? '?'} at the start, ${j.date?.slice(0, 16).replace('T', ' ')} UTC, ` +
    `${j.seconds} s.`
}

// The study's table of section 1 (reference study, "What the four configurations showed").
const STUDY_RESTART = {
  alo_append: ['at-least-once + append', '12,000 rows, 0 duplicate seq rows, 10,002 sharing an NPI, 0 delete files; predicted duplicates: REFUTED'],
  alo_upsert: ['at-least-once + upsert on npi', '1,998 rows, 0 duplicates, 0 sharing an NPI, 12 delete files; held'],
  eo_append: ['exactly-once + append', '12,000 rows, 0 duplicate seq rows, 10,002 sharing an NPI, 0 delete files; held'],
  eo_upsert: ['exactly-once + upsert on npi', '1,998 rows, 0 duplicates, 0 sharing an NPI, 12 delete files; held'],
}

function restartReplay(r) {
  const out = ['## restart-replay: a worker killed mid-feed, four configurations', '',
    'The study\'s first experiment ([restart-replay/README.md](restart-replay/README.md), predictions ' +
    'first). Study: Flink 1.20 + Iceberg 1.10, one TaskManager kill per configuration, read through ' +
    'Trino (section "What the four configurations showed"). floe: the worker SIGKILLed mid-feed, ' +
    'read by icebird.', '']
  if (!r) return [...out, 'Not run yet.', '']
  const j = r.j
  out.push(provenance(r), '')
  out.push('| configuration | study (Flink) | floe: kills | rows | duplicate rows | rows sharing an npi | delete files written | floe\'s prediction | verdict |')
  out.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const s of j.summary) {
    const [label, study] = STUDY_RESTART[s.config]
    out.push(`| ${label} | ${study} | ${n(s.kills)} in ${n(s.rounds)} run(s) | ${list(s.rows)} | ${n(s.duplicate_rows_max)} | ` +
      `${list(s.rows_sharing_npi)} | ${s.delete_files_written_min === s.delete_files_written_max ? n(s.delete_files_written_min) : `${n(s.delete_files_written_min)}-${n(s.delete_files_written_max)}`} | ` +
      `${s.prediction} | ${s.verdict}${s.kill_before_end ? '' : ' (a kill landed after the feed was read)'} |`)
  }
  out.push('', `The feed: ${n(j.events)} events about ${n(j.providers)} providers over ${j.partitions} partitions; ` +
    `checkpoints every ${j.interval}. Each kill landed before the job had committed the whole feed ` +
    '(the group\'s committed offsets at the kill are in the results file).', '')
  return out
}

// The study's table of its offsets section: committed offsets summed, rows, duplicate rows.
const STUDY_OFFSETS = [[6000, 6000, 0], [0, 6000, 0], [6000, 6000, 0], [0, 12000, 6000]]

function offsetsRewound(r) {
  const out = ['## offsets-rewound: the group\'s offsets rewound behind the job', '',
    '[offsets-rewound/README.md](offsets-rewound/README.md), predictions first. Study: the section ' +
    'after the four configurations ("Flink commits the consumer group\'s offsets on every completed ' +
    'checkpoint"), its table of four steps; the last is a fresh job with `group-offsets`.', '']
  if (!r) return [...out, 'Not run yet.', '']
  const j = r.j
  out.push(provenance(r), '')
  out.push('| step | study: committed offsets, rows, duplicate rows | floe: committed offsets | rows | duplicate rows | missing seq |')
  out.push('| --- | --- | --- | --- | --- | --- |')
  j.steps.forEach((s, i) => {
    const [o, rows, d] = STUDY_OFFSETS[i] ?? ['?', '?', '?']
    out.push(`| ${s.step} | ${n(o)}, ${n(rows)}, ${n(d)} | ${n(s.committed_offsets)} | ${n(s.rows)} | ${n(s.duplicate_rows)} | ${s.missing_runs || 'none'} |`)
  })
  const last = j.steps[j.steps.length - 1]
  out.push('', `Verdict on floe's predictions: **${j.verdict}**. The resubmitted job ` +
    `${last.started_from_table_positions ? 'started from the positions its sink committed into the table (its log says so)' : 'did NOT report starting from the table\'s positions'}; ` +
    'where the study\'s Flink read the whole log again and doubled the table, floe read nothing twice.', '')
  return out
}

// The study's other experiments, in the order the issue lists them, until each is built.
const PENDING = [
  ['old-savepoint', 'restore from an old savepoint after newer commits'],
  ['commit-interval', 'commit interval vs file size, with and without in-job compaction'],
  ['maintenance-live-writer', 'maintenance against a live writer, the zero-retention sweep included'],
  ['transaction-timeout', 'Kafka sink transaction timeout vs checkpoint interval'],
  ['lesson-jobs', 'the lesson\'s course tile and session job against independently computed counts'],
]

function report() {
  const lines = ['# floe against the reference study', '',
    '<!-- Generated by `node experiments/report.mjs --write` from experiments/results/; do not edit. -->', '',
    'The reference study measured Kafka -> Flink 1.20 -> Iceberg 1.10 under failure. Each section ' +
    'below runs one of its experiments against floe (`make experiments`, [README.md](README.md)) and ' +
    'sets floe\'s figure beside the study\'s. floe\'s counts come from icebird, a reader floe did not write.', '']
  lines.push(...restartReplay(newest('restart-replay')))
  lines.push(...offsetsRewound(newest('offsets-rewound')))
  lines.push('## Not built yet', '')
  for (const [name, what] of PENDING) lines.push(`- \`${name}\`: ${what}.`)
  lines.push('')
  return lines.join('\n')
}

const mode = process.argv[2]
const text = report()
if (mode === '--write') {
  fs.writeFileSync(REPORT, text)
  console.log(`report: wrote ${path.relative(process.cwd(), REPORT)}`)
} else if (mode === '--check') {
  const now = fs.existsSync(REPORT) ? fs.readFileSync(REPORT, 'utf8') : ''
  if (now !== text) {
    console.error('report: experiments/REPORT.md differs from the results; run node experiments/report.mjs --write')
    process.exit(1)
  }
  console.log('report: experiments/REPORT.md agrees with experiments/results/')
} else {
  process.stdout.write(text)
}
