#!/usr/bin/env node
// Streaming bench (issue 3 §7): the roster -> Iceberg append job run as real processes
// (`floe run` + worker), measured from outside.
//
//   node bench/streaming_bench.mjs        (normally via bench/streaming_bench.sh, which sets the env)
//
// Three parts:
//   throughput  unthrottled roster source, N events, 1 s checkpoints: wall clock of `floe run`
//               (spawn to exit, final commit included) vs `floe table append` of the same rows
//               (`floe table scan` of the streamed table, as JSON lines). REPS paired runs.
//   latency     throttled source (RATE rows/s) at each checkpoint interval: last-record-to-
//               visible, record-to-visible over all records, data files per commit.
//   kill        throttled job, worker SIGKILLed (pid from job.json) KILLS times, each a fixed
//               offset after a checkpoint completed: time from the kill to the next snapshot.
//
// Clocks: every time here is wall clock (Date.now()) of this machine, the same clock the worker
// stamps snapshots with (`timestamp-ms`), so they subtract directly.
//
// When was a record emitted? The job has a second INSERT: the same roster table into a `print`
// sink with `WHERE seq = s1 OR ... OR seq = N` (a probe). The planner gives each INSERT its own
// source task; both run the same throttle schedule from (nearly) the same start, which the
// snapshot summaries show: `floe.source-offsets` records both sources' next_seq at every
// barrier. The print sink flushes each batch; this process stamps each probe line on arrival.
// The roster throttle emits seq s once rate*elapsed/1000 + batch >= s (batch = rate/10), so
// emit(s) = t0 + max(0, s - batch) * 1000 / rate; t0 is fitted to the probe lines (median) and
// the fit's worst residual is reported. The last record's emission is the probe line itself.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { record, sampleLoad } from './provenance.mjs'

const env = process.env
const FLOE = path.resolve(env.FLOE || 'build/src/floe/cli/floe')
const OUT = path.resolve(env.OUT || 'bench/out/streaming')
const RESULT = env.RESULT || ''                       // results JSON path ('' = don't write)
const SEED = Number(env.SEED || 42)
const N = Number(env.N || 2_000_000)                  // throughput events
const REPS = Number(env.REPS || 3)                    // throughput paired runs
const RATE = Number(env.RATE || 2000)                 // latency / kill: rows per second
const INTERVALS = (env.INTERVALS || '1 5 30').trim().split(/[\s,]+/).map(Number)
// feed length per interval: at least MIN_FEED_S and FEED_INTERVALS intervals
const MIN_FEED_S = Number(env.MIN_FEED_S || 12)
const FEED_INTERVALS = Number(env.FEED_INTERVALS || 3)
const KILLS = Number(env.KILLS || 3)
const KILL_INTERVAL_S = Number(env.KILL_INTERVAL_S || 1)
const KILL_DELAY_MS = Number(env.KILL_DELAY_MS || 1000)   // restart-strategy.fixed-delay.delay
const KILL_FEED_S = Number(env.KILL_FEED_S || 30)
const KILL_OFFSETS_MS = (env.KILL_OFFSETS_MS || '300 500 700').trim().split(/[\s,]+/).map(Number)
const KILL_EVERY = Number(env.KILL_EVERY || 3)         // checkpoints completed before each kill
const SINK_PARALLELISM = Number(env.SINK_PARALLELISM || 1)
const PARTS = (env.PARTS || 'throughput latency kill').trim().split(/[\s,]+/)

const COLUMNS = `seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,
  event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING,
  city STRING, zip STRING, phone STRING, active BOOLEAN`
// the storage core's schema for the batch append (as bench/append_bench.sh)
const BATCH_SCHEMA = 'seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL, ' +
  'event_time TIMESTAMP NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING, ' +
  'city STRING, zip STRING, phone STRING, active BOOLEAN'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const log = (...a) => console.error('streaming_bench:', ...a)
