#!/usr/bin/env node
// Table health (issue 10, part 5): what a long 1 s-interval roster -> Iceberg job does to its
// tables, append and upsert, sampled at checkpoints 10, 100, 1,000, 2,000.
//
//   node bench/table_health.mjs [--checkpoints 2000] [--interval '1 s'] [--rps 2000] [--at 10,100,...]
//   (normally via bench/table_health.sh, which records the command and writes the results file)
//
// Two jobs run at the same time, each `floe run` (coordinator + worker) in its own FLOE_HOME
// sandbox: the roster source -> an Iceberg table, append (demo.health_append) and upsert with
// PRIMARY KEY (npi) (demo.health_upsert), 'sink.parallelism' 1, EXACTLY_ONCE, one snapshot per
// checkpoint, the table properties a sink creates (old metadata.json files deleted after commit,
// 20 kept). No compaction and no snapshot expiry run: this is the baseline they must improve.
// The roster source is throttled to --rps rows/s and holds rps x interval x (checkpoints + 30)
// events, so rows keep arriving until the last sample; after it the jobs are cancelled (SIGTERM).
//
// At each sample checkpoint k (the coordinator's "checkpoint k completed" line), once snapshot k
// is in the table: `floe table describe` (files of the current snapshot: data files and bytes,
// delete files and bytes, manifests; snapshots held), and the metadata folder: bytes and file
// count of metadata JSON, manifest lists (snap-*.avro) and manifests (other *.avro), and the size
// of the current metadata JSON.
//
// Commit time of checkpoint k = mtime of the metadata JSON that commits snapshot k (the last
// file a commit writes, just before the catalog swap) minus the mtime of the checkpoint's
// chk-k/_metadata (written when checkpoint k completes; the worker then tells its sink to
// commit). Both are file times on one machine, so the difference is the sink's commit alone:
// read the table metadata, write the manifests, read the parent manifest list, write the
// manifest list and the metadata JSON. Every checkpoint is timed: on the coordinator's
// "checkpoint k completed" line chk-k/_metadata is stat'ed (it is removed once the next
// checkpoint completes), and while a commit is pending the metadata folder is polled every 10 ms
// for a new vN.metadata.json, whose last "floe.checkpoint-id" (that of its current snapshot)
// says which checkpoint it commits. A sample reports checkpoint k's commit and the median and
// max over the 10 checkpoints up to k (single commits are noisy at millisecond scale).
//
// Scan: after the last sample and the jobs' end, `floe table scan` of the upsert table to a JSON
// lines file (timed: the upsert scan), then a fresh table with the same schema gets those rows in
// one `floe table append` (one data file, no deletes, one snapshot) and is scanned (timed): the
// same rows appended once. --scan-reps (3) alternating scans each, medians, ratio upsert/append.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { record, sampleLoad } from './provenance.mjs'
import { rosterJobText, runFloe } from './roster_job.mjs'

const USAGE = `usage: node bench/table_health.mjs [--checkpoints N] [--interval '1 s'] [--rps R] [--at K,K,...]
         [--seed S] [--scan-reps 3] [--floe PATH] [--out DIR] [--result FILE.json]`

let opts
try {
  opts = parseArgs({
    options: {
      checkpoints: { type: 'string', default: '2000' },
      interval: { type: 'string', default: '1 s' },
      rps: { type: 'string', default: '2000' },
      at: { type: 'string', default: '' },
      seed: { type: 'string', default: '42' },
      'scan-reps': { type: 'string', default: '3' },
      floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
      out: { type: 'string', default: process.env.OUT || 'bench/out/table-health' },
      result: { type: 'string', default: process.env.RESULT || '' },
      help: { type: 'boolean', default: false },
    },
  }).values
} catch (e) {
  console.error(`table_health: ${e.message}\n${USAGE}`)
  process.exit(2)
}
if (opts.help) { console.log(USAGE); process.exit(0) }
const die = (msg) => { console.error(`table_health: ${msg}\n${USAGE}`); process.exit(2) }
const int = (name, min = 0) => {
  const v = Number(opts[name])
  if (!Number.isInteger(v) || v < min) die(`--${name} must be an integer >= ${min}`)
  return v
}
const N = int('checkpoints', 1)
const RPS = int('rps', 1)
const SEED = int('seed')
const SCAN_REPS = int('scan-reps', 1)
// '1 s', '200 ms', '1s', '500ms'
const im = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min)\s*$/.exec(opts.interval)
if (!im) die(`--interval '${opts.interval}': expected e.g. '1 s' or '200 ms'`)
const INTERVAL_MS = Number(im[1]) * { ms: 1, s: 1000, min: 60000 }[im[2]]
const AT = [...new Set([10, 100, 1000, 2000, ...opts.at.split(',').filter(Boolean).map(Number)]
  .filter((k) => Number.isInteger(k) && k >= 1 && k <= N).concat([N]))].sort((a, b) => a - b)
