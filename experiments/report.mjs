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

// The study's samples after the restore (section on the old savepoint): seconds after the
// restored job's first checkpoint, rows visible in Trino.
const STUDY_SAVEPOINT = [[0, 16000], [7.2, 16000], [14.5, 16000], [21.7, 16000], [29.2, 16000], [36.4, 16000],
  [43.6, 16000], [50.9, 16000], [58.1, 16000], [65.4, 32000]]

// The plots' geometry (pixels): width, height, and the margins left, right, top, bottom.
const W = 640, H = 260, L = 80, R = 20, T = 30, B = 40

// An SVG's opening: its title, both axes with their labels, the y axis from 0 to `ymax`.
function svgFrame(title, xLabel, yLabel, ymax) {
  return [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<text x="${L}" y="18">${title}</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${W - R}" y="${H - 8}" text-anchor="end">${xLabel}</text>`,
    `<text x="${L - 6}" y="${T + 4}" text-anchor="end">${Math.round(ymax).toLocaleString('en-US')}</text><text x="${L - 6}" y="${H - B}" text-anchor="end">0</text>`,
    `<text x="${L - 6}" y="${T + 18}" text-anchor="end">${yLabel}</text>`]
}

// An SVG of rows visible over seconds, one polyline per series: [{ name, color, points: [[s, rows]] }].
function plot(title, series) {
  const all = series.flatMap((x) => x.points)
  const xmax = Math.max(...all.map((p) => p[0]), 1), ymax = Math.max(...all.map((p) => p[1]), 1)
  const X = (v) => (L + (v / xmax) * (W - L - R)).toFixed(1), Y = (v) => (H - B - (v / ymax) * (H - T - B)).toFixed(1)
  const out = svgFrame(title, `seconds after the restore (0 to ${xmax})`, '', ymax)
  series.forEach((x, i) => {
    // a step line: rows stay until the next sample
    const pts = x.points.flatMap(([sx, sy], k) => (k === 0 ? [[sx, sy]] : [[sx, x.points[k - 1][1]], [sx, sy]]))
    out.push(`<polyline fill="none" stroke="${x.color}" stroke-width="2" points="${pts.map(([a, b]) => `${X(a)},${Y(b)}`).join(' ')}"/>`,
      `<text x="${L + 10}" y="${T + 16 + 16 * i}" fill="${x.color}">${x.name}</text>`)
  })
  out.push('</svg>', '')
  return out.join('\n')
}

function oldSavepoint(r, svgs) {
  const out = ['## old-savepoint: restoring a savepoint older than the table', '',
    '[old-savepoint/README.md](old-savepoint/README.md), predictions first. Study: the section on ' +
    'restoring "from a savepoint older than the table\'s newest commit": the restored Flink job stayed ' +
    'RUNNING with zero consumer lag while the table did not move for at least 58.1 s, then committed ' +
    'the replay, 12,000 duplicate rows, none lost.', '']
  if (!r) return [...out, 'Not run yet.', '']
  const j = r.j
  out.push(provenance(r), '')
  const f = j.final
  out.push('| | study (Flink) | floe |', '| --- | --- | --- |',
    `| the savepoint against the table | savepoint at checkpoint 5, table's watermark 19 | savepoint at checkpoint ${j.savepoint_checkpoint}, the table's newest commit at ${j.table_checkpoint_at_restore} |`,
    `| the restored job starts from | the savepoint's offsets (replay) | ${j.started_from_table_positions ? 'the positions the table holds (its log says so)' : 'the savepoint\'s offsets'} |`,
    `| new rows first visible | after at least 58.1 s (between 58.1 and 65.4 s after the first checkpoint) | ${(j.first_new_rows_visible_ms / 1000).toFixed(1)} s after \`floe run\` started |`,
    `| rows in the end | 32,000, 12,000 of them duplicates | ${n(f.rows)} (${n(j.events)} events) |`,
    `| duplicate rows | 12,000 | ${n(f.duplicate_rows)} |`,
    `| missing rows | 0 | ${f.missing_rows ? f.missing_runs : '0'} |`,
    `| verdict on floe's prediction | | ${j.verdict} |`, '')
  svgs['old-savepoint.svg'] = plot('Rows visible after restoring an old savepoint', [
    { name: 'study: Flink, Trino samples from the restored job\'s first checkpoint', color: '#c0392b', points: STUDY_SAVEPOINT },
    { name: 'floe, icebird samples from the start of floe run', color: '#2471a3', points: j.samples.map((s) => [s.ms / 1000, s.rows]) },
  ])
  out.push('![rows visible over time after the restore](old-savepoint.svg)', '')
  return out
}

