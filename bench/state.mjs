#!/usr/bin/env node
// State benchmark (issue 22, part 6): keyed state of the lesson's session job, per state backend,
// as real processes (`floe run` + worker, bench/window_job.mjs), measured from outside.
//
//   node bench/state.mjs [--backends hashmap,rocksdb] [--keys 1000000] [--parts load,idle,restore] ...
//                        (normally via bench/state.sh)
//
// The job: SESSION(TABLE events PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '10' MINUTES)
// COUNT(*) per key into an Iceberg append table (maintenance off), 'parallelism.default' 1,
// EXACTLY_ONCE checkpoints every --interval, retention floe's default (1), restarts off,
// `SET 'state.backend.type' = '<backend>'` (rocksdb also 'state.backend.rocksdb.memory.fixed-per-slot'
// = --rocksdb-memory) and, with --incremental true, 'execution.checkpointing.incremental' = 'true';
// `floe run` under `taskset -c <--cpu>` and `nice -n <--nice>`. Every event's time lies within
// 5 minutes of the first (< the 10-minute gap), so each key holds one open session until the
// input ends: the state holds exactly the keys read so far.
//
// Input (bench/window_job.mjs keysOnceInput, cached in OUT/input): --load-factor x N lines, the
// first N each key once (shuffled), then random keys.
//
// Per backend (a backend floe refuses is probed first with a tiny job: "not available in this
// build", with floe's message) and per --keys N:
// load     the whole file through the filesystem source, unthrottled: events/s = events / (spawn to
//          exit of `floe run`, the final checkpoint and commit included); the table must hold one
//          row per key. The checkpoints taken after the source read N events (keys in state = N)
//          and before the end of the input give the pause under load.
// idle     the N key-once lines in a Kafka topic (`floe kafka dev`, <= 1.5 MiB per partition),
//          read by the same job from Kafka; once a checkpoint holds every key, --idle checkpoints
//          with nothing in flight (the state alone); then --churn intervals in each of which
//          --churn-pct % of the keys (distinct, random) get one more event, each waited for
//          until a checkpoint holds it. Then the job is cancelled (the latest checkpoint is kept:
//          RETAIN_ON_CANCELLATION).
// restore  `floe run --from latest` of the same job: restore time = spawn to the coordinator's
//          "restored from checkpoint" line (the worker has loaded every state file), and to the
//          first checkpoint completed after it; then cancelled.
//
// Per checkpoint, from the job's JSON (`api/job` of the job's web UI, polled every 250 ms:
// checkpoints.history[] keeps the last 30): sync_ms (the stream's pause: the longest synchronous
// part of any task, OnBarrier and the keyed state's view; neither PrepareBarrier's work nor
// waiting for room downstream counts, as in Flink's sync duration) and sync_task (that task), async_ms
// (the longest asynchronous part: the state-writer threads), duration_ms, size_bytes; from the
// checkpoint directory (polled every 20 ms, bench/window_job.mjs watchCheckpoints): the events the source had read
// (so the keys in state), the bytes of chk-N, and the files that appeared under the job's
// shared/ directory since the previous checkpoint. Bytes of an incremental checkpoint = those
// new shared files + chk-N; a full checkpoint = an idle one's chk-N (nothing new under shared/).
// Peak RSS: the worker's VmHWM (/proc/<pid>/status), sampled every 200 ms, per job.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { pinBinary, sampleLoad, writeResults } from './provenance.mjs'
import { mulberry32 } from './prng.mjs'
import { benchArgs, freshJobDir, jobRecord } from './roster_job.mjs'
import { parseIds } from './table_watch.mjs'
import {
  fileSource, icebergSink, jobHead, jobRunner, keysOnceInput, median, num, round, sleep, stats, tsText, tvfText,
  watchCheckpoints, windowQuery, writeLines,
} from './window_job.mjs'

const USAGE = `usage: node bench/state.mjs [--backends hashmap,rocksdb] [--keys 1000000] [--parts load,idle,restore]
         [--load-factor 3] [--interval '1 s'] [--idle 5] [--churn 5] [--churn-pct 1] [--incremental true|false]
         [--rocksdb-memory '256 mb'] [--cpu N|none] [--nice 10] [--seed 42] [--floe PATH] [--out DIR] [--result FILE.json]`