const EVENTS = Math.ceil(RPS * (INTERVAL_MS / 1000) * (N + 30))
const FLOE = path.resolve(opts.floe)
const OUT = path.resolve(opts.out)
const RESULT = opts.result
if (!fs.existsSync(FLOE)) die(`${FLOE} not found (build floe, or --floe PATH / FLOE=...)`)

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const round = (x, d = 1) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))
const num = (x) => (x == null ? '?' : x.toLocaleString('en-US'))
const median = (xs) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b)
  if (!s.length) return null
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const log = (line) => console.log(line)

const floe = (args, env = {}) => runFloe(FLOE, args, env)
// Snapshot ids exceed 2^53: quote them before JSON.parse.
const parseIds = (text) => JSON.parse(text.replace(/("(?:current-|parent-)?snapshot-id"\s*:\s*)(-?\d+)/g, '$1"$2"'))

const COLUMNS_TABLE = 'seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL, ' +
  'event_time TIMESTAMP NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING, ' +
  'city STRING, zip STRING, phone STRING, active BOOLEAN'
function jobText(name, upsert) {
  return rosterJobText({
    comment: `table health ${name}: roster -> iceberg ${upsert ? 'upsert' : 'append'}, ${N} checkpoints`,
    name, upsert, interval: opts.interval, attempts: 3, delay: '200 ms', seed: SEED, events: EVENTS,
    rps: RPS, sinkParallelism: 1,
  })
}

// The metadata folder: bytes and counts by kind; the newest metadata JSON.
function metadataFolder(dir) {
  const out = { json: { files: 0, bytes: 0 }, manifest_lists: { files: 0, bytes: 0 }, manifests: { files: 0, bytes: 0 },
                other: { files: 0, bytes: 0 }, current_json_bytes: null, current_version: 0 }
  let names = []
  try { names = fs.readdirSync(dir) } catch { return out }
  for (const n of names) {
    let st
    try { st = fs.statSync(path.join(dir, n)) } catch { continue }   // deleted meanwhile
    const kind = /\.metadata\.json$/.test(n) ? 'json' : /^snap-.*\.avro$/.test(n) ? 'manifest_lists'
      : /\.avro$/.test(n) ? 'manifests' : 'other'
    out[kind].files++
    out[kind].bytes += st.size
    const v = /^v(\d+)\.metadata\.json$/.exec(n)
    if (v && Number(v[1]) > out.current_version) { out.current_version = Number(v[1]); out.current_json_bytes = st.size }
  }
  out.total_bytes = out.json.bytes + out.manifest_lists.bytes + out.manifests.bytes + out.other.bytes
  out.total_files = out.json.files + out.manifest_lists.files + out.manifests.files + out.other.files
  return out
}
function newestVersion(dir) {
  let best = 0
  let names = []
  try { names = fs.readdirSync(dir) } catch { return 0 }
  for (const n of names) {
    const v = /^v(\d+)\.metadata\.json$/.exec(n)
    if (v && Number(v[1]) > best) best = Number(v[1])
  }
  return best
}