const round = (x, d = 0) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : null
}
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null)
const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null)
const batchRows = (rate) => (rate > 0 ? Math.min(1000, Math.max(1, Math.floor(rate / 10))) : 1000)

// CPU time (user+sys, the worker included: `floe run` waits for it) through /usr/bin/time when
// it exists; null otherwise.
const TIME_BIN = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null
function timed(cmd, args, cpuFile) {
  return TIME_BIN ? [TIME_BIN, ['-f', '%U %S', '-o', cpuFile, cmd, ...args]] : [cmd, args]
}
function readCpu(cpuFile) {
  try {
    const [u, s] = fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number)
    return round(u + s, 2)
  } catch { return null }
}

function floe(args, { home, stdout, cpuFile } = {}) {
  const e = { ...env }
  delete e.FLOE_CRASH_AT
  if (home) e.FLOE_HOME = home
  const [cmd, argv] = cpuFile ? timed(FLOE, args, cpuFile) : [FLOE, args]
  const r = spawnSync(cmd, argv, {
    encoding: 'utf8', maxBuffer: 256 << 20, env: e,
    stdio: ['ignore', stdout === undefined ? 'pipe' : stdout, 'pipe'],
  })
  if (r.error) throw r.error
  return { code: r.status, out: r.stdout, err: r.stderr }
}
function must(r, what) {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.out || ''}${r.err || ''}`)
  return r
}

// `floe table describe` JSON; snapshot ids exceed 2^53, so they are quoted before parsing
// (they are not used here; timestamps and summary strings are safe).
function snapshots(wh, table) {
  const r = must(floe(['table', 'describe', table, '--warehouse', wh]), `describe ${table}`)
  const text = r.out.replace(/"((?:current-|parent-)?snapshot-id)":\s*(-?\d+)/g, '"$1":"$2"')
  // Data commits only: a compaction's "replace" snapshot re-adds rows it rewrote.
  const snaps = (JSON.parse(text).snapshots || []).filter((s) => s.summary.operation !== 'replace')
  return snaps.map((s) => ({
    ts: Number(s['timestamp-ms']),
    seqNo: Number(s['sequence-number']),
    checkpoint: Number(s.summary['floe.checkpoint-id']),
    files: Number(s.summary['added-data-files'] || 0),
    records: Number(s.summary['added-records'] || 0),
    bytes: Number(s.summary['added-files-size'] || 0),
    offsets: JSON.parse(s.summary['floe.source-offsets'] || '{}'),
  })).sort((a, b) => a.seqNo - b.seqNo)
}
// next_seq of the lake INSERT's source (the first INSERT: `source-roster-1/0` when the job has a
// probe INSERT too, else `source-roster/0`)
const lakeNext = (s) => (s.offsets['source-roster-1/0'] || s.offsets['source-roster/0'] || {}).next_seq

function writeJob(dir, { interval, rate, probe, delayMs = 1000, attempts = 3 }) {
  const probeSql = probe && probe.length
    ? `CREATE TABLE probe (seq BIGINT NOT NULL) WITH ('connector' = 'print', 'print-identifier' = 'probe');
INSERT INTO probe SELECT seq FROM roster WHERE ${probe.map((s) => `seq = ${s}`).join(' OR ')};
` : ''
  const file = path.join(dir, 'job.sql')
  fs.writeFileSync(file, `-- streaming bench: roster -> iceberg append
SET 'execution.checkpointing.interval' = '${interval}';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'execution.checkpointing.dir' = '\${CHK}';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '${attempts}';
SET 'restart-strategy.fixed-delay.delay' = '${delayMs} ms';
CREATE TABLE roster (${COLUMNS})
  WITH ('connector' = 'roster', 'seed' = '${SEED}', 'events' = '\${EVENTS}', 'rows-per-second' = '${rate}');