const { opts, die, int } = benchArgs('state', USAGE, {
  backends: { type: 'string', default: 'hashmap,rocksdb' },
  keys: { type: 'string', default: '1000000' },
  parts: { type: 'string', default: 'load,idle,restore' },
  'load-factor': { type: 'string', default: '3' },
  interval: { type: 'string', default: '1 s' },
  idle: { type: 'string', default: '5' },
  churn: { type: 'string', default: '5' },
  'churn-pct': { type: 'string', default: '1' },
  incremental: { type: 'string', default: 'true' },
  'rocksdb-memory': { type: 'string', default: '256 mb' },
  cpu: { type: 'string', default: String(Math.max(0, os.cpus().length - 1)) },
  nice: { type: 'string', default: '10' },
  seed: { type: 'string', default: '42' },
  floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
  out: { type: 'string', default: process.env.OUT || 'bench/out/state' },
  result: { type: 'string', default: process.env.RESULT || '' },
})

const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean)
const BACKENDS = list(opts.backends)
if (!BACKENDS.length || BACKENDS.some((b) => !/^[a-z0-9_-]+$/.test(b))) die('--backends: a list of backend names, e.g. hashmap,rocksdb')
const KEYS = list(opts.keys).map((k) => {
  const v = Number(k)
  if (!Number.isInteger(v) || v < 10) die(`--keys: '${k}' is not an integer >= 10`)
  return v
})
const PARTS = list(opts.parts)
if (!PARTS.length || PARTS.some((p) => !['load', 'idle', 'restore'].includes(p))) die('--parts: load, idle and/or restore')
if (PARTS.includes('restore') && !PARTS.includes('idle')) die('--parts restore needs idle (it restores the idle job\'s last checkpoint)')
const LOAD_FACTOR = int('load-factor', 2)
const IDLE = int('idle', 1)
const CHURN = int('churn', 0)
const CHURN_PCT = Number(opts['churn-pct'])
if (!(CHURN_PCT > 0 && CHURN_PCT <= 100)) die('--churn-pct must be in (0, 100]')
if (!['true', 'false'].includes(opts.incremental)) die('--incremental must be true or false')
const INCREMENTAL = opts.incremental === 'true'
const INTERVAL = opts.interval
if (!/^\s*\d+(\.\d+)?\s*(ms|s|min)\s*$/.test(INTERVAL)) die(`--interval '${INTERVAL}': expected e.g. '1 s' or '200 ms'`)
if (!/^\s*\d+\s*(b|kb|mb|gb)\s*$/i.test(opts['rocksdb-memory'])) die(`--rocksdb-memory '${opts['rocksdb-memory']}': expected e.g. '256 mb'`)
const CPU = opts.cpu === 'none' ? null : int('cpu')
if (CPU != null && CPU >= os.cpus().length) die(`--cpu ${CPU}: this machine has CPUs 0..${os.cpus().length - 1}`)
const NICE = opts.nice === 'none' ? null : int('nice')
const SEED = int('seed')
const OUT = path.resolve(opts.out)
const RESULT = opts.result
if (!fs.existsSync(path.resolve(opts.floe))) die(`${path.resolve(opts.floe)} not found (build floe, or --floe PATH / FLOE=...)`)
if (CPU != null && spawnSync('taskset', ['-c', String(CPU), 'true']).status !== 0) die(`taskset -c ${CPU} does not work here (use --cpu none)`)
const FLOE = pinBinary(path.resolve(opts.floe), OUT)
const HERE = path.dirname(fileURLToPath(import.meta.url))
const { floeRun, floeSync, devCluster, stopLive } = jobRunner({ floe: FLOE, cpu: CPU, nice: NICE })

