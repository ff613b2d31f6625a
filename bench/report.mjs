#!/usr/bin/env node
// Writes the benchmark figures quoted in README.md, docs/ and bench/README.md from the results
// files under bench/results/, so that a figure in the docs is always one a results file holds,
// with the file, the command, the machine and its load named beside it.
//
//   node bench/report.mjs                # print the generated blocks
//   node bench/report.mjs --write        # rewrite them in place
//   node bench/report.mjs --check        # exit 1 when a document disagrees with the results
//   node bench/report.mjs --validate FILE --bench append|kafka|kafka-formats|streaming|table-health|file-size|maintenance-throughput|windows|monitoring|catalog-commits|compaction-amplification|state|scale-out|profile [--rows N]
//                                        # exit 1 unless FILE is a complete results file whose
//                                        # figures are sane (the smoke tests' oracle)
//
// A generated block sits between `<!-- bench:begin NAME -->` and `<!-- bench:end NAME -->`;
// edit the generator below, not the block. Which file is the current figure of each bench, and
// which are superseded or side experiments, is bench/results/INDEX.json (bench/README.md,
// "Results files"). --check also fails when INDEX.json and the directory disagree, when a
// superseded file does not say so itself, when a speed figure (rows/s, MiB/s, "1.3x") appears
// in README.md or docs/ outside a generated block, or when a README or doc names an absolute
// path of some machine.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const RESULTS = 'bench/results'
const rel = (f) => path.relative(REPO, f)
const read = (f) => fs.readFileSync(path.join(REPO, f), 'utf8')

const num = (x) => (x == null ? '?' : Math.round(x).toLocaleString('en-US'))
const fix = (x, d) => (x == null ? '?' : Number(x).toFixed(d))
const code = (s) => '`' + s + '`'

// ---- results files ---------------------------------------------------------------------------

function loadIndex() {
  const index = JSON.parse(read(`${RESULTS}/INDEX.json`))
  const files = {}
  for (const name of Object.keys(index.files)) {
    const p = `${RESULTS}/${name}`
    if (fs.existsSync(path.join(REPO, p))) files[name] = JSON.parse(read(p))
  }
  return { index, files }
}

// The provenance of a results file, whatever its age: files of schema 2 record it themselves
// (bench/provenance.mjs); older ones carry what was learnt later in `backfilled` (with where it
// came from), and what is known nowhere is listed in `missing`.
export function facts(j) {
  const b = j.backfilled || {}
  const m = j.machine || {}
  const old = /^(\d+) x (.*)$/.exec(m.cpus || '')
  const f = {
    date: j.date || null,
    command: j.command || b.command || null,
    commandBackfilled: !j.command && !!b.command,
    commit: j.git ? `${j.git.commit.slice(0, 7)}${j.git.dirty ? ' (+ uncommitted changes)' : ''}` : b.git_commit || null,
    commitBackfilled: !j.git && !!b.git_commit,
    binary: j.floe && typeof j.floe === 'object' ? j.floe.source : b.floe_source || null,
    cpu: m.cpu_model || (old ? old[2] : null),
    cores: m.cores || (old ? Number(old[1]) : null),
    mem: m.mem_gib ?? b.mem_gib ?? null,
    loadStart: j.load ? j.load.start.loadavg : m.loadavg_start || null,
    loadEnd: j.load ? j.load.end.loadavg : m.loadavg_end || null,
    busyPct: j.load ? j.load.start.cpu_busy_pct : null,
    busy: j.load ? j.load.start.busy_processes || [] : null,
    backfilledFrom: b.from || null,
  }
  f.missing = [['command', f.command], ['git commit', f.commit], ['memory', f.mem],
    ['CPU use by other processes', f.busy]].filter(([, v]) => v == null).map(([k]) => k)
  return f
}

function machineText(f) {
  return `${f.cores ?? '?'} cores (${f.cpu ?? 'CPU model not recorded'}), ${f.mem != null ? `${f.mem} GiB` : 'memory not recorded'}`
}
function loadText(f) {
  const la = (l) => (l ? fix(l[0], 2) : '?')
  let s = `load average ${la(f.loadStart)} at the start, ${la(f.loadEnd)} at the end`
  if (f.busyPct != null) {
    const others = f.busy.filter((p) => p.comm !== 'node')
    s += `; ${f.busyPct}% of the CPUs busy just before` +
      (others.length ? ` (${others.map((p) => `${p.comm} ${p.cpu_pct}%`).join(', ')})` : '')
  }
  return s
}
function sourceText(f, file) {
  const parts = []
  parts.push(f.command ? code(f.command) : 'command not recorded')
  if (f.commit) parts.push(`bench at ${f.commit}`)
  if (f.binary) parts.push(`floe built from ${f.binary}`)
  parts.push(`${f.date ? f.date.slice(0, 16).replace('T', ' ') + ' UTC' : 'date not recorded'}`)
  let s = `${parts.join(', ')} -> ${code(`${RESULTS}/${file}`)}`
  if (f.commandBackfilled || f.commitBackfilled) {
    s += ` (command and commit not recorded by the bench; written down in ${f.backfilledFrom.split(' (')[0]})`
  }
  const missing = f.missing.filter((k) => k !== 'command')   // said above
  if (missing.length) s += `; not recorded: ${missing.join(', ')}`
  return s
}

function current(index, bench) {
  const names = Object.entries(index.files).filter(([, e]) => e.bench === bench && e.status === 'current').map(([n]) => n)
  if (names.length !== 1) throw new Error(`INDEX.json: ${names.length} current ${bench} results (need exactly one)`)
  return names[0]
}
const span = (xs, d) => {
  const v = xs.filter((x) => x != null)
  return v.length > 1 ? `${fix(Math.min(...v), d)}-${fix(Math.max(...v), d)}` : null
}

// ---- blocks ----------------------------------------------------------------------------------

function appendFigures({ index, files }) {
  const name = current(index, 'append')
  const j = files[name]
  const f = facts(j)
  const runs = j.per_run ? j.per_run.length : 1
  const ratios = j.per_run ? j.per_run.map((r) => r.ratio) : []
  return { name, j, f, runs, ratios }
}

function speedBlock(ctx) {
  const a = appendFigures(ctx)
  const kName = current(ctx.index, 'kafka')
  const k = ctx.files[kName]
  const kf = facts(k)
  const km = k.median
  const kRatios = (p) => k.rounds.map((r) => r.ratios[`kafka/${p}`])
  return `Speed, as measured (written by ${code('node bench/report.mjs --write')} from the results files;
each ratio is against a peer run on the same rows in the same run, so it is the figure to read;
the rows/s hold only for the machine named):

- Append (${code('floe table append')}: JSON lines into an Iceberg table, zstd Parquet, commit
  included): **${fix(a.j.ratio, 2)}x** DuckDB's rows/s (DuckDB 1 thread writing the same file to one
  zstd Parquet file; median of ${a.runs} paired run${a.runs > 1 ? 's' : ''}${span(a.ratios, 2) ? `, ${span(a.ratios, 2)} per run` : ''}).
  DuckDB used ${fix(a.j.duckdb_cpu_over_floe, 2)}x floe's CPU time for the same rows (less sensitive to a busy
  machine than wall clock). floe ${num(a.j.floe_rows_per_s)} rows/s, DuckDB ${num(a.j.duckdb_rows_per_s)} rows/s, ${num(a.j.rows)} rows, on
  ${machineText(a.f)}; ${loadText(a.f)}.
  ${sourceText(a.f, a.name)}.
- Kafka (dev cluster, its own process) -> Iceberg append with one worker, every row verified
  exactly once: **${fix(km['kafka/filesystem'], 2)}x** the filesystem source and **${fix(km['kafka/duckdb'], 2)}x** DuckDB's Parquet
  write of the same rows (median of ${k.rounds.length} round${k.rounds.length > 1 ? 's' : ''}${span(kRatios('filesystem'), 2)
    ? `; per round ${span(kRatios('filesystem'), 2)} and ${span(kRatios('duckdb'), 2)}` : ''}).
  ${num(km.kafka_rows_per_s)} rows/s (${fix(km.kafka_mib_per_s, 1)} MiB/s of JSON), ${num(k.rows)} rows, the producer and the dev
  cluster sharing the machine${km.kafka_cpu_s ? `; floe's processes used ${fix(km.kafka_cpu_s, 2)} s of CPU, ${fix(k.value_bytes / 1048576 / km.kafka_cpu_s, 0)} MiB of JSON per CPU second` : ''}: ${machineText(kf)}; ${loadText(kf)}.
  ${sourceText(kf, kName)}.
${windowsSpeedBullet(ctx)}
How these are measured, and every results file (current and superseded): [bench/README.md](bench/README.md).`
}

// README.md's speed block: the window bench's line, once INDEX.json has a current windows file
// (an empty string until then, so the block stays as it was).
function windowsSpeedBullet({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'windows' && e.status === 'current')) return ''
  const name = current(index, 'windows')
  const j = files[name]
  const f = facts(j)
  const t = j.throughput
  const parts = []
  if (t) {
    parts.push(`floe / DuckDB events/s ${t.summary.map((s) => `**${fix(s.ratio_median, 2)}x** ${s.kind} with ${num(s.keys)} keys`).join(', ')} ` +
      `(floe on one core, parallelism 1, into an Iceberg table; DuckDB 1 thread on the same core, the same aggregate in batch; ` +
      `median of ${j.windows.reps} paired run${j.windows.reps > 1 ? 's' : ''}, ${num(j.windows.events)} events; every floe table equal to DuckDB's result)`)
  }
  if (j.latency) {
    parts.push(`a window's rows visible ${num(j.latency.kafka_ms.median)} ms (median; max ${num(j.latency.kafka_ms.max)}) after it could close in a ` +
      `Kafka topic (exactly-once), ${num(j.latency.iceberg_ms.median)} ms (max ${num(j.latency.iceberg_ms.max)}) in an Iceberg table, checkpoints every ${j.latency.checkpoint_interval}`)
  }
  if (j.checkpoint) {
    const c = j.checkpoint
    parts.push(`a checkpoint with ${num(c.keys)} keys of window state ${num(c.idle.idle.duration_ms.median)} ms with nothing in flight, ` +
      `${num(c.loaded.full_state.duration_ms.median)} ms under load (medians of ${c.idle.idle.checkpoints} and ${c.loaded.full_state.checkpoints})`)
  }
  return `- Windows (TUMBLE 5 min and SESSION 10 min COUNT(*) per key): ${parts.join('; ')}.
  ${machineText(f)}; ${loadText(f)}.
  ${sourceText(f, name)}.
`
}

function appendBlock(ctx) {
  const a = appendFigures(ctx)
  const rows = (a.j.per_run || []).map((r) => {
    const [fl, dk] = r.engines
    return `| ${r.run} | ${num(fl.rows_per_s)} | ${fix(fl.cpu_s, 2)} | ${num(dk.rows_per_s)} | ${fix(dk.cpu_s, 2)} | ${fix(r.ratio, 3)} |`
  })
  return `Current figure (written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/${a.name}`)}):
${num(a.j.rows)} rows, ${machineText(a.f)}; ${loadText(a.f)}.
${sourceText(a.f, a.name)}.

| run | floe rows/s | floe CPU s | DuckDB rows/s | DuckDB CPU s | floe/DuckDB |
| --- | --- | --- | --- | --- | --- |
${rows.join('\n')}
| **median** | **${num(a.j.floe_rows_per_s)}** | ${fix(a.j.floe_cpu_s, 2)} | **${num(a.j.duckdb_rows_per_s)}** | ${fix(a.j.duckdb_cpu_s, 2)} | **${fix(a.j.ratio, 3)}** |

