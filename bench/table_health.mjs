#!/usr/bin/env node
// Table health (issue 10, part 5): what a long 1 s-interval roster -> Iceberg job does to its
// tables, append and upsert, sampled at checkpoints 10, 100, 1,000, 2,000; with the sink's
// in-job maintenance on (default) or off (the baseline).
//
//   node bench/table_health.mjs [--checkpoints 2000] [--interval '1 s'] [--rps 2000] [--at 10,100,...]
//        [--maintenance on|off] [--target-file-size BYTES] ...
//   (normally via bench/table_health.sh, which records the command and writes the results file)
//
// Two jobs run at the same time, each `floe run` (coordinator + worker) in its own FLOE_HOME
// sandbox: the roster source -> an Iceberg table, append (demo.health_append) and upsert with
// PRIMARY KEY (npi) (demo.health_upsert), 'sink.parallelism' 1, EXACTLY_ONCE, one snapshot per
// checkpoint, the table properties a sink creates (old metadata.json files deleted after commit,
// 20 kept). --maintenance on: the sink's 'flink-maintenance.*' options of roster_job.mjs
// (compaction every 10 commits or a target file's worth of new data, files rolled at
// --target-file-size; snapshots older than --max-snapshot-age s expired every 10 commits, keeping
// --retain-last). --maintenance off: all three maintenance tasks switched off (the baseline).
// The roster source is throttled to --rps rows/s and holds rps x interval x (checkpoints + 30)
// events, so rows keep arriving past the last sample; after it the jobs are cancelled (SIGTERM).
//
// Every metadata JSON the table gets is read (table_watch.mjs): a data commit (its checkpoint
// id), a compaction ("replace" snapshot), an expiry. So every checkpoint k has two states:
// after commit k (its data commit's version), and after commit k and the maintenance that ran
// before the next commit (the last version before the commit of k + 1; since 04cdc96 a
// compaction's files are written in the background and committed after a later data commit, so
// this state holds the expiry after commit k but the compaction planned then only lands later).
// The per-checkpoint series (data files, delete files, table bytes, snapshots held, metadata
// folder bytes) of both are in the results file.
//
// Samples, at checkpoints 10, 100, 1,000, 2,000 (and --at, and the warm-up checkpoint): the
// table after commit k (the same point of the maintenance cycle at every sample), described by
// `floe table describe` of that version (its metadata JSON copied to a scratch warehouse: the
// files it names are still there, since a current snapshot's files are never removed): data
// files, delete files, manifests, data bytes, snapshots held; the metadata folder as found when
// that version appeared: bytes and file count of metadata JSON, manifest lists (snap-*.avro)
// and manifests (other *.avro), and the size of the version's JSON; and the data files and table
// bytes right after the newest compaction before commit k.
//
// Commit time of checkpoint k = mtime of the metadata JSON that commits snapshot k (the last
// file a commit writes, just before the catalog swap) minus the mtime of the checkpoint's
// chk-k/_metadata (written when checkpoint k completes; the worker then tells its sink to
// commit). Both are file times on one machine, so the difference is the sink's commit alone:
// read the table metadata, write the manifests, read the parent manifest list, write the
// manifest list and the metadata JSON; not the maintenance that follows it. Every checkpoint is
// timed: on the coordinator's "checkpoint k completed" line chk-k/_metadata is stat'ed (it is
// removed once the next checkpoint completes), and the metadata folder is polled every 20 ms.
// A sample reports checkpoint k's commit and the median and max over the 10 checkpoints up to
// k (single commits are noisy at millisecond scale).
//
// Scan: after the last sample and the jobs' end, `floe table scan` of the upsert table to a JSON
// lines file (timed: the upsert scan), then a fresh table with the same schema gets those rows in
// one `floe table append` (one data file, no deletes, one snapshot) and is scanned (timed): the
// same rows appended once. --scan-reps (3) alternating scans each, medians, ratio upsert/append.
//
// Goals (issue 10; PASS/FAIL printed and stored in "goals"): commit time (median of 10) at the
// last sample <= 1.2 x at checkpoint 10; metadata bytes flat after warm-up: at the last sample
// <= 1.2 x at the warm-up checkpoint (--warmup, 100), both right after the commit; data files
// bounded: after every commit, data files <= floor(table bytes / min file size) + 2 x rewrite
// commit count (the files compaction leaves alone, the files committed since the last
// compaction was planned, and those committed while it is written in the background, with room
// for its remainder; min file size = --min-file-size, else 75% of --target-file-size); upsert
// scan <= 1.3 x the same rows appended once.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pinBinary, record, sampleLoad } from './provenance.mjs'
import {
  compactionLogLines, logProblems, MAINTENANCE_ARGS, maintenanceSummaryLine, MAINTENANCE_USAGE, maintenanceFromArgs, maintenanceOptions,
  maintenanceRecord, minFileSize, rosterJobText, runFloe, benchArgs } from './roster_job.mjs'