const GAP_MIN = 10
const BASE = Date.UTC(2026, 0, 1)
const SPAN_MS = 5 * 60_000          // every event within 5 min of the first: no session closes
const PARTITION_BYTES = 1.5 * 2 ** 20   // the dev cluster keeps ~5 MiB per partition
const GOAL_PAUSE_MS = 100
const GOAL_INCREMENTAL_SHARE = 0.05
const log = (line) => console.log(line)
const problems = []
const must = (r, what) => {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.out}${r.err}`)
  return r
}

// ---- the job ---------------------------------------------------------------------------------

function backendSets(backend) {
  const sets = [`SET 'state.backend.type' = '${backend}';`]
  if (backend === 'rocksdb') sets.push(`SET 'state.backend.rocksdb.memory.fixed-per-slot' = '${opts['rocksdb-memory'].trim()}';`)
  if (INCREMENTAL) sets.push("SET 'execution.checkpointing.incremental' = 'true';")
  return sets.join('\n')
}
const kafkaSource = `CREATE TABLE events (user_id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'keys', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'format' = 'json', 'properties.fetch.wait.max.ms' = '10');`
const sessionJob = (comment, backend, source, table) => `-- state bench (${comment}): SESSION 10 min gap COUNT(*) per key, ${backend}
${jobHead(INTERVAL)}
${backendSets(backend)}
${source}
${icebergSink('sessions', table)}
${windowQuery('sessions', tvfText('session', 'events', `INTERVAL '${GAP_MIN}' MINUTES`))}
`

// Whether this floe runs the job on `backend` (with the options above): a tiny job, to its end.
async function probe(backend) {
  const p = freshJobDir(OUT, `probe-${backend}`)
  const file = path.join(p.dir, 'one.jsonl')
  fs.writeFileSync(file, `{"user_id":"u1","ts":"${tsText(BASE)}"}\n`)
  const r = await floeRun(p, sessionJob('probe', backend, fileSource(file, 1), 'probe'), { CHK: p.chk, WH: p.wh }).done
  const message = r.log.split('\n').filter((l) => /error|not implemented|refused|expected/i.test(l)).slice(-3).join('\n') || r.log.slice(-500)
  fs.rmSync(p.dir, { recursive: true, force: true })
  return r.code === 0 ? { available: true } : { available: false, status: 'not available in this build', message }
}

// ---- what a running job reports --------------------------------------------------------------

// Polls a running job (FLOE_HOME `home`): its JSON (api/job) every 250 ms, every checkpoint of
// checkpoints.history[] by id, and the worker's VmHWM every 200 ms (the highest of every worker
// pid seen). stop() -> {history: Map id -> entry, peak_rss_mib, metrics: the last sync/async gauges}.
function watchJob(home) {
  const history = new Map()
  let hwmKib = 0
  let polling = true
  let metricsText = null
  const vmHwm = (pid) => {
    try {
      const m = /VmHWM:\s*(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
      if (m) hwmKib = Math.max(hwmKib, Number(m[1]))
    } catch { /* exited */ }
  }
  const loop = (async () => {
    let tick = 0
    while (polling) {
      const rec = jobRecord(home)
      if (rec && rec.worker_pid) vmHwm(rec.worker_pid)
      if (rec && rec.web_url && tick++ % 2 === 0) {
        try {
          const res = await fetch(new URL('api/job', rec.web_url), { signal: AbortSignal.timeout(2000) })
          const j = await res.json()
          for (const c of j.checkpoints?.history || []) if (!c.savepoint) history.set(c.id, c)
          if (rec.metrics_url) metricsText = await (await fetch(rec.metrics_url, { signal: AbortSignal.timeout(2000) })).text()
        } catch { /* not up yet, or ending */ }
      }
      await sleep(125)
    }
  })()
  const gauge = (name) => {
    const m = new RegExp(`^floe_jobmanager_job_${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(metricsText || '')
    return m ? Number(m[1]) : null
  }
  return {
    history,
    peakMib: () => Math.round(hwmKib / 1024),
    stop: async () => {
      polling = false
      await loop
      return { history, peak_rss_mib: Math.round(hwmKib / 1024),
               metrics: { lastCheckpointSyncDuration_ms: gauge('lastCheckpointSyncDuration'), lastCheckpointAsyncDuration_ms: gauge('lastCheckpointAsyncDuration') } }
    },
  }
}

// One row per checkpoint both watchers saw: the job's figures and the directory's.
function checkpointRows(history, seen, keys, phaseOf) {
  return [...history.values()].sort((a, b) => a.id - b.id).map((h) => {
    const c = seen.get(h.id) || {}
    const read = c.read ?? null
    return {
      id: h.id, phase: phaseOf(h, c), events_read: read, keys_in_state: read == null ? null : Math.min(read, keys),
      sync_ms: h.sync_ms, sync_task: h.sync_task ?? null, async_ms: h.async_ms, duration_ms: h.duration_ms, alignment_ms: h.alignment_ms, size_bytes: h.size_bytes,
      dir_bytes: c.dir_bytes ?? null, new_shared_files: c.new_shared_files ?? null, new_shared_bytes: c.new_shared_bytes ?? null,
      listed_shared_bytes: c.listed_shared_bytes ?? null,
    }
  })
}
// The pause per task the stream waited for (sync_task: the task whose synchronous part was the
// longest), so the keyed task's part reads apart from the sink's or the source's.
function syncByTask(rows) {
  const by = new Map()
  for (const r of rows) {
    const task = r.sync_task ?? '?'
    if (!by.has(task)) by.set(task, [])
    by.get(task).push(r.sync_ms)
  }
  return Object.fromEntries([...by].sort().map(([task, ms]) => [task, stats(ms)]))
}
const summary = (rows) => ({
  checkpoints: rows.length, sync_ms: stats(rows.map((r) => r.sync_ms)), sync_by_task: syncByTask(rows),
  async_ms: stats(rows.map((r) => r.async_ms)),
  duration_ms: stats(rows.map((r) => r.duration_ms)), size_bytes: stats(rows.map((r) => r.size_bytes)),
})