DuckDB used ${fix(a.j.duckdb_cpu_over_floe, 2)}x floe's CPU time for the same rows (median of the runs; CPU time
is less sensitive to a busy machine than wall clock). Parquet bytes: floe ${num(a.j.floe_bytes)}, DuckDB
${num(a.j.duckdb_bytes)}.`
}

// bench/README.md, "Soak": the current soak run, one row per table.
function soakBlock({ index, files }) {
  const name = current(index, 'soak')
  const j = files[name]
  const f = facts(j)
  const o = j.soak
  const rows = Object.entries(j.tables).map(([kind, t]) => {
    const diff = kind === 'upsert' ? t.diff : `seq 1..${num(o.events)}: ${t.missing === 0 ? 'complete' : `missing ${num(t.missing)}`}`
    return `| ${kind} | ${t.kills} (${t.kills_early} right after a restart) | ${t.restarts} | ${t.job_state}, exit ${t.job_exit} | ` +
      `${fix(t.seconds, 0)} | ${num(t.last_checkpoint)} | ${num(t.rows)} of ${num(t.expected_rows)} | ${num(t.duplicates)} | ${t.missing_runs} | ${diff} | ${t.ok ? 'OK' : 'FAILED'} |`
  })
  return `Current run (written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/${name}`)}):
${num(o.events)} roster events per table at ${num(o.rps)} rows/s, checkpoints every ${o.interval}, ${o.kills} kills per table
${o.concurrent ? '(the tables\' jobs ran at the same time)' : ''}, gaps ${num(o.min_gap_ms)}..${num(o.max_gap_ms)} ms, ${o.early_pct}% of kills right after a restart,
restart delay ${o.restart_delay}; ${j.kills_total} kills and ${j.restarts_total} restarts in all, ${fix(j.seconds / 60, 1)} min; ${j.ok ? '**no duplicate, no missing row**' : '**FAILED**'}.
${machineText(f)}; ${loadText(f)}.
${sourceText(f, name)}.

| table | kills | restarts | job | seconds | last checkpoint | rows | duplicates | missing runs | verify | result |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

(upsert: rows are keys, the expected rows those of ${code(`floe roster expected --seed ${o.seed} --events ${o.events}`)}; duplicates and missing
are keys; "verify" is ${code('floe table verify --expected')}'s verdict, "matches" meaning every key's row equals the expected one.)`
}

// docs/kafka.md: the pre-fetch queue measurements that chose floe's defaults.
function kafkaQueueBlock({ index, files }) {
  const sweep = Object.entries(index.files)
    .filter(([, e]) => e.bench === 'kafka' && e.queue_limits)
    .map(([name, e]) => ({ name, e, j: files[name], f: facts(files[name]) }))
  const rows = sweep.map(({ name, e, j, f }) =>
    `| ${e.queue_limits} | ${num(j.median.kafka_rows_per_s)} | ${fix(j.median['kafka/filesystem'], 2)} | ` +
    `${num(j.median.kafka_max_rss_mib)} | ${j.rounds.length} | ${fix(f.loadStart?.[0], 1)} -> ${fix(f.loadEnd?.[0], 1)} | ` +
    `${f.command ? code(f.command) : '?'} | ${code(name)} |`)
  // The fastest steady rate any Kafka results file holds: what the queue must cover for a second.
  let best = null
  for (const [name, e] of Object.entries(index.files)) {
    if (e.bench !== 'kafka') continue
    for (const r of files[name].rounds || []) {
      const s = r.runs[0].steady_rows_per_s
      if (s && (!best || s > best.rows)) best = { name, round: r.round, rows: s, mib: r.runs[0].steady_mib_per_s, status: e.status }
    }
  }
  const bf = facts(files[best.name])
  return `Measured with ${code('bench/kafka_bench.sh')} (written by ${code('node bench/report.mjs --write')}; results files
under ${code(RESULTS + '/')}, machine and load in each; all on ${machineText(facts(sweep[0].j))}, shared with
other work; the ratio to the filesystem source measured in the same rounds is the figure to compare):

| limits (messages / KiB) | kafka rows/s (median) | kafka / filesystem | peak RSS MiB | rounds | load average | command | results file |
| --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

The fastest steady rate the source has shown: ${num(best.rows)} rows/s (${fix(best.mib, 1)} MiB/s), round ${best.round}
of ${code(best.name)} (${index.files[best.name].status}; ${bf.commit ? `code at ${bf.commit}, ` : ''}${loadText(bf)}).`
}

// ---- table maintenance (table-health, file-size, maintenance-throughput) -------------------------

const GOAL_LIMITS = { commit: 1.2, metadata: 1.2, scan: 1.3 }
const passText = (p) => (p == null ? 'n/a' : p ? 'PASS' : 'FAIL')
const mib = (b, d = 2) => (b == null ? '?' : fix(b / 2 ** 20, d))
const kibText = (b) => (b == null ? '?' : fix(b / 1024, 1))
// A size as set (8 MiB, 64 KiB, 1,000 B).
const sizeText = (b) => (b % 2 ** 20 === 0 ? `${num(b / 2 ** 20)} MiB` : b % 1024 === 0 ? `${num(b / 1024)} KiB` : `${num(b)} B`)

// What a table-health file says about maintenance, whatever its age: files before maintenance
// existed record a string ("none (...)").
function thMaintenance(j) {
  const m = j.table_health.maintenance
  if (typeof m === 'string') return { mode: 'none', text: m }
  if (m.mode === 'off') return { mode: 'off', text: 'off (all three tasks switched off; metadata.json cleanup only)', m }
  return {
    mode: 'on', m,
    text: `compaction after every ${m.rewrite_commits} commits or ${sizeText(m.target_file_size_bytes)} of new data files, ` +
      `files rolled at ${sizeText(m.target_file_size_bytes)} (files of ${fix(m.min_file_size_bytes / 2 ** 20, 1)}-${fix(m.max_file_size_bytes / 2 ** 20, 1)} MiB left alone); ` +
      `snapshots older than ${m.max_snapshot_age_s} s expired every ${m.expire_commits} commits (the last ${m.retain_last} kept); ` +
      'orphan removal at floe\'s defaults',
  }
}

// The issue's goals for one table of a table-health file: from its "goals" (files with maintenance
// on/off), or worked out from the samples (the baseline file, written before the goals were).
function thGoals(j, kind) {
  const g = j.goals || {}
  if (g[kind] && g[kind].commit_time) return g[kind]
  const ss = j.tables[kind].samples
  const first = ss.find((s) => s.checkpoint === 10) || ss[0]
  const warm = ss.find((s) => s.checkpoint === 100)
  const last = ss.at(-1)
  const min = 6 << 20   // 75% of the 8 MiB target the maintenance runs use
  let worst = null
  for (const s of ss) {
    const bound = Math.floor((s.data_bytes + (s.delete_bytes || 0)) / min) + 2 * 10
    if (!worst || s.data_files - bound > worst.data_files - worst.bound) worst = { checkpoint: s.checkpoint, data_files: s.data_files, bound }
  }
  const cr = first.commit_ms_median10 ? last.commit_ms_median10 / first.commit_ms_median10 : null
  const mr = warm ? last.metadata_bytes / warm.metadata_bytes : null
  return {
    commit_time: { from_checkpoint: first.checkpoint, to_checkpoint: last.checkpoint, from_ms: first.commit_ms_median10,
                   to_ms: last.commit_ms_median10, ratio: cr, pass: cr == null ? null : cr <= GOAL_LIMITS.commit },
    metadata_flat: { warmup_checkpoint: 100, to_checkpoint: last.checkpoint, warmup_bytes: warm?.metadata_bytes,
                     to_bytes: last.metadata_bytes, ratio: mr, pass: mr == null ? null : mr <= GOAL_LIMITS.metadata },
    data_files_bounded: { max_data_files: Math.max(...ss.map((s) => s.data_files)), worst, pass: worst ? worst.data_files <= worst.bound : null,
                          at_samples_only: true },
  }
}
function thScanGoal(j) {
  const sc = j.scan
  return sc ? { ratio: sc.ratio, pass: sc.ratio <= GOAL_LIMITS.scan } : null
}

function goalLines(j) {
  const out = []
  for (const kind of Object.keys(j.tables)) {
    const g = thGoals(j, kind)
    const c = g.commit_time
    out.push(`**${passText(c.pass)}** ${kind}, commit time: ${num(c.to_ms)} ms at checkpoint ${num(c.to_checkpoint)} / ${num(c.from_ms)} ms at ${num(c.from_checkpoint)} ` +
      `= ${fix(c.ratio, 2)} (goal <= ${GOAL_LIMITS.commit}; each the median of the commit times of the 10 checkpoints up to it)`)
    const m = g.metadata_flat
    const range = m.min_after_warmup_ratio != null ? `; every checkpoint after the warm-up ${fix(m.min_after_warmup_ratio, 2)}-${fix(m.max_after_warmup_ratio, 2)}x` : ''
    out.push(`**${passText(m.pass)}** ${kind}, metadata bytes flat after warm-up: ${mib(m.to_bytes)} MiB at checkpoint ${num(m.to_checkpoint)} / ` +
      `${mib(m.warmup_bytes)} MiB at ${num(m.warmup_checkpoint)} = ${fix(m.ratio, 2)} (goal <= ${GOAL_LIMITS.metadata}${range})`)
    const d = g.data_files_bounded
    const w = d.worst
    out.push(`**${passText(d.pass)}** ${kind}, data files bounded: at most ${num(d.max_data_files)}${d.at_samples_only ? ' at the samples' : ' after any commit'}; ` +
      `nearest to (or furthest over) the bound: ${w ? `${num(w.data_files)} at checkpoint ${num(w.checkpoint)}, bound ${num(w.bound)}` : '?'} ` +
      `(goal: data files <= floor(table bytes / min file size) + 2 x rewrite commit count${d.at_samples_only ? ', with the 6 MiB and 10 commits of the maintenance runs' : ', after every commit'})`)
  }
  const sg = thScanGoal(j)
  const sc = j.scan
  out.push(sc ? `**${passText(sg.pass)}** upsert scan: ${num(sc.rows)} rows; ${code('floe table scan')} of the upsert table ` +
    `${sc.upsert_data_files != null ? `(${num(sc.upsert_data_files)} data files, ${num(sc.upsert_delete_files)} delete files) ` : ''}${fix(sc.upsert_scan_s_median, 3)} s, ` +
    `of the same rows appended once (${num(sc.append_once_data_files)} data file) ${fix(sc.append_once_scan_s_median, 3)} s (medians of ${sc.upsert_scan_s.length}): ` +
    `ratio ${fix(sc.ratio, 2)} (goal <= ${GOAL_LIMITS.scan})` : '**n/a** upsert scan: not measured')
  return out
}

// The table-health file marked as the baseline (INDEX.json "role": "baseline"), if any.
function thBaseline(index, files) {
  const e = Object.entries(index.files).find(([, x]) => x.bench === 'table-health' && x.role === 'baseline')
  return e ? { name: e[0], j: files[e[0]] } : null
}

// bench/README.md, "Table health": the current table-health run, one row per table and sample,
// the goals, maintenance's work, and the baseline beside it.
function tableHealthBlock({ index, files }) {
  return tableHealthFileBlock({ index, files }, current(index, 'table-health'), 'Current run')
}

// bench/README.md, "Table health", the baseline (INDEX.json "role": "baseline"), when it is not the current run.
function tableHealthBaselineBlock({ index, files }) {
  const b = thBaseline(index, files)
  if (!b) return 'No baseline results file (INDEX.json: a table-health file with "role": "baseline").'
  return tableHealthFileBlock({ index, files }, b.name, 'Baseline', { compare: false })
}