CREATE TABLE lake (${COLUMNS})
  WITH ('connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '\${WH}',
        'catalog-database' = 'bench', 'catalog-table' = 'stream', 'sink.parallelism' = '${SINK_PARALLELISM}');
INSERT INTO lake SELECT * FROM roster;
${probeSql}`)
  return file
}

function freshDir(name) {
  const dir = path.join(OUT, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  return { dir, wh: path.join(dir, 'wh'), chk: path.join(dir, 'chk'), home: path.join(dir, 'home') }
}

// Runs `floe run`; every stdout/stderr line is stamped with Date.now() on arrival.
function runJob(p, jobFile, events, { onErrLine, cpuFile } = {}) {
  const e = { ...env, FLOE_HOME: p.home }
  delete e.FLOE_CRASH_AT
  const args = ['run', jobFile, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`, '--var', `EVENTS=${events}`]
  const start = Date.now()
  const [cmd, argv] = cpuFile ? timed(FLOE, args, cpuFile) : [FLOE, args]
  const child = spawn(cmd, argv, { env: e, stdio: ['ignore', 'pipe', 'pipe'] })
  const out = []
  const err = []
  const lines = (sink, cb) => {
    let buf = ''
    return (d) => {
      const now = Date.now()
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i)
        buf = buf.slice(i + 1)
        sink.push({ t: now, line })
        if (cb) cb(now, line)
      }
    }
  }
  child.stdout.on('data', lines(out))
  child.stderr.on('data', lines(err, onErrLine))
  const done = new Promise((resolve) => child.on('close', (code) => {
    const end = Date.now()
    fs.writeFileSync(path.join(p.dir, 'floe-run.log'), err.map((l) => `${l.t - start} ${l.line}\n`).join(''))
    resolve({ code, start, end, out, err })
  }))
  return { child, done, start }
}

function verifyAppend(p, events) {
  const r = floe(['table', 'verify', 'bench.stream', '--warehouse', p.wh, '--unique', 'seq', '--expect-range', `seq:1..${events}`])
  return { ok: r.code === 0 && /result: OK/.test(r.out), report: r.out.trim() }
}

