#!/usr/bin/env node
// Monitoring benchmark (issue 12): what the coordinator's metrics, web UI and stall alarm cost and
// how they behave, as real processes (`floe run` + worker), measured from outside, in three parts.
//
//   node bench/monitoring.mjs [--only cost,stall,false-alarms] [--rows 5000000] [--pairs 3]
//        [--trials 5] [--duration 1800] ...   (normally via bench/monitoring.sh)
//
// cost          records/s of the same bounded job with monitoring on and off. The job: the
//               roster JSON-lines file of --rows rows (bench/gen_roster.mjs, seed --seed, cached
//               in INPUT_DIR as roster-<rows>-<seed>.jsonl, the file kafka_bench.mjs and
//               append_bench.sh use) through the 'filesystem' source into an Iceberg append
//               table (sink.parallelism 1, maintenance off: the three flink-maintenance.*.enabled
//               = false), EXACTLY_ONCE checkpoints every 1 s, restarts off. On: floe's default
//               (`SET 'floe.monitoring.enabled' = 'true'`: the worker reports its metrics once a
//               second, the coordinator serves /metrics and the web UI) and a scraper in this
//               process fetching /metrics and <web UI>/api/job once a second each (fetch, keep-alive,
//               both at once), as Prometheus and an open UI would, from the moment the URLs appear
//               on stderr until the job exits. Off: 'floe.monitoring.enabled' = 'false' (no
//               endpoints, no reports; the counters still count). A run is `floe run` timed from
//               spawn to exit (the source reaches the end of its file, the final checkpoint
//               commits), under /usr/bin/time (CPU time of coordinator and worker, peak RSS) when
//               it exists; records/s = --rows / seconds. Runs are paired, off and on back to back,
//               off first in odd pairs; the page cache is warmed with the file before each pair.
//               The figure: on / off per pair, its median and min-max over the pairs. Outside the
//               clock each table is verified (`floe table verify --unique seq --expect-range
//               seq:1..rows`); a table that is not stops the bench.
// stall         --trials jobs, each: a Kafka topic of 1 partition on `floe kafka dev` (its own
//               process, librdkafka's mock cluster), fed by a producer loop (a `floe kafka
//               produce` of 200 records {seq, name} every 200 ms, 1,000 records/s, from before
//               the job starts until it is cancelled) -> an Iceberg append table (maintenance
//               off), checkpoints every 1 s, the default floe.stall-alarm.threshold (5 x the
//               interval, at least 10 s), FLOE_HOLD_AT=iceberg-commit:<--hold-at> (the committer
//               stops committing from its --hold-at-th checkpoint completion on while checkpoints
//               go on completing: the stall). seen = Date.now() when this process reads the
//               `floe: warning: table demo.stall_K STALLED: ...` line on the coordinator's stderr;
//               latency = seen - job.json tables[].last_commit_millis (the committer's
//               lastCommitTimestamp, the last commit before the hold), also against the table's
//               last snapshot `timestamp-ms` and against the moment the first held checkpoint's
//               completion line was read. job.json is polled every 100 ms for `stalled`; /metrics
//               is read once after the line (floe_jobmanager_job_sinkStalled{table} must be 1).
//               Then the job is cancelled.
// false-alarms  one Kafka -> Iceberg job (topic of 1 partition, the table with floe's default
//               maintenance, checkpoints every 1 s, the default threshold, restarts off) for
//               --duration seconds of bursty input: bursts of 2-20 s at 1,000-5,000 records/s
//               (a `floe kafka produce` every 200 ms of the records due by then) alternating
//               with idle gaps of 5-60 s (uniform; most longer than the threshold), from
//               mulberry32(--seed), starting with a burst once the job runs. Every STALLED line on
//               the coordinator's stderr is a false alarm (expected: 0), recorded with where it
//               fell (the burst, ms after its first record reached Kafka, the idle gap before it,
//               ms since the last commit). The table's metadata folder is polled every 100 ms
//               (bench/table_watch.mjs): a data commit's time = its metadata file's mtime, its
//               records = total-records (one partition: the committed rows are seq 1..total).
//               After the last burst the bench waits for every record to be committed, reads
//               /metrics once, cancels the job and verifies the table holds seq 1..N exactly once.
//               Gaps (ms): commit_gap = between consecutive data commits (the first from the job
//               running); while_input_flowed = those whose earlier commit fell inside a burst
//               (between its first and last ack, so input was flowing when the clock started);
//               pending = from the later of the earlier commit and the ack of the first record it
//               did not hold, to the commit holding it (how long input waited with no commit: what
//               a stall alarm should measure); record_wait = a produce's ack to the commit holding
//               its records.
//
// Clocks: every time here is this machine's wall clock (Date.now()), the clock floe stamps
// commits and job.json with.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { pinBinary, sampleLoad, writeResults } from './provenance.mjs'
import { mulberry32 } from './prng.mjs'
import { benchArgs, eachLine, freshJobDir, startDevCluster, jobRecord, logProblems, readTimeFile, runAsync, timedCommand, ROSTER_COLUMNS } from './roster_job.mjs'
import { parseIds, TableWatch } from './table_watch.mjs'

const USAGE = `usage: node bench/monitoring.mjs [--only cost,stall,false-alarms] [--rows 5000000] [--pairs 3]
         [--trials 5] [--duration 1800] [--hold-at 5] [--seed 42]
         [--floe PATH] [--out DIR] [--input-dir DIR] [--result FILE.json]`