function tableHealthFileBlock({ index, files }, name, title, { compare = true } = {}) {
  const j = files[name]
  const f = facts(j)
  const o = j.table_health
  const mt = thMaintenance(j)
  const rows = []
  for (const [kind, t] of Object.entries(j.tables)) {
    for (const s of t.samples) {
      const lc = s.last_compaction
      rows.push(`| ${kind} | ${num(s.checkpoint)} | ${num(s.data_files)} | ${lc ? `${num(lc.data_files)} (${kibText(lc.avg_data_file_bytes)} KiB avg; after ${num(lc.landed_after_checkpoint)})` : '-'} | ` +
        `${kibText(s.avg_data_file_bytes)} | ${num(s.delete_files)} | ${num(s.manifests)} | ${num(s.snapshots)} | ${mib(s.metadata_bytes)} | ` +
        `${num(s.metadata_files)} | ${kibText(s.metadata.current_json_bytes)} | ${num(s.commit_ms_median10)} / ${num(s.commit_ms_max10)} |`)
    }
  }
  const work = []
  for (const [kind, t] of Object.entries(j.tables)) {
    const m = t.maintenance
    if (!m) continue
    const gaps = t.checkpoint_gap_ms
    work.push(`${kind}: ${num(m.compactions)} compactions (${num(m.data_files_rewritten)} data files rewritten into ${num(m.data_files_written)}` +
      `${m.delete_files_removed ? `, ${num(m.delete_files_removed)} delete files removed` : ''}; ${mib(m.bytes_written, 1)} MiB written for ` +
      `${mib(m.data_bytes_committed, 1)} MiB the data commits added${m.data_bytes_committed ? `, ${fix(m.bytes_written / m.data_bytes_committed, 1)} times` : ''}; ` +
      `${m.compaction_ms_timed === 'commit' ? 'their commits, the files being written in the background, ' : ''}${num(m.compaction_ms_median)} ms median, ` +
      `${num(m.compaction_ms_max)} ms max), ${num(m.expirations)} expiries (${num(m.snapshots_expired)} snapshots)` +
      `${m.log_summary ? `; the committer's thread spent ${fix(m.log_summary.ms_after_commits / 1000, 1)} s in maintenance after commits (longest ${num(m.log_summary.longest_ms)} ms), ${num(m.log_summary.failures)} failed runs` : ''}; ` +
      `checkpoints completed ${num(gaps.median)} ms apart (median), ${num(gaps.max)} ms at most, ${num(gaps.over_1_5x_interval)} gap${gaps.over_1_5x_interval === 1 ? '' : 's'} over 1.5 intervals; ` +
      `${t.log_problems.count ? `${t.log_problems.count} warnings or errors in the job's log, the first: ${code(t.log_problems.first[0])}` : 'no warning or error in the job\'s log'}`)
  }
  let base = ''
  const b = compare ? thBaseline(index, files) : null
  if (b && b.name !== name) {
    const bj = b.j
    const lines = []
    for (const kind of Object.keys(j.tables)) {
      const bs = bj.tables[kind]?.samples || []
      const cs = j.tables[kind].samples
      for (const k of [10, 100, 1000, 2000]) {
        const x = bs.find((s) => s.checkpoint === k)
        const y = cs.find((s) => s.checkpoint === k)
        if (!x || !y) continue
        lines.push(`| ${kind} | ${num(k)} | ${num(x.data_files)} -> ${num(y.data_files)} | ${num(x.delete_files)} -> ${num(y.delete_files)} | ` +
          `${num(x.snapshots)} -> ${num(y.snapshots)} | ${mib(x.metadata_bytes)} -> ${mib(y.metadata_bytes)} | ${num(x.commit_ms_median10)} -> ${num(y.commit_ms_median10)} |`)
      }
    }
    base = `

Against the baseline without maintenance (${code(`${RESULTS}/${b.name}`)}, ${num(bj.table_health.checkpoints)} checkpoints, ` +
      `${thMaintenance(bj).text}; ${code(facts(bj).command || '?')}), at the checkpoints both have, baseline -> this run:

| table | checkpoint | data files | delete files | snapshots | metadata MiB | commit ms (median of 10) |
| --- | --- | --- | --- | --- | --- | --- |
${lines.join('\n')}

Upsert scan / the same rows appended once: ${fix(bj.scan?.ratio, 2)} in the baseline, ${fix(j.scan?.ratio, 2)} here.`
  }
  return `${title} (written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/${name}`)}):
${num(o.checkpoints)} checkpoints every ${o.interval}, ${num(o.rps)} rows/s per table, append and upsert jobs at the same time;
maintenance ${mt.mode === 'none' ? `none (none existed yet; ${mt.text.replace(/^none \((.*)\)$/, '$1')})` : `${mt.mode}: ${mt.text}`}; ${j.ok ? 'both jobs ran to the last sample without a restart' : `**FAILED**: ${j.problems.join('; ')}`}.
${machineText(f)}; ${loadText(f)}.
${sourceText(f, name)}.

Each sample is the table right after commit k${mt.mode === 'on' ? ' (the same point of the maintenance cycle at every sample: the most files since the last compaction, before the expiry that follows the commit); "after the last compaction": the data files right after the newest compaction before commit k, and the checkpoint after whose commit it landed' : ''}.

| table | checkpoint | data files | after the last compaction | avg data file KiB | delete files | manifests | snapshots | metadata MiB | metadata files | metadata JSON KiB | commit ms, median / max of the last 10 |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

Goals (issue 10):

${goalLines(j).map((l) => `- ${l}`).join('\n')}${work.length ? `\n\nWhat maintenance did:\n\n${work.map((l) => `- ${l}`).join('\n')}` : ''}${base}`
}

// bench/README.md, "File size": the current file-size run, one row per checkpoint interval.
function fileSizeBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'file-size')) return 'No results file yet.'
  const name = current(index, 'file-size')
  const j = files[name]
  const f = facts(j)
  const o = j.file_size
  const T = o.target_file_size_bytes
  const rows = j.runs.map((r) => {
    const c = r.after_last_compaction
    // every compaction once the table held target / 2: the range of average / target, and how many were within 2x
    const cs = (r.compaction_list || []).filter((x) => x.table_bytes >= T / 2 && x.avg_data_file_bytes)
    const rs = cs.map((x) => x.avg_data_file_bytes / T)
    const within = rs.filter((x) => x >= 0.5 && x <= 2).length
    return `| ${r.interval} | ${num(r.checkpoints)} | ${num(r.committed_data_files)} | ${kibText(r.checkpoint_file_avg_bytes)} | ${num(r.compactions)} | ` +
      `${c ? num(c.landed_after_checkpoint ?? c.after_checkpoint) : '-'} | ${c ? num(c.data_files) : '-'} | ${c ? mib(c.table_bytes) : '-'} | ${c ? kibText(c.avg_data_file_bytes) : '-'} | ` +
      `${fix(r.goal.avg_over_target, 2)} | **${passText(r.goal.pass)}**${r.goal.data_allows === false ? ' (the table was under target / 2)' : ''} | ` +
      `${rs.length ? `${fix(Math.min(...rs), 2)}-${fix(Math.max(...rs), 2)}; ${within} of ${rs.length} within 2x` : '-'} | ${fix(r.write_amplification, 1)} |`
  })
  return `Current run (written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/${name}`)}):
append jobs at checkpoint intervals ${o.intervals.join(', ')}, ${o.concurrent ? 'at the same time' : 'one after the other'}, ${num(o.rps)} rows/s each, ` +
    `${num(o.duration_s)} s each; target file size ${sizeText(T)}, maintenance ${o.maintenance.mode}` +
    `${o.maintenance.mode === 'on' ? ` (compaction after ${o.maintenance.rewrite_commits} commits or ${sizeText(T)} of new data files)` : ''}; ` +
    `${j.ok ? 'every job reached its last checkpoint without a restart' : `**FAILED**: ${j.problems.join('; ')}`}.
${machineText(f)}; ${loadText(f)}.
${sourceText(f, name)}.

| checkpoint interval | checkpoints | data files committed | their average KiB | compactions | last compaction landed after checkpoint | data files then | table MiB then | average data file KiB then | average / target | goal: within 2x of the target | average / target after each compaction once the table held target / 2 | bytes compaction wrote / bytes committed |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}`
}

// bench/README.md, "Maintenance throughput": records/s with maintenance off and on.
function maintenanceThroughputBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'maintenance-throughput')) return 'No results file yet.'
  const name = current(index, 'maintenance-throughput')
  const j = files[name]
  const f = facts(j)
  const o = j.maintenance_throughput
  const m = o.maintenance_on
  const rows = Object.entries(j.summary).map(([kind, s]) => {
    const on = j.runs.filter((r) => r.kind === kind && r.maintenance === 'on')
    return `| ${kind} | ${num(s.off_records_per_s_median)} | ${num(s.on_records_per_s_median)} | **${fix(s.ratio_median, 2)}** | ` +
      `${s.ratios.map((x) => fix(x, 2)).join(', ')} | ${fix(s.cpu_ratio_median, 2)} | ${on.map((r) => num(r.compactions)).join(', ')} | ` +
      `${on.map((r) => (r.log_summary ? fix(r.log_summary.ms_after_commits / 1000, 1) : '?')).join(', ')} | ${on.map((r) => num(r.checkpoints)).join(', ')} |`
  })
  return `Current run (written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/${name}`)}):
${num(o.events)} roster events per run, unthrottled, checkpoints every ${o.interval}, ${o.reps} paired rep${o.reps > 1 ? 's' : ''} per table ` +
    `(maintenance off and on back to back, the order alternating); maintenance on: compaction after ${m.rewrite_commits} commits or ` +
    `${sizeText(m.target_file_size_bytes)} of new data files, files rolled at ${sizeText(m.target_file_size_bytes)}, snapshots older than ` +
    `${m.max_snapshot_age_s} s expired every ${m.expire_commits} commits; ${j.ok ? 'every table verified' : `**FAILED**: ${j.problems.join('; ')}`}.
${machineText(f)}; ${loadText(f)}.
${sourceText(f, name)}.

| table | records/s, maintenance off (median) | records/s, on (median) | on / off (median of the pairs) | per pair | CPU time on / off | compactions per run (on) | seconds of the committer's thread in maintenance per run (on) | checkpoints per run (on) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}`
}

// bench/README.md, "Windows": throughput against DuckDB, latency to both sinks, checkpoint duration.
function windowsBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'windows')) return 'No results file yet.'
  const name = current(index, 'windows')
  const j = files[name]
  const f = facts(j)
  const o = j.windows
  const out = [`Current run (written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/${name}`)}): ` +
    `${j.ok ? 'every floe table equal to DuckDB\'s result, every window once in both sinks' : `**FAILED**: ${j.problems.join('; ')}`}.
${machineText(f)}; ${loadText(f)}.
${sourceText(f, name)}.`]
  const t = j.throughput
  if (t) {
    const rows = t.summary.map((s) => `| ${s.kind} | ${num(s.keys)} (${num(s.distinct_keys)}) | ${num(s.floe_events_per_s_median)} | ` +
      `${num(s.duckdb_events_per_s_median)} | **${fix(s.ratio_median, 2)}** | ${s.ratios.map((x) => fix(x, 2)).join(', ')} | ${num(s.rows)} | ` +
      `${fix(s.floe_cpu_s_median, 1)} / ${fix(s.duckdb_cpu_s_median, 1)} | ${num(s.floe_max_rss_mib_median)} | ${s.floe_checkpoints.join(', ')} |`)
    out.push(`Throughput: ${num(o.events)} events per input, event time ${num(o.event_time_rate_per_s)} events per second of event time, ` +
      `out of order by up to ${fix(o.max_out_of_order_ms / 1000, 0)} s, watermark delay ${o.watermark_delay_s} s (no event late); ` +
      `floe on CPU ${o.cpu ?? 'any (not pinned)'} (taskset), parallelism ${o.parallelism}, checkpoints every ${o.checkpoint_interval}, ` +
      `an Iceberg append table with maintenance off, spawn to exit; DuckDB 1 thread on the same CPU, the aggregate of the same file ` +
      `into one zstd Parquet file; ${o.reps} paired run${o.reps > 1 ? 's' : ''} per window and key count, back to back.

