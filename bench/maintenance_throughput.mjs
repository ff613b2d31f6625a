#!/usr/bin/env node
// Maintenance throughput (issue 10, part 5): what in-job table maintenance costs a job that runs as
// fast as it goes. The table-health roster job (roster_job.mjs), unthrottled, a fixed number of
// events, checkpoints every --interval, into an append table and into an upsert table, each with
// the sink's maintenance off and on (the settings of table_health.mjs); records/s of each and
// the ratio on / off (the cost of maintenance).
//
//   node bench/maintenance_throughput.mjs [--events 20000000] [--interval '1 s'] [--kinds append,upsert]
//        [--reps 3] [--target-file-size BYTES] ...   (normally via bench/maintenance_throughput.sh)
//
// A run: `floe run` (coordinator + worker, own FLOE_HOME) of the job, timed from spawn to exit
// (the bounded source ends, the last checkpoint commits, the job finishes), under /usr/bin/time
// for the CPU time (user + sys, the worker included) when it exists. records/s = events /
// seconds. Compaction writes its files on a background thread and commits on the committer's
// thread, where expiry runs too (since 04cdc96): they count as far as they take CPU from the job
// or hold up a checkpoint; a bounded job's last compaction runs inline. The runs are paired: per rep and table kind, off
// and on back to back, the order alternating between reps (off first in odd reps); the ratio of
// a pair is on / off; the figure is the median of the pairs' ratios.
//
// After each run, outside the clock: the table is verified (append: `floe table verify --unique
// seq --expect-range seq:1..E`; upsert: `--unique npi --expected <floe roster expected> --key npi`),
// and its state recorded (data files, delete files, snapshots), with the compactions the worker
// logged ("compacted A -> B data files ...") and the committer's maintenance summary at close
// (the time its thread spent in maintenance after commits).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pinBinary, record, sampleLoad } from './provenance.mjs'
import {
  compactionLogLines, logProblems, MAINTENANCE_ARGS, maintenanceFromArgs, maintenanceOptions, maintenanceRecord, maintenanceSummaryLine,
  rosterJobText, runFloe, benchArgs } from './roster_job.mjs'
import { parseIds } from './table_watch.mjs'

const { maintenance: _mode, ...SETTINGS_ARGS } = MAINTENANCE_ARGS
const USAGE = `usage: node bench/maintenance_throughput.mjs [--events 20000000] [--interval '1 s'] [--kinds append,upsert]
         [--reps 3] [--seed 42] [--floe PATH] [--out DIR] [--result FILE.json]
         [--target-file-size BYTES (8 MiB)] [--min-file-size BYTES (75%)] [--rewrite-commits 10] [--expire-commits 10]
         [--max-snapshot-age SECONDS (60)] [--retain-last 5]`

const { opts, die, int } = benchArgs('maintenance_throughput', USAGE, {
  events: { type: 'string', default: '20000000' },
  interval: { type: 'string', default: '1 s' },
  kinds: { type: 'string', default: 'append,upsert' },
  reps: { type: 'string', default: '3' },
  seed: { type: 'string', default: '42' },
  ...SETTINGS_ARGS,
  floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
  out: { type: 'string', default: process.env.OUT || 'bench/out/maintenance-throughput' },
  result: { type: 'string', default: process.env.RESULT || '' },
})
const EVENTS = int('events', 1)
const REPS = int('reps', 1)
const SEED = int('seed')
const ON = maintenanceFromArgs({ ...opts, maintenance: 'on' }, die)
const OFF = { ...ON, mode: 'off' }
const KINDS = opts.kinds.split(',').map((k) => k.trim()).filter(Boolean)
if (!KINDS.length || KINDS.some((k) => !['append', 'upsert'].includes(k))) die('--kinds: append and/or upsert')
if (!/^\s*\d+(?:\.\d+)?\s*(ms|s|min)\s*$/.test(opts.interval)) die(`--interval '${opts.interval}': expected e.g. '1 s'`)
const OUT = path.resolve(opts.out)
const RESULT = opts.result
if (!fs.existsSync(path.resolve(opts.floe))) die(`${path.resolve(opts.floe)} not found (build floe, or --floe PATH / FLOE=...)`)
// the binary as it is now, copied into OUT: a rebuild during the run does not change what runs
const FLOE = pinBinary(path.resolve(opts.floe), OUT)
const TIME_BIN = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null

const round = (x, d = 1) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))
const num = (x) => (x == null ? '?' : x.toLocaleString('en-US'))
const median = (xs) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b)
  if (!s.length) return null
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const log = (line) => console.log(line)
const floe = (args) => runFloe(FLOE, args)