// ---- load ------------------------------------------------------------------------------------

async function loadPart(backend, keys, input) {
  spawnSync('sh', ['-c', `cat '${input.file}' > /dev/null`])
  const events = keys * LOAD_FACTOR
  const p = freshJobDir(OUT, `load-${backend}-k${keys}`)
  log(`${backend}, ${num(keys)} keys, load: ${num(events)} events from the file, unthrottled, checkpoints every ${INTERVAL}`)
  const finals = new Set()
  const dirWatch = watchCheckpoints(p.chk, 'filesystem')
  const job = floeRun(p, sessionJob('load', backend, fileSource(input.file, 1), 'load'), { CHK: p.chk, WH: p.wh }, {
    onLine: (t, line) => { const m = /checkpoint (\d+) completed.*, final/.exec(line); if (m) finals.add(Number(m[1])) },
  })
  const jobWatch = watchJob(p.home)
  const r = await job.done
  const w = await jobWatch.stop()
  await dirWatch.stop()
  if (r.code !== 0) throw new Error(`${backend} load: floe run exited ${r.code}:\n${r.log.slice(-3000)}`)
  const rows = checkpointRows(w.history, dirWatch.seen, keys, (h, c) => (finals.has(h.id) ? 'final' : c.read == null ? '?' : c.read >= keys ? 'full' : 'filling'))
  const full = rows.filter((x) => x.phase === 'full' && x.events_read < events)
  const d = parseIds(must(floeSync(['table', 'describe', 'bench.load', '--warehouse', p.wh]), 'describe bench.load').out)
  const tableRows = Number(d.files?.['data-records'])
  if (tableRows !== keys) problems.push(`${backend} load, ${keys} keys: the table holds ${tableRows} rows, expected one session per key (${keys})`)
  fs.rmSync(p.dir, { recursive: true, force: true })
  return {
    events, seconds: round(r.seconds, 2), events_per_s: Math.round(events / r.seconds), cpu_s: r.cpu_s,
    events_per_cpu_s: r.cpu_s ? Math.round(events / r.cpu_s) : null, worker_cpus: r.worker_cpus,
    // a run shorter than the watcher's first look at the worker (the smoke's 2,000 keys, under a
    // second) leaves VmHWM unseen: GNU time's peak of the job's processes stands in
    peak_rss_mib: w.peak_rss_mib || r.max_rss_mib, time_max_rss_mib: r.max_rss_mib, checkpoints_completed: r.checkpoints,
    checkpoints_seen: rows.length, log_problems: r.log_problems.count, table_rows: tableRows,
    full_state: summary(full), list: rows,
  }
}

// ---- idle, churn, restore -------------------------------------------------------------------

// The key-once lines of the input (the first `keys`) into a file of their own, copied in chunks
// (10M keys' lines are more than a string can hold).
function keysFile(input, keys, dir) {
  const file = path.join(dir, 'keys.jsonl')
  const from = fs.openSync(input.file, 'r')
  const to = fs.openSync(file, 'w')
  const chunk = Buffer.alloc(16 << 20)
  let lines = 0
  let bytes = 0
  try {
    while (lines < keys) {
      const n = fs.readSync(from, chunk, 0, chunk.length, bytes)
      if (n === 0) throw new Error(`${input.file} has ${lines} lines, fewer than ${keys}`)
      let end = 0
      while (end < n && lines < keys) {
        const nl = chunk.indexOf(10, end)
        if (nl < 0 || nl >= n) { end = n; break }
        end = nl + 1
        lines++
      }
      fs.writeSync(to, chunk, 0, end)
      bytes += end
    }
  } finally {
    fs.closeSync(from)
    fs.closeSync(to)
  }
  return { file, bytes }
}

async function produce(cluster, file, n) {
  const r = floeSync(['kafka', 'produce', '--bootstrap', cluster.bootstrap, '--topic', 'keys', '--property', 'linger.ms=50', file])
  if (r.code !== 0 || r.out.trim() !== String(n)) throw new Error(`floe kafka produce failed (exit ${r.code}): ${r.out}${r.err}`)
}