| window | keys (distinct in the input) | floe events/s (median) | DuckDB events/s (median) | floe / DuckDB (median of the pairs) | per pair | output rows | CPU s floe / DuckDB (median) | floe peak RSS MiB | floe checkpoints per run |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}`)
  }
  const l = j.latency
  if (l) {
    const row = (label, a, b) => `| ${label} | ${num(a.n)} | **${num(a.median)}** | ${num(a.p90)} | ${num(a.min)}-${num(a.max)} | ${num(b.median)} | ${num(b.max)} |`
    out.push(`Latency: TUMBLE(${l.window_s} s) COUNT(*) per key from a Kafka topic (dev cluster, 1 partition) into a Kafka topic ` +
      `(exactly-once) and an Iceberg table, one job, checkpoints every ${l.checkpoint_interval}; ${num(l.events_per_s)} events/s over ` +
      `${num(l.keys)} keys for ${num(l.seconds)} s, event time = the wall clock minus up to ${num(l.max_out_of_order_ms)} ms, watermark delay ` +
      `${l.watermark_delay_s} s; a \`floe kafka produce\` every ${l.tick_ms} ms (${num(l.producer_ms.median)} ms median from the events' ` +
      `wall clock to their ack).
Definition: ${l.definition}

| sink | windows | ms after the window could close (median) | p90 | min-max | ms after its event-time close (median) | max |
| --- | --- | --- | --- | --- | --- | --- |
${row('Kafka, exactly-once (commit)', l.kafka_ms, l.kafka_ms_from_event_time)}
${row('Iceberg (snapshot)', l.iceberg_ms, l.iceberg_ms_from_event_time)}`)
  }
  const c = j.checkpoint
  if (c) {
    const row = (label, x) => `| ${label} | ${num(x.checkpoints)} | **${num(x.duration_ms.median)}** | ${num(x.duration_ms.min)}-${num(x.duration_ms.max)} | ` +
      `${num(x.source_state_written_ms.median)} | ${num(x.window_state_written_ms.median)} | ${mib(x.window_state_bytes_median, 1)} | ${mib(x.state_bytes_median, 1)} |`
    const l = c.loaded
    const i = c.idle
    out.push(`Checkpoint duration with ${num(c.keys)} keys of window state: ${c.window} over events whose time rises within one day ` +
      `(the window fires only when the input ends), one core and parallelism 1 as above, checkpoints every ${c.interval}. Under load: ` +
      `${num(c.events)} events (the first ${num(c.keys)} every key once) from the file, unthrottled (the job ran at ${num(l.events_per_s)} ` +
      `events/s, ${num(l.checkpoints_completed)} checkpoints, ${num(l.checkpoints_read)} read). Idle: the ${num(c.keys)} keys alone from a Kafka ` +
      `topic (${num(i.partitions)} partition${i.partitions === 1 ? '' : 's'}), the checkpoints after the first one holding every key.
Definition: ${c.definition}

| job | checkpoints holding every key | duration ms (median) | min-max | source's state written, ms after the trigger (median) | window's state written (median) | window state MiB (median) | all state MiB |
| --- | --- | --- | --- | --- | --- | --- | --- |
${row('under load', l.full_state)}
${row('idle (nothing in flight)', i.idle)}`)
  }
  return out.join('\n\n')
}

// bench/README.md, "State (issue 22)": the session job's keyed state per backend against the
// issue's goals; the pause also against the synchronous copy before (the windows bench's figure).
// The state bench's table of one results file: a row per backend and key count, and notes.
function stateTable(j) {
  const o = j.state
  const ms = (x, d = 1) => (x == null ? '-' : fix(x, d))
  const goal = (g) => (g == null ? 'n/a' : passText(g.pass))
  const rows = []
  const notes = []
  for (const r of j.runs) {
    if (!r.available) { rows.push(`| ${r.backend} | - | ${r.status}: ${r.message.replace(/\|/g, '\\|').split('\n')[0]} | | | | | | | | | | |`); continue }
    if (r.skipped) { rows.push(`| ${r.backend} | ${num(r.keys)} | skipped: ${r.skipped} | | | | | | | | | | |`); continue }
    const i = r.idle
    const l = r.load
    const inc = i?.incremental
    // every checkpoint of both jobs but the final ones, whatever the state held (filling included)
    const every = [...(l?.list || []), ...(i?.list || [])].filter((c) => c.phase !== 'final' && c.sync_ms != null)
    const top = every.reduce((a, c) => (a && a.sync_ms >= c.sync_ms ? a : c), null)
    const finals = (l?.list || []).filter((c) => c.phase === 'final')
    if (finals.length) notes.push(`${r.backend}, ${num(r.keys)} keys: the final checkpoint${finals.length > 1 ? 's' : ''} of the load job (taken after the end of the input, when every session fired and went to the sink) paused ${finals.map((c) => `${fix(c.sync_ms, 1)} ms`).join(', ')}; not counted above.`)
    rows.push(`| ${r.backend} | ${num(r.keys)} | **${ms(r.pause.sync_ms_max, 2)}** / ${ms(r.pause.sync_ms_median, 3)} (${num(r.pause.checkpoints)}), ${goal(r.pause.goal)} | ` +
      `${ms(l?.full_state.sync_ms.max, 1)} / ${ms(l?.full_state.sync_ms.median, 1)} (${num(l?.full_state.checkpoints)}) | ` +
      `${top ? `${ms(top.sync_ms, 1)} (${num(top.keys_in_state)} keys, ${top.phase}; ${num(every.length)} checkpoints)` : '-'} | ` +
      `${ms(i?.idle.async_ms.median, 0)} / ${ms(i?.idle.async_ms.max, 0)} | ${mib(i?.idle.size_bytes.median, 1)} | ` +
      `${inc ? `${fix(inc.share_of_full, 3)} (${inc.status})` : '-'} | ${num(l?.peak_rss_mib)} / ${num(i?.peak_rss_mib)} | ` +
      `${num(l?.events_per_s)} | ${num(l?.events_per_cpu_s)} | ${num(i?.restore?.restored_ms)} / ${num(i?.restore?.first_checkpoint_ms)} | ` +
      `${r.pause.ratio_to_before_idle_median == null ? '-' : fix(r.pause.ratio_to_before_idle_median, 4)} |`)
  }
  const out = [`| backend | keys | pause ms: max / p50 (checkpoints idle, changed, under load), goal < ${o.goals.pause_max_ms} ms | pause under load: max / p50 (checkpoints) | pause max over every checkpoint, the state filling included (keys in state, phase) | async ms p50 / max (idle) | checkpoint MiB (idle) | changed / full checkpoint bytes | peak RSS MiB, load / idle job | events/s | events per CPU s | restore ms: restored / first checkpoint | pause max / before |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}`]
  if (notes.length) out.push(notes.join('\n'))
  return out
}

function stateBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'state')) return 'No results file yet.'
  const name = current(index, 'state')
  const j = files[name]
  const f = facts(j)
  const o = j.state
  const out = [`Current run (written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/${name}`)})` +
    `${j.ok ? '' : `: **FAILED**: ${j.problems.join('; ')}`}.
${machineText(f)}; ${loadText(f)}.
${sourceText(f, name)}.

The job: ${o.job}; one core (CPU ${o.cpu ?? 'any'}, taskset) at nice ${o.nice ?? 0}, parallelism ${o.parallelism}, checkpoints every ${o.interval}` +
    `${o.incremental ? ", 'execution.checkpointing.incremental' = 'true'" : ''}; under load: ${o.load_factor} events per key from a file, unthrottled; ` +
    `idle: the keys from a Kafka topic, then ${o.churn_intervals} intervals changing ${o.churn_pct}% of the keys each.
Definition: ${o.definition}`]
  out.push(...stateTable(j))
  const b = j.before
  if (b) {
    out.push(`Before: ${b.what}, ${num(b.keys)} keys, floe built from ${b.floe_source ?? '?'}: ${num(b.idle_ms_median)} ms idle (median, max ` +
      `${num(b.idle_ms_max)}), ${num(b.loaded_ms_median)} ms under load (${code(`${RESULTS}/${b.file}`)}; a TUMBLE 1 day job, the same ` +
      `key count). "pause max / before" divides this run's longest pause by the idle median there.`)
  }
  if (Object.keys(o.skipped || {}).length) out.push(`Skipped: ${Object.entries(o.skipped).map(([k, why]) => `${k.includes('/') ? `${k.split('/')[0]}, ${num(Number(k.split('/')[1]))}` : num(Number(k))} keys (${why})`).join('; ')}.`)
  // Side runs of other sizes (INDEX.json "experiment" files of this bench), each its own table.
  for (const [ename, e] of Object.entries(index.files)) {
    if (e.bench !== 'state' || e.status !== 'experiment' || !files[ename]) continue
    const x = files[ename]
    const xf = facts(x)
    out.push(`Experiment: ${e.why} (${code(`${RESULTS}/${ename}`)}${x.ok ? '' : `; **FAILED**: ${x.problems.join('; ')}`}).
${machineText(xf)}; ${loadText(xf)}.
${sourceText(xf, ename)}.`)
    out.push(...stateTable(x))
  }
  return out.join('\n\n')
}

// bench/README.md, "Monitoring (issue 12)": the cost of metrics, the stall alarm's latency, false alarms.
// A monitoring part (cost, stall, false_alarms) may come from a rerun of that part alone
// (`--only`): INDEX.json `"role": "<part>"` on an experiment file; otherwise the current file.
function monitoringPart(index, files, part) {
  const e = Object.entries(index.files).find(([, x]) => x.bench === 'monitoring' && x.role === part)
  return e ? { name: e[0], j: files[e[0]] } : null
}

function monitoringBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'monitoring')) return 'No results file yet.'
  const name = current(index, 'monitoring')
  let j = files[name]
  const about = (n, x, what) => {
    const f = facts(x)
    return `${what} (written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/${n}`)}): ` +
      `${x.ok ? (x.stall ? 'every table verified, every stall trial alarmed, no false alarm' : 'every table verified') : `**FAILED**: ${x.problems.join('; ')}`}.