function transactionTimeout(r) {
  const out = ['## transaction-timeout: a Kafka transaction timeout under the checkpoint interval', '',
    '[transaction-timeout/README.md](transaction-timeout/README.md), predictions first. Study: the ' +
    'section on "checkpoint interval + worst-case checkpoint duration + restart time < ' +
    'transaction.timeout.ms": Kafka in, Kafka out exactly-once, 8,000 records, a 120 s interval.', '']
  if (!r) return [...out, 'Not run yet.', '']
  const j = r.j
  out.push(provenance(r), '')
  const study = { 5000: 'RUNNING; 8,000 written, 0 readable, 8,000 never visible', 300000: 'RUNNING; 8,000 written, 8,000 readable' }
  out.push('| transaction.timeout.ms | study (Flink) | floe: outcome | records written | readable (committed transactions) | never visible |',
    '| --- | --- | --- | --- | --- | --- |')
  for (const x of j.runs) {
    const outcome = x.refused_at_plan_time ? `refused at plan time (exit ${x.exit_code}, ${x.workers_started} workers started), naming the rule and its numbers`
      : `finished (exit ${x.exit_code})`
    out.push(`| ${n(x.transaction_timeout_ms)} | ${study[x.transaction_timeout_ms] ?? '?'} | ${outcome} | ${n(x.records_written)} | ${n(x.records_readable)} | ` +
      `${x.refused_at_plan_time ? 'nothing ran' : n(x.records_never_visible)} |`)
  }
  out.push('', `Verdict on floe's predictions: **${j.verdict}**. The mock cluster enforces no transaction timeout ` +
    'and hides no aborted record, so "readable" is rebuilt from the sink\'s log of committed transactions.', '')
  return out
}

// The study's table of its commit-interval section, by run.
const STUDY_INTERVAL = {
  '120s': '3 commits, 6 files, 2.0 per commit, 74,556 B average, 90.7 s to visible',
  '30s': '8 commits, 16 files, 2.0 per commit, 34,545 B, 25.9 s',
  '5s': '39 commits, 78 files, 2.0 per commit, 13,259 B, 1.3 s',
  '5s, run again': '39 commits, 78 files, 2.0 per commit, 13,249 B, 1.2 s',
  '5s, 1 GiB target': '40 commits, 80 files, 2.0 per commit, 13,041 B, 1.4 s (1 GB target)',
  '5s, in-job compaction': 'not measured (Iceberg\'s Flink sink compacts nothing in the job)',
}

// An SVG of points (x, y) per series, x on a log scale: [{ name, color, points }].
function scatter(title, xLabel, yLabel, series) {
  const all = series.flatMap((x) => x.points)
  const lx = (v) => Math.log10(v)
  const xmin = Math.min(...all.map((p) => lx(p[0]))) - 0.1, xmax = Math.max(...all.map((p) => lx(p[0]))) + 0.1
  const ymax = Math.max(...all.map((p) => p[1]), 1)
  const X = (v) => (L + ((lx(v) - xmin) / (xmax - xmin)) * (W - L - R)).toFixed(1)
  const Y = (v) => (H - B - (v / ymax) * (H - T - B)).toFixed(1)
  const out = svgFrame(title, xLabel, yLabel, ymax)
  series.forEach((x, i) => {
    out.push(`<polyline fill="none" stroke="${x.color}" stroke-width="2" points="${x.points.map(([a, b]) => `${X(a)},${Y(b)}`).join(' ')}"/>`)
    for (const [a, b] of x.points) out.push(`<circle cx="${X(a)}" cy="${Y(b)}" r="3" fill="${x.color}"/>`)
    out.push(`<text x="${L + 10}" y="${T + 16 + 16 * i}" fill="${x.color}">${x.name}</text>`)
  })
  out.push('</svg>', '')
  return out.join('\n')
}