const PARTS_ALL = ['cost', 'stall', 'false-alarms']
const { opts, die, int } = benchArgs('monitoring', USAGE, {
  only: { type: 'string', default: PARTS_ALL.join(',') },
  rows: { type: 'string', default: '5000000' },
  pairs: { type: 'string', default: '3' },
  trials: { type: 'string', default: '5' },
  duration: { type: 'string', default: '1800' },
  'hold-at': { type: 'string', default: '5' },
  seed: { type: 'string', default: '42' },
  floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
  out: { type: 'string', default: process.env.OUT || 'bench/out/monitoring' },
  'input-dir': { type: 'string', default: process.env.INPUT_DIR || 'bench/out' },
  result: { type: 'string', default: process.env.RESULT || '' },
})
const PARTS = opts.only.split(',').map((x) => x.trim()).filter(Boolean)
if (!PARTS.length || PARTS.some((p) => !PARTS_ALL.includes(p))) die('--only: cost, stall and/or false-alarms')
const ROWS = int('rows', 1)
const PAIRS = int('pairs', 1)
const TRIALS = int('trials', 1)
const DURATION_S = int('duration', 10)
const HOLD_AT = int('hold-at', 2)
const SEED = int('seed')
const OUT = path.resolve(opts.out)
const INPUT_DIR = path.resolve(opts['input-dir'])
const RESULT = opts.result
if (!fs.existsSync(path.resolve(opts.floe))) die(`${path.resolve(opts.floe)} not found (build floe, or --floe PATH / FLOE=...)`)
const HERE = path.dirname(fileURLToPath(import.meta.url))
// the binary as it is now, copied into OUT: a rebuild during the run does not change what runs
const FLOE = pinBinary(path.resolve(opts.floe), OUT)

// Fixed by the issue, recorded in the results file.
const INTERVAL = '1 s'
const SCRAPE_MS = 1000                  // cost: the scraper's period
const TICK_MS = 200                     // stall, false-alarms: a `floe kafka produce` per tick
const STALL_RATE = 1000                 // stall: records/s while it runs
const BURST_S = [2, 20]                 // false-alarms: a burst's length, uniform
const BURST_RATE = [1000, 5000]         // its records/s, uniform
const IDLE_S = [5, 60]                  // an idle gap's length, uniform

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const round = (x, d = 1) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))
const num = (x) => (x == null ? '?' : x.toLocaleString('en-US'))
const log = (line) => console.log(line)
const median = (xs) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b)
  if (!s.length) return null
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const stats = (xs) => {
  const v = xs.filter((x) => x != null)
  return { n: v.length, min: v.length ? Math.min(...v) : null, median: median(v), max: v.length ? Math.max(...v) : null }
}
const problems = []

// Jobs, dev clusters and producers still running: stopped if the bench fails half way (a job by
// `floe cancel`, so its worker goes too).
const live = new Set()
function stopLive() {
  for (const x of live) {
    try {
      if (x.stop) x.stop()
      const rec = x.home ? jobRecord(x.home) : null
      if (rec && rec.state === 'RUNNING') floeSync(['cancel', rec.job_id], { FLOE_HOME: x.home })
      else if (x.child) x.child.kill('SIGTERM')
    } catch { /* gone */ }
  }
}