import { folderBytes, parseIds, TableWatch } from './table_watch.mjs'

const USAGE = `usage: node bench/table_health.mjs [--checkpoints N] [--interval '1 s'] [--rps R] [--at K,K,...]
         [--warmup 100] [--seed S] [--scan-reps 3] [--floe PATH] [--out DIR] [--result FILE.json]
         ${MAINTENANCE_USAGE}`

const { opts, die, int } = benchArgs('table_health', USAGE, {
  checkpoints: { type: 'string', default: '2000' },
  interval: { type: 'string', default: '1 s' },
  rps: { type: 'string', default: '2000' },
  at: { type: 'string', default: '' },
  warmup: { type: 'string', default: '' },
  seed: { type: 'string', default: '42' },
  'scan-reps': { type: 'string', default: '3' },
  ...MAINTENANCE_ARGS,
  floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
  out: { type: 'string', default: process.env.OUT || 'bench/out/table-health' },
  result: { type: 'string', default: process.env.RESULT || '' },
})
const N = int('checkpoints', 1)
const RPS = int('rps', 1)
const SEED = int('seed')
const SCAN_REPS = int('scan-reps', 1)
const M = maintenanceFromArgs(opts, die)
// '1 s', '200 ms', '1s', '500ms'
const im = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min)\s*$/.exec(opts.interval)
if (!im) die(`--interval '${opts.interval}': expected e.g. '1 s' or '200 ms'`)
const INTERVAL_MS = Number(im[1]) * { ms: 1, s: 1000, min: 60000 }[im[2]]
// Warm-up: snapshots older than the expiry age are gone and the expiry cycle repeats; 100
// checkpoints at 1 s (60 s age + 10 commits, with room); half the run when it is shorter.
const WARMUP = opts.warmup === '' ? Math.max(1, Math.min(100, Math.floor(N / 2))) : int('warmup', 1)
if (WARMUP > N) die(`--warmup ${WARMUP} is beyond --checkpoints ${N}`)
const AT = [...new Set([10, 100, 1000, 2000, WARMUP, ...opts.at.split(',').filter(Boolean).map(Number)]
  .filter((k) => Number.isInteger(k) && k >= 1 && k <= N).concat([N]))].sort((a, b) => a - b)
const EVENTS = Math.ceil(RPS * (INTERVAL_MS / 1000) * (N + 30))
const OUT = path.resolve(opts.out)
const RESULT = opts.result
if (!fs.existsSync(path.resolve(opts.floe))) die(`${path.resolve(opts.floe)} not found (build floe, or --floe PATH / FLOE=...)`)
// the binary as it is now, copied into OUT: a rebuild during the run does not change what runs
const FLOE = pinBinary(path.resolve(opts.floe), OUT)
// The bound on data files (goal "data files bounded"), for either mode.
const MIN_FILE = minFileSize(M)
const LIMITS = { commit: 1.2, metadata: 1.2, scan: 1.3 }

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const round = (x, d = 1) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))
const num = (x) => (x == null ? '?' : x.toLocaleString('en-US'))
const median = (xs) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b)
  if (!s.length) return null
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const log = (line) => console.log(line)
const verdict = (pass) => (pass == null ? 'n/a' : pass ? 'PASS' : 'FAIL')

const floe = (args, env = {}) => runFloe(FLOE, args, env)

const COLUMNS_TABLE = 'seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL, ' +
  'event_time TIMESTAMP NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING, ' +
  'city STRING, zip STRING, phone STRING, active BOOLEAN'