function commitInterval(r, svgs) {
  const out = ['## commit-interval: what decides the size of a streaming writer\'s files', '',
    '[commit-interval/README.md](commit-interval/README.md), predictions first. Study: the section on ' +
    '`write.target-file-size-bytes` and the checkpoint interval, its table of five runs of 60,000 events.', '']
  if (!r) return [...out, 'Not run yet.', '']
  const j = r.j
  out.push(provenance(r), '', `floe's times are the study's x ${j.scale} (README.md).`, '')
  out.push('| run (study\'s interval) | study (Flink) | floe: interval | commits | data files | per commit | average data file B | live files after compaction (average B) | last record to visible s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const x of j.runs) {
    out.push(`| ${x.run} | ${STUDY_INTERVAL[x.run] ?? '?'} | ${x.interval_s} s | ${n(x.commits)} | ${n(x.data_files_written)} | ${x.files_per_commit.toFixed(2)} | ` +
      `${n(x.avg_data_file_bytes)} | ${x.compactions ? `${n(x.live_data_files)} (${n(x.avg_live_file_bytes)}) after ${x.compactions} compaction(s)` : 'no compaction'} | ${x.last_record_to_visible_s.toFixed(2)} |`)
  }
  out.push('', '| floe\'s prediction | verdict |', '| --- | --- |')
  for (const [k, v] of Object.entries(j.predictions)) out.push(`| ${k.replace(/_/g, ' ')} | ${v ? 'held' : 'refuted'} |`)
  out.push('')
  const main = j.runs.filter((x) => !x.run.includes(','))
  svgs['commit-interval.svg'] = scatter('Average data file by checkpoint interval (study seconds, log scale)', 'checkpoint interval, study seconds',
    'bytes', [
      { name: 'study: Flink', color: '#c0392b', points: [[5, 13259], [30, 34545], [120, 74556]] },
      { name: `floe (times x ${j.scale})`, color: '#2471a3', points: main.map((x) => [x.study_interval_s, x.avg_data_file_bytes]).sort((a, b) => a[0] - b[0]) },
    ])
  svgs['commit-interval-freshness.svg'] = scatter('Last record to visible by checkpoint interval (study seconds, log scale)',
    'checkpoint interval, study seconds', 'seconds x 1/scale', [
      { name: 'study: Flink', color: '#c0392b', points: [[5, 1.3], [30, 25.9], [120, 90.7]] },
      { name: `floe (its seconds / ${j.scale})`, color: '#2471a3', points: main.map((x) => [x.study_interval_s, x.last_record_to_visible_s / j.scale]).sort((a, b) => a[0] - b[0]) },
    ])
  out.push('![average data file by interval](commit-interval.svg)', '',
    '![last record to visible by interval](commit-interval-freshness.svg)', '')
  return out
}

function maintenanceLiveWriter(r) {
  const out = ['## maintenance-live-writer: table maintenance against a job that is still writing', '',
    '[maintenance-live-writer/README.md](maintenance-live-writer/README.md), predictions first. Study: ' +
    'the maintenance section ("neither procedure knows that a Flink job is in the middle of writing"): ' +
    '`expire_snapshots` 5 snapshots to 1, job RUNNING, a kill afterwards, 12,000 of 12,000 landed, 0 duplicates; ' +
    '`remove_orphan_files` at zero retention with 4,000 records in flight found 0 objects to take, 8,000 of 8,000 landed.', '']
  if (!r) return [...out, 'Not run yet.', '']
  const j = r.j
  const pr = j.procedures
  out.push(provenance(r), '')
  out.push('| procedure, in a loop against the live table | runs | what it did | refused |', '| --- | --- | --- | --- |',
    `| \`expire-snapshots --max-snapshot-age-ms 0 --retain-last 1\` | ${n(pr.expire.runs)} | ${n(pr.expire.expired)} snapshots expired (up to ${n(pr.expire.max_before)} to 1) | ${pr.expire.refused.length ? pr.expire.refused.join('; ') : 'never'} |`,
    `| \`compact --min-input-files 2\` | ${n(pr.compact.runs)} | ${n(pr.compact.rewrote)} data files rewritten | ${pr.compact.refused.length ? pr.compact.refused.join('; ') : 'never'} |`,
    `| \`rewrite-manifests\` | ${n(pr.rewrite_manifests.runs)} | ${n(pr.rewrite_manifests.rewrote)} manifests regrouped | ${pr.rewrite_manifests.refused.length ? pr.rewrite_manifests.refused.join('; ') : 'never'} |`,
    `| \`remove-orphan-files --older-than 0s\` (as first typed) | ${n(pr.orphans_as_asked.runs)} | nothing | ${pr.orphans_as_asked.refused.length ? `every time: "${pr.orphans_as_asked.refused[0].replace(/^floe table: /, '').slice(0, 140)}..."` : 'never'} |`,
    `| \`remove-orphan-files --older-than 0s --force-unsafe-interval\` | ${n(pr.orphans_forced.runs)} | ${n(pr.orphans_forced.deleted)} files deleted; up to ${n(pr.orphans_forced.in_progress_kept_max)} kept as the job's work in progress | ${pr.orphans_forced.refused.length ? pr.orphans_forced.refused.join('; ') : 'never'} |`,
    '', `The worker was SIGKILLed after the first expiry that removed snapshots${j.restarted ? ' and restarted' : ' (NOT restarted)'}. ` +
    `icebird: ${n(j.final.rows)} rows of ${n(j.events)}, ${n(j.final.duplicate_rows)} duplicates, missing: ${j.final.missing_runs || 'none'}.`, '')
  out.push('| floe\'s prediction | verdict |', '| --- | --- |')
  for (const [k, v] of Object.entries(j.predictions)) out.push(`| ${k.replace(/_/g, ' ')} | ${v ? 'held' : 'refuted'} |`)
  out.push('')
  return out
}

