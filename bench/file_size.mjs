#!/usr/bin/env node
// File size (issue 10, part 5, the study's file-size experiment): roster -> Iceberg append jobs
// at checkpoint intervals 1 s, 10 s and 60 s, the same rows/s, the same target file size, with
// the sink's in-job maintenance on: what average data file size does the table have after
// maintenance, against the target? (goal: within 2x of the target, where the data allows).
//
//   node bench/file_size.mjs [--intervals '1 s,10 s,60 s'] [--duration 720] [--rps 2000]
//        [--target-file-size BYTES] ...   (normally via bench/file_size.sh)
//
// One job per interval, all at the same time (--sequential: one after the other), each `floe
// run` in its own FLOE_HOME: the roster source throttled to --rps rows/s -> an Iceberg append
// table (demo.fs_<interval>), 'sink.parallelism' 1, EXACTLY_ONCE, maintenance as table_health.mjs
// (roster_job.mjs: compaction after 10 commits or once the commits since the last one added
// --target-file-size bytes, files rolled at --target-file-size; expiry). Each job runs for
// round(duration / interval) checkpoints; after the last one's commit, and the maintenance it
// sets off (the next commit, or min(interval, 10 s) without a new metadata version), it is
// cancelled.
//
// Every metadata version is read (table_watch.mjs). Figures per interval:
// - the files the sink writes: average size of the data files the data commits added (what the
//   table would hold without compaction);
// - after each compaction ("replace" snapshot): data files and table bytes of that snapshot
//   (its summary totals; an append table has no delete files), so the average data file size;
// - the figure: the average after the last compaction, against the target. Within 2x means
//   target / 2 <= average <= 2 x target. The data allows it when the table then holds at least
//   target / 2 bytes: compaction rolls files at the target and leaves files of at least 75% of it
//   alone, so k full files and one remainder average at least target / 2 whenever k >= 1, and a
//   table smaller than target / 2 cannot (its one file is that small);
// - write amplification: bytes the compactions wrote / bytes the data commits added.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pinBinary, record, sampleLoad } from './provenance.mjs'
import {
  compactionLogLines, logProblems, MAINTENANCE_ARGS, MAINTENANCE_USAGE, maintenanceFromArgs, maintenanceOptions, maintenanceSummaryLine,
  maintenanceRecord, rosterJobText, benchArgs } from './roster_job.mjs'
import { TableWatch } from './table_watch.mjs'

const USAGE = `usage: node bench/file_size.mjs [--intervals '1 s,10 s,60 s'] [--duration SECONDS (720)] [--rps 2000]
         [--seed 42] [--sequential] [--floe PATH] [--out DIR] [--result FILE.json]
         ${MAINTENANCE_USAGE}`

const { opts, die, int } = benchArgs('file_size', USAGE, {
  intervals: { type: 'string', default: '1 s,10 s,60 s' },
  duration: { type: 'string', default: '720' },
  rps: { type: 'string', default: '2000' },
  seed: { type: 'string', default: '42' },
  sequential: { type: 'boolean', default: false },
  ...MAINTENANCE_ARGS,
  floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
  out: { type: 'string', default: process.env.OUT || 'bench/out/file-size' },
  result: { type: 'string', default: process.env.RESULT || '' },
})
const DURATION_S = int('duration', 1)
const RPS = int('rps', 1)
const SEED = int('seed')
const M = maintenanceFromArgs(opts, die)
const T = M.targetFileSize
const INTERVALS = opts.intervals.split(',').map((x) => x.trim()).filter(Boolean).map((text) => {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|min)$/.exec(text)
  if (!m) die(`--intervals: '${text}': expected e.g. '1 s' or '200 ms'`)
  const ms = Number(m[1]) * { ms: 1, s: 1000, min: 60000 }[m[2]]
  return { text, ms, label: `${m[1].replace('.', '_')}${m[2]}`, checkpoints: Math.max(1, Math.round(DURATION_S * 1000 / ms)) }
})
if (!INTERVALS.length) die('--intervals: none given')
const OUT = path.resolve(opts.out)
const RESULT = opts.result
if (!fs.existsSync(path.resolve(opts.floe))) die(`${path.resolve(opts.floe)} not found (build floe, or --floe PATH / FLOE=...)`)
// the binary as it is now, copied into OUT: a rebuild during the run does not change what runs
const FLOE = pinBinary(path.resolve(opts.floe), OUT)

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const round = (x, d = 1) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))
const num = (x) => (x == null ? '?' : x.toLocaleString('en-US'))
const kib = (b) => (b == null ? '?' : `${num(round(b / 1024, 1))} KiB`)
const log = (line) => console.log(line)
const verdict = (pass) => (pass == null ? 'n/a' : pass ? 'PASS' : 'FAIL')