function floeEnv(env = {}) {
  const e = { ...process.env, ...env }
  if (!('FLOE_CRASH_AT' in env)) delete e.FLOE_CRASH_AT
  if (!('FLOE_HOLD_AT' in env)) delete e.FLOE_HOLD_AT
  return e
}
function floeSync(args, env = {}) {
  const r = spawnSync(FLOE, args, { encoding: 'utf8', maxBuffer: 1 << 30, env: floeEnv(env) })
  if (r.error) throw r.error
  return { code: r.status, out: r.stdout || '', err: r.stderr || '' }
}
function must(r, what) {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.out}${r.err}`)
  return r
}
const run = (cmd, args) => runAsync(cmd, args, floeEnv())
const fresh = (name) => freshJobDir(OUT, name)
// Data commits of a table, in order (no compaction's "replace"), and its file totals.
function describe(wh, table) {
  const d = parseIds(must(floeSync(['table', 'describe', table, '--warehouse', wh]), `describe ${table}`).out)
  const snaps = (d.snapshots || []).filter((s) => s.summary.operation !== 'replace').map((s) => ({
    ts: Number(s['timestamp-ms']), seq: Number(s['sequence-number']), records: Number(s.summary['added-records'] || 0),
  })).sort((a, b) => a.seq - b.seq)
  return { snaps, files: d.files }
}
function verify(wh, table, n) {
  const r = floeSync(['table', 'verify', table, '--warehouse', wh, '--unique', 'seq', '--expect-range', `seq:1..${n}`])
  const ok = r.code === 0 && /result: OK/.test(r.out)
  return { ok, report: (r.out.trim().split('\n').slice(-1)[0] || r.err.trim()), text: ok ? null : `${r.out}${r.err}` }
}
// The value of a Prometheus series `family` whose labels include `labels`; null when absent.
function promValue(text, family, labels = {}) {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${family}{`) && !line.startsWith(`${family} `)) continue
    const m = /^[^{\s]+(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (!m) continue
    const ls = Object.fromEntries([...(m[1] || '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => ls[k] === v)) return Number(m[2])
  }
  return null
}
async function getText(url, timeoutMs = 5000) {
  const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
  const body = await r.text()
  if (!r.ok) throw new Error(`GET ${url}: ${r.status}`)
  return body
}
const maintenanceOff = `'flink-maintenance.rewrite.enabled' = 'false',
        'flink-maintenance.expire-snapshots.enabled' = 'false', 'flink-maintenance.delete-orphan-files.enabled' = 'false'`
const jobHead = (more = '') => `SET 'execution.checkpointing.interval' = '${INTERVAL}';
SET 'execution.checkpointing.dir' = '\${CHK}';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'restart-strategy.type' = 'none';${more}`

// `floe run` of a job file under /usr/bin/time when it exists. Each stderr line goes to
// floe-run.log with the ms since spawn, and to onLine(t, line); the web UI and metrics URLs
// it prints are in `urls` (and passed to onUrls once both are known). Returns {child, urls,
// done}: done resolves with the exit code, spawn-to-exit seconds (hrtime), spawn to the
// "job ... finished" line, CPU, RSS, the completed checkpoints, the worker starts and the log.
function floeRun(p, jobText, vars, { env = {}, onLine, onUrls } = {}) {
  const jobFile = path.join(p.dir, 'job.sql')
  fs.writeFileSync(jobFile, jobText)
  const cpuFile = path.join(p.dir, 'cpu')
  const [cmd, argv] = timedCommand(FLOE, ['run', jobFile, ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}=${v}`])], cpuFile)
  const logFd = fs.openSync(path.join(p.dir, 'floe-run.log'), 'w')
  const t0 = process.hrtime.bigint()
  const start = Date.now()
  const child = spawn(cmd, argv, { env: floeEnv({ FLOE_HOME: p.home, ...env }), stdio: ['ignore', 'ignore', 'pipe'] })
  const lines = []
  const urls = { web: null, metrics: null }
  let finished = null   // hrtime of the coordinator's "job ... finished" line
  const tail = eachLine(child.stderr, (t, line) => {
    lines.push(line)
    fs.writeSync(logFd, `${t - start} ${line}\n`)
    if (finished == null && /^floe: job \S+ finished/.test(line)) finished = process.hrtime.bigint()
    const u = /^floe: (web UI|metrics): (\S+)/.exec(line)
    if (u) {
      urls[u[1] === 'web UI' ? 'web' : 'metrics'] = u[2]
      if (urls.web && urls.metrics && onUrls) onUrls(urls)
    }
    if (onLine) onLine(t, line)
  })
  const entry = { child, home: p.home }
  live.add(entry)
  const closed = new Promise((resolve) => child.on('close', (code) => { live.delete(entry); resolve(code) }))
  const done = (async () => {
    const code = await closed
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    if (tail()) lines.push(tail())
    fs.closeSync(logFd)
    const { cpu_s: cpuS, max_rss_mib: rssMib } = readTimeFile(cpuFile)
    const text = lines.join('\n')
    return {
      code, start, end: Date.now(), seconds, cpu_s: cpuS, max_rss_mib: rssMib,
      finished_s: finished == null ? null : Number(finished - t0) / 1e9,
      checkpoints: Math.max(0, ...[...text.matchAll(/checkpoint (\d+) completed/g)].map((x) => Number(x[1]))),
      restarts: [...text.matchAll(/worker \d+ started \(attempt (\d+)\)/g)].filter((x) => x[1] !== '1').length,
      log: text, log_problems: logProblems(text),
    }
  })()
  return { child, urls, done }
}

// The job record once the job runs and serves its metrics; throws when it ends first.
async function running(p, job, what, timeoutMs = 60_000) {
  let ended = null
  job.done.then((r) => { ended = r })
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rec = jobRecord(p.home)
    if (rec && rec.state === 'RUNNING' && rec.worker_pid && rec.metrics_url) return rec
    if (ended) throw new Error(`${what}: the job ended (exit ${ended.code}) before it ran:\n${ended.log.slice(-3000)}`)
    if (Date.now() > deadline) throw new Error(`${what}: the job did not run with its metrics URL within ${timeoutMs / 1000} s`)
    await sleep(50)
  }
}
async function cancel(p, job) {
  const rec = jobRecord(p.home)
  if (rec && rec.state === 'RUNNING') must(floeSync(['cancel', rec.job_id], { FLOE_HOME: p.home }), 'floe cancel')
  return job.done
}

// `floe kafka dev` (3 brokers) as its own process, with `topics` ('name:partitions').
async function devCluster(dir, topics) {
  const { bootstrap, child, exited } = await startDevCluster(FLOE, dir, topics, { env: floeEnv(), live })
  return { bootstrap, stop: async () => { child.kill('SIGTERM'); await exited } }
}

// The producer: records {seq, name} into `topic`, seq 1, 2, ... Each phase of `schedule`
// ({kind: 'burst', s, rate} or {kind: 'idle', s}) in turn; in a burst, every TICK_MS a
// `floe kafka produce` of the records due by then at its rate (a slow produce makes the next tick
// bigger, not the rate lower); stop() ends it early. `batches`: {phase, ack, first, last} per
// produce, ack = when the command exited (the records are in Kafka); `phases`: the phases run,
// with their start and first and last ack.
function producer(cluster, topic, dir, schedule) {
  const file = path.join(dir, `produce-${topic}.jsonl`)
  const batches = []
  const phases = []
  let stopped = false
  let seq = 0
  const entry = { stop: () => { stopped = true } }
  live.add(entry)
  let error = null
  const done = (async () => {
    for (const [i, ph] of schedule.entries()) {
      if (stopped) break
      const t0 = Date.now()
      const rec = { i, kind: ph.kind, s: ph.s, rate: ph.rate ?? 0, start: t0, first_ack: null, last_ack: null, records: 0 }
      phases.push(rec)
      const end = t0 + ph.s * 1000
      if (ph.kind === 'idle') {
        while (!stopped && Date.now() < end) await sleep(Math.min(200, end - Date.now()))
        continue
      }
      let due = 0
      while (!stopped && Date.now() < end) {
        const tick = Date.now()
        const n = Math.floor((ph.rate * (Math.min(tick, end) - t0)) / 1000) + 1 - due
        if (n > 0) {
          let text = ''
          for (let k = 1; k <= n; k++) text += `{"seq":${seq + k},"name":"n${seq + k}"}\n`
          fs.writeFileSync(file, text)
          const r = await run(FLOE, ['kafka', 'produce', '--bootstrap', cluster.bootstrap, '--topic', topic, '--property', 'linger.ms=5', file])
          if (r.code !== 0 || r.out.trim() !== String(n)) throw new Error(`floe kafka produce failed (exit ${r.code}): ${r.out}${r.err}`)
          const ack = Date.now()
          batches.push({ phase: i, ack, first: seq + 1, last: seq + n })
          seq += n
          due += n
          rec.records += n
          if (rec.first_ack == null) rec.first_ack = ack
          rec.last_ack = ack
        }
        await sleep(Math.max(0, tick + TICK_MS - Date.now()))
      }
    }
  })().catch((e) => { error = e }).finally(() => live.delete(entry))
  return {
    batches, phases, done,
    get produced() { return seq },
    get error() { return error },
    // ends the loop; throws what stopped it early, if anything did
    stop: async () => { stopped = true; await done; if (error) throw error },
  }
}

const kafkaJob = (topic, table, { maintenance }) => `-- monitoring bench: Kafka topic ${topic} -> iceberg demo.${table}
${jobHead()}
CREATE TABLE events (seq BIGINT, name STRING)
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'format' = 'json',
        'properties.bootstrap.servers' = '\${KAFKA}', 'scan.startup.mode' = 'earliest-offset',
        -- the test bed's setting (bench/kafka_bench.mjs): the mock holds an empty Fetch for the whole wait
        'properties.fetch.wait.max.ms' = '10');
CREATE TABLE sink (seq BIGINT, name STRING)
  WITH ('connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '\${WH}',
        'catalog-database' = 'demo', 'catalog-table' = '${table}', 'sink.parallelism' = '1'${maintenance ? '' : `,\n        ${maintenanceOff}`});
INSERT INTO sink SELECT * FROM events;
`
// "floe: warning: table T STALLED: no commit for X s while its writers received N rows ...
// (floe.stall-alarm.threshold Y s; last checkpoint C)"
function stallLine(line) {
  const m = /table (\S+) STALLED: no commit for ([\d.]+) s while its writers received (\d+) rows/.exec(line)
  if (!m) return null
  const th = /floe\.stall-alarm\.threshold ([\d.]+) s/.exec(line)
  const ck = /last checkpoint (\d+)/.exec(line)
  return { table: m[1], no_commit_s: Number(m[2]), rows: Number(m[3]), threshold_s: th ? Number(th[1]) : null,
           last_checkpoint: ck ? Number(ck[1]) : null }
}

// ---- cost -----------------------------------------------------------------------------------

function costInput() {
  fs.mkdirSync(INPUT_DIR, { recursive: true })
  const file = path.join(INPUT_DIR, `roster-${ROWS}-${SEED}.jsonl`)
  if (!fs.existsSync(file) || fs.statSync(file).size === 0) {
    log(`generating ${file} (${num(ROWS)} rows)`)
    const r = spawnSync(process.execPath, [path.join(HERE, 'gen_roster.mjs'), String(ROWS), `${file}.tmp`, String(SEED)], { stdio: 'inherit' })
    if (r.status !== 0) throw new Error('gen_roster.mjs failed')
    fs.renameSync(`${file}.tmp`, file)
  }
  return { file, rows: ROWS, bytes: fs.statSync(file).size }
}
const costJob = (input, on) => `-- monitoring bench, cost: filesystem (roster JSON lines) -> iceberg append, monitoring ${on ? 'on' : 'off'}
${jobHead(`\nSET 'floe.monitoring.enabled' = '${on}';`)}
CREATE TABLE feed (${ROSTER_COLUMNS})
  WITH ('connector' = 'filesystem', 'path' = '${input.file}', 'format' = 'json');
CREATE TABLE lake (${ROSTER_COLUMNS})
  WITH ('connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '\${WH}',
        'catalog-database' = 'bench', 'catalog-table' = 'cost', 'sink.parallelism' = '1',
        ${maintenanceOff});
INSERT INTO lake SELECT * FROM feed;
`

// Fetches /metrics and api/job every SCRAPE_MS (both at once) from start() until stop().
function scraper() {
  const s = { started_ms: null, rounds: 0, metrics_ok: 0, api_ok: 0, failures: [], metrics_ms: [], api_ms: [],
              metrics_bytes: null, api_bytes: null, metrics_series: null }
  let stopped = false
  let loop = null
  const get = async (url, what) => {
    const t = Date.now()
    try {
      const body = await getText(url)
      s[`${what}_ms`].push(Date.now() - t)
      s[`${what}_ok`]++
      s[`${what}_bytes`] = body.length
      if (what === 'metrics') s.metrics_series = body.split('\n').filter((l) => l && !l.startsWith('#')).length
    } catch (e) {
      s.failures.push({ t, what, error: String(e.message || e) })
    }
  }
  return {
    s,
    start(urls) {
      if (loop) return
      s.started_ms = Date.now()
      loop = (async () => {
        for (let k = 1; !stopped; k++) {
          s.rounds++
          await Promise.all([get(urls.metrics, 'metrics'), get(`${urls.web.replace(/\/?$/, '/')}api/job`, 'api')])
          const next = s.started_ms + k * SCRAPE_MS
          while (!stopped && Date.now() < next) await sleep(Math.min(50, next - Date.now()))
        }
      })()
    },
    async stop() { stopped = true; await loop },
  }
}

async function costRun(input, on, pair) {
  const p = fresh(`cost-${on ? 'on' : 'off'}`)
  const sc = on ? scraper() : null
  const job = floeRun(p, costJob(input, on), { CHK: p.chk, WH: p.wh }, { onUrls: sc ? (u) => sc.start(u) : null })
  const r = await job.done
  if (sc) await sc.stop()
  if (r.code !== 0) throw new Error(`cost, monitoring ${on ? 'on' : 'off'}: floe run exited ${r.code}; ${path.join(p.dir, 'floe-run.log')}:\n${r.log.slice(-3000)}`)
  const v = verify(p.wh, 'bench.cost', ROWS)
  if (!v.ok) throw new Error(`cost: the table does not hold every seq 1..${ROWS} exactly once (${p.wh}):\n${v.text}`)
  const d = describe(p.wh, 'bench.cost')
  const out = {
    pair, monitoring: on ? 'on' : 'off', seconds: round(r.seconds, 3), records_per_s: Math.round(ROWS / r.seconds),
    // spawn to the coordinator's "job ... finished" line: the same run without its exit
    finished_s: round(r.finished_s, 3), records_per_s_to_finished: r.finished_s ? Math.round(ROWS / r.finished_s) : null,
    exit_after_finished_ms: r.finished_s ? Math.round((r.seconds - r.finished_s) * 1000) : null,
    cpu_s: r.cpu_s, max_rss_mib: r.max_rss_mib, checkpoints: r.checkpoints, restarts: r.restarts, commits: d.snaps.length,
    rows: Number(d.files['data-records']), verified: v.report, served_urls: !!(job.urls.web && job.urls.metrics),
    log_problems: r.log_problems.count,
  }
  if (sc) {
    const x = sc.s
    // a request the coordinator could not answer because it was shutting down is not a failure of the endpoint
    const late = x.failures.filter((f) => f.t >= r.end - 2000).length
    out.scrape = { rounds: x.rounds, metrics_ok: x.metrics_ok, api_ok: x.api_ok, failures: x.failures.length - late, failures_at_exit: late,
                   first_failures: x.failures.slice(0, 5), started_after_s: x.started_ms ? round((x.started_ms - r.start) / 1000, 2) : null,
                   metrics_ms: stats(x.metrics_ms), api_ms: stats(x.api_ms), metrics_bytes: x.metrics_bytes, api_bytes: x.api_bytes,
                   metrics_series: x.metrics_series }
    if (!x.metrics_ok || !x.api_ok) problems.push(`cost, pair ${pair}: monitoring on, but no successful scrape of /metrics and api/job`)
    if (out.scrape.failures) problems.push(`cost, pair ${pair}: ${out.scrape.failures} scrapes failed while the job ran: ${JSON.stringify(x.failures.slice(0, 3))}`)
  } else if (job.urls.web || job.urls.metrics) {
    problems.push(`cost, pair ${pair}: monitoring off, but the coordinator printed its URLs`)
  }
  if (r.restarts) problems.push(`cost, pair ${pair}, monitoring ${out.monitoring}: the worker restarted`)
  // the table and checkpoints go; the job file and its log stay (the last pair's)
  for (const d of [p.wh, p.chk]) fs.rmSync(d, { recursive: true, force: true })
  return out
}

async function cost() {
  const input = costInput()
  const runs = []
  const pairs = []
  for (let pair = 1; pair <= PAIRS; pair++) {
    spawnSync('sh', ['-c', `cat '${input.file}' > /dev/null`])   // page cache, for both alike
    const order = pair % 2 ? [false, true] : [true, false]
    const got = {}
    for (const on of order) {
      const r = await costRun(input, on, pair)
      runs.push(r)
      got[r.monitoring] = r
      log(`cost, pair ${pair}, monitoring ${r.monitoring}: ${num(r.records_per_s)} records/s (${r.seconds} s, CPU ${r.cpu_s ?? '?'} s, ` +
          `exit ${r.exit_after_finished_ms ?? '?'} ms after "finished", ${r.checkpoints} checkpoints${r.scrape ? `; ${r.scrape.metrics_ok} + ${r.scrape.api_ok} scrapes, /metrics ${r.scrape.metrics_ms.median} ms median` : ''}); ${r.verified}`)
    }
    pairs.push({ pair, first: order[0] ? 'on' : 'off', off_records_per_s: got.off.records_per_s, on_records_per_s: got.on.records_per_s,
                 ratio: round(got.on.records_per_s / got.off.records_per_s, 3),
                 ratio_to_finished: got.on.records_per_s_to_finished && got.off.records_per_s_to_finished
                   ? round(got.on.records_per_s_to_finished / got.off.records_per_s_to_finished, 3) : null,
                 cpu_ratio: got.on.cpu_s && got.off.cpu_s ? round(got.on.cpu_s / got.off.cpu_s, 3) : null })
  }
  const rs = (m) => runs.filter((r) => r.monitoring === m)
  const ratios = pairs.map((p) => p.ratio)
  return {
    definition: 'records/s = rows / (`floe run` spawn to exit); the same bounded filesystem -> Iceberg job with ' +
      "'floe.monitoring.enabled' true (and /metrics plus api/job fetched once a second each, keep-alive) or false; pairs back to " +
      'back, off first in odd pairs; ratio = on / off per pair; *_to_finished: the same to the coordinator\'s "job ... finished" ' +
      'line instead of the exit (exit_after_finished_ms: what the exit took after it)',
    input: { file: path.basename(input.file), rows: input.rows, bytes: input.bytes, generator: 'bench/gen_roster.mjs', seed: SEED },
    job: `filesystem (JSON lines) -> Iceberg append, sink.parallelism 1, maintenance off, checkpoints every ${INTERVAL}, EXACTLY_ONCE, restarts off`,
    scrape_interval_ms: SCRAPE_MS,
    runs, pairs,
    summary: {
      off_records_per_s_median: Math.round(median(rs('off').map((r) => r.records_per_s))),
      on_records_per_s_median: Math.round(median(rs('on').map((r) => r.records_per_s))),
      ratio_median: round(median(ratios), 3), ratio_min: Math.min(...ratios), ratio_max: Math.max(...ratios), ratios,
      ratio_to_finished_median: round(median(pairs.map((p) => p.ratio_to_finished)), 3),
      ratios_to_finished: pairs.map((p) => p.ratio_to_finished),
      off_exit_after_finished_ms_median: median(rs('off').map((r) => r.exit_after_finished_ms)),
      on_exit_after_finished_ms_median: median(rs('on').map((r) => r.exit_after_finished_ms)),
      on_exit_after_finished_ms_max: Math.max(...rs('on').map((r) => r.exit_after_finished_ms ?? 0)),
      cpu_ratio_median: round(median(pairs.map((p) => p.cpu_ratio)), 3),
      off_cpu_s_median: median(rs('off').map((r) => r.cpu_s)), on_cpu_s_median: median(rs('on').map((r) => r.cpu_s)),
      scrape_metrics_ms_median: median(rs('on').map((r) => r.scrape.metrics_ms.median)),
      scrape_api_ms_median: median(rs('on').map((r) => r.scrape.api_ms.median)),
      scrape_metrics_ms_max: Math.max(...rs('on').map((r) => r.scrape.metrics_ms.max ?? 0)),
      scrapes_per_run_median: median(rs('on').map((r) => r.scrape.metrics_ok + r.scrape.api_ok)),
    },
  }
}

// ---- stall ----------------------------------------------------------------------------------

async function stallTrial(cluster, k) {
  const topic = `stall${k}`
  const table = `stall_${k}`
  const p = fresh(`stall-${k}`)
  const feed = producer(cluster, topic, p.dir, [{ kind: 'burst', s: 1e6, rate: STALL_RATE }])
  let seen = null
  const completions = new Map()   // checkpoint id -> when its completion line was read
  const job = floeRun(p, kafkaJob(topic, table, { maintenance: false }), { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap }, {
    env: { FLOE_HOLD_AT: `iceberg-commit:${HOLD_AT}` },
    onLine: (t, line) => {
      const c = /checkpoint (\d+) completed/.exec(line)
      if (c && !completions.has(Number(c[1]))) completions.set(Number(c[1]), t)
      if (!seen && /STALLED/.test(line)) seen = { t, line }
    },
  })
  let ended = null
  job.done.then((r) => { ended = r })
  try {
    await running(p, job, `stall trial ${k}`)
    let jsonStalled = null
    let lastCommit = null
    const deadline = Date.now() + 120_000
    while (!seen || !jsonStalled) {
      const rec = jobRecord(p.home)
      const t = (rec?.tables || []).find((x) => x.table === `demo.${table}`)
      if (t && t.last_commit_millis) lastCommit = t.last_commit_millis
      if (t && t.stalled && !jsonStalled) jsonStalled = Date.now()
      if (ended) throw new Error(`stall trial ${k}: the job ended (exit ${ended.code}):\n${ended.log.slice(-3000)}`)
      if (Date.now() > deadline) throw new Error(`stall trial ${k}: no STALLED line (and job.json stalled) within 120 s`)
      await sleep(100)
    }
    let metrics = null
    try {
      const text = await getText(jobRecord(p.home).metrics_url)
      metrics = {
        sink_stalled: promValue(text, 'floe_jobmanager_job_sinkStalled', { table: `demo.${table}` }),
        uncommitted_records: promValue(text, 'floe_jobmanager_job_sinkUncommittedRecords', { table: `demo.${table}` }),
        elapsed_s_since_commit: promValue(text, 'floe_taskmanager_job_task_operator_IcebergFilesCommitter_elapsedSecondsSinceLastSuccessfulCommit',
          { table: `demo.${table}` }),
      }
    } catch (e) { metrics = { error: String(e.message || e) } }
    await feed.stop()
    const r = await cancel(p, job)
    const d = describe(p.wh, `demo.${table}`)
    const lastSnap = d.snaps.length ? d.snaps.at(-1).ts : null
    const parsed = stallLine(seen.line)
    const held = completions.get(HOLD_AT) ?? null
    const out = {
      trial: k, line: seen.line, ...parsed, seen_ms: seen.t, last_commit_millis: lastCommit, last_snapshot_ms: lastSnap,
      commits: d.snaps.length, first_held_checkpoint_completed_ms: held,
      latency_ms: lastCommit ? seen.t - lastCommit : null,
      latency_from_snapshot_ms: lastSnap ? seen.t - lastSnap : null,
      from_first_held_completion_ms: held ? seen.t - held : null,
      job_json_stalled_after_line_ms: jsonStalled - seen.t,
      metrics, checkpoints: r.checkpoints, restarts: r.restarts, produced: feed.produced,
    }
    if (lastCommit && lastSnap && lastCommit !== lastSnap) {
      out.note = `job.json last_commit_millis ${lastCommit} differs from the last snapshot's timestamp-ms ${lastSnap}`
    }
    if (!metrics || metrics.sink_stalled !== 1) problems.push(`stall trial ${k}: floe_jobmanager_job_sinkStalled was ${metrics?.sink_stalled} after the line, not 1`)
    if (out.latency_ms != null && parsed && parsed.threshold_s != null && out.latency_ms < parsed.threshold_s * 1000) {
      problems.push(`stall trial ${k}: the alarm came ${out.latency_ms} ms after the last commit, before the threshold`)
    }
    fs.rmSync(p.dir, { recursive: true, force: true })
    return out
  } finally {
    await feed.stop().catch(() => {})
    if (!ended) await cancel(p, job).catch(() => {})
  }
}

async function stall(cluster) {
  const trials = []
  for (let k = 1; k <= TRIALS; k++) {
    const t = await stallTrial(cluster, k)
    trials.push(t)
    log(`stall trial ${k}: STALLED line ${num(t.latency_ms)} ms after the last commit (snapshot: ${num(t.latency_from_snapshot_ms)} ms; ` +
        `${num(t.from_first_held_completion_ms)} ms after checkpoint ${HOLD_AT} completed uncommitted); it says "no commit for ${t.no_commit_s} s", ` +
        `threshold ${t.threshold_s} s, ${num(t.rows)} rows waiting; job.json stalled ${t.job_json_stalled_after_line_ms} ms after the line; metric ${t.metrics?.sink_stalled}`)
  }
  const thresholds = [...new Set(trials.map((t) => t.threshold_s))]
  return {
    definition: 'latency = when this process read the STALLED line on the coordinator\'s stderr - job.json tables[].last_commit_millis ' +
      `(the last commit before FLOE_HOLD_AT=iceberg-commit:${HOLD_AT} held the committer); also from the table's last snapshot ` +
      `timestamp-ms and from the completion line of checkpoint ${HOLD_AT} (the first one not committed)`,
    hold_at: HOLD_AT, checkpoint_interval: INTERVAL, records_per_s: STALL_RATE, tick_ms: TICK_MS,
    threshold_s: thresholds.length === 1 ? thresholds[0] : thresholds, threshold_setting: 'default (not set)',
    latency_ms: stats(trials.map((t) => t.latency_ms)),
    latency_from_snapshot_ms: stats(trials.map((t) => t.latency_from_snapshot_ms)),
    after_threshold_ms: stats(trials.map((t) => (t.latency_ms != null && t.threshold_s != null ? t.latency_ms - t.threshold_s * 1000 : null))),
    from_first_held_completion_ms: stats(trials.map((t) => t.from_first_held_completion_ms)),
    trials,
  }
}

// ---- false alarms ---------------------------------------------------------------------------

function burstSchedule() {
  const rand = mulberry32(SEED * 7_919 + 12)
  const uni = ([a, b]) => a + rand() * (b - a)
  const out = []
  let total = 0
  while (total < DURATION_S) {
    const b = { kind: 'burst', s: round(Math.min(uni(BURST_S), DURATION_S - total), 1), rate: Math.round(uni(BURST_RATE)) }
    out.push(b)
    total += b.s
    if (total >= DURATION_S) break
    const i = { kind: 'idle', s: round(Math.min(uni(IDLE_S), DURATION_S - total), 1) }
    out.push(i)
    total += i.s
  }
  return out
}

async function falseAlarms(cluster) {
  const p = fresh('false-alarms')
  const table = 'bursty'
  const schedule = burstSchedule()
  const alarms = []
  const recoveries = []
  const job = floeRun(p, kafkaJob('bursty', table, { maintenance: true }), { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap }, {
    onLine: (t, line) => {
      if (/STALLED/.test(line)) alarms.push({ t, line })
      if (/commits again/.test(line)) recoveries.push({ t, line })
    },
  })
  let ended = null
  job.done.then((r) => { ended = r })
  let feed = null
  let watch = null
  try {
    const rec0 = await running(p, job, 'false alarms')
    const runningAt = Date.now()
    watch = new TableWatch(path.join(p.wh, 'demo', table, 'metadata'), { pollMs: 100 }).start()
    const bursts = schedule.filter((x) => x.kind === 'burst')
    log(`false alarms: ${DURATION_S} s of bursty input: ${bursts.length} bursts (${num(Math.round(bursts.reduce((a, b) => a + b.s * b.rate, 0)))} records planned), ` +
        `${schedule.length - bursts.length} idle gaps (${schedule.filter((x) => x.kind === 'idle' && x.s > 10).length} over 10 s)`)
    feed = producer(cluster, 'bursty', p.dir, schedule)
    let nextLog = Date.now() + 60_000
    for (;;) {
      const finished = await Promise.race([feed.done.then(() => true), sleep(1000).then(() => false)])
      if (ended) throw new Error(`false alarms: the job ended (exit ${ended.code}) while input flowed:\n${ended.log.slice(-3000)}`)
      if (feed.error) throw feed.error
      if (finished) break
      if (Date.now() >= nextLog) {
        nextLog += 60_000
        const commits = watch.versions.filter((v) => v.kind === 'commit')
        log(`false alarms: ${round((Date.now() - runningAt) / 1000, 0)} s: ${num(feed.produced)} records produced, ${num(commits.at(-1)?.records ?? 0)} committed ` +
            `in ${num(commits.length)} commits, ${alarms.length} STALLED line(s)`)
      }
    }
    const N = feed.produced
    // every record committed, then the job's own counts, then cancel
    const deadline = Date.now() + 120_000
    while ((watch.versions.filter((v) => v.kind === 'commit').at(-1)?.records ?? 0) < N) {
      if (ended) throw new Error(`false alarms: the job ended (exit ${ended.code}) before committing every record`)
      if (Date.now() > deadline) throw new Error(`false alarms: ${N} records produced, not all committed within 120 s`)
      await sleep(200)
    }
    await sleep(1500)   // one more metric report
    let metrics = null
    try {
      const text = await getText(rec0.metrics_url)
      const t = { table: `demo.${table}` }
      metrics = {
        commits: promValue(text, 'floe_taskmanager_job_task_operator_IcebergFilesCommitter_commits', t),
        committed_records: promValue(text, 'floe_taskmanager_job_task_operator_IcebergFilesCommitter_committedDataFilesRecordCount', t),
        completed_checkpoints: promValue(text, 'floe_jobmanager_job_numberOfCompletedCheckpoints'),
        failed_checkpoints: promValue(text, 'floe_jobmanager_job_numberOfFailedCheckpoints'),
        sink_stalled: promValue(text, 'floe_jobmanager_job_sinkStalled', t),
        restarts: promValue(text, 'floe_jobmanager_job_numRestarts'),
      }
    } catch (e) { metrics = { error: String(e.message || e) } }
    const r = await cancel(p, job)
    await watch.stop()
    const v = verify(p.wh, `demo.${table}`, N)
    if (!v.ok) problems.push(`false alarms: the table does not hold every seq 1..${N} exactly once: ${v.report}`)

    // commits and gaps
    const commits = watch.versions.filter((x) => x.kind === 'commit').map((x) => ({ t: Math.round(x.mtime_ms), records: x.records, checkpoint: x.checkpoint }))
    const batches = feed.batches
    const phases = feed.phases
    const batchOf = (s) => {   // the batch holding seq s (binary search)
      let lo = 0
      let hi = batches.length - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (batches[mid].last < s) lo = mid + 1
        else hi = mid
      }
      return batches[lo]
    }
    const inBurst = (t) => phases.some((ph) => ph.kind === 'burst' && ph.first_ack != null && t >= ph.first_ack && t <= ph.last_ack)
    const gaps = []
    let prev = { t: runningAt, records: 0 }
    for (const c of commits) {
      if (c.records > prev.records) {
        const firstPending = batchOf(prev.records + 1)
        gaps.push({ from: prev.t, to: c.t, gap_ms: c.t - prev.t, flowing: inBurst(prev.t),
                    pending_ms: c.t - Math.max(prev.t, firstPending.ack), records: c.records - prev.records })
      }
      prev = c
    }
    let ci = 0
    const waits = batches.map((b) => {
      while (ci < commits.length && commits[ci].records < b.last) ci++
      return ci < commits.length ? commits[ci].t - b.ack : null
    })
    const top = (xs, key, n = 5) => [...xs].sort((a, b) => b[key] - a[key]).slice(0, n)
    // where each alarm fell
    const lastCommitBefore = (t) => { let c = null; for (const x of commits) { if (x.t <= t) c = x; else break } return c }
    const alarmRows = alarms.map((a) => {
      const ph = [...phases].reverse().find((x) => x.kind === 'burst' && x.start <= a.t)
      const idx = ph ? phases.indexOf(ph) : -1
      const idleBefore = idx > 0 && phases[idx - 1].kind === 'idle' ? phases[idx - 1].s : null
      const lc = lastCommitBefore(a.t)
      return { t: a.t, line: a.line, ...stallLine(a.line), burst: ph ? ph.i : null, in_burst: ph ? a.t <= ph.last_ack : null,
               ms_after_burst_first_ack: ph && ph.first_ack ? a.t - ph.first_ack : null, idle_gap_before_s: idleBefore,
               ms_since_last_commit: lc ? a.t - lc.t : null }
    })
    const burstPh = phases.filter((x) => x.kind === 'burst' && x.records > 0)
    const flowing = gaps.filter((g) => g.flowing)
    const out = {
      definition: 'false alarm = a STALLED line on the coordinator\'s stderr of a healthy job (expected 0); commit time = mtime of ' +
        'the metadata file of a data commit (polled every 100 ms); gaps: commit_gap between consecutive data commits (the first ' +
        'from the job running), while_input_flowed those whose earlier commit fell between a burst\'s first and last ack, pending from ' +
        'the later of the earlier commit and the ack of the first record it did not hold to the commit holding it, record_wait a ' +
        'produce\'s ack to the commit holding its records',
      duration_s: DURATION_S, checkpoint_interval: INTERVAL, threshold_s: alarmRows[0]?.threshold_s ?? null,
      threshold_setting: 'default (not set): 5 x the interval, at least 10 s', maintenance: "floe's defaults (compaction, expiry, orphan removal on)",
      schedule: { seed: SEED, burst_s: BURST_S, burst_records_per_s: BURST_RATE, idle_s: IDLE_S, tick_ms: TICK_MS,
                  bursts: burstPh.length, idle_gaps: phases.filter((x) => x.kind === 'idle').length,
                  idle_gaps_over_10_s: phases.filter((x) => x.kind === 'idle' && x.s > 10).length,
                  burst_seconds: round(burstPh.reduce((a, x) => a + x.s, 0), 1),
                  idle_seconds: round(phases.filter((x) => x.kind === 'idle').reduce((a, x) => a + x.s, 0), 1),
                  phases: phases.map((x) => ({ kind: x.kind, s: x.s, rate: x.rate || undefined, records: x.records || undefined })) },
      false_alarms: alarmRows.length, alarms: alarmRows, recoveries: recoveries.length,
      records: N, produces: batches.length, commits: commits.length, checkpoints: r.checkpoints, restarts: r.restarts,
      job_metrics: metrics, verified: v.report, verified_ok: v.ok,
      commit_gap_ms: stats(gaps.map((g) => g.gap_ms)),
      commit_gap_while_input_flowed_ms: stats(flowing.map((g) => g.gap_ms)),
      pending_without_commit_ms: stats(gaps.map((g) => g.pending_ms)),
      record_wait_ms: stats(waits),
      longest_gaps_while_input_flowed: top(flowing, 'gap_ms'),
      longest_pending: top(gaps, 'pending_ms'),
      log_problems: r.log_problems.count, log_problems_first: r.log_problems.first,
    }
    if (alarmRows.length) problems.push(`false alarms: ${alarmRows.length} STALLED line(s) on a healthy job, e.g. ${alarmRows[0].line}`)
    if (r.restarts) problems.push(`false alarms: the worker restarted ${r.restarts} time(s)`)
    return out
  } finally {
    if (feed) await feed.stop().catch(() => {})
    if (watch) await watch.stop().catch(() => {})
    if (!ended) await cancel(p, job).catch(() => {})
  }
}