// One table's job: run it, time every commit, sample at AT, cancel after the last sample.
async function run(kind) {
  const name = `health_${kind}`
  const dir = path.join(OUT, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const p = { dir, home: path.join(dir, 'home'), wh: path.join(dir, 'wh'), chk: path.join(dir, 'chk'),
              job: path.join(dir, `${name}.sql`), table: `demo.${name}`, upsert: kind === 'upsert' }
  p.meta = path.join(p.wh, 'demo', name, 'metadata')
  fs.writeFileSync(p.job, jobText(name, p.upsert))
  const logFile = fs.openSync(path.join(dir, 'floe-run.log'), 'w')
  const args = ['run', p.job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`]
  const started = Date.now()
  const child = spawn(FLOE, args, { env: { ...process.env, FLOE_HOME: p.home }, stdio: ['ignore', 'ignore', 'pipe'] })
  let done = null
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  exited.then((r) => { done = r })

  const completedAt = new Map()   // checkpoint -> mtime of chk-k/_metadata (else when its line was read)
  const committedAt = new Map()   // checkpoint -> mtime of the metadata JSON committing it
  const commitMs = new Map()      // checkpoint -> commit time (ms), see the head of this file
  let pending = 0                 // completed checkpoints whose commit was not seen yet
  let restarts = 0
  let tail = ''
  const settle = (k) => {
    if (completedAt.has(k) && committedAt.has(k) && !commitMs.has(k)) commitMs.set(k, committedAt.get(k) - completedAt.get(k))
  }
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
        try { t = fs.statSync(path.join(p.chk, `chk-${k}`, '_metadata')).mtimeMs } catch { /* gone already */ }
        completedAt.set(k, t)
        pending++
        settle(k)
      } else if (/worker \d+ started \(attempt (\d+)\)/.test(line) && !/attempt 1\)/.test(line)) {
        restarts++
      }
    }
  })

  // Commit timer: polls for a new metadata JSON while a commit is due (and every 500 ms anyway).
  let lastVersion = 0
  let lastPoll = 0
  let timer = true
  const timerDone = (async () => {
    while (timer && !done) {
      await sleep(10)
      if (pending <= 0 && Date.now() - lastPoll < 500) continue
      lastPoll = Date.now()
      const v = newestVersion(p.meta)
      if (v <= lastVersion) continue
      lastVersion = v
      const file = path.join(p.meta, `v${v}.metadata.json`)
      let text, mt
      try { mt = fs.statSync(file).mtimeMs; text = fs.readFileSync(file, 'utf8') } catch { continue }
      const i = text.lastIndexOf('"floe.checkpoint-id"')
      if (i < 0) continue   // the table's creation
      const m = /"floe\.checkpoint-id"\s*:\s*"(\d+)"/.exec(text.slice(i, i + 60))
      if (!m) continue
      const k = Number(m[1])
      if (!committedAt.has(k)) { committedAt.set(k, mt); pending--; settle(k) }
    }
  })()

  const samples = []
  for (const k of AT) {
    while (!done && !completedAt.has(k)) await sleep(20)
    if (done && !completedAt.has(k)) break
    // wait for snapshot k in the table (its metadata JSON), at most 30 s
    const t0 = Date.now()
    while (!commitMs.has(k) && Date.now() - t0 < 30000 && !done) await sleep(10)
    const folder = metadataFolder(p.meta)
    const dsc = floe(['table', 'describe', p.table, '--warehouse', p.wh])
    if (dsc.code !== 0) throw new Error(`${kind}: floe table describe failed: ${dsc.err.trim()}`)
    const d = parseIds(dsc.out)
    const snaps = d.snapshots || []
    const cur = snaps.find((s) => s['snapshot-id'] === d['current-snapshot-id']) || {}
    const f = d.files || {}
    const window = []
    for (let c = Math.max(1, k - 9); c <= k; c++) if (commitMs.has(c)) window.push(commitMs.get(c))
    const s = {
      checkpoint: k,
      current_snapshot_checkpoint: cur.summary ? Number(cur.summary['floe.checkpoint-id']) : null,
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
      metadata_bytes: folder.total_bytes,
      metadata_files: folder.total_files,
      metadata: folder,
      commit_ms: commitMs.has(k) ? Math.round(commitMs.get(k)) : null,
      commit_ms_median10: round(median(window), 0),
      commit_ms_max10: window.length ? Math.round(Math.max(...window)) : null,
      commits_timed10: window.length,
    }
    samples.push(s)
    log(`${kind} @ checkpoint ${num(k)} (${s.t_s} s): data files ${num(s.data_files)} (avg ${num(round(s.avg_data_file_bytes / 1024, 1))} KiB), ` +
        `delete files ${num(s.delete_files)}, manifests ${num(s.manifests)}, snapshots ${num(s.snapshots)}, ` +
        `metadata ${num(s.metadata_bytes)} B in ${num(s.metadata_files)} files (current JSON ${num(folder.current_json_bytes)} B), ` +
        `commit ${num(s.commit_ms)} ms (median of last 10 ${num(s.commit_ms_median10)}, max ${num(s.commit_ms_max10)})`)
  }
  const reached = Math.max(0, ...completedAt.keys())
  // the last sample is taken: cancel (SIGTERM: the coordinator cancels the job)
  if (!done) child.kill('SIGTERM')
  const t = Date.now()
  while (!done && Date.now() - t < 20000) await sleep(50)
  if (!done) { child.kill('SIGKILL'); await exited }
  timer = false
  await timerDone
  await new Promise((r) => (child.stderr.readableEnded ? r() : child.stderr.on('end', r)))
  fs.closeSync(logFile)
  const all = [...commitMs.entries()].sort((a, b) => a[0] - b[0])
  return { kind, p, samples, reached, restarts, exit: done, seconds: round((Date.now() - started) / 1000),
           commits_timed: all.length, commit_ms_all: all.map(([, v]) => Math.round(v)) }
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
  const upsertS = []
  const onceS = []
  for (let i = 0; i < SCAN_REPS; i++) {
    upsertS.push(timedScan(up.p.table, wh))
    onceS.push(timedScan(once, wh))
  }
  const u = median(upsertS)
  const o = median(onceS)
  return { rows, upsert_table: up.p.table, append_once_table: once, append_once_data_files: dsc.files['data-files'],
           upsert_scan_s: upsertS.map((x) => round(x, 3)), append_once_scan_s: onceS.map((x) => round(x, 3)),
           upsert_scan_s_median: round(u, 3), append_once_scan_s_median: round(o, 3), ratio: round(u / o, 3) }
}

log(`table_health: append + upsert (concurrently), ${num(N)} checkpoints every ${opts.interval}, ${num(RPS)} rows/s, ` +
    `${num(EVENTS)} events, samples at ${AT.join(', ')}, seed ${SEED}; floe ${FLOE}; scratch ${OUT}`)
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
  log(`scan: ${num(scan.rows)} rows: upsert table ${scan.upsert_scan_s_median} s, the same rows appended once ` +
      `${scan.append_once_scan_s_median} s (${scan.append_once_data_files} data file): ratio ${scan.ratio}`)
}
const goals = {}
for (const r of runs) {
  const first = r.samples.find((s) => s.checkpoint === 10) || r.samples[0]
  const last = r.samples[r.samples.length - 1]
  if (!first || !last) continue
  goals[r.kind] = {
    from_checkpoint: first.checkpoint,
    to_checkpoint: last.checkpoint,
    commit_ratio: first.commit_ms_median10 ? round(last.commit_ms_median10 / first.commit_ms_median10, 2) : null,
    commit_goal_met: first.commit_ms_median10 ? last.commit_ms_median10 <= 1.2 * first.commit_ms_median10 : null,
    metadata_bytes_ratio: round(last.metadata_bytes / first.metadata_bytes, 2),
    data_files_ratio: round(last.data_files / first.data_files, 2),
  }
}
if (scan) goals.upsert_scan_ratio = scan.ratio
const figures = {
  table_health: { checkpoints: N, interval: opts.interval, interval_ms: INTERVAL_MS, rps: RPS, events: EVENTS, seed: SEED,
                  at: AT, sink_parallelism: 1, concurrent: true, maintenance: 'none (metadata.json cleanup only)',
                  scan_reps: SCAN_REPS },
  ok: problems.length === 0,
  problems,
  seconds: round((Date.now() - T0) / 1000),
  tables: Object.fromEntries(runs.map((r) => [r.kind, {
    table: r.p.table, reached_checkpoint: r.reached, restarts: r.restarts, seconds: r.seconds,
    exit: r.exit ? (r.exit.signal ? `signal ${r.exit.signal}` : r.exit.code) : null,
    commits_timed: r.commits_timed, commit_ms_median: round(median(r.commit_ms_all), 0),
    samples: r.samples, commit_ms: r.commit_ms_all,
  }])),
  scan,
  goals,
}
if (RESULT) {
  fs.mkdirSync(path.dirname(path.resolve(RESULT)), { recursive: true })
  const full = { ...(await record({ bench: 'table-health', floe: FLOE, start: load0 })), ...figures }
  fs.writeFileSync(RESULT, JSON.stringify(full, null, 2) + '\n')
}
log('| table | checkpoint | data files | avg data file KiB | delete files | manifests | snapshots | metadata bytes | metadata files | current JSON bytes | commit ms (median of 10) |')
log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for (const r of runs) {
  for (const s of r.samples) {
    log(`| ${r.kind} | ${num(s.checkpoint)} | ${num(s.data_files)} | ${num(round(s.avg_data_file_bytes / 1024, 1))} | ${num(s.delete_files)} | ` +
        `${num(s.manifests)} | ${num(s.snapshots)} | ${num(s.metadata_bytes)} | ${num(s.metadata_files)} | ${num(s.metadata.current_json_bytes)} | ${num(s.commit_ms_median10)} |`)
  }
}
log(JSON.stringify({ ok: figures.ok, problems, goals, scan: scan && { ratio: scan.ratio, rows: scan.rows } }))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = figures.ok ? 0 : 1