// ---------------------------------------------------------------------------------------------
async function throughput() {
  const streamRuns = []
  const batchRuns = []
  const scanFile = path.join(OUT, `stream-scan-${N}-${SEED}.jsonl`)
  let verified = null
  for (let rep = 1; rep <= REPS; rep++) {
    const p = freshDir(`throughput-stream-${rep}`)
    const job = writeJob(p.dir, { interval: '1 s', rate: 0 })
    log(`throughput ${rep}/${REPS}: floe run, ${N} events, unthrottled, 1 s checkpoints`)
    const r = await runJob(p, job, N, { cpuFile: path.join(p.dir, 'cpu') }).done
    if (r.code !== 0) throw new Error(`floe run failed:\n${r.err.map((l) => l.line).join('\n')}`)
    const secs = (r.end - r.start) / 1000
    const snaps = snapshots(p.wh, 'bench.stream')
    streamRuns.push({ seconds: round(secs, 3), rows_per_s: Math.round(N / secs), cpu_seconds: readCpu(path.join(p.dir, 'cpu')), commits: snaps.length,
      data_files: snaps.reduce((a, s) => a + s.files, 0), bytes: snaps.reduce((a, s) => a + s.bytes, 0) })
    if (rep === 1) {
      verified = verifyAppend(p, N)
      log(`scan of the streamed table -> ${scanFile}`)
      must(floe(['table', 'scan', 'bench.stream', '--warehouse', p.wh], { stdout: fs.openSync(scanFile, 'w') }), 'scan')
      const lines = Number(spawnSync('wc', ['-l', scanFile], { encoding: 'utf8' }).stdout.trim().split(/\s+/)[0])
      if (lines !== N) throw new Error(`scan gave ${lines} rows, expected ${N}`)
      spawnSync('sh', ['-c', `cat '${scanFile}' > /dev/null`])   // page cache, as append_bench.sh
    }
    const b = freshDir(`throughput-batch-${rep}`)
    must(floe(['table', 'create', 'bench.batch', '--warehouse', b.wh, '--schema', BATCH_SCHEMA]), 'create')
    log(`throughput ${rep}/${REPS}: floe table append of the same ${N} rows`)
    const t0 = Date.now()
    must(floe(['table', 'append', 'bench.batch', scanFile, '--warehouse', b.wh], { cpuFile: path.join(b.dir, 'cpu') }), 'append')
    const bs = (Date.now() - t0) / 1000
    // outside the clock: the batch side must hold the same rows, or the ratio compares nothing
    const bv = floe(['table', 'verify', 'bench.batch', '--warehouse', b.wh, '--unique', 'seq', '--expect-range', `seq:1..${N}`])
    if (bv.code !== 0 || !/result: OK/.test(bv.out)) throw new Error(`batch append lost or doubled rows:\n${bv.out}${bv.err}`)
    const bsnaps = snapshots(b.wh, 'bench.batch')
    batchRuns.push({ seconds: round(bs, 3), rows_per_s: Math.round(N / bs), cpu_seconds: readCpu(path.join(b.dir, 'cpu')), data_files: bsnaps.reduce((a, s) => a + s.files, 0),
      bytes: bsnaps.reduce((a, s) => a + s.bytes, 0) })
    fs.rmSync(b.dir, { recursive: true, force: true })
    if (rep > 1) fs.rmSync(p.dir, { recursive: true, force: true })
  }
  const sMed = median(streamRuns.map((r) => r.rows_per_s))
  const bMed = median(batchRuns.map((r) => r.rows_per_s))
  return {
    events: N, checkpoint_interval: '1 s', rows_per_second_option: 0, sink_parallelism: SINK_PARALLELISM, reps: REPS,
    stream: streamRuns, batch: batchRuns,
    stream_rows_per_s_median: Math.round(sMed), batch_rows_per_s_median: Math.round(bMed),
    ratio_median: round(sMed / bMed, 3),
    ratios: streamRuns.map((s, i) => round(s.rows_per_s / batchRuns[i].rows_per_s, 3)),
    stream_cpu_seconds_median: median(streamRuns.map((r) => r.cpu_seconds).filter((x) => x != null)),
    batch_cpu_seconds_median: median(batchRuns.map((r) => r.cpu_seconds).filter((x) => x != null)),
    stream_verified: verified,
    batch_input: { file: path.relative(process.cwd(), scanFile), bytes: fs.statSync(scanFile).size },
  }
}