// ---- main -----------------------------------------------------------------------------------

log(`monitoring: ${PARTS.join(', ')}; cost ${num(ROWS)} rows x ${PAIRS} pair(s); stall ${TRIALS} trial(s), hold at checkpoint ${HOLD_AT}; ` +
    `false alarms ${DURATION_S} s; floe ${FLOE}; scratch ${OUT}`)
fs.mkdirSync(OUT, { recursive: true })
if (PARTS.includes('cost')) costInput()   // outside the load sample and the runs
const load0 = await sampleLoad()
const T0 = Date.now()
const figures = {
  monitoring: {
    parts: PARTS, rows: ROWS, pairs: PAIRS, trials: TRIALS, duration_s: DURATION_S, hold_at: HOLD_AT, seed: SEED,
    checkpoint_interval: INTERVAL, scrape_interval_ms: SCRAPE_MS, tick_ms: TICK_MS,
  },
}
let cluster = null
const onSignal = () => { stopLive(); process.exit(130) }
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)
try {
  if (PARTS.includes('cost')) figures.cost = await cost()
  if (PARTS.includes('stall') || PARTS.includes('false-alarms')) {
    const dir = path.join(OUT, 'kafka')
    fs.rmSync(dir, { recursive: true, force: true })
    fs.mkdirSync(dir, { recursive: true })
    cluster = await devCluster(dir, [...Array.from({ length: TRIALS }, (_, i) => `stall${i + 1}:1`), 'bursty:1'])
    if (PARTS.includes('stall')) figures.stall = await stall(cluster)
    if (PARTS.includes('false-alarms')) figures.false_alarms = await falseAlarms(cluster)
  }
} catch (e) {
  stopLive()
  throw e
} finally {
  if (cluster) await cluster.stop()
}
await writeResults({ result: RESULT, bench: 'monitoring', floe: FLOE, start: load0, t0: T0, figures, problems })