function lessonJobs(r) {
  const out = ['## lesson-jobs: the Flink lesson\'s course tile and session job', '',
    '[lesson-jobs/README.md](lesson-jobs/README.md), prediction first. The lesson (reference document 004) ' +
    'builds both jobs; the study published no figures for them. Each run\'s worker is SIGKILLed mid-feed; ' +
    'icebird\'s rows are compared with the answer the experiment computes from the events.', '']
  if (!r) return [...out, 'Not run yet.', '']
  const j = r.j
  out.push(provenance(r), '')
  out.push('| job | run | killed and restarted | expected rows | rows | missing | extra | equal |', '| --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const x of j.runs) {
    out.push(`| ${x.job === 'tile' ? 'course tile (TUMBLE 5 min)' : 'learner sessions (SESSION 10 min)'} | ${x.round} | ${x.restarted ? 'yes' : 'no'} | ` +
      `${n(x.expected_rows)} | ${n(x.rows)} | ${n(x.missing_rows)} | ${n(x.extra_rows)} | ${x.equal ? 'yes' : 'NO'} |`)
  }
  out.push('', `Verdict on floe's prediction: **${j.verdict}** (${n(j.tile_events)} progress events, ${n(j.learner_events)} learner events).`, '')
  return out
}

// The study's experiments not built yet, in the order the issue lists them.
const PENDING = []

function report(svgs) {
  const lines = ['# floe against the reference study', '',
    '<!-- Generated by `node experiments/report.mjs --write` from experiments/results/; do not edit. -->', '',
    'The reference study measured Kafka -> Flink 1.20 -> Iceberg 1.10 under failure. Each section ' +
    'below runs one of its experiments against floe (`make experiments`, [README.md](README.md)) and ' +
    'sets floe\'s figure beside the study\'s. floe\'s counts come from icebird, a reader floe did not write.', '']
  lines.push(...restartReplay(newest('restart-replay')))
  lines.push(...offsetsRewound(newest('offsets-rewound')))
  lines.push(...oldSavepoint(newest('old-savepoint'), svgs))
  lines.push(...commitInterval(newest('commit-interval'), svgs))
  lines.push(...maintenanceLiveWriter(newest('maintenance-live-writer')))
  lines.push(...transactionTimeout(newest('transaction-timeout')))
  lines.push(...lessonJobs(newest('lesson-jobs')))
  if (PENDING.length > 0) {
    lines.push('## Not built yet', '')
    for (const [name, what] of PENDING) lines.push(`- \`${name}\`: ${what}.`)
    lines.push('')
  }
  return lines.join('\n')
}

const mode = process.argv[2]
const svgs = {}
const text = report(svgs)
const files = { [REPORT]: text, ...Object.fromEntries(Object.entries(svgs).map(([f, t]) => [path.join(HERE, f), t])) }
if (mode === '--write') {
  for (const [f, t] of Object.entries(files)) fs.writeFileSync(f, t)
  console.log(`report: wrote ${Object.keys(files).map((f) => path.relative(process.cwd(), f)).join(', ')}`)
} else if (mode === '--check') {
  for (const [f, t] of Object.entries(files)) {
    if ((fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '') !== t) {
      console.error(`report: ${path.relative(process.cwd(), f)} differs from the results; run node experiments/report.mjs --write`)
      process.exit(1)
    }
  }
  console.log('report: experiments/REPORT.md and its plots agree with experiments/results/')
} else {
  process.stdout.write(text)
}