${machineText(f)}; ${loadText(f)}.
${sourceText(f, n)}.`
  }
  const out = [about(name, j, 'Current run')]
  const o = j.monitoring
  const rerun = monitoringPart(index, files, 'cost')
  if (rerun) {
    out.push(about(rerun.name, rerun.j, `The cost of metrics from its own run, ${code('--only cost')}`))
    j = { ...j, cost: rerun.j.cost }
  }
  const c = j.cost
  if (c) {
    const s = c.summary
    const rs = (m) => c.runs.filter((r) => r.monitoring === m)
    const med = (xs) => { const v = xs.filter((x) => x != null).sort((a, b) => a - b); return v.length ? v[Math.floor((v.length - 1) / 2)] : null }
    const row = (m, label) => `| ${label} | **${num(s[`${m}_records_per_s_median`])}** | ${num(med(rs(m).map((r) => r.records_per_s_to_finished)))} | ` +
      `${num(s[`${m}_exit_after_finished_ms_median`])} | ${fix(s[`${m}_cpu_s_median`], 1)} |`
    out.push(`Cost of metrics: ${num(c.input.rows)} roster rows (JSON lines) through the filesystem source into an Iceberg append table ` +
      `(maintenance off, checkpoints every ${o.checkpoint_interval}), ${c.pairs.length} paired run${c.pairs.length > 1 ? 's' : ''}; on: floe's default, ` +
      `with /metrics and api/job fetched every ${num(c.scrape_interval_ms)} ms while the job ran (the server closes each connection after one request); off: ${code("'floe.monitoring.enabled' = 'false'")}. ` +
      `records/s on / off: **${fix(s.ratio_median, 2)}** (median of the pairs; ${s.ratios.map((x) => fix(x, 2)).join(', ')}); counted to the coordinator's ` +
      `"finished" line instead of the exit: ${fix(s.ratio_to_finished_median, 2)} (${s.ratios_to_finished.map((x) => fix(x, 2)).join(', ')}). ` +
      `A scrape took ${num(s.scrape_metrics_ms_median)} ms (/metrics, median; max ${num(s.scrape_metrics_ms_max)}) and ${num(s.scrape_api_ms_median)} ms (api/job).

| monitoring | records/s, spawn to exit (median) | records/s, spawn to "finished" (median) | exit after "finished", ms (median) | CPU s (median) |
| --- | --- | --- | --- | --- |
${row('off', 'off')}
${row('on', 'on, scraped')}`)
  }
  const st = j.stall
  if (st) {
    out.push(`Stall alarm: ${st.trials.length} Kafka -> Iceberg job${st.trials.length > 1 ? 's' : ''}, checkpoints every ${st.checkpoint_interval}, ` +
      `${num(st.records_per_s)} records/s flowing, the committer held from checkpoint ${st.hold_at} on (${code(`FLOE_HOLD_AT=iceberg-commit:${st.hold_at}`)}), ` +
      `the default threshold (${Array.isArray(st.threshold_s) ? st.threshold_s.join(', ') : st.threshold_s} s).
Definition: ${st.definition}.

| trials | threshold s | ms from the last commit to the STALLED line (median) | min-max | per trial | past the threshold, ms (median, max) |
| --- | --- | --- | --- | --- | --- |
| ${st.trials.length} | ${Array.isArray(st.threshold_s) ? st.threshold_s.join(', ') : st.threshold_s} | **${num(st.latency_ms.median)}** | ${num(st.latency_ms.min)}-${num(st.latency_ms.max)} | ` +
      `${st.trials.map((t) => num(t.latency_ms)).join(', ')} | ${num(st.after_threshold_ms.median)}, ${num(st.after_threshold_ms.max)} |`)
  }
  const fa = j.false_alarms
  if (fa) {
    const sc = fa.schedule
    out.push(`False alarms: one healthy Kafka -> Iceberg job for ${num(fa.duration_s)} s, checkpoints every ${fa.checkpoint_interval}, the default ` +
      `threshold, maintenance: ${fa.maintenance}; bursts of ${sc.burst_s.join('-')} s at ${sc.burst_records_per_s.map(num).join('-')} records/s alternating with ` +
      `idle gaps of ${sc.idle_s.join('-')} s (seed ${sc.seed}); the table verified: ${fa.verified}.
Definition: ${fa.definition}.

| seconds | bursts | idle gaps (over 10 s) | records | commits | checkpoints | STALLED lines (false alarms) | max commit gap while input flowed, ms | longest pending without a commit, ms | max record wait, ms |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
| ${num(fa.duration_s)} | ${num(sc.bursts)} | ${num(sc.idle_gaps)} (${num(sc.idle_gaps_over_10_s)}) | ${num(fa.records)} | ${num(fa.commits)} | ${num(fa.checkpoints)} | ` +
      `**${fa.false_alarms}** | ${num(fa.commit_gap_while_input_flowed_ms.max)} | ${num(fa.pending_without_commit_ms.max)} | ${num(fa.record_wait_ms.max)} |`)
  }
  return out.join('\n\n')
}

// README.md / docs (optional block "table-maintenance"): the maintenance figures in brief.
function catalogCommitsBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'catalog-commits')) return 'No results file yet.'
  const name = current(index, 'catalog-commits')
  const j = files[name]
  const f = facts(j)
  const label = { filesystem: 'filesystem', sqlite: 'JDBC, SQLite', postgres: 'JDBC, PostgreSQL', rest_postgres: 'REST (floe catalog serve) over PostgreSQL', s3_postgres: 'JDBC, PostgreSQL, table on S3' }
  const row = (k, r, ratio) => `| ${label[k]} | ${r.processes} x ${num(r.commits / r.processes)} | ${fix(r.latency_ms.p50, 1)} | ${fix(r.latency_ms.p90, 1)} | ${fix(r.latency_ms.p99, 1)} | ${fix(r.latency_ms.max, 1)} | ${fix(r.commits_per_second, 1)} | ${num(r.conflicts_retried)} | ${ratio} |`
  const single = Object.entries(j.single).map(([k, r]) => row(k, r, k === 'filesystem' ? '1 (peer)' : fix(j.p50_ratio_to_filesystem[k], 2)))
  const concurrent = Object.entries(j.concurrent).map(([k, r]) => row(k, r, ''))
  const s3 = j.single.s3_postgres?.s3_per_commit
  const s3Text = s3 ? `\n\nOn S3 a commit took ${fix(s3.requests, 1)} requests on average, sending ${num(s3.bytes_sent)} bytes and receiving ${num(s3.bytes_received)} (the metadata file grows with the snapshots kept: 1,000 by the end, as nothing is expired here).` : ''
  return `From ${code(`${RESULTS}/${name}`)} (${f.cpu ?? '?'}, ${f.cores ?? '?'} cores; load ${fix(f.loadStart?.[0], 2)} at start),
${code(j.command || 'bash bench/catalog_commits.sh')}: ${j.what}. Every commit landed (snapshots = commits).${s3Text}

| catalog | committers x commits | p50 ms | p90 ms | p99 ms | max ms | commits/s | conflicts retried | p50 / filesystem |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${[...single, ...concurrent].join('\n')}`
}

// bench/README.md and docs/architecture.md: N instances of one scaled-out job (issue 23).
function scaleOutSummary(j) {
  const parts = []
  if (j.commits) parts.push(j.commits.map((x) => `${x.instances} instance(s) ${fix(x.commits_per_s, 2)} commits/s, ${fix(x.retries_per_commit, 2)} retries/commit`).join(', '))
  if (j.throughput) parts.push(j.throughput.map((x) => `${x.instances}: ${num(x.records_per_s)} records/s`).join(', '))
  if (j.rebalance) parts.push(j.rebalance.map((x) => `${x.how} -> committed ${num(x.max_ms_to_committed)} ms`).join(', '))
  return parts.join('; ')
}

function scaleOutBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'scale-out')) return 'No results file yet.'
  const name = current(index, 'scale-out')
  const j = files[name]
  const f = facts(j)
  const o = j.scale_out
  const out = [`From ${code(`${RESULTS}/${name}`)} (${f.cpu ?? '?'}, ${f.cores ?? '?'} cores; load ${fix(f.loadStart?.[0], 2)} at start,
${fix(f.loadEnd?.[0], 2)} at the end), ${code(j.command || 'bash bench/scale_out.sh')}: ${o.job}; a topic of ${o.partitions}
partitions on the dev cluster, catalog ${o.catalog}, checkpoints every ${o.interval}, session timeout ${num(o.session_timeout_ms)} ms.
Every instance (a coordinator and a worker) shares this machine's ${o.cores} cores. In every run every seq was in the table
exactly once (${code('floe table verify')}). ${o.definition}`]
  if (j.commits) {
    out.push(`Commits on one table, a feed of ${num(o.rate)} records/s, a ${o.window_s} s window:

| instances | commits/s on the table | per instance | conflicts retried | retries per commit |
| --- | --- | --- | --- | --- |
${j.commits.map((x) => `| ${x.instances} | ${fix(x.commits_per_s, 2)} | ${fix(x.commits_per_s / x.instances, 2)} | ${num(x.conflicts_retried)} | ${fix(x.retries_per_commit, 2)} |`).join('\n')}`)
  }
  if (j.throughput) {
    out.push(`Records/s, ${num(o.records)} records waiting before the instances start:

| instances | records/s | / 1 instance | seconds (first launch to every record committed) |
| --- | --- | --- | --- |
${j.throughput.map((x) => `| ${x.instances} | ${num(x.records_per_s)} | ${fix(x.ratio_to_one, 2)} | ${fix(x.seconds, 1)} |`).join('\n')}`)
  }
  if (j.rebalance) {
    out.push(`Rebalance, two instances and the feed; one gone:

| how | partitions moved | to the survivor's first commit: median / max ms | max / session timeout |
| --- | --- | --- | --- |
${j.rebalance.map((x) => `| ${x.how === 'kill' ? 'SIGKILL (coordinator and worker)' : '`floe cancel` (leaves the group)'} | ${x.partitions_moved} | ${num(x.ms_to_committed.median)} / ${num(x.max_ms_to_committed)} | ${fix(x.max_to_session_timeout, 2)} |`).join('\n')}`)
  }
  return out.join('\n\n')
}

// bench/README.md: where each speed path's CPU time goes (bench/profile.sh).
function profileBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'profile')) return 'No results file yet.'
  const name = current(index, 'profile')
  const j = files[name]
  const f = facts(j)
  const what = { append: `${code('floe table append')} of ${num(j.append?.rows)} roster rows`,
                 tumble: `TUMBLE 5 min COUNT(*), ${num(j.tumble?.events)} events, ${num(j.tumble?.keys)} keys`,
                 session: `SESSION 10 min COUNT(*), ${num(j.session?.events)} events, ${num(j.session?.keys)} keys`,
                 kafka: `Kafka (dev cluster, ${j.kafka?.partitions} partitions) -> Iceberg, ${num(j.kafka?.rows)} roster rows read` }
  const stages = [...new Set(j.profile.paths.flatMap((p) => j[p].stages.map((st) => st.stage)))]
  const share = (p, stage) => j[p].stages.find((st) => st.stage === stage)?.share_pct
  const order = stages.sort((a, b) => Math.max(...j.profile.paths.map((p) => share(p, b) ?? 0)) - Math.max(...j.profile.paths.map((p) => share(p, a) ?? 0)))
  return `From ${code(`${RESULTS}/${name}`)} (${f.cpu ?? '?'}, ${f.cores ?? '?'} cores; load ${fix(f.loadStart?.[0], 2)} at start,
${fix(f.loadEnd?.[0], 2)} at the end), ${code(j.command || 'bash bench/profile.sh')}, ${j.profile.tool}, ${j.profile.frequency_hz} Hz, one core
(${j.profile.cpu ?? 'not pinned'}). Share of each path's CPU samples (all its processes and threads) by stage; the stages and
how a sample is placed are in ${code('bench/profile.mjs')}:

| stage | ${j.profile.paths.map((p) => what[p]).join(' | ')} |
| --- | ${j.profile.paths.map(() => '---').join(' | ')} |
${order.map((st) => `| ${st} | ${j.profile.paths.map((p) => share(p, st) != null ? `${share(p, st)}%` : '-').join(' | ')} |`).join('\n')}
| samples (seconds) | ${j.profile.paths.map((p) => `${num(j[p].samples)} (${fix(j[p].seconds, 1)} s)`).join(' | ')} |

The leaf functions holding the most samples per stage are in the results file.${ceilingsTable(j, share)}`
}

// Each stage alone (bench/stage_ceilings.cc) against the same stage in floe: rows per CPU second,
// floe's being the path's rows over its stage's samples as CPU seconds.
function ceilingsTable(j, share) {
  const paths = j.profile.paths.filter((p) => j[p].ceilings)
  if (!paths.length) return ''
  const rowsOf = (p) => j[p].rows ?? j[p].events
  const inFloe = (p, stage) => {
    const pct = share(p, stage)
    return pct ? rowsOf(p) / (pct / 100 * j[p].samples / j.profile.frequency_hz) : null
  }
  // [stage, ceilings key, what, paths it compares with (compress: those writing their input rows)]
  const kinds = [
    ['JSON parse', 'json', 'simdjson ondemand, each field unescaped and read as its type'],
    ['compress', 'zstd_1', 'zstd level 1 on the fields\' values, 1 MiB pages', ['append', 'kafka']],
    ['compress', 'zstd_3', 'zstd level 3 (floe\'s level) on the same', ['append', 'kafka']],
    ['window', 'table', 'floe\'s FlatStringMap: a count per key and window'],
    ['kafka client', 'kafka', 'librdkafka\'s consumer taking the topic, batches of 1,024'],
  ]
  const lines = []
  for (const p of paths) {
    for (const [stage, key, what, only] of kinds) {
      const c = j[p].ceilings[key]
      if (!c || !(c.cpu_s > 0) || (only && !only.includes(p))) continue
      const alone = c.rows / c.cpu_s
      const floe = inFloe(p, stage)
      const mib = c.bytes > 0 ? ` (${fix(c.bytes / 2 ** 20 / c.cpu_s, 0)} MiB)` : ''
      lines.push(`| ${p} | ${stage}: ${what} | ${num(Math.round(alone))}${mib} | ${floe ? num(Math.round(floe)) : '-'} | ${floe ? fix(floe / alone, 2) : '-'} |`)
    }
  }
  return `

Each stage's library alone on the same input, pinned alike (${code('bench/stage_ceilings.cc')}, run by
${code('bench/profile.mjs')}): rows (and MiB of input) per CPU second alone, and in floe (the path's rows over the
stage's samples above as CPU seconds). Alone counts all of its CPU, kernel included; in floe the kernel's part
of a stage (librdkafka's socket reads and its buffers' page faults) lands in the network and page-fault rows,
floe's JSON decoder reads keys raw and unescapes only those with escapes, its compress stage compresses
Parquet-encoded pages rather than the raw values, and its window stage also finds each row's windows.

| path | stage alone | alone, rows per CPU s | in floe | floe / alone |
| --- | --- | --- | --- | --- |
${lines.join('\n')}`
}