// Waits until a checkpoint the directory watcher read has read >= `events`; its id. Gives up
// after 15 min, or at 10M keys after as long as 2,000 events/s would take (a shared core reads
// them at 5,000-12,000/s).
async function checkpointReading(seen, events, ended, what) {
  const t0 = Date.now()
  const limitS = Math.max(900, Math.ceil(events / 2000))
  for (;;) {
    const c = [...seen.values()].filter((x) => x.read != null && x.read >= events).sort((a, b) => a.id - b.id)[0]
    if (c) return c.id
    if (ended()) throw new Error(`${what}: the job ended:\n${ended().log.slice(-3000)}`)
    if (Date.now() - t0 > limitS * 1000) throw new Error(`${what}: no checkpoint read ${events} events in ${limitS} s`)
    await sleep(50)
  }
}
const waitCheckpoints = async (seen, after, n, ended, what) => {
  const t0 = Date.now()
  while ([...seen.values()].filter((c) => c.meta && c.id > after).length < n) {
    if (ended()) throw new Error(`${what}: the job ended:\n${ended().log.slice(-3000)}`)
    if (Date.now() - t0 > 900_000) throw new Error(`${what}: not ${n} checkpoints in 15 min`)
    await sleep(50)
  }
}

// The churn: `rounds` files of churnKeys distinct random keys, one event each, times after the span.
function churnFiles(dir, keys, churnKeys, rounds) {
  const rand = mulberry32(SEED * 104_729 + keys)
  return Array.from({ length: rounds }, (_, r) => {
    const pick = new Set()
    while (pick.size < churnKeys) pick.add(Math.floor(rand() * keys))
    const file = path.join(dir, `churn-${r + 1}.jsonl`)
    const ks = [...pick]
    writeLines(file, ks.length, (i) => `{"user_id":"u${ks[i]}","ts":"${tsText(BASE + SPAN_MS + (r + 1) * 1000)}"}\n`)
    return file
  })
}

async function idlePart(backend, keys, input) {
  const p = freshJobDir(OUT, `idle-${backend}-k${keys}`)
  const kf = keysFile(input, keys, p.dir)
  const partitions = Math.max(1, Math.ceil(kf.bytes / PARTITION_BYTES))
  const churnKeys = Math.max(1, Math.round((keys * CHURN_PCT) / 100))
  const churn = churnFiles(p.dir, keys, churnKeys, CHURN)
  const cluster = await devCluster(p.dir, [`keys:${partitions}`])
  try {
    log(`${backend}, ${num(keys)} keys, idle: the keys into a Kafka topic of ${partitions} partition(s), ${IDLE} idle checkpoints, ` +
        `then ${CHURN} intervals changing ${num(churnKeys)} keys (${CHURN_PCT}%) each`)
    await produce(cluster, kf.file, keys)
    const vars = { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap }
    const text = sessionJob('idle', backend, kafkaSource, 'idle')
    const dirWatch = watchCheckpoints(p.chk, 'kafka')
    const job = floeRun(p, text, vars)
    const jobWatch = watchJob(p.home)
    let ended = null
    job.done.then((x) => { ended = x })
    const full = await checkpointReading(dirWatch.seen, keys, () => ended, 'idle')
    // the first checkpoint holding every key may have had records in flight: the idle ones follow it
    await waitCheckpoints(dirWatch.seen, full, IDLE, () => ended, 'idle')
    const churnIds = []
    for (let r = 0; r < CHURN; r++) {
      await produce(cluster, churn[r], churnKeys)
      churnIds.push(await checkpointReading(dirWatch.seen, keys + (r + 1) * churnKeys, () => ended, `churn ${r + 1}`))
    }
    // the job JSON holds the last checkpoint waited for before the job is cancelled
    const lastId = churnIds.at(-1) ?? Math.max(...[...dirWatch.seen.values()].filter((c) => c.meta).map((c) => c.id))
    for (const t0 = Date.now(); !jobWatch.history.has(lastId) && Date.now() - t0 < 30_000;) await sleep(100)
    const rec = jobRecord(p.home)
    must(floeSync(['cancel', rec.job_id], { FLOE_HOME: p.home }), 'floe cancel')
    const r = await job.done
    const w = await jobWatch.stop()
    await dirWatch.stop()
    // idle: every key read, nothing more (after the first such checkpoint, which may have had records
    // in flight); churn: the first checkpoint holding each round of changed keys
    const phaseOf = (h, c) => (c.read == null ? 'not read' : h.id < full ? 'filling' : h.id === full ? 'first full'
      : churnIds.includes(h.id) ? 'churn' : c.read === keys ? 'idle' : 'after churn')
    const rows = checkpointRows(w.history, dirWatch.seen, keys, phaseOf)
    const idle = rows.filter((x) => x.phase === 'idle')
    const changed = rows.filter((x) => x.phase === 'churn')
    const out = {
      partitions, churn_keys: churnKeys, checkpoints_completed: r.checkpoints, cpu_s: r.cpu_s, peak_rss_mib: w.peak_rss_mib,
      time_max_rss_mib: r.max_rss_mib, worker_cpus: r.worker_cpus, log_problems: r.log_problems.count, metrics_last: w.metrics,
      idle: summary(idle), churn: summary(changed), incremental: incremental(backend, idle, changed), list: rows,
    }
    if (PARTS.includes('restore')) out.restore = await restorePart(p, text, vars, rows.at(-1))
    return out
  } finally {
    cluster.child.kill('SIGTERM')
    await cluster.exited
    await removeDir(p.dir)
  }
}