// ---------------------------------------------------------------------------------------------
async function latency(intervalS) {
  const feedS = Math.max(MIN_FEED_S, FEED_INTERVALS * intervalS)
  const events = Math.round(RATE * feedS)
  const batch = batchRows(RATE)
  // probe samples: ~40 seqs spread over the feed, and the last one
  const probe = []
  for (let k = 1; k <= 40; k++) probe.push(Math.max(batch + 1, Math.round((events * k) / 41)))
  probe.push(events)
  const samples = [...new Set(probe)].sort((a, b) => a - b)
  const p = freshDir(`latency-${intervalS}s`)
  const job = writeJob(p.dir, { interval: `${intervalS} s`, rate: RATE, probe: samples })
  log(`latency: interval ${intervalS} s, ${events} events at ${RATE} rows/s (~${feedS} s of feed)`)
  const r = await runJob(p, job, events).done
  if (r.code !== 0) throw new Error(`floe run failed:\n${r.err.map((l) => l.line).join('\n')}`)
  const arrival = new Map()
  for (const { t, line } of r.out) {
    const m = /^probe> \+I \{"seq":(\d+)\}/.exec(line)
    if (m) arrival.set(Number(m[1]), t)
  }
  const missing = samples.filter((s) => !arrival.has(s))
  if (missing.length) throw new Error(`probe lines missing for seq ${missing.join(',')}`)
  const offset = (s) => (Math.max(0, s - batch) * 1000) / RATE
  const t0 = median(samples.map((s) => arrival.get(s) - offset(s)))
  const emit = (s) => t0 + offset(s)
  const residuals = samples.map((s) => arrival.get(s) - emit(s))
  const snaps = snapshots(p.wh, 'bench.stream')
  const lastEmit = arrival.get(events)
  const finalSnap = snaps.find((s) => lakeNext(s) > events)
  // every record's record-to-visible: visible at its snapshot's timestamp, emitted per the schedule
  const lat = []
  let prev = 1
  const commits = []
  for (const s of snaps) {
    const next = lakeNext(s)
    for (let q = prev; q < next; q++) lat.push(s.ts - emit(q))
    commits.push({ checkpoint: s.checkpoint, ts: s.ts, records: s.records, files: s.files, bytes: s.bytes,
      oldest_record_wait_ms: next > prev ? Math.round(s.ts - emit(prev)) : null })
    prev = next
  }
  lat.sort((a, b) => a - b)
  const periodic = commits.filter((c) => c !== commits[commits.length - 1])
  const gaps = commits.slice(1).map((c, i) => c.ts - commits[i].ts)
  return {
    interval_s: intervalS, events, rows_per_second: RATE, feed_s: feedS, sink_parallelism: SINK_PARALLELISM,
    run_seconds: round((r.end - r.start) / 1000, 2),
    commits: commits.length,
    last_record_to_visible_ms: Math.round(finalSnap.ts - lastEmit),
    last_record_to_visible_ms_schedule: Math.round(finalSnap.ts - emit(events)),
    final_commit_checkpoint: finalSnap.checkpoint,
    record_to_visible_ms: { mean: Math.round(mean(lat)), p50: Math.round(quantile(lat, 0.5)), p99: Math.round(quantile(lat, 0.99)),
      max: Math.round(lat[lat.length - 1]), records: lat.length },
    files_per_commit: { mean: round(mean(commits.map((c) => c.files)), 2), max: Math.max(...commits.map((c) => c.files)) },
    records_per_commit_mean: Math.round(mean(commits.map((c) => c.records))),
    bytes_per_file_mean: Math.round(commits.reduce((a, c) => a + c.bytes, 0) / commits.reduce((a, c) => a + c.files, 0)),
    periodic_commit_gap_ms_mean: Math.round(mean(gaps.slice(0, Math.max(0, periodic.length - 1)))),
    probe: { samples: samples.length, emit_model_residual_ms_max: Math.round(Math.max(...residuals.map(Math.abs))),
      t0_after_floe_run_ms: Math.round(t0 - r.start) },
    verified: verifyAppend(p, events).ok,
    per_commit: commits.map((c) => ({ ...c, ts_after_t0_ms: Math.round(c.ts - t0), ts: undefined })),
  }
}