// bench/README.md and docs/connectors.md: compaction's write amplification (issue 21), with the
// planner before size tiers as the baseline when INDEX.json has one.
function compactionAmplificationBlock({ index, files }) {
  if (!Object.values(index.files).some((e) => e.bench === 'compaction-amplification')) return 'No results file yet.'
  const name = current(index, 'compaction-amplification')
  const j = files[name]
  const f = facts(j)
  const row = (file, k, c, label) => `| ${label ?? c.what} | ${c.min_input_files} | ${num(c.rows_written)} | ${num(c.rows_rewritten)} | ` +
    `**${fix(c.ratio, 2)}** | ${c.max_rewrites} (bound ${c.bound_max_rewrites}) | ${num(c.data_files)} | ${c.goal ? (c.goal.pass ? 'yes' : '**no**') : '-'} | ${code(file)} |`
  const rows = Object.entries(j.cases).map(([k, c]) => row(name, k, c))
  for (const [n, e] of Object.entries(index.files)) {
    if (e.bench !== 'compaction-amplification' || e.role !== 'baseline') continue
    for (const [k, c] of Object.entries(files[n].cases)) rows.push(row(n, k, c, `${c.what}; **the planner before size tiers** (${e.why})`))
  }
  return `From ${code(`${RESULTS}/${name}`)} (${f.cpu ?? '?'}, ${f.cores ?? '?'} cores; load ${fix(f.loadStart?.[0], 2)} at start),
${code(j.command || 'bash bench/compaction_amplification.sh')}: ${j.what}. Goal: rows rewritten / rows written at most 3, and no row rewritten more than ceil(log_f(commits)) times.

| case | min-input-files | rows written | rows rewritten | rewritten / written | most rewrites of one row | data files left | goal met | results file |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}`
}

function maintenanceSummaryBlock(ctx, target) {
  const { index, files } = ctx
  const out = []
  const th = current(index, 'table-health')
  const j = files[th]
  out.push(`Table health with in-job maintenance (${thMaintenance(j).mode}), ${num(j.table_health.checkpoints)} checkpoints every ${j.table_health.interval}, ` +
    `append and upsert at ${num(j.table_health.rps)} rows/s (${code(`${RESULTS}/${th}`)}):`)
  for (const l of goalLines(j)) out.push(`- ${l}`)
  const fsName = Object.entries(index.files).find(([, e]) => e.bench === 'file-size' && e.status === 'current')?.[0]
  if (fsName) {
    const x = files[fsName]
    out.push(`- average data file after the last compaction, target ${sizeText(x.file_size.target_file_size_bytes)}: ` +
      x.runs.map((r) => `${r.interval} checkpoints ${fix(r.goal.avg_over_target, 2)}x the target (**${passText(r.goal.pass)}**)`).join(', ') +
      ` (${code(`${RESULTS}/${fsName}`)})`)
  }
  const tpName = Object.entries(index.files).find(([, e]) => e.bench === 'maintenance-throughput' && e.status === 'current')?.[0]
  if (tpName) {
    const x = files[tpName]
    out.push(`- records/s with maintenance on / off, unthrottled, checkpoints every ${x.maintenance_throughput.interval}: ` +
      Object.entries(x.summary).map(([k, s]) => `${k} ${fix(s.ratio_median, 2)}x`).join(', ') + ` (${code(`${RESULTS}/${tpName}`)})`)
  }
  const link = path.relative(path.dirname(target.file), 'bench/README.md')
  out.push('', `How these are measured: [bench/README.md](${link}), "Table health".`)
  return out.join('\n')
}

function indexBlock({ index, files }) {
  const order = { current: 0, experiment: 1, superseded: 2 }
  const entries = Object.entries(index.files)
    .sort(([a, x], [b, y]) => x.bench.localeCompare(y.bench) || order[x.status] - order[y.status] || a.localeCompare(b))
  const headline = (j) => {
    if (j.bench === 'append') return `floe/DuckDB ${fix(j.ratio, 2)}; ${num(j.floe_rows_per_s)} vs ${num(j.duckdb_rows_per_s)} rows/s`
    if (j.bench === 'kafka') {
      const m = j.median
      return `${num(m.kafka_rows_per_s)} rows/s; /filesystem ${fix(m['kafka/filesystem'], 2)}` +
        (m['kafka/duckdb'] != null ? `, /DuckDB ${fix(m['kafka/duckdb'], 2)}` : '')
    }
    if (j.bench === 'soak') {
      const t = Object.values(j.tables)
      return `${j.kills_total} kills, ${j.restarts_total} restarts; duplicates ${t.reduce((a, x) => a + (x.duplicates || 0), 0)}, ` +
        `missing ${t.reduce((a, x) => a + (x.missing || 0), 0)}; ${j.ok ? 'OK' : 'FAILED'}`
    }
    if (j.bench === 'table-health') {
      const t = Object.values(j.tables)
      return `${num(j.table_health.checkpoints)} checkpoints, maintenance ${thMaintenance(j).mode}; data files ${t.map((x) => num(x.samples.at(-1)?.data_files)).join(' / ')}; ` +
        `upsert scan / appended once ${fix(j.scan?.ratio, 1)}`
    }
    if (j.bench === 'file-size') {
      return `avg data file / target ${j.runs.map((r) => `${r.interval} ${fix(r.goal.avg_over_target, 2)}`).join(', ')}`
    }
    if (j.bench === 'maintenance-throughput') {
      return `records/s on / off ${Object.entries(j.summary).map(([k, x]) => `${k} ${fix(x.ratio_median, 2)}`).join(', ')}`
    }
    if (j.bench === 'windows') {
      const parts = []
      if (j.throughput) parts.push(`floe/DuckDB ${j.throughput.summary.map((s) => `${s.kind} ${num(s.keys)} keys ${fix(s.ratio_median, 2)}`).join(', ')}`)
      if (j.latency) parts.push(`to Kafka ${num(j.latency.kafka_ms.median)} ms, Iceberg ${num(j.latency.iceberg_ms.median)} ms`)
      if (j.checkpoint) {
        parts.push(`checkpoint with ${num(j.checkpoint.keys)} keys ${num(j.checkpoint.idle.idle.duration_ms.median)} ms idle, ` +
          `${num(j.checkpoint.loaded.full_state.duration_ms.median)} ms under load`)
      }
      return parts.join('; ')
    }
    if (j.bench === 'state') {
      return j.runs.map((r) => (!r.available ? `${r.backend} not available` : r.skipped ? `${r.backend} ${num(r.keys)} keys skipped`
        : `${r.backend} ${num(r.keys)} keys: pause max ${fix(r.pause.sync_ms_max, 2)} ms, ${num(r.load?.events_per_s)} events/s, ` +
          `peak RSS ${num(r.load?.peak_rss_mib)} MiB, restore ${num(r.idle?.restore?.restored_ms)} ms`)).join('; ')
    }
    if (j.bench === 'monitoring') {
      const parts = []
      if (j.cost) parts.push(`records/s on / off ${fix(j.cost.summary.ratio_median, 2)}`)
      if (j.stall) parts.push(`stall alarm ${num(j.stall.latency_ms.median)} ms after the last commit (threshold ${j.stall.threshold_s} s)`)
      if (j.false_alarms) parts.push(`${j.false_alarms.false_alarms} false alarms in ${num(j.false_alarms.duration_s)} s`)
      return parts.join('; ')
    }
    if (j.bench === 'compaction-amplification') {
      return `rewritten / written ${Object.entries(j.cases).map(([k, c]) => `${k} ${fix(c.ratio, 2)}`).join(', ')}`
    }
    if (j.bench === 'scale-out') return scaleOutSummary(j)
    if (j.bench === 'profile') return j.profile.paths.map((p) => `${p}: ${j[p].stages.slice(0, 2).map((st) => `${st.stage} ${st.share_pct}%`).join(', ')}`).join('; ')
    if (j.bench === 'catalog-commits') {
      return Object.entries(j.single).map(([k, r]) => `${k} p50 ${fix(r.latency_ms.p50, 1)} ms`).join('; ')
    }
    if (j.bench === 'kafka-formats') {
      const s = j.summary
      const proto = s.protobuf ? `, protobuf/json ${fix(s['protobuf/json rows per cpu s'], 2)}` : ''
      return `avro/json rows per CPU s ${fix(s['avro/json rows per cpu s'], 2)}${proto}; ${num(s.avro.rows_per_cpu_s_median)} vs ` +
        `${num(s.json.rows_per_cpu_s_median)} rows per CPU s`
    }
    if (j.bench === 'streaming' && j.throughput) {
      return `stream/batch ${fix(j.throughput.ratio_median, 2)}; ${num(j.throughput.stream_rows_per_s_median)} rows/s`
    }
    return ''
  }
  const rows = entries.map(([name, e]) => {
    const j = files[name]
    const f = facts(j)
    const status = e.status === 'superseded' ? `superseded by ${code(e.superseded_by)}: ${e.why}` : `${e.status}${e.why ? `: ${e.why}` : ''}`
    const floeFrom = f.binary ? f.binary.split(' (')[0] : '?'
    return `| ${code(name)} | ${status} | ${f.date ? f.date.slice(0, 16).replace('T', ' ') : '?'} | ` +
      `${f.cores ?? '?'} cores, ${f.mem != null ? `${f.mem} GiB` : '? GiB'} | ` +
      `${fix(f.loadStart?.[0], 2)} -> ${fix(f.loadEnd?.[0], 2)} | ${f.commit ?? '?'}; ${floeFrom} | ${headline(j)} | ` +
      `${f.missing.length ? f.missing.join(', ') : '-'} |`
  })
  return `Written by ${code('node bench/report.mjs --write')} from ${code(`${RESULTS}/INDEX.json`)} and the files; the CPU model,
the command and the load of each are in the file.

| file | status | date (UTC) | machine | load average start -> end | bench commit; floe built from | figures | not recorded |
| --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}`
}

const TARGETS = [
  { file: 'README.md', block: 'speed', make: speedBlock },
  { file: 'docs/kafka.md', block: 'kafka-queue', make: kafkaQueueBlock },
  { file: 'bench/README.md', block: 'append', make: appendBlock },
  { file: 'bench/README.md', block: 'results-index', make: indexBlock },
  { file: 'bench/README.md', block: 'soak', make: soakBlock },
  { file: 'bench/README.md', block: 'table-health', make: tableHealthBlock },
  { file: 'bench/README.md', block: 'table-health-baseline', make: tableHealthBaselineBlock },
  { file: 'bench/README.md', block: 'file-size', make: fileSizeBlock },
  { file: 'bench/README.md', block: 'maintenance-throughput', make: maintenanceThroughputBlock },
  { file: 'bench/README.md', block: 'windows', make: windowsBlock },
  { file: 'bench/README.md', block: 'monitoring', make: monitoringBlock },
  { file: 'bench/README.md', block: 'state', make: stateBlock },
  { file: 'bench/README.md', block: 'catalog-commits', make: catalogCommitsBlock },
  { file: 'bench/README.md', block: 'scale-out', make: scaleOutBlock },
  { file: 'bench/README.md', block: 'profile', make: profileBlock },
  { file: 'docs/architecture.md', block: 'scale-out', make: scaleOutBlock, optional: true },
  { file: 'docs/catalogs.md', block: 'catalog-commits', make: catalogCommitsBlock, optional: true },
  { file: 'bench/README.md', block: 'compaction-amplification', make: compactionAmplificationBlock },
  { file: 'docs/connectors.md', block: 'compaction-amplification', make: compactionAmplificationBlock, optional: true },
  // Optional: written only where a document has the markers (README.md, docs/connectors.md, ...).
  { file: 'README.md', block: 'table-maintenance', make: maintenanceSummaryBlock, optional: true },
  { file: 'docs/connectors.md', block: 'table-maintenance', make: maintenanceSummaryBlock, optional: true },
]