// Removes a scratch directory; a process still finishing (a cancelled worker's state writer) may
// add a file meanwhile, so it retries, and a failure only warns: it must not lose the results.
async function removeDir(dir) {
  for (let attempt = 1; ; attempt++) {
    try {
      fs.rmSync(dir, { recursive: true, force: true })
      return
    } catch (e) {
      if (attempt === 10) {
        log(`warning: could not remove ${dir}: ${e.message}`)
        return
      }
      await sleep(500)
    }
  }
}

// Bytes per checkpoint with --churn-pct % of the keys changed against a full (idle) checkpoint:
// all an idle checkpoint needs to restore, its chk-N and every shared file it lists.
function incremental(backend, idle, changed) {
  const full = median(idle.map((x) => (x.dir_bytes == null ? null : x.dir_bytes + (x.listed_shared_bytes || 0))))
  const bytes = changed.map((x) => (x.dir_bytes == null ? null : x.dir_bytes + (x.new_shared_bytes || 0)))
  const shared = changed.reduce((a, x) => a + (x.new_shared_files || 0), 0) + idle.reduce((a, x) => a + (x.new_shared_files || 0), 0)
  const share = full && bytes.length ? median(bytes) / full : null
  return {
    requested: INCREMENTAL, full_checkpoint_bytes: full, changed_checkpoint_bytes: stats(bytes.filter((x) => x != null)),
    share_of_full: round(share, 4), shared_files_written: shared,
    status: !INCREMENTAL ? 'not requested (--incremental false): every checkpoint is full'
      : shared === 0 && backend === 'hashmap' ? 'full by design: the hashmap backend writes full snapshots (as Flink\'s does)'
      : shared === 0 ? "not available in this build: floe accepted 'execution.checkpointing.incremental' but wrote nothing under shared/ (every checkpoint was full)"
        : 'measured',
    goal: share == null || shared === 0 ? null : { max_share: GOAL_INCREMENTAL_SHARE, pass: share <= GOAL_INCREMENTAL_SHARE },
  }
}

async function restorePart(p, text, vars, last) {
  log(`  restore from checkpoint ${last?.id ?? '?'} (${num(last?.size_bytes)} bytes)`)
  let restoredAt = null
  let restoredId = null
  let firstCheckpointAt = null
  const job = floeRun(p, text, vars, {
    args: ['--from', 'latest'], log: 'floe-run-restore.log',
    onLine: (t, line) => {
      const m = /restored from checkpoint (\d+)/.exec(line)
      if (m && restoredAt == null) { restoredAt = t; restoredId = Number(m[1]) }
      if (restoredAt != null && firstCheckpointAt == null && /checkpoint \d+ completed/.test(line)) firstCheckpointAt = t
    },
  })
  const jobWatch = watchJob(p.home)
  let ended = null
  job.done.then((x) => { ended = x })
  const t0 = Date.now()
  while (firstCheckpointAt == null && !ended) {
    if (Date.now() - t0 > 900_000) throw new Error('restore: no checkpoint within 15 min')
    await sleep(20)
  }
  if (ended) throw new Error(`restore: the job ended (exit ${ended.code}):\n${ended.log.slice(-3000)}`)
  const rec = jobRecord(p.home)
  must(floeSync(['cancel', rec.job_id], { FLOE_HOME: p.home }), 'floe cancel')
  const r = await job.done
  const w = await jobWatch.stop()
  return {
    from_checkpoint: restoredId, last_seen_checkpoint: last ? { id: last.id, size_bytes: last.size_bytes } : null,
    restored_ms: restoredAt == null ? null : restoredAt - r.start, first_checkpoint_ms: firstCheckpointAt - r.start,
    peak_rss_mib: w.peak_rss_mib, log_problems: r.log_problems.count,
  }
}