log('')
const C = figures.cost
if (C) {
  const s = C.summary
  log(`cost of monitoring (${num(ROWS)} rows, ${PAIRS} pair(s)): off ${num(s.off_records_per_s_median)} records/s, on (scraped every ` +
      `${SCRAPE_MS} ms) ${num(s.on_records_per_s_median)} records/s; on / off median ${s.ratio_median} (${s.ratio_min}-${s.ratio_max}: ` +
      `${s.ratios.join(', ')}); to the "finished" line ${s.ratio_to_finished_median} (${s.ratios_to_finished.join(', ')}); exit after it: off ` +
      `${s.off_exit_after_finished_ms_median} ms, on ${s.on_exit_after_finished_ms_median} ms (median); CPU on / off ${s.cpu_ratio_median ?? '?'}; /metrics answered in ${s.scrape_metrics_ms_median} ms (median), api/job ${s.scrape_api_ms_median} ms`)
}
const S = figures.stall
if (S) {
  log(`stall alarm (threshold ${S.threshold_s} s, hold at checkpoint ${HOLD_AT}, ${S.trials.length} trial(s)): after the last commit ` +
      `${S.trials.map((t) => num(t.latency_ms)).join(', ')} ms; median ${num(S.latency_ms.median)}, max ${num(S.latency_ms.max)} ` +
      `(past the threshold: median ${num(S.after_threshold_ms.median)}, max ${num(S.after_threshold_ms.max)} ms)`)
}
const F = figures.false_alarms
if (F) {
  log(`false alarms over ${F.duration_s} s of bursty input (${F.schedule.bursts} bursts, ${F.schedule.idle_gaps_over_10_s} idle gaps over 10 s): ` +
      `${F.false_alarms} STALLED line(s); ${num(F.records)} records in ${num(F.commits)} commits, ${num(F.checkpoints)} checkpoints; ` +
      `max commit gap while input flowed ${num(F.commit_gap_while_input_flowed_ms.max)} ms, longest pending without a commit ` +
      `${num(F.pending_without_commit_ms.max)} ms, max record wait ${num(F.record_wait_ms.max)} ms; table: ${F.verified}`)
  for (const a of F.alarms.slice(0, 5)) {
    log(`  alarm: burst ${a.burst}, ${num(a.ms_after_burst_first_ack)} ms after its first record, after an idle gap of ${a.idle_gap_before_s ?? '?'} s: ${a.line}`)
  }
}
log(JSON.stringify({ ok: figures.ok, problems }))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = figures.ok ? 0 : 1