// ---- checks ----------------------------------------------------------------------------------

function indexProblems({ index, files }) {
  const out = []
  const onDisk = fs.readdirSync(path.join(REPO, RESULTS)).filter((n) => n.endsWith('.json') && n !== 'INDEX.json')
  for (const n of onDisk) if (!index.files[n]) out.push(`${RESULTS}/${n} is not listed in INDEX.json (status current, experiment or superseded)`)
  for (const [n, e] of Object.entries(index.files)) {
    if (!files[n]) { out.push(`INDEX.json lists ${n}, which does not exist`); continue }
    if (!['current', 'experiment', 'superseded'].includes(e.status)) out.push(`INDEX.json: ${n}: unknown status ${e.status}`)
    if (files[n].bench !== e.bench) out.push(`INDEX.json: ${n} is a ${files[n].bench} result, listed as ${e.bench}`)
    if (e.status === 'superseded') {
      if (!files[e.superseded_by]) out.push(`INDEX.json: ${n} is superseded by ${e.superseded_by}, which does not exist`)
      if (files[n].superseded_by !== e.superseded_by) out.push(`${RESULTS}/${n} must itself say "superseded_by": "${e.superseded_by}"`)
    } else if (files[n].superseded_by) {
      out.push(`${RESULTS}/${n} says it is superseded, INDEX.json says ${e.status}`)
    }
  }
  for (const b of new Set(Object.values(index.files).map((e) => e.bench))) {
    try { current(index, b) } catch (e) { out.push(e.message) }
  }
  return out
}

const BLOCK = (name) => new RegExp(`(<!-- bench:begin ${name} -->\\n)([\\s\\S]*?)(<!-- bench:end ${name} -->)`)