// ---- main ------------------------------------------------------------------------------------

// Whether N keys fit this machine for `backend` (null: any backend, the input's disk only):
// memory for the worker (hashmap: the idle job's VmHWM was 1,727 MiB at 1M keys,
// state-2026-12-02.json, so 2 KiB per key, which leaves room for the dev cluster; rocksdb: its
// budget, 1 GiB for the rest of the worker, and the dev cluster's copy of the keys, 100 bytes
// each) and disk for the input and the checkpoints, leaving a quarter of the available memory to
// the others on a shared machine; null when they do, else why not.
// MemAvailable (free plus reclaimable cache), else os.freemem().
function availableMemory() {
  try {
    const m = /MemAvailable:\s+(\d+) kB/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))
    if (m) return Number(m[1]) * 1024
  } catch { /* not Linux */ }
  return os.freemem()
}

// '256 mb' -> bytes (the forms --rocksdb-memory accepts).
function memoryBytes(text) {
  const m = /^\s*(\d+)\s*(b|kb|mb|gb)\s*$/i.exec(text)
  return Number(m[1]) * { b: 1, kb: 2 ** 10, mb: 2 ** 20, gb: 2 ** 30 }[m[2].toLowerCase()]
}

function fits(keys, backend) {
  const mem = Math.floor(availableMemory() * 0.75)
  const needMem = backend == null ? 0
    : backend === 'hashmap' ? keys * 2048 : memoryBytes(opts['rocksdb-memory']) + 2 ** 30 + keys * 100
  let disk = null
  try { const s = fs.statfsSync(OUT); disk = s.bavail * s.bsize } catch { /* unknown */ }
  const needDisk = keys * (60 * LOAD_FACTOR + 400)
  if (needMem > mem) return `needs about ${num(Math.round(needMem / 2 ** 30))} GiB of memory, 3/4 of the available memory is ${num(Math.round(mem / 2 ** 30))} GiB`
  if (disk != null && needDisk > disk) return `needs about ${num(Math.round(needDisk / 2 ** 30))} GiB of disk, ${num(Math.round(disk / 2 ** 30))} GiB free`
  return null
}

// The figure this change is measured against: the windows bench's checkpoint duration with 1M
// keys before today's change, when the whole snapshot was synchronous (the stream stopped for all of it).
function before() {
  const file = path.join(HERE, 'results', 'windows-2026-12-01.json')
  try {
    const j = JSON.parse(fs.readFileSync(file, 'utf8'))
    return {
      file: 'windows-2026-12-01.json', floe_source: j.floe?.source?.slice(0, 7) ?? null, keys: j.checkpoint.keys,
      what: 'checkpoint duration with the keyed state copied synchronously at the barrier (the whole checkpoint stopped the stream)',
      idle_ms_median: j.checkpoint.idle.idle.duration_ms.median, idle_ms_max: j.checkpoint.idle.idle.duration_ms.max,
      loaded_ms_median: j.checkpoint.loaded.full_state.duration_ms.median,
    }
  } catch { return null }
}

log(`state: backends ${BACKENDS.join(', ')}; keys ${KEYS.map(num).join(', ')}; parts ${PARTS.join(', ')}; CPU ${CPU ?? 'none'}, ` +
    `nice ${NICE ?? 'none'}; floe ${FLOE}; scratch ${OUT}`)