// ---------------------------------------------------------------------------------------------
async function kill() {
  const events = Math.round(RATE * KILL_FEED_S)
  const p = freshDir('kill')
  const job = writeJob(p.dir, { interval: `${KILL_INTERVAL_S} s`, rate: RATE, delayMs: KILL_DELAY_MS, attempts: KILLS + 2 })
  log(`kill: interval ${KILL_INTERVAL_S} s, restart delay ${KILL_DELAY_MS} ms, ${events} events at ${RATE} rows/s, ${KILLS} kills`)
  const completions = []   // times of "checkpoint N completed" lines
  const events_ = []       // stamped coordinator lines of interest
  const run = runJob(p, job, events, {
    onErrLine: (t, line) => {
      if (/checkpoint \d+ completed/.test(line)) completions.push(t)
      if (/worker .*(started|exited)|restored from|restarting/.test(line)) events_.push({ t, line })
    },
  })
  let exited = false
  run.done.then(() => { exited = true })
  const jobRecord = () => {
    const dir = path.join(p.home, 'jobs')
    if (!fs.existsSync(dir)) return null
    for (const j of fs.readdirSync(dir)) {
      try { return JSON.parse(fs.readFileSync(path.join(dir, j, 'job.json'), 'utf8')) } catch { /* being replaced */ }
    }
    return null
  }
  const kills = []
  let since = run.start
  for (let k = 0; k < KILLS; k++) {
    let rec = null
    while (!exited) {
      const done = completions.filter((t) => t > since).length
      rec = jobRecord()
      if (done >= KILL_EVERY && rec && rec.state === 'RUNNING' && rec.worker_pid &&
          !kills.some((x) => x.pid === rec.worker_pid)) break
      await sleep(20)
    }
    if (exited) break
    const lastCompletion = completions[completions.length - 1]
    const wait = KILL_OFFSETS_MS[k % KILL_OFFSETS_MS.length]
    await sleep(Math.max(0, lastCompletion + wait - Date.now()))
    rec = jobRecord()
    if (!rec || rec.state !== 'RUNNING') { log('kill: worker not running at kill time, skipped'); continue }
    const t = Date.now()
    try { process.kill(rec.worker_pid, 'SIGKILL') } catch (e) { log(`kill: ${e.message}`); continue }
    kills.push({ pid: rec.worker_pid, t, after_checkpoint: rec.last_checkpoint, offset_after_checkpoint_ms: t - lastCompletion })
    since = t
  }
  const r = await run.done
  if (r.code !== 0) throw new Error(`floe run failed:\n${r.err.map((l) => l.line).join('\n')}`)
  const snaps = snapshots(p.wh, 'bench.stream')
  const out = kills.map((k, i) => {
    const next = snaps.find((s) => s.ts > k.t)
    const exitSeen = events_.find((e) => e.t > k.t && /worker exited/.test(e.line))
    const restart = events_.find((e) => e.t > k.t && /worker \d+ started/.test(e.line))
    const restored = events_.find((e) => e.t > k.t && /restored from/.test(e.line))
    const nextKill = kills[i + 1]
    return {
      ...k, t: undefined,
      kill_to_exit_seen_ms: exitSeen ? exitSeen.t - k.t : null,       // coordinator noticed the death
      kill_to_worker_started_ms: restart ? restart.t - k.t : null,    // after the restart delay
      kill_to_restored_ms: restored ? restored.t - k.t : null,        // new worker restored its checkpoint
      kill_to_next_commit_ms: next ? next.ts - k.t : null,
      next_commit_checkpoint: next ? next.checkpoint : null,
      next_commit_records: next ? next.records : null,
      next_commit_before_next_kill: next && nextKill ? next.ts < nextKill.t : true,
    }
  })
  const ms = out.map((k) => k.kill_to_next_commit_ms).filter((x) => x != null)
  return {
    checkpoint_interval_s: KILL_INTERVAL_S, restart_delay_ms: KILL_DELAY_MS, rows_per_second: RATE, events,
    sink_parallelism: SINK_PARALLELISM,
    kills: out,
    kill_to_next_commit_ms: { mean: Math.round(mean(ms)), min: Math.min(...ms), max: Math.max(...ms) },
    restarts_seen: r.err.filter((l) => /worker exited \(killed by SIGKILL\)/.test(l.line)).length,
    verified: verifyAppend(p, events),
    run_seconds: round((r.end - r.start) / 1000, 2),
  }
}

// ---------------------------------------------------------------------------------------------
const result = { seed: SEED }
fs.mkdirSync(OUT, { recursive: true })
const load0 = await sampleLoad()
const started = Date.now()
if (PARTS.includes('throughput')) result.throughput = await throughput()
if (PARTS.includes('latency')) {
  result.latency = []
  for (const i of INTERVALS) result.latency.push(await latency(i))
}
if (PARTS.includes('kill')) result.kill = await kill()
result.bench_seconds = round((Date.now() - started) / 1000, 1)