function docs() {
  const out = ['README.md']
  const walk = (dir) => {
    for (const e of fs.readdirSync(path.join(REPO, dir), { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory() && !['node_modules', 'out', 'results'].includes(e.name) && !e.name.startsWith('.') &&
          !e.name.startsWith('build')) walk(p)
      else if (e.isFile() && e.name.endsWith('.md') && (dir === 'docs' || dir.startsWith('docs/') || e.name === 'README.md')) out.push(p)
    }
  }
  for (const d of ['docs', 'src', 'tests', 'bench', 'scripts', 'cmake']) if (fs.existsSync(path.join(REPO, d))) walk(d)
  return [...new Set(out)]
}

// A path that only exists on some machine (a home, a checkout, a scratch dir) tells a reader of
// the repository nothing; name the file relative to the repository, or the note by name.
const MACHINE_PATH = /(^|[\s`'"(=:])\/(work|home|Users|root|tmp)\//
// Measured speeds belong in generated blocks (README.md and docs/ only: bench/README.md is the
// bench's own notebook; its history holds figures from before results files, labelled so). The units are the
// benches' (rows/s, MiB/s, a ratio like 1.32x); a worked example in MB/s is not a measurement.
const FIGURE = /\d[\d,.]*\s*(rows\/s|MiB\/s)|\b\d+\.\d+x\b/

function textProblems(texts) {
  const out = []
  for (const [file, text] of Object.entries(texts)) {
    const outside = text.replace(/<!-- bench:begin ([\w-]+) -->[\s\S]*?<!-- bench:end \1 -->/g, (m) => m.replace(/[^\n]/g, ''))
    outside.split('\n').forEach((line, i) => {
      if (MACHINE_PATH.test(line)) out.push(`${file}:${i + 1}: names an absolute path of a machine: ${line.trim()}`)
      if ((file === 'README.md' || file.startsWith('docs/')) && FIGURE.test(line)) {
        out.push(`${file}:${i + 1}: a speed figure outside a generated block (put it in bench/report.mjs): ${line.trim()}`)
      }
    })
  }
  return out
}

function diff(a, b) {
  const x = a.split('\n')
  const y = b.split('\n')
  const lines = []
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) {
      if (x[i] !== undefined) lines.push(`  - ${x[i]}`)
      if (y[i] !== undefined) lines.push(`  + ${y[i]}`)
    }
  }
  return lines.slice(0, 40).join('\n') + (lines.length > 40 ? `\n  ... ${lines.length - 40} more lines` : '')
}

// ---- --validate ------------------------------------------------------------------------------

function validate(file, bench, rows) {
  const j = JSON.parse(fs.readFileSync(file, 'utf8'))
  const bad = []
  const need = (cond, what) => { if (!cond) bad.push(what) }
  const pos = (x) => typeof x === 'number' && Number.isFinite(x) && x > 0
  need(j.bench === bench, `bench is ${j.bench}, expected ${bench}`)
  need(j.schema === 2, 'schema 2')
  need(!Number.isNaN(Date.parse(j.date)), 'date')
  const script = { 'table-health': 'bench/table_health.sh', 'file-size': 'bench/file_size.sh',
                   'maintenance-throughput': 'bench/maintenance_throughput.sh', windows: 'bench/windows.sh',
                   monitoring: 'bench/monitoring.sh', 'catalog-commits': 'bench/catalog_commits.sh',
                   'compaction-amplification': 'bench/compaction_amplification.sh', state: 'bench/state.sh',
                   'scale-out': 'bench/scale_out.sh', profile: 'bench/profile.sh',
                   'kafka-formats': 'bench/kafka_formats.sh' }[bench] ||
                 `bench/${bench}_bench.sh`
  need(typeof j.command === 'string' && j.command.includes(script), 'command naming the bench script')
  need(j.git && /^[0-9a-f]{40}$/.test(j.git.commit) && typeof j.git.dirty === 'boolean', 'git commit and dirty flag')
  need(j.floe && /^[0-9a-f]{64}$/.test(j.floe.sha256 || ''), "floe binary's sha256")
  need(j.machine && j.machine.cpu_model && pos(j.machine.cores) && pos(j.machine.mem_gib), 'machine: cpu_model, cores, mem_gib')
  for (const k of ['start', 'end']) {
    need(j.load && j.load[k] && Array.isArray(j.load[k].loadavg) && j.load[k].loadavg.length === 3, `load.${k}.loadavg`)
  }
  if (bench === 'compaction-amplification') {
    const cases = Object.values(j.cases || {})
    need(cases.length > 0 && cases.every((c) => pos(c.rows_written) && c.rows_written === j.commits * j.rows_per_commit &&
      Number.isFinite(c.ratio) && Number.isInteger(c.max_rewrites) && Number.isInteger(c.bound_max_rewrites) && c.goal),
      'every case: rows written = commits x rows, the ratio, the most rewrites of one row and its bound, the goal')
  } else if (bench === 'catalog-commits') {
    const all = [...Object.values(j.single || {}), ...Object.values(j.concurrent || {})]
    need(all.length >= 4 && all.every((r) => r.commits > 0 && r.snapshots === r.commits && !r.failed_processes &&
      pos(r.latency_ms.p50)), 'every catalog: all commits landed, latencies recorded')
  } else if (bench === 'append') {
    need(j.rows === rows, `rows = ${rows}`)
    need(pos(j.floe_rows_per_s) && pos(j.duckdb_rows_per_s) && pos(j.ratio), 'floe, duckdb rows/s and ratio')
    need(Array.isArray(j.per_run) && j.per_run.length > 0 &&
      j.per_run.every((r) => r.engines.every((e) => e.rows === rows && pos(e.bytes))), 'every run: both engines wrote every row')
  } else if (bench === 'kafka-formats') {
    const s = j.summary || {}
    need(j.kafka_formats?.rows === rows, `rows = ${rows}`)
    need(j.ok === true, 'ok (every table verified: every seq exactly once)')
    need(['json', 'avro'].every((f) => pos(s[f]?.rows_per_cpu_s_median) && pos(s[f]?.mib_per_cpu_s_median)) &&
      pos(s['avro/json rows per cpu s']), 'rows and MiB per CPU second of both formats, their ratio')
    // Protobuf joined the bench later: a file that has it has all its figures.
    if (s.protobuf) {
      need(pos(s.protobuf.rows_per_cpu_s_median) && pos(s.protobuf.mib_per_cpu_s_median) &&
        pos(s['protobuf/json rows per cpu s']), 'protobuf: rows and MiB per CPU second, its ratio to JSON')
    }
  } else if (bench === 'kafka') {
    const m = j.median || {}
    need(j.rows === rows, `rows = ${rows}`)
    need(pos(m.kafka_rows_per_s) && pos(m.kafka_mib_per_s), 'kafka rows/s and MiB/s')
    need(Array.isArray(j.rounds) && j.rounds.length > 0 && j.rounds.every((r) =>
      r.runs.every((x) => x.peer === 'duckdb' || /result: OK/.test(x.verified || '')) &&
      Object.values(r.ratios).every(pos)), 'every round: floe tables verified, ratios to every peer')
  } else if (bench === 'streaming') {
    const t = j.throughput
    need(t && t.events === rows && pos(t.stream_rows_per_s_median) && pos(t.batch_rows_per_s_median) &&
      t.stream_verified && t.stream_verified.ok, 'throughput: stream and batch rows/s, stream table verified')
    need(Array.isArray(j.latency) && j.latency.length > 0 && j.latency.every((l) => l.verified && l.commits > 0 &&
      pos(l.record_to_visible_ms.max)), 'latency: every interval verified, committed, timed')
    need(j.kill && j.kill.verified && j.kill.verified.ok && j.kill.kills.length > 0 &&
      j.kill.kills.every((k) => pos(k.kill_to_next_commit_ms)), 'kill: killed, committed again, verified')
  } else if (bench === 'table-health') {
    const o = j.table_health || {}
    need(j.ok === true, 'ok (both jobs reached every sample without a restart)')
    need(j.tables && ['append', 'upsert'].every((k) => j.tables[k] && j.tables[k].samples.length === (o.at || []).length &&
      j.tables[k].samples.every((s) => pos(s.data_files) && pos(s.snapshots) && pos(s.metadata_bytes) && s.commit_ms_median10 != null) &&
      j.tables[k].samples.at(-1).checkpoint === o.checkpoints), 'append and upsert: every sample, each with files, snapshots, metadata bytes, commit time')
    // with maintenance a compaction may have removed every delete file by the sample; right after
    // a data commit of the upsert table there is always one
    need(j.tables && j.tables.upsert && j.tables.upsert.samples.every((s) => pos(s.after_commit ? s.after_commit.delete_files : s.delete_files)),
      'upsert: delete files')
    const mode = typeof o.maintenance === 'object' ? o.maintenance.mode : 'none'
    if (mode === 'on') {
      need(j.tables && ['append', 'upsert'].every((k) => j.tables[k] && j.tables[k].maintenance && j.tables[k].maintenance.compactions > 0),
        'maintenance on: append and upsert each compacted at least once')
    }
    if (mode === 'on' || mode === 'off') {
      need(j.goals && ['append', 'upsert'].every((k) => j.goals[k] && j.goals[k].commit_time && j.goals[k].data_files_bounded) &&
        j.goals.upsert_scan, 'goals of both tables and the scan')
      need(j.tables && ['append', 'upsert'].every((k) => j.tables[k].series && j.tables[k].series.commit_ms.length === j.tables[k].reached_checkpoint),
        'series: one entry per checkpoint')
    }
    need(j.scan && pos(j.scan.rows) && pos(j.scan.upsert_scan_s_median) && pos(j.scan.append_once_scan_s_median) && pos(j.scan.ratio),
      'scan: both tables scanned, ratio')
  } else if (bench === 'file-size') {
    const o = j.file_size || {}
    need(j.ok === true, 'ok (every job reached its last checkpoint without a restart)')
    need(Array.isArray(j.runs) && j.runs.length === (o.intervals || []).length && j.runs.length > 0, 'one run per interval')
    need(pos(o.target_file_size_bytes), 'target file size')
    need((j.runs || []).every((r) => pos(r.committed_data_files) && pos(r.checkpoint_file_avg_bytes) && r.goal), 'every run: files committed, goal')
    if (o.maintenance && o.maintenance.mode === 'on') {
      need((j.runs || []).every((r) => r.compactions > 0 && r.after_last_compaction && pos(r.after_last_compaction.avg_data_file_bytes)),
        'maintenance on: every run compacted, average file size after the last compaction')
    }
  } else if (bench === 'maintenance-throughput') {
    const o = j.maintenance_throughput || {}
    need(j.ok === true, 'ok (every table verified, no restart)')
    need(Array.isArray(j.runs) && j.runs.length === 2 * o.reps * (o.kinds || []).length &&
      j.runs.every((r) => r.verified && pos(r.records_per_s) && pos(r.seconds)), 'every run: verified, records/s')
    need(j.summary && (o.kinds || []).every((k) => j.summary[k] && pos(j.summary[k].ratio_median)), 'summary: ratio on / off per table')
  } else if (bench === 'windows') {
    const o = j.windows || {}
    const parts = o.parts || []
    need(j.ok === true, "ok (every floe table equal to DuckDB's result, every window once in both sinks)")
    if (rows !== undefined) need(o.events === rows, `events = ${rows}`)
    const t = j.throughput
    if (parts.includes('throughput')) {
      need(t && Array.isArray(t.summary) && t.summary.length === (o.kinds || []).length * (o.keys || []).length &&
        t.summary.every((s) => pos(s.floe_events_per_s_median) && pos(s.duckdb_events_per_s_median) && pos(s.ratio_median) && pos(s.rows)),
        'throughput: events/s of floe and DuckDB and their ratio for every window and key count')
      need(t && Array.isArray(t.pairs) && t.pairs.length === o.reps * t.summary.length && t.pairs.every((p) => p.verified && p.verified.equal),
        "throughput: every floe table compared equal to DuckDB's result")
    }
    const l = j.latency
    if (parts.includes('latency')) {
      need(l && Array.isArray(l.windows) && l.windows.length > 0 &&
        l.windows.every((w) => Number.isFinite(w.kafka_ms) && Number.isFinite(w.iceberg_ms)) && l.kafka_commits > 0 && l.iceberg_snapshots > 0,
        'latency: every closable window timed in both sinks')
    }
    const c = j.checkpoint
    if (parts.includes('checkpoint')) {
      for (const [what, x] of [['under load', c && c.loaded && c.loaded.full_state], ['idle', c && c.idle && c.idle.idle]]) {
        need(x && x.checkpoints > 0 && pos(x.duration_ms.median) && pos(x.window_state_bytes_median),
          `checkpoint, ${what}: at least one checkpoint holding every key, timed, with its state size`)
      }
      need(c && c.loaded && c.loaded.table && c.loaded.table.rows === c.keys && c.loaded.table.events === c.events,
        'checkpoint, under load: the table holds one row per key, counts summing to the events')
    }
  } else if (bench === 'state') {
    validateState(j, need, pos)
  } else if (bench === 'scale-out') {
    const o = j.scale_out || {}
    need(Array.isArray(o.parts) && o.parts.length > 0, 'scale_out.parts')
    need(j.ok === true, 'ok (every table verified: every seq exactly once)')
    const once = (xs) => Array.isArray(xs) && xs.length > 0 && xs.every((x) => x.exactly_once === true)
    if (o.parts?.includes('commits')) {
      need(once(j.commits) && j.commits.every((x) => pos(x.commits_per_s) && Number.isInteger(x.conflicts_retried) &&
        x.instances_committing === x.instances), 'commits: per instance count, commits/s, conflicts retried, every instance committing')
    }
    if (o.parts?.includes('throughput')) {
      need(once(j.throughput) && j.throughput.every((x) => pos(x.records_per_s) && x.records === o.records),
        'throughput: records/s per instance count, every record')
    }
    if (o.parts?.includes('rebalance')) {
      need(once(j.rebalance) && j.rebalance.every((x) => x.partitions_moved > 0 && pos(x.max_ms_to_committed)),
        'rebalance: kill and cancel, partitions moved and the time to their first commit')
    }
  } else if (bench === 'monitoring') {
    const o = j.monitoring || {}
    const parts = o.parts || []
    need(j.ok === true, 'ok (every table verified, every stall trial alarmed, no false alarm, no restart)')
    need(parts.length > 0, 'monitoring.parts')
    const c = j.cost
    if (parts.includes('cost')) {
      if (rows !== undefined) need(o.rows === rows && c && c.input.rows === rows, `rows = ${rows}`)
      need(c && Array.isArray(c.runs) && c.runs.length === 2 * o.pairs &&
        c.runs.every((r) => /result: OK/.test(r.verified || '') && pos(r.records_per_s) && r.rows === o.rows),
        'cost: every run (on and off per pair) verified, with its records/s')
      need(c && c.runs.filter((r) => r.monitoring === 'on').every((r) => r.scrape && r.scrape.metrics_ok > 0 && r.scrape.api_ok > 0),
        'cost: every run with monitoring on scraped /metrics and api/job')
      need(c && c.summary && pos(c.summary.ratio_median) && pos(c.summary.on_records_per_s_median) && pos(c.summary.off_records_per_s_median),
        'cost: records/s on and off and their ratio')
    }
    const st = j.stall
    if (parts.includes('stall')) {
      need(st && Array.isArray(st.trials) && st.trials.length === o.trials &&
        st.trials.every((t) => pos(t.latency_ms) && pos(t.threshold_s) && t.latency_ms >= t.threshold_s * 1000 && t.metrics && t.metrics.sink_stalled === 1),
        'stall: every trial alarmed after the threshold, the metric at 1')
    }
    const fa = j.false_alarms
    if (parts.includes('false-alarms')) {
      need(fa && fa.verified_ok === true && pos(fa.records) && pos(fa.commits) && Number.isInteger(fa.false_alarms) &&
        fa.commit_gap_while_input_flowed_ms && fa.pending_without_commit_ms, 'false alarms: table verified, records, commits, gaps, the count')
    }
  } else if (bench === 'profile') {
    const paths = j.profile?.paths
    need(Array.isArray(paths) && paths.length > 0, 'profile.paths')
    for (const p of paths || []) {
      const x = j[p]
      const sum = (x?.stages || []).reduce((a, st) => a + st.share_pct, 0)
      need(x && pos(x.samples) && pos(x.seconds) && typeof x.command === 'string' && Math.abs(sum - 100) < 1.5,
        `${p}: samples, seconds, the command, stage shares summing to 100%`)
    }
  } else {
    bad.push(`unknown bench ${bench}`)
  }
  return bad
}

// A state results file: every backend either refused with floe's message or measured (or a key
// count skipped with the reason), each measured part complete.
function validateState(j, need, pos) {
  const o = j.state || {}
  const parts = o.parts || []
  need(j.ok === true, 'ok (every load table held one session per key)')
  need(Array.isArray(o.backends) && o.backends.length > 0 && Array.isArray(o.keys) && o.keys.length > 0, 'state.backends and state.keys')
  const runs = j.runs || []
  for (const b of o.backends || []) {
    const rs = runs.filter((r) => r.backend === b)
    const refused = rs.length === 1 && rs[0].available === false
    need(refused ? rs[0].status === 'not available in this build' && typeof rs[0].message === 'string' && rs[0].message.length > 0
      : rs.length === o.keys.length, `${b}: refused with floe's message, or one run per key count`)
  }
  const measured = runs.filter((r) => r.available && !r.skipped)
  need(measured.length > 0, 'at least one backend and key count measured')
  for (const r of measured) {
    const what = `${r.backend}, ${r.keys} keys`
    if (parts.includes('load')) need(r.load && pos(r.load.events_per_s) && r.load.table_rows === r.keys && pos(r.load.peak_rss_mib), `${what}: load events/s, one row per key, peak RSS`)
    if (parts.includes('idle')) {
      const i = r.idle
      need(i && i.idle.checkpoints > 0 && Number.isFinite(i.idle.sync_ms.max) && Number.isFinite(i.idle.async_ms.median) && pos(i.idle.size_bytes.median) &&
        pos(i.peak_rss_mib), `${what}: idle checkpoints with their pause, async part, size; peak RSS`)
      need(i && i.churn.checkpoints === o.churn_intervals && i.incremental && typeof i.incremental.status === 'string',
        `${what}: one checkpoint per churn interval, the incremental figure or why not`)
      need(r.pause && Number.isFinite(r.pause.sync_ms_max), `${what}: the pause`)
    }
    if (parts.includes('restore')) need(r.idle && r.idle.restore && pos(r.idle.restore.restored_ms) && pos(r.idle.restore.first_checkpoint_ms), `${what}: restore times`)
  }
}

// ---- main ------------------------------------------------------------------------------------

function main(argv) {
  const mode = argv[0] || '--print'
  if (mode === '--validate') {
    const file = argv[1]
    const opt = (k) => { const i = argv.indexOf(k); return i > 0 ? argv[i + 1] : undefined }
    const bad = validate(file, opt('--bench'), opt('--rows') === undefined ? undefined : Number(opt('--rows')))
    if (bad.length) {
      console.error(`report: ${file} is not a complete ${opt('--bench')} results file; missing or wrong:\n  ${bad.join('\n  ')}`)
      return 1
    }
    console.log(`report: ${file}: complete`)
    return 0
  }
  if (!['--print', '--write', '--check'].includes(mode)) {
    console.error('usage: report.mjs [--write | --check | --validate FILE --bench NAME [--rows N]]')
    return 2
  }
  const ctx = loadIndex()
  const problems = indexProblems(ctx)
  const texts = Object.fromEntries(docs().map((f) => [f, read(f)]))
  for (const t of TARGETS) {
    const text = texts[t.file] ?? (fs.existsSync(path.join(REPO, t.file)) ? read(t.file) : '')
    const m = BLOCK(t.block).exec(text)
    const generated = t.make(ctx, t) + '\n'
    if (!m && t.optional) {
      // no markers in that document: nothing to write; --print shows what they would hold
      if (mode === '--print') console.log(`==> ${t.file} [${t.block}] (optional; the document has no such block)\n${generated}`)
      continue
    }
    if (!m) { problems.push(`${t.file}: no <!-- bench:begin ${t.block} --> ... <!-- bench:end ${t.block} --> block`); continue }
    if (mode === '--print') console.log(`==> ${t.file} [${t.block}]\n${generated}`)
    if (m[2] !== generated) {
      if (mode === '--check') problems.push(`${t.file} [${t.block}] disagrees with ${RESULTS}/ (- in the file, + from the results):\n${diff(m[2], generated)}`)
      texts[t.file] = text.replace(BLOCK(t.block), (_, a, __, c) => a + generated + c)
    }
  }
  if (mode === '--write') {
    for (const [f, text] of Object.entries(texts)) {
      if (text !== read(f)) { fs.writeFileSync(path.join(REPO, f), text); console.error(`report: wrote ${f}`) }
    }
  }
  problems.push(...textProblems(texts))
  if (problems.length) {
    console.error(`report: ${problems.length} problem(s):\n- ${problems.join('\n- ')}`)
    if (mode === '--check') console.error('report: fix the results or INDEX.json, then run `node bench/report.mjs --write`')
    return mode === '--check' || mode === '--write' ? 1 : 0
  }
  if (mode === '--check') console.log('report: README.md, docs/ and bench/README.md agree with bench/results/')
  return 0
}

process.exitCode = main(process.argv.slice(2))