async function run(iv) {
  const name = `fs_${iv.label}`
  const dir = path.join(OUT, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const p = { dir, home: path.join(dir, 'home'), wh: path.join(dir, 'wh'), chk: path.join(dir, 'chk'),
              job: path.join(dir, `${name}.sql`), meta: path.join(dir, 'wh', 'demo', name, 'metadata') }
  // rows for the checkpoints, the wait after the last one, and slack
  const events = Math.ceil(RPS * ((iv.checkpoints + 2) * iv.ms / 1000 + 30))
  fs.writeFileSync(p.job, rosterJobText({
    comment: `file size ${name}: roster -> iceberg append every ${iv.text}, ${iv.checkpoints} checkpoints, maintenance ${M.mode}`,
    name, upsert: false, interval: iv.text, attempts: 3, delay: '200 ms', seed: SEED, events, rps: RPS,
    sinkParallelism: 1, sinkOptions: maintenanceOptions(M),
  }))
  const logPath = path.join(dir, 'floe-run.log')
  const logFile = fs.openSync(logPath, 'w')
  const started = Date.now()
  const child = spawn(FLOE, ['run', p.job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`],
    { env: { ...process.env, FLOE_HOME: p.home }, stdio: ['ignore', 'ignore', 'pipe'] })
  let done = null
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  exited.then((r) => { done = r })
  let restarts = 0
  let completed = 0
  let tail = ''
  child.stderr.on('data', (d) => {
    fs.writeSync(logFile, d)
    tail += d
    const lines = tail.split('\n')
    tail = lines.pop()
    for (const line of lines) {
      let m
      if ((m = /checkpoint (\d+) completed/.exec(line))) completed = Math.max(completed, Number(m[1]))
      else if (/worker \d+ started \(attempt (\d+)\)/.test(line) && !/attempt 1\)/.test(line)) restarts++
    }
  })
  const watch = new TableWatch(p.meta, { pollMs: 50 }).start()
  const N = iv.checkpoints
  while (!done && !watch.commit(N)) await sleep(50)
  // the maintenance after commit N: ended by commit N + 1, or assumed over after a quiet spell
  const quiet = Math.min(iv.ms, 10000)
  let lastCount = watch.versions.length
  let lastChange = Date.now()
  while (!done && !watch.afterMaintenance(N)) {
    await sleep(50)
    if (watch.versions.length !== lastCount) { lastCount = watch.versions.length; lastChange = Date.now() }
    if (Date.now() - lastChange >= quiet) break
  }
  const reachedN = !!watch.commit(N)
  if (!done) child.kill('SIGTERM')
  const t = Date.now()
  while (!done && Date.now() - t < 20000) await sleep(50)
  if (!done) { child.kill('SIGKILL'); await exited }
  await watch.stop()
  await new Promise((r) => (child.stderr.readableEnded ? r() : child.stderr.on('end', r)))
  fs.closeSync(logFile)

  const vs = watch.versions
  const commits = vs.filter((v) => v.kind === 'commit' && v.checkpoint <= N)
  const committedFiles = commits.reduce((a, v) => a + v.added_data_files, 0)
  const committedBytes = commits.reduce((a, v) => a + v.added_bytes, 0)
  let lastCheckpoint = 0
  const compactions = []
  for (const v of vs) {
    if (v.kind === 'commit') lastCheckpoint = v.checkpoint
    if (v.kind === 'replace' && lastCheckpoint <= N) {
      compactions.push({ landed_after_checkpoint: lastCheckpoint, t_s: round((v.mtime_ms - started) / 1000, 1),
        rewritten_data_files: v.rewritten_data_files, written_data_files: v.added_data_files,
        written_bytes: v.added_bytes, data_files: v.data_files, table_bytes: v.files_bytes,
        avg_data_file_bytes: v.data_files ? Math.round(v.files_bytes / v.data_files) : null })
    }
  }
  const last = compactions.at(-1) || null
  const end = vs.filter((v) => v.kind !== 'create').at(-1) || null
  const allows = last ? last.table_bytes >= T / 2 : null
  const ratio = last && last.avg_data_file_bytes ? last.avg_data_file_bytes / T : null
  const logText = fs.readFileSync(logPath, 'utf8')
  const compLog = compactionLogLines(logText)
  const written = compactions.reduce((a, c) => a + c.written_bytes, 0)
  return {
    interval: iv.text, interval_ms: iv.ms, table: `demo.${name}`, checkpoints: N, reached_checkpoint: completed,
    reached: reachedN, restarts, events, seconds: round((Date.now() - started) / 1000),
    exit: done ? (done.signal ? `signal ${done.signal}` : done.code) : null,
    data_commits: commits.length, committed_data_files: committedFiles, committed_bytes: committedBytes,
    checkpoint_file_avg_bytes: committedFiles ? Math.round(committedBytes / committedFiles) : null,
    compactions: compactions.length, compaction_list: compactions,
    // the worker's log: per compaction 'whole' (inline: read, write, commit) or 'commit' ms
    // (written in the background, committed on the committer's thread); its summary at close
    compaction_ms: compLog.map((c) => c.ms),
    compaction_ms_timed: compLog[0] ? compLog[0].timed : null,
    log_summary: maintenanceSummaryLine(logText),
    write_amplification: committedBytes ? round(written / committedBytes, 2) : null,
    after_last_compaction: last,
    at_end: end && { version_kind: end.kind, data_files: end.data_files, table_bytes: end.files_bytes,
                     avg_data_file_bytes: end.data_files ? Math.round(end.files_bytes / end.data_files) : null },
    goal: { target_bytes: T, avg_over_target: round(ratio, 3), data_allows: allows,
            pass: allows ? ratio >= 0.5 && ratio <= 2 : null },
    log_problems: logProblems(logText),
  }
}

log(`file_size: append at ${INTERVALS.map((i) => `${i.text} (${num(i.checkpoints)} checkpoints)`).join(', ')}, ` +
    `${opts.sequential ? 'one after the other' : 'at the same time'}, ${num(RPS)} rows/s, ${DURATION_S} s each, maintenance ${M.mode}, ` +
    `target file ${num(T)} B; floe ${FLOE}; scratch ${OUT}`)
fs.mkdirSync(OUT, { recursive: true })
const load0 = await sampleLoad()
const T0 = Date.now()
let runs
if (opts.sequential) {
  runs = []
  for (const iv of INTERVALS) runs.push(await run(iv))
} else {
  runs = await Promise.all(INTERVALS.map((iv) => run(iv)))
}
const problems = []
for (const r of runs) {
  if (!r.reached) problems.push(`${r.interval}: the job ended at checkpoint ${r.reached_checkpoint}, before checkpoint ${r.checkpoints}`)
  if (r.restarts) problems.push(`${r.interval}: the worker restarted ${r.restarts} time(s)`)
}
const figures = {
  file_size: { intervals: INTERVALS.map((i) => i.text), duration_s: DURATION_S, rps: RPS, seed: SEED,
               concurrent: !opts.sequential, sink_parallelism: 1, target_file_size_bytes: T, maintenance: maintenanceRecord(M) },
  ok: problems.length === 0,
  problems,
  seconds: round((Date.now() - T0) / 1000),
  runs,
}
if (RESULT) {
  fs.mkdirSync(path.dirname(path.resolve(RESULT)), { recursive: true })
  const full = { ...(await record({ bench: 'file-size', floe: FLOE, start: load0 })), ...figures }
  fs.writeFileSync(RESULT, JSON.stringify(full, null, 2) + '\n')
}
log('| interval | checkpoints | data files committed | avg committed file | compactions | write amplification | after the last compaction: data files | table | avg data file | avg / target | goal |')
log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for (const r of runs) {
  const c = r.after_last_compaction
  log(`| ${r.interval} | ${num(r.checkpoints)} | ${num(r.committed_data_files)} | ${kib(r.checkpoint_file_avg_bytes)} | ${r.compactions} | ` +
      `${r.write_amplification ?? '?'} | ${c ? num(c.data_files) : '-'} | ${c ? kib(c.table_bytes) : '-'} | ${c ? kib(c.avg_data_file_bytes) : '-'} | ` +
      `${r.goal.avg_over_target ?? '-'} | ${verdict(r.goal.pass)}${r.goal.data_allows === false ? ' (table < target / 2)' : ''} |`)
}
for (const r of runs) {
  if (r.log_problems.count) log(`${r.interval}: ${r.log_problems.count} warnings/errors in floe-run.log: ${r.log_problems.first[0]}`)
}
log(JSON.stringify({ ok: figures.ok, problems, target: T,
  goals: Object.fromEntries(runs.map((r) => [r.interval, { avg_over_target: r.goal.avg_over_target, pass: r.goal.pass }])) }))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = figures.ok ? 0 : 1