function jobText(name, upsert) {
  return rosterJobText({
    comment: `table health ${name}: roster -> iceberg ${upsert ? 'upsert' : 'append'}, ${N} checkpoints, maintenance ${M.mode}`,
    name, upsert, interval: opts.interval, attempts: 3, delay: '200 ms', seed: SEED, events: EVENTS,
    rps: RPS, sinkParallelism: 1, sinkOptions: maintenanceOptions(M),
  })
}

// `floe table describe` of one metadata version: its JSON copied to a scratch warehouse.
function describeVersion(p, v) {
  const scratch = path.join(p.dir, 'describe')
  const meta = path.join(scratch, 'demo', 'v', 'metadata')
  fs.rmSync(scratch, { recursive: true, force: true })
  fs.mkdirSync(meta, { recursive: true })
  try {
    fs.copyFileSync(path.join(p.meta, `v${v}.metadata.json`), path.join(meta, 'v1.metadata.json'))
  } catch {
    return null   // deleted meanwhile (more than 20 versions later)
  }
  const r = floe(['table', 'describe', 'demo.v', '--warehouse', scratch])
  if (r.code !== 0) throw new Error(`floe table describe of ${p.table} v${v} failed: ${r.err.trim()}`)
  return parseIds(r.out)
}

// One table's job: run it, watch every metadata version, sample at AT, cancel after the last sample.
async function run(kind) {
  const name = `health_${kind}`
  const dir = path.join(OUT, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const p = { dir, home: path.join(dir, 'home'), wh: path.join(dir, 'wh'), chk: path.join(dir, 'chk'),
              job: path.join(dir, `${name}.sql`), table: `demo.${name}`, upsert: kind === 'upsert' }
  p.meta = path.join(p.wh, 'demo', name, 'metadata')
  p.data = path.join(p.wh, 'demo', name, 'data')
  fs.writeFileSync(p.job, jobText(name, p.upsert))
  const logPath = path.join(dir, 'floe-run.log')
  const logFile = fs.openSync(logPath, 'w')
  const args = ['run', p.job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`]
  const started = Date.now()
  const child = spawn(FLOE, args, { env: { ...process.env, FLOE_HOME: p.home }, stdio: ['ignore', 'ignore', 'pipe'] })
  let done = null
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  exited.then((r) => { done = r })
  const watch = new TableWatch(p.meta, { pollMs: 20 }).start()

  const completedAt = new Map()   // checkpoint -> mtime of chk-k/_metadata (else when its line was read)
  let restarts = 0
  let tail = ''
  child.stderr.on('data', (d) => {
    const now = Date.now()
    fs.writeSync(logFile, d)
    tail += d
    const lines = tail.split('\n')
    tail = lines.pop()
    for (const line of lines) {
      let m
      if ((m = /checkpoint (\d+) completed/.exec(line))) {
        const k = Number(m[1])
        let t = now
        // <execution.checkpointing.dir>/<job id>/chk-k: the only job in p.chk.
        try {
          const job = fs.readdirSync(p.chk).find((n) => n !== 'savepoints')
          t = fs.statSync(path.join(p.chk, job, `chk-${k}`, '_metadata')).mtimeMs
        } catch { /* gone already */ }
        completedAt.set(k, t)
      } else if (/worker \d+ started \(attempt (\d+)\)/.test(line) && !/attempt 1\)/.test(line)) {
        restarts++
      }
    }
  })
  const commitMs = (k) => {
    const c = watch.commit(k)
    return c && completedAt.has(k) ? c.mtime_ms - completedAt.get(k) : null
  }

  const samples = []
  for (const k of AT) {
    while (!done && !completedAt.has(k)) await sleep(20)
    if (done && !completedAt.has(k)) break
    // the version that commits snapshot k, at most 60 s (and 3 intervals) after checkpoint k completed
    const t0 = Date.now()
    while (!watch.commit(k) && Date.now() - t0 < 60000 + 3 * INTERVAL_MS && !done) await sleep(10)
    watch.poll()
    const state = watch.commit(k)
    const d = (state && describeVersion(p, state.v)) || parseIds(floe(['table', 'describe', p.table, '--warehouse', p.wh]).out)
    const snaps = d.snapshots || []
    const cur = snaps.find((s) => s['snapshot-id'] === d['current-snapshot-id']) || {}
    const f = d.files || {}
    // the newest compaction before commit k
    let lastComp = null
    let lastCommit = 0
    for (const v of watch.versions) {
      if (state && v.v >= state.v) break
      if (v.kind === 'commit') lastCommit = v.checkpoint
      if (v.kind === 'replace') lastComp = { landed_after_checkpoint: lastCommit, data_files: v.data_files, table_bytes: v.files_bytes }
    }
    const window = []
    for (let c = Math.max(1, k - 9); c <= k; c++) if (commitMs(c) != null) window.push(commitMs(c))
    const s = {
      checkpoint: k,
      state: state ? 'after commit k' : 'latest (commit k not seen)',
      version: state ? state.v : null,
      current_snapshot_checkpoint: cur.summary && cur.summary['floe.checkpoint-id'] != null ? Number(cur.summary['floe.checkpoint-id']) : null,
      t_s: round((Date.now() - started) / 1000),
      rows: f['data-records'] ?? null,
      total_records: cur.summary ? Number(cur.summary['total-records']) : null,
      data_files: f['data-files'] ?? null,
      data_bytes: f['data-bytes'] ?? null,
      avg_data_file_bytes: f['data-files'] ? Math.round(f['data-bytes'] / f['data-files']) : null,
      delete_files: f['delete-files'] ?? null,
      delete_bytes: f['delete-bytes'] ?? null,
      manifests: f.manifests ?? null,
      snapshots: snaps.length,
      metadata_bytes: state ? state.folder.total_bytes : null,
      metadata_files: state ? state.folder.total_files : null,
      metadata: state ? { ...state.folder, current_json_bytes: state.json_bytes, current_version: state.v } : null,
      last_compaction: lastComp && { ...lastComp, avg_data_file_bytes: lastComp.data_files ? Math.round(lastComp.table_bytes / lastComp.data_files) : null },
      after_maintenance: null,   // filled in after the run: the last version before commit k + 1
      data_folder: folderBytes(p.data),
      commit_ms: commitMs(k) != null ? Math.round(commitMs(k)) : null,
      commit_ms_median10: round(median(window), 0),
      commit_ms_max10: window.length ? Math.round(Math.max(...window)) : null,
      commits_timed10: window.length,
    }
    samples.push(s)
    log(`${kind} @ checkpoint ${num(k)} (${s.t_s} s): data files ${num(s.data_files)} (avg ${num(round(s.avg_data_file_bytes / 1024, 1))} KiB; ` +
        `${lastComp ? `${num(lastComp.data_files)} after the last compaction` : 'no compaction yet'}), delete files ${num(s.delete_files)}, ` +
        `manifests ${num(s.manifests)}, snapshots ${num(s.snapshots)}, metadata ${num(s.metadata_bytes)} B in ${num(s.metadata_files)} files ` +
        `(JSON ${num(s.metadata && s.metadata.current_json_bytes)} B), commit ${num(s.commit_ms)} ms ` +
        `(median of last 10 ${num(s.commit_ms_median10)}, max ${num(s.commit_ms_max10)})`)
  }
  const reached = Math.max(0, ...completedAt.keys())
  // the last sample is taken: cancel (SIGTERM: the coordinator cancels the job)
  if (!done) child.kill('SIGTERM')
  const t = Date.now()
  while (!done && Date.now() - t < 20000) await sleep(50)
  if (!done) { child.kill('SIGKILL'); await exited }
  await watch.stop()
  await new Promise((r) => (child.stderr.readableEnded ? r() : child.stderr.on('end', r)))
  fs.closeSync(logFile)
  fs.rmSync(path.join(p.dir, 'describe'), { recursive: true, force: true })

  for (const s of samples) {
    const a = watch.afterMaintenance(s.checkpoint)
    s.after_maintenance = a ? { version: a.v, kind: a.kind, data_files: a.data_files, delete_files: a.delete_files,
                                snapshots: a.snapshots, metadata_bytes: a.folder.total_bytes } : null
  }
  // Per checkpoint 1..reached (index k - 1): commit time, both states.
  const K = Array.from({ length: reached }, (_, i) => i + 1)
  const pick = (rec, f) => (rec ? f(rec) : null)
  const series = {
    completed_s: K.map((k) => (completedAt.has(k) ? round((completedAt.get(k) - started) / 1000, 3) : null)),
    commit_ms: K.map((k) => pick(commitMs(k), Math.round)),
    after_commit: {
      data_files: K.map((k) => pick(watch.commit(k), (r) => r.data_files)),
      delete_files: K.map((k) => pick(watch.commit(k), (r) => r.delete_files)),
      files_bytes: K.map((k) => pick(watch.commit(k), (r) => r.files_bytes)),
      snapshots: K.map((k) => pick(watch.commit(k), (r) => r.snapshots)),
      metadata_bytes: K.map((k) => pick(watch.commit(k), (r) => r.folder.total_bytes)),
    },
    after_maintenance: {
      data_files: K.map((k) => pick(watch.afterMaintenance(k), (r) => r.data_files)),
      delete_files: K.map((k) => pick(watch.afterMaintenance(k), (r) => r.delete_files)),
      files_bytes: K.map((k) => pick(watch.afterMaintenance(k), (r) => r.files_bytes)),
      snapshots: K.map((k) => pick(watch.afterMaintenance(k), (r) => r.snapshots)),
      metadata_bytes: K.map((k) => pick(watch.afterMaintenance(k), (r) => r.folder.total_bytes)),
    },
  }
  const gaps = []
  for (let k = 2; k <= reached; k++) {
    if (completedAt.has(k) && completedAt.has(k - 1)) gaps.push(completedAt.get(k) - completedAt.get(k - 1))
  }
  const logText = fs.readFileSync(logPath, 'utf8')
  const compLog = compactionLogLines(logText)
  const replaces = watch.versions.filter((v) => v.kind === 'replace')
  const expiries = watch.versions.filter((v) => v.kind === 'expire')
  const maintenance = {
    compactions: replaces.length,
    data_files_rewritten: replaces.reduce((a, v) => a + v.rewritten_data_files, 0),
    data_files_written: replaces.reduce((a, v) => a + v.added_data_files, 0),
    delete_files_removed: replaces.reduce((a, v) => a + v.removed_delete_files, 0),
    bytes_rewritten: replaces.reduce((a, v) => a + v.rewritten_bytes, 0),
    bytes_written: replaces.reduce((a, v) => a + v.added_bytes, 0),
    data_bytes_committed: watch.versions.filter((v) => v.kind === 'commit').reduce((a, v) => a + v.added_bytes, 0),
    // what the worker's log times: 'whole' (inline compaction: read, write, commit) or 'commit'
    // (files written in the background, the commit on the committer's thread)
    compaction_ms_timed: compLog[0] ? compLog[0].timed : null,
    compaction_ms_median: median(compLog.map((c) => c.ms)),
    compaction_ms_max: compLog.length ? Math.max(...compLog.map((c) => c.ms).filter((x) => x != null)) : null,
    compaction_log_lines: compLog.length,
    log_summary: maintenanceSummaryLine(logText),
    // one row per compaction: the checkpoint it followed, files and bytes rewritten -> written, the
    // data files and table bytes after it, and its time as the worker logged it
    compaction_columns: ['after_checkpoint', 'rewritten_files', 'written_files', 'rewritten_bytes', 'written_bytes',
                         'data_files_after', 'table_bytes_after', 'ms'],
    compaction_rows: (() => {
      let last = 0
      const rows = []
      for (const v of watch.versions) {
        if (v.kind === 'commit') last = v.checkpoint
        if (v.kind === 'replace') {
          rows.push([last, v.rewritten_data_files, v.added_data_files, v.rewritten_bytes, v.added_bytes, v.data_files, v.files_bytes,
                     compLog[rows.length] ? compLog[rows.length].ms : null])
        }
      }
      return rows
    })(),
    expirations: expiries.length,
    snapshots_expired: expiries.reduce((a, v) => a + v.expired, 0),
    metadata_versions: watch.versions.length,
  }
  const commits = K.map((k) => commitMs(k)).filter((x) => x != null)
  return { kind, p, samples, reached, restarts, exit: done, seconds: round((Date.now() - started) / 1000),
           commits_timed: commits.length, commit_ms_all: commits.map((v) => Math.round(v)), series, maintenance,
           checkpoint_gap_ms: { median: round(median(gaps), 0), max: gaps.length ? Math.round(Math.max(...gaps)) : null,
                                over_1_5x_interval: gaps.filter((g) => g > 1.5 * INTERVAL_MS).length },
           log_problems: logProblems(logText) }
}

// Times `floe table scan` of a table to /dev/null; returns seconds.
function timedScan(table, wh) {
  const fd = fs.openSync('/dev/null', 'w')
  const t0 = process.hrtime.bigint()
  const r = spawnSync(FLOE, ['table', 'scan', table, '--warehouse', wh], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' })
  const s = Number(process.hrtime.bigint() - t0) / 1e9
  fs.closeSync(fd)
  if (r.status !== 0) throw new Error(`floe table scan ${table} failed: ${r.stderr}`)
  return s
}

async function scanCompare(up) {
  const wh = up.p.wh
  const rowsFile = path.join(OUT, 'upsert-rows.jsonl')
  const fd = fs.openSync(rowsFile, 'w')
  const r = spawnSync(FLOE, ['table', 'scan', up.p.table, '--warehouse', wh], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' })
  fs.closeSync(fd)
  if (r.status !== 0) throw new Error(`floe table scan failed: ${r.stderr}`)
  const rows = fs.readFileSync(rowsFile, 'utf8').split('\n').filter(Boolean).length
  const once = 'demo.health_append_once'
  let c = floe(['table', 'create', once, '--warehouse', wh, '--schema', COLUMNS_TABLE])
  if (c.code !== 0) throw new Error(`floe table create failed: ${c.err}`)
  c = floe(['table', 'append', once, rowsFile, '--warehouse', wh])
  if (c.code !== 0) throw new Error(`floe table append failed: ${c.err}`)
  const dsc = parseIds(floe(['table', 'describe', once, '--warehouse', wh]).out)
  if (dsc.files['data-records'] !== rows) throw new Error(`append-once table holds ${dsc.files['data-records']} rows, expected ${rows}`)
  const ud = parseIds(floe(['table', 'describe', up.p.table, '--warehouse', wh]).out)
  const upsertS = []
  const onceS = []
  for (let i = 0; i < SCAN_REPS; i++) {
    upsertS.push(timedScan(up.p.table, wh))
    onceS.push(timedScan(once, wh))
  }
  const u = median(upsertS)
  const o = median(onceS)
  return { rows, upsert_table: up.p.table, upsert_data_files: ud.files['data-files'], upsert_delete_files: ud.files['delete-files'],
           upsert_data_records: ud.files['data-records'],
           append_once_table: once, append_once_data_files: dsc.files['data-files'],
           upsert_scan_s: upsertS.map((x) => round(x, 3)), append_once_scan_s: onceS.map((x) => round(x, 3)),
           upsert_scan_s_median: round(u, 3), append_once_scan_s_median: round(o, 3), ratio: round(u / o, 3) }
}

// The goals of issue 10 for one table (see the head of this file).
function tableGoals(r) {
  const first = r.samples.find((s) => s.checkpoint === 10) || r.samples[0]
  const warm = r.samples.find((s) => s.checkpoint === WARMUP)
  const last = r.samples[r.samples.length - 1]
  if (!first || !last) return null
  const commitRatio = first.commit_ms_median10 ? last.commit_ms_median10 / first.commit_ms_median10 : null
  const mdRatio = warm && warm.metadata_bytes ? last.metadata_bytes / warm.metadata_bytes : null
  // metadata after every commit from the warm-up on: the smallest and largest against the warm-up's
  const md = r.series.after_commit.metadata_bytes.slice(WARMUP - 1).filter((x) => x != null)
  // data files after every commit against the bound
  let worst = null
  r.series.after_commit.data_files.forEach((files, i) => {
    const bytes = r.series.after_commit.files_bytes[i]
    if (files == null || bytes == null) return
    const bound = Math.floor(bytes / MIN_FILE) + 2 * M.rewriteCommits
    if (!worst || files - bound > worst.data_files - worst.bound) worst = { checkpoint: i + 1, data_files: files, bound, table_bytes: bytes }
  })
  const maxFiles = Math.max(0, ...r.series.after_commit.data_files.filter((x) => x != null))
  return {
    commit_time: {
      from_checkpoint: first.checkpoint, to_checkpoint: last.checkpoint, from_ms: first.commit_ms_median10, to_ms: last.commit_ms_median10,
      measure: 'median of the commit times of the 10 checkpoints up to the sample',
      ratio: round(commitRatio, 2), limit: LIMITS.commit, pass: commitRatio == null ? null : commitRatio <= LIMITS.commit,
    },
    metadata_flat: {
      warmup_checkpoint: WARMUP, to_checkpoint: last.checkpoint, warmup_bytes: warm ? warm.metadata_bytes : null,
      to_bytes: last.metadata_bytes, ratio: round(mdRatio, 2), limit: LIMITS.metadata,
      max_after_warmup_ratio: warm && md.length ? round(Math.max(...md) / warm.metadata_bytes, 2) : null,
      min_after_warmup_ratio: warm && md.length ? round(Math.min(...md) / warm.metadata_bytes, 2) : null,
      pass: mdRatio == null || WARMUP >= last.checkpoint ? null : mdRatio <= LIMITS.metadata,
    },
    data_files_bounded: {
      rule: `after every commit: data files <= floor(table bytes / ${MIN_FILE}) + 2 x ${M.rewriteCommits}`,
      max_data_files: maxFiles, worst, from_first_to_last_sample: round(last.data_files / first.data_files, 2),
      pass: worst ? worst.data_files <= worst.bound : null,
    },
  }
}

log(`table_health: append + upsert (concurrently), ${num(N)} checkpoints every ${opts.interval}, ${num(RPS)} rows/s, ` +
    `${num(EVENTS)} events, samples at ${AT.join(', ')} (warm-up ${WARMUP}), seed ${SEED}, maintenance ${M.mode}` +
    `${M.mode === 'on' ? ` (target file ${num(M.targetFileSize)} B, rewrite every ${M.rewriteCommits} commits` +
      `${M.eqDeleteFiles ? ` or ${M.eqDeleteFiles} equality-delete file(s)` : ''}, ` +
      `expire snapshots older than ${M.maxSnapshotAgeS} s every ${M.expireCommits} commits, retain ${M.retainLast})` : ''}; ` +
    `floe ${FLOE}; scratch ${OUT}`)
fs.mkdirSync(OUT, { recursive: true })
const load0 = await sampleLoad()
const T0 = Date.now()
const runs = await Promise.all(['append', 'upsert'].map((k) => run(k)))
const problems = []
for (const r of runs) {
  if (r.samples.length < AT.length) problems.push(`${r.kind}: the job ended at checkpoint ${r.reached}, before checkpoint ${AT[r.samples.length]}`)
  if (r.restarts) problems.push(`${r.kind}: the worker restarted ${r.restarts} time(s)`)
}
let scan = null
if (!problems.length) {
  scan = await scanCompare(runs.find((r) => r.kind === 'upsert'))
  log(`scan: ${num(scan.rows)} rows: upsert table (${num(scan.upsert_data_files)} data files, ${num(scan.upsert_delete_files)} delete files) ` +
      `${scan.upsert_scan_s_median} s, the same rows appended once ${scan.append_once_scan_s_median} s ` +
      `(${scan.append_once_data_files} data file): ratio ${scan.ratio}`)
}
const goals = {}
for (const r of runs) {
  const g = tableGoals(r)
  if (g) goals[r.kind] = g
}
if (scan) goals.upsert_scan = { ratio: scan.ratio, limit: LIMITS.scan, pass: scan.ratio <= LIMITS.scan }
const figures = {
  table_health: { checkpoints: N, interval: opts.interval, interval_ms: INTERVAL_MS, rps: RPS, events: EVENTS, seed: SEED,
                  at: AT, warmup: WARMUP, sink_parallelism: 1, concurrent: true, maintenance: maintenanceRecord(M),
                  scan_reps: SCAN_REPS },
  ok: problems.length === 0,
  problems,
  seconds: round((Date.now() - T0) / 1000),
  tables: Object.fromEntries(runs.map((r) => [r.kind, {
    table: r.p.table, reached_checkpoint: r.reached, restarts: r.restarts, seconds: r.seconds,
    exit: r.exit ? (r.exit.signal ? `signal ${r.exit.signal}` : r.exit.code) : null,
    commits_timed: r.commits_timed, commit_ms_median: round(median(r.commit_ms_all), 0),
    checkpoint_gap_ms: r.checkpoint_gap_ms, maintenance: r.maintenance, log_problems: r.log_problems,
    samples: r.samples, commit_ms: r.commit_ms_all, series: r.series,
  }])),
  scan,
  goals,
}
// JSON with arrays of numbers on one line (the series are long).
const stringify = (x) => JSON.stringify(x, null, 2).replace(/\[\s*((?:-?[\d.]+|null)(?:,\s*(?:-?[\d.]+|null))*)\s*\]/g,
  (_, inner) => `[${inner.split(/,\s*/).join(', ')}]`)
if (RESULT) {
  fs.mkdirSync(path.dirname(path.resolve(RESULT)), { recursive: true })
  const full = { ...(await record({ bench: 'table-health', floe: FLOE, start: load0 })), ...figures }
  fs.writeFileSync(RESULT, stringify(full) + '\n')
}
log('| table | checkpoint | data files | avg data file KiB | delete files | manifests | snapshots | metadata bytes | metadata files | current JSON bytes | commit ms (median of 10) |')
log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for (const r of runs) {
  for (const s of r.samples) {
    log(`| ${r.kind} | ${num(s.checkpoint)} | ${num(s.data_files)} | ${num(round(s.avg_data_file_bytes / 1024, 1))} | ${num(s.delete_files)} | ` +
        `${num(s.manifests)} | ${num(s.snapshots)} | ${num(s.metadata_bytes)} | ${num(s.metadata_files)} | ${num(s.metadata && s.metadata.current_json_bytes)} | ${num(s.commit_ms_median10)} |`)
  }
}
for (const r of runs) {
  const m = r.maintenance
  log(`${r.kind}: ${m.compactions} compactions (${num(m.data_files_rewritten)} data files -> ${num(m.data_files_written)}, ` +
      `${num(m.delete_files_removed)} delete files removed; ${num(m.bytes_written)} B written for ${num(m.data_bytes_committed)} B committed; ` +
      `median ${num(m.compaction_ms_median)} ms, max ${num(m.compaction_ms_max)} ms), ${m.expirations} expiries (${num(m.snapshots_expired)} snapshots); ` +
      `checkpoint gaps median ${num(r.checkpoint_gap_ms.median)} ms, max ${num(r.checkpoint_gap_ms.max)} ms; ` +
      `${r.log_problems.count} warnings/errors in floe-run.log${r.log_problems.count ? `: ${r.log_problems.first[0]}` : ''}`)
}
log(`goals (maintenance ${M.mode}):`)
for (const kind of ['append', 'upsert']) {
  const g = goals[kind]
  if (!g) { log(`  ${kind}: not measured`); continue }
  log(`  ${verdict(g.commit_time.pass)} ${kind} commit time: median of 10 at checkpoint ${num(g.commit_time.to_checkpoint)} ${num(g.commit_time.to_ms)} ms ` +
      `/ at ${num(g.commit_time.from_checkpoint)} ${num(g.commit_time.from_ms)} ms = ${g.commit_time.ratio} (<= ${LIMITS.commit})`)
  log(`  ${verdict(g.metadata_flat.pass)} ${kind} metadata flat: ${num(g.metadata_flat.to_bytes)} B at ${num(g.metadata_flat.to_checkpoint)} ` +
      `/ ${num(g.metadata_flat.warmup_bytes)} B at warm-up ${num(WARMUP)} = ${g.metadata_flat.ratio} (<= ${LIMITS.metadata}; ` +
      `after warm-up ${g.metadata_flat.min_after_warmup_ratio}..${g.metadata_flat.max_after_warmup_ratio})`)
  const w = g.data_files_bounded.worst
  log(`  ${verdict(g.data_files_bounded.pass)} ${kind} data files bounded: at most ${num(g.data_files_bounded.max_data_files)}; ` +
      `closest to the bound: ${w ? `${num(w.data_files)} files at checkpoint ${num(w.checkpoint)}, bound ${num(w.bound)} (${g.data_files_bounded.rule})` : '?'}`)
}
if (goals.upsert_scan) log(`  ${verdict(goals.upsert_scan.pass)} upsert scan / same rows appended once = ${goals.upsert_scan.ratio} (<= ${LIMITS.scan})`)
else log('  n/a upsert scan: not measured')
log(JSON.stringify({ ok: figures.ok, problems, maintenance: M.mode,
  goals: Object.fromEntries(Object.entries(goals).map(([k, g]) => [k, g.pass !== undefined ? g.pass
    : Object.fromEntries(Object.entries(g).map(([n, x]) => [n, x.pass]))])) }))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = figures.ok ? 0 : 1