if (RESULT) {
  fs.mkdirSync(path.dirname(RESULT), { recursive: true })
  const full = { ...(await record({ bench: 'streaming', floe: FLOE, start: load0 })), ...result }
  fs.writeFileSync(RESULT, JSON.stringify(full, null, 2) + '\n')
}

// ---- table ----
const fmt = (x) => (x == null ? '-' : typeof x === 'number' ? x.toLocaleString('en-US') : String(x))
const table = (head, rows) => {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => fmt(r[i]).length)))
  const line = (r) => '| ' + r.map((c, i) => fmt(c).padStart(w[i])).join(' | ') + ' |'
  console.log(line(head))
  console.log('|' + w.map((n) => '-'.repeat(n + 2)).join('|') + '|')
  for (const r of rows) console.log(line(r))
  console.log()
}
const T = result.throughput
if (T) {
  console.log(`Throughput: ${T.events.toLocaleString('en-US')} roster events, unthrottled, 1 s checkpoints (${T.reps} paired runs)`)
  table(['run', 'stream rows/s', 'stream s', 'cpu s', 'commits', 'batch rows/s', 'batch s', 'cpu s', 'stream/batch'],
    T.stream.map((s, i) => [i + 1, s.rows_per_s, s.seconds, s.cpu_seconds, s.commits, T.batch[i].rows_per_s, T.batch[i].seconds,
      T.batch[i].cpu_seconds, T.ratios[i]])
      .concat([['median', T.stream_rows_per_s_median, null, T.stream_cpu_seconds_median, null, T.batch_rows_per_s_median, null,
        T.batch_cpu_seconds_median, T.ratio_median]]))
}
if (result.latency) {
  console.log(`Visibility: ${RATE} rows/s throttled roster source; times in ms`)
  table(['interval', 'events', 'commits', 'last rec->visible', 'rec->visible mean', 'p50', 'p99', 'max', 'files/commit mean', 'max', 'rows/commit', 'KiB/file'],
    result.latency.map((l) => [`${l.interval_s} s`, l.events, l.commits, l.last_record_to_visible_ms, l.record_to_visible_ms.mean,
      l.record_to_visible_ms.p50, l.record_to_visible_ms.p99, l.record_to_visible_ms.max, l.files_per_commit.mean,
      l.files_per_commit.max, l.records_per_commit_mean, Math.round(l.bytes_per_file_mean / 1024)]))
}
const K = result.kill
if (K) {
  console.log(`Kill -> next commit: interval ${K.checkpoint_interval_s} s, restart-strategy.fixed-delay.delay ${K.restart_delay_ms} ms, ${K.rows_per_second} rows/s`)
  table(['kill', 'ms after ckpt', 'death seen', 'worker started', 'restored', 'next commit', 'commit ckpt', 'rows in it'],
    K.kills.map((k, i) => [i + 1, k.offset_after_checkpoint_ms, k.kill_to_exit_seen_ms, k.kill_to_worker_started_ms, k.kill_to_restored_ms,
      k.kill_to_next_commit_ms, k.next_commit_checkpoint, k.next_commit_records])
      .concat([['mean', null, null, null, null, K.kill_to_next_commit_ms.mean, null, null]]))
  console.log('(columns after "ms after ckpt": ms from the SIGKILL)')
  console.log(`kill run verified exactly once: ${K.verified.ok ? 'yes' : 'NO'}\n`)
}
if (RESULT) console.log(`results: ${RESULT}`)
const bad = [T && T.stream_verified && !T.stream_verified.ok, K && !K.verified.ok,
  ...(result.latency || []).map((l) => !l.verified)].some(Boolean)
if (bad) { log('a streamed table failed verification (see the results JSON)'); process.exit(1) }