let expectedFile = null
function expected() {
  if (expectedFile) return expectedFile
  const e = floe(['roster', 'expected', '--seed', String(SEED), '--events', String(EVENTS)])
  if (e.code !== 0) throw new Error(`floe roster expected failed: ${e.err.trim()}`)
  expectedFile = path.join(OUT, `expected-${SEED}-${EVENTS}.jsonl`)
  fs.writeFileSync(expectedFile, e.out)
  return expectedFile
}

async function run(kind, m, rep) {
  const name = `tp_${kind}`
  const dir = path.join(OUT, `${name}-${m.mode}`)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const p = { dir, home: path.join(dir, 'home'), wh: path.join(dir, 'wh'), chk: path.join(dir, 'chk'),
              job: path.join(dir, `${name}.sql`), table: `demo.${name}` }
  fs.writeFileSync(p.job, rosterJobText({
    comment: `maintenance throughput ${name}: roster (unthrottled) -> iceberg ${kind}, maintenance ${m.mode}`,
    name, upsert: kind === 'upsert', interval: opts.interval, attempts: 1, delay: '200 ms', seed: SEED, events: EVENTS,
    rps: 0, sinkParallelism: 1, sinkOptions: maintenanceOptions(m),
  }))
  const cpuFile = path.join(dir, 'cpu')
  const args = ['run', p.job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`]
  const [cmd, argv] = TIME_BIN ? [TIME_BIN, ['-f', '%U %S', '-o', cpuFile, FLOE, ...args]] : [FLOE, args]
  const logPath = path.join(dir, 'floe-run.log')
  const logFd = fs.openSync(logPath, 'w')
  const t0 = process.hrtime.bigint()
  const child = spawn(cmd, argv, { env: { ...process.env, FLOE_HOME: p.home }, stdio: ['ignore', 'ignore', logFd] })
  const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c)))
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  fs.closeSync(logFd)
  const logText = fs.readFileSync(logPath, 'utf8')
  if (code !== 0) throw new Error(`${kind}, maintenance ${m.mode}: floe run exited ${code}; ${logPath}:\n${logText.slice(-2000)}`)
  let cpu = null
  try {
    const [u, s] = fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number)
    cpu = round(u + s, 2)
  } catch { /* no /usr/bin/time */ }
  // outside the clock: the table holds every row once (append) / the expected row per key (upsert)
  const v = kind === 'append'
    ? floe(['table', 'verify', p.table, '--warehouse', p.wh, '--unique', 'seq', '--expect-range', `seq:1..${EVENTS}`])
    : floe(['table', 'verify', p.table, '--warehouse', p.wh, '--unique', 'npi', '--expected', expected(), '--key', 'npi'])
  const verified = v.code === 0 && /result: OK/.test(v.out)
  const d = parseIds(floe(['table', 'describe', p.table, '--warehouse', p.wh]).out)
  const snaps = d.snapshots || []
  const comp = compactionLogLines(logText)
  const out = {
    rep, kind, maintenance: m.mode, seconds: round(seconds, 3), records_per_s: Math.round(EVENTS / seconds), cpu_seconds: cpu,
    checkpoints: Math.max(0, ...[...logText.matchAll(/checkpoint (\d+) completed/g)].map((x) => Number(x[1]))),
    restarts: [...logText.matchAll(/worker \d+ started \(attempt (\d+)\)/g)].filter((x) => x[1] !== '1').length,
    compactions: comp.length,
    // what the worker logs per compaction: 'whole' (inline) or 'commit' (files written in the background)
    compaction_ms_timed: comp[0] ? comp[0].timed : null,
    compaction_ms_total: comp.reduce((a, c) => a + (c.ms || 0), 0),
    compaction_ms_max: comp.length ? Math.max(...comp.map((c) => c.ms || 0)) : null,
    // the committer's summary at close: time its thread spent in maintenance after commits
    log_summary: maintenanceSummaryLine(logText),
    data_files_rewritten: comp.reduce((a, c) => a + c.files_in, 0),
    end: { data_files: d.files['data-files'], delete_files: d.files['delete-files'], data_bytes: d.files['data-bytes'],
           snapshots: snaps.length, replace_snapshots: snaps.filter((s) => s.summary && s.summary.operation === 'replace').length },
    verified, verify: v.out.trim().split('\n').slice(-1)[0] || v.err.trim(),
    log_problems: logProblems(logText),
  }
  log(`rep ${rep} ${kind} maintenance ${m.mode}: ${num(out.records_per_s)} records/s (${out.seconds} s, CPU ${out.cpu_seconds ?? '?'} s), ` +
      `${out.checkpoints} checkpoints, ${out.compactions} compactions${out.log_summary ? ` (${num(out.log_summary.ms_after_commits)} ms of the committer's thread after commits)` : ''}, ` +
      `end: ${num(out.end.data_files)} data files, ${num(out.end.delete_files)} delete files, ${out.end.snapshots} snapshots; ` +
      `verify: ${out.verify}`)
  fs.rmSync(dir, { recursive: true, force: true })
  return out
}

log(`maintenance_throughput: ${KINDS.join(' + ')}, ${num(EVENTS)} events unthrottled, checkpoints every ${opts.interval}, ` +
    `${REPS} paired rep(s) (maintenance off / on); on: target file ${num(ON.targetFileSize)} B, rewrite every ${ON.rewriteCommits} commits, ` +
    `expire snapshots older than ${ON.maxSnapshotAgeS} s every ${ON.expireCommits} commits (retain ${ON.retainLast}); floe ${FLOE}; scratch ${OUT}`)
fs.mkdirSync(OUT, { recursive: true })
const load0 = await sampleLoad()
const T0 = Date.now()
const runs = []
const pairs = []
for (let rep = 1; rep <= REPS; rep++) {
  for (const kind of KINDS) {
    const order = rep % 2 ? [OFF, ON] : [ON, OFF]
    const got = {}
    for (const m of order) {
      const r = await run(kind, m, rep)
      runs.push(r)
      got[m.mode] = r
    }
    pairs.push({ rep, kind, first: order[0].mode, off_records_per_s: got.off.records_per_s, on_records_per_s: got.on.records_per_s,
                 ratio: round(got.on.records_per_s / got.off.records_per_s, 3),
                 cpu_ratio: got.on.cpu_seconds && got.off.cpu_seconds ? round(got.on.cpu_seconds / got.off.cpu_seconds, 3) : null })
  }
}
const problems = runs.filter((r) => !r.verified).map((r) => `rep ${r.rep} ${r.kind} maintenance ${r.maintenance}: verify: ${r.verify}`)
  .concat(runs.filter((r) => r.restarts).map((r) => `rep ${r.rep} ${r.kind} maintenance ${r.maintenance}: the worker restarted ${r.restarts} time(s)`))
const summary = Object.fromEntries(KINDS.map((kind) => {
  const ps = pairs.filter((p) => p.kind === kind)
  const rs = (mode) => runs.filter((r) => r.kind === kind && r.maintenance === mode)
  return [kind, {
    off_records_per_s_median: Math.round(median(rs('off').map((r) => r.records_per_s))),
    on_records_per_s_median: Math.round(median(rs('on').map((r) => r.records_per_s))),
    ratio_median: round(median(ps.map((p) => p.ratio)), 3),
    ratios: ps.map((p) => p.ratio),
    cpu_ratio_median: round(median(ps.map((p) => p.cpu_ratio)), 3),
    compactions_median: median(rs('on').map((r) => r.compactions)),
    maintenance_ms_after_commits_median: median(rs('on').map((r) => (r.log_summary ? r.log_summary.ms_after_commits : null))),
  }]
}))
const figures = {
  maintenance_throughput: { events: EVENTS, interval: opts.interval, kinds: KINDS, reps: REPS, seed: SEED, rows_per_second_option: 0,
                            sink_parallelism: 1, maintenance_on: maintenanceRecord(ON), maintenance_off: maintenanceRecord(OFF) },
  ok: problems.length === 0,
  problems,
  seconds: round((Date.now() - T0) / 1000),
  runs,
  pairs,
  summary,
}
if (RESULT) {
  fs.mkdirSync(path.dirname(path.resolve(RESULT)), { recursive: true })
  const full = { ...(await record({ bench: 'maintenance-throughput', floe: FLOE, start: load0 })), ...figures }
  fs.writeFileSync(RESULT, JSON.stringify(full, null, 2) + '\n')
}
log('| table | records/s, maintenance off (median) | records/s, on (median) | on / off (median of pairs) | per pair | CPU on / off | compactions per run |')
log('| --- | --- | --- | --- | --- | --- | --- |')
for (const [kind, s] of Object.entries(summary)) {
  log(`| ${kind} | ${num(s.off_records_per_s_median)} | ${num(s.on_records_per_s_median)} | ${s.ratio_median} | ${s.ratios.join(', ')} | ` +
      `${s.cpu_ratio_median ?? '?'} | ${s.compactions_median} |`)
}
log(JSON.stringify({ ok: figures.ok, problems, ratios: Object.fromEntries(Object.entries(summary).map(([k, s]) => [k, s.ratio_median])) }))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = figures.ok ? 0 : 1