fs.mkdirSync(OUT, { recursive: true })
const inputs = {}
const skipped = {}
for (const k of KEYS) {
  for (const backend of BACKENDS) {
    const why = fits(k, backend)
    if (why) { skipped[`${backend}/${k}`] = why; log(`${backend}, ${num(k)} keys: skipped: ${why}`) }
  }
  const why = fits(k, null)
  if (why || BACKENDS.every((b) => skipped[`${b}/${k}`])) { skipped[k] = why || 'no backend fits'; continue }
  inputs[k] = keysOnceInput(path.join(OUT, 'input', `state-${k * LOAD_FACTOR}-k${k}-s${SEED}.jsonl`),
                            { events: k * LOAD_FACTOR, keys: k, seed: SEED, base: BASE, spanMs: SPAN_MS })
}
const load0 = await sampleLoad()
const T0 = Date.now()
const runs = []
try {
  for (const backend of BACKENDS) {
    const avail = await probe(backend)
    if (!avail.available) {
      log(`${backend}: ${avail.status}: ${avail.message}`)
      runs.push({ backend, ...avail })
      continue
    }
    for (const keys of KEYS) {
      const skip = skipped[keys] || skipped[`${backend}/${keys}`]
      if (skip) { runs.push({ backend, keys, available: true, skipped: skip }); continue }
      const x = { backend, keys, available: true }
      if (PARTS.includes('load')) x.load = await loadPart(backend, keys, inputs[keys])
      if (PARTS.includes('idle')) x.idle = await idlePart(backend, keys, inputs[keys])
      x.pause = pauseFigures(x)
      runs.push(x)
      log(`${backend}, ${num(keys)} keys: pause (sync) idle max ${x.idle?.idle.sync_ms.max ?? '-'} ms, p50 ${x.idle?.idle.sync_ms.median ?? '-'}; ` +
          `under load max ${x.load?.full_state.sync_ms.max ?? '-'}, p50 ${x.load?.full_state.sync_ms.median ?? '-'}; ` +
          `the longest in ${x.pause.sync_task_of_max ?? '-'}; async idle p50 ` +
          `${x.idle?.idle.async_ms.median ?? '-'} ms; size ${num(x.idle?.idle.size_bytes.median)} B; ${num(x.load?.events_per_s)} events/s; ` +
          `peak RSS ${x.load?.peak_rss_mib ?? '-'} / ${x.idle?.peak_rss_mib ?? '-'} MiB; restore ${x.idle?.restore?.restored_ms ?? '-'} ms; ` +
          `changed / full ${x.idle?.incremental.share_of_full ?? '-'}`)
    }
  }
} catch (e) {
  stopLive()
  throw e
}

// The stream's pause against the goal and the old synchronous copy.
function pauseFigures(x) {
  const all = [...(x.idle ? x.idle.list.filter((c) => ['idle', 'churn'].includes(c.phase)) : []),
               ...(x.load ? x.load.list.filter((c) => c.phase === 'full') : [])]
  const max = all.length ? Math.max(...all.map((c) => c.sync_ms)) : null
  const b = before()
  return {
    checkpoints: all.length, sync_ms_max: max, sync_ms_median: median(all.map((c) => c.sync_ms)),
    sync_task_of_max: all.find((c) => c.sync_ms === max)?.sync_task ?? null, sync_by_task: syncByTask(all),
    goal: max == null ? null : { max_ms: GOAL_PAUSE_MS, pass: max < GOAL_PAUSE_MS },
    ratio_to_before_idle_median: b && max != null && x.keys === b.keys ? round(max / b.idle_ms_median, 4) : null,
  }
}

const figures = {
  state: {
    backends: BACKENDS, keys: KEYS, parts: PARTS, load_factor: LOAD_FACTOR, interval: INTERVAL, idle_checkpoints: IDLE,
    churn_intervals: CHURN, churn_pct: CHURN_PCT, incremental: INCREMENTAL, rocksdb_memory: opts['rocksdb-memory'].trim(),
    cpu: CPU, nice: NICE, parallelism: 1, seed: SEED,
    job: `SESSION(TABLE events PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '${GAP_MIN}' MINUTES) COUNT(*) per user_id -> Iceberg append table`,
    definition: 'sync_ms: the stream\'s pause at a checkpoint, the longest synchronous part of any task (OnBarrier and the keyed ' +
      'state\'s view; as Flink\'s sync duration, neither the work before the barrier (a writer closing its files, PrepareBarrier) ' +
      'nor waiting for room downstream counts), from the job\'s JSON (checkpoints.history[].sync_ms); sync_by_task: those pauses grouped by the task that ' +
      'took them (checkpoints.history[].sync_task); async_ms: the longest asynchronous part (state-writer ' +
      'threads); size_bytes: the checkpoint\'s size as the job reports it. Idle: the checkpoints after the first one holding every ' +
      'key, nothing in flight. Churn: a checkpoint holding one more event for each of churn_pct % of the keys. Under load: the ' +
      'checkpoints holding every key taken while the file was still being read. Peak RSS: the worker\'s VmHWM. Restore: spawn of ' +
      '`floe run --from latest` to the "restored from checkpoint" line.',
    goals: { pause_max_ms: GOAL_PAUSE_MS, incremental_max_share: GOAL_INCREMENTAL_SHARE,
             rocksdb_rss: 'RocksDB within its configured budget + 300 MB and at most a third of the hashmap\'s (10M keys)' },
    skipped,
  },
  before: before(),
  runs,
}
await writeResults({ result: RESULT, bench: 'state', floe: FLOE, start: load0, t0: T0, figures, problems })
log(JSON.stringify({ ok: figures.ok, problems }))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = figures.ok ? 0 : 1
