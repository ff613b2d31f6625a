#!/usr/bin/env node
// Window benchmark (issue 11, part 5): event-time window aggregation as real processes (`floe
// run` + worker), measured from outside, in three parts.
//
//   node bench/windows.mjs [--parts throughput,latency,checkpoint] [--events 5000000]
//        [--keys 10000,1000000] [--kinds tumble,session] [--reps 3] ...   (normally via bench/windows.sh)
//
// throughput  events/s of TUMBLE(5 min) COUNT(*) per key and SESSION(PARTITION BY key, 10 min)
//             COUNT(*) per key, floe on ONE core against DuckDB computing the same aggregate over
//             the same events in batch, in the same run, for each --keys (distinct keys).
//             Input: one JSON-lines file per --keys, `{"user_id":"u123","ts":"2026-01-01
//             00:00:00.000"}`, deterministic for (--events, --keys, --rate, --disorder, --seed):
//             event i has the true time BASE + i * 1000 / --rate ms and is written with up to
//             --disorder - 1 s subtracted (uniform): out of event-time order within that bound;
//             keys uniform over u0..u<keys-1>. floe: 'filesystem' source with
//             `WATERMARK FOR ts AS ts - INTERVAL '<disorder>' SECOND` (so no event is late),
//             the window, an Iceberg append table (maintenance off: the three
//             flink-maintenance.*.enabled = false), 'parallelism.default' 1, EXACTLY_ONCE
//             checkpoints every --interval (10 s), restarts off; `floe run` under
//             `taskset -c <--cpu>` (the worker inherits the affinity; its Cpus_allowed_list is
//             read from /proc and recorded), timed from spawn to exit (planning, table creation,
//             the final checkpoint and its commit included). DuckDB: bench/windows_duckdb.mjs
//             under the same `taskset`, `SET threads=1`, the aggregate of the same file into one
//             zstd Parquet file, timed around the COPY statement. events/s = --events / seconds.
//             Per rep, keys and window the two run back to back (floe first in odd reps, DuckDB
//             first in even ones); the figure is the median of the pairs' floe / DuckDB ratios.
//             Outside the clock each floe table is compared with DuckDB's result row for row
//             (windows_duckdb.mjs compare: EXCEPT ALL both ways over (user_id, window_start,
//             window_end, n)); floe's row count must equal `floe table describe`'s
//             data-records and the counts must sum to --events; any difference stops the bench.
//             --parallelism N (with --cpu none): floe's 'parallelism.default' N and DuckDB's
//             threads N, both unpinned, for the both-cores comparison (issue 25).
//             --chaining true|false: the throughput job's 'pipeline.operator-chaining.enabled'
//             (unset: floe's default).
// latency     how long after a window can close its row is visible, in a Kafka topic (sink
//             exactly-once) and in an Iceberg table, from one job with both sinks (two INSERTs of
//             the same TUMBLE(--latency-window s) COUNT(*) per key). Source: a Kafka topic of one
//             partition on `floe kafka dev` (librdkafka's mock cluster), WATERMARK ts -
//             --latency-delay s. Every --latency-tick-ms this process stamps t_gen = Date.now(),
//             writes that tick's events (--latency-rate per second over --latency-keys keys) with
//             event time t_gen minus up to --latency-disorder-ms, and runs `floe kafka produce`
//             on them; t_ack = when that command exited (the records are in Kafka). A window
//             [s, e) can close once an event with ts >= e - 1 ms + delay is in Kafka (the
//             watermark then reaches e - 1 ms, floe's firing rule). For each window:
//               closable_at = t_ack of the first tick holding such an event;
//               kafka_visible = when the sink's transaction holding the window's rows committed.
//                 The dev cluster does not emulate read_committed (it shows records of open
//                 transactions to every reader), so this is taken from the sink's commit log
//                 (FLOE_KAFKA_SINK_COMMIT_LOG, the test hook that stands in for transaction
//                 markers on the mock: one line right after commit_transaction returned, with
//                 the offsets of its records), stamped on arrival by polling the file every 5 ms;
//                 the offsets are mapped to rows by consuming the topic after the run;
//               iceberg_visible = `timestamp-ms` of the first snapshot whose scan holds the rows
//                 (the committer's clock when it made the snapshot; its metadata file is written
//                 and swapped in right after);
//               latency = visible - closable_at (ms). Also reported against the event-time ideal,
//                 visible - (e - 1 ms + delay): what a reader sees if event time is wall clock,
//                 including the producer's delay (t_ack - t_gen: a `floe kafka produce` process per
//                 tick) and the tick.
//             Every closable window must land exactly once in both sinks with the count this
//             process computes from the events it produced.
// checkpoint  checkpoint duration with --checkpoint-keys (1,000,000) keys of window state, in a
//             job holding every key in one window: TUMBLE(1 DAY) COUNT(*) per key over events whose
//             time rises within one day (the window fires only when the input ends), one core and
//             parallelism 1 as above, checkpoints every --checkpoint-interval, retention
//             --checkpoint-retained (floe's default, 1; the smoke run keeps them all, so that the
//             20 ms poll below cannot miss one on a loaded machine). Input: --checkpoint-events lines, the first --checkpoint-keys of them
//             each key once (a shuffled order), the rest random keys. Two jobs:
//             under load: the file through the filesystem source, unthrottled; the figure covers
//               the checkpoints holding every key taken before the end of the input (the source
//               not at the end of its file, not the final checkpoint, after which the window has
//               fired);
//             idle: only the first --checkpoint-keys lines, in a Kafka topic (dev cluster, <= 2 MiB
//               per partition); once the source has read them all nothing is in flight, and the
//               --checkpoint-idle checkpoints after the first one holding every key measure the
//               state alone; then the job is cancelled.
//             The checkpoint directory is polled every 20 ms: a checkpoint's trigger = the birth
//             time of its chk-N directory (created when the coordinator triggers it; statx; the
//             first time the bench saw it when the filesystem keeps none), its completion =
//             `timestamp_millis` of its `_metadata` (wall clock when finalized; runtime/README.md
//             has the format), duration = completion - trigger: barrier alignment behind queued
//             records, every task's snapshot, the state files written and fsynced. The window's
//             state file (size, and its mtime after the trigger) is recorded too. Keys in state =
//             the events the source had read at the barrier (its state file: the filesystem
//             source's next line, the Kafka source's next offsets), capped at the keys: with
//             aligned barriers the window has seen exactly those. The loaded job's table must
//             hold one row per key, counts summing to the events.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { pinBinary, sampleLoad, writeResults } from './provenance.mjs'
import { mulberry32 } from './prng.mjs'
import { benchArgs, freshJobDir, jobRecord, runAsync } from './roster_job.mjs'
import { parseIds } from './table_watch.mjs'
import {
  eventsInput, fileSource, icebergSink, jobHead, jobRunner, keysOnceInput, median, num, parseTs, round, sinkColumns, sleep, stats, tsText,
  tvfText, watchCheckpoints, windowQuery, writeLines,
} from './window_job.mjs'

const USAGE = `usage: node bench/windows.mjs [--parts throughput,latency,checkpoint] [--events 5000000]
         [--keys 10000,1000000] [--kinds tumble,session] [--reps 3] [--rate 1000] [--disorder 60]
         [--interval '10 s'] [--cpu N|none] [--parallelism 1] [--chaining true|false]
         [--latency-seconds 60] [--latency-window 5] [--latency-delay 2] [--latency-disorder-ms 1000]
         [--latency-rate 200] [--latency-keys 20] [--latency-interval '1 s'] [--latency-tick-ms 100]
         [--checkpoint-keys 1000000] [--checkpoint-events 8000000] [--checkpoint-interval '1 s'] [--checkpoint-idle 5] [--checkpoint-retained 1]
         [--seed 42] [--floe PATH] [--out DIR] [--result FILE.json]`

const { opts, die, int } = benchArgs('windows', USAGE, {
  parts: { type: 'string', default: 'throughput,latency,checkpoint' },
  events: { type: 'string', default: '5000000' },
  keys: { type: 'string', default: '10000,1000000' },
  kinds: { type: 'string', default: 'tumble,session' },
  reps: { type: 'string', default: '3' },
  rate: { type: 'string', default: '1000' },
  disorder: { type: 'string', default: '60' },
  interval: { type: 'string', default: '10 s' },
  cpu: { type: 'string', default: String(Math.max(0, os.cpus().length - 1)) },
  parallelism: { type: 'string', default: '1' },
  chaining: { type: 'string', default: '' },
  'latency-seconds': { type: 'string', default: '60' },
  'latency-window': { type: 'string', default: '5' },
  'latency-delay': { type: 'string', default: '2' },
  'latency-disorder-ms': { type: 'string', default: '1000' },
  'latency-rate': { type: 'string', default: '200' },
  'latency-keys': { type: 'string', default: '20' },
  'latency-interval': { type: 'string', default: '1 s' },
  'latency-tick-ms': { type: 'string', default: '100' },
  'checkpoint-keys': { type: 'string', default: '1000000' },
  'checkpoint-events': { type: 'string', default: '8000000' },
  'checkpoint-interval': { type: 'string', default: '1 s' },
  'checkpoint-idle': { type: 'string', default: '5' },
  'checkpoint-retained': { type: 'string', default: '1' },
  seed: { type: 'string', default: '42' },
  floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
  out: { type: 'string', default: process.env.OUT || 'bench/out/windows' },
  result: { type: 'string', default: process.env.RESULT || '' },
})

const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean)
const PARTS = list(opts.parts)
if (!PARTS.length || PARTS.some((p) => !['throughput', 'latency', 'checkpoint'].includes(p))) die('--parts: throughput, latency and/or checkpoint')
const EVENTS = int('events', 1)
const KEYS = list(opts.keys).map((k) => {
  const v = Number(k)
  if (!Number.isInteger(v) || v < 1) die(`--keys: '${k}' is not an integer >= 1`)
  return v
})
const KINDS = list(opts.kinds)
if (!KINDS.length || KINDS.some((k) => !['tumble', 'session'].includes(k))) die('--kinds: tumble and/or session')
const REPS = int('reps', 1)
const RATE = int('rate', 1)
const DISORDER_S = int('disorder', 2)
const SEED = int('seed')
const intervalMs = (name) => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min)\s*$/.exec(opts[name])
  if (!m) die(`--${name} '${opts[name]}': expected e.g. '1 s' or '200 ms'`)
  return Number(m[1]) * { ms: 1, s: 1000, min: 60000 }[m[2]]
}
intervalMs('interval')
const CPU = opts.cpu === 'none' ? null : int('cpu')
// The throughput part's 'parallelism.default' and DuckDB's threads (the other parts run at 1).
const PARALLELISM = int('parallelism', 1)
if (PARALLELISM > 1 && CPU != null) die('--parallelism above 1 needs --cpu none (one core cannot run it in parallel)')
const CHAINING = opts.chaining
if (CHAINING && !['true', 'false'].includes(CHAINING)) die(`--chaining must be true or false, got '${CHAINING}'`)
if (CPU != null && CPU >= os.cpus().length) die(`--cpu ${CPU}: this machine has CPUs 0..${os.cpus().length - 1}`)
const LAT = {
  seconds: int('latency-seconds', 1), windowS: int('latency-window', 1), delayS: int('latency-delay', 1),
  disorderMs: int('latency-disorder-ms'), rate: int('latency-rate', 1), keys: int('latency-keys', 1),
  interval: opts['latency-interval'], intervalMs: intervalMs('latency-interval'), tickMs: int('latency-tick-ms', 10),
}
if (LAT.disorderMs >= LAT.delayS * 1000) die('--latency-disorder-ms must be below --latency-delay (in ms): no event may be late')
// the dev cluster keeps ~5 MiB per partition and drops older records silently; an event is ~50 bytes
if (LAT.rate * LAT.seconds * 50 > 4 << 20) die('--latency-rate x --latency-seconds: too many events for the dev cluster (~5 MiB per partition)')
const CK = { keys: int('checkpoint-keys', 1), events: int('checkpoint-events', 1), interval: opts['checkpoint-interval'],
             intervalMs: intervalMs('checkpoint-interval'), idle: int('checkpoint-idle', 1),
             retained: int('checkpoint-retained', 1) }
if (CK.events <= CK.keys) die('--checkpoint-events must exceed --checkpoint-keys (the first --checkpoint-keys lines are the keys once each)')

const OUT = path.resolve(opts.out)
const RESULT = opts.result
if (!fs.existsSync(path.resolve(opts.floe))) die(`${path.resolve(opts.floe)} not found (build floe, or --floe PATH / FLOE=...)`)
const HERE = path.dirname(fileURLToPath(import.meta.url))
if (!fs.existsSync(path.join(HERE, '..', 'node_modules', '@duckdb', 'node-api')) && PARTS.some((p) => p !== 'latency')) {
  die("node_modules missing: run 'npm ci' (scripts/install-deps.sh) for @duckdb/node-api")
}
if (CPU != null && spawnSync('taskset', ['-c', String(CPU), 'true']).status !== 0) die(`taskset -c ${CPU} does not work here (use --cpu none to run unpinned)`)
// the binary as it is now, copied into OUT: a rebuild during the run does not change what runs
const FLOE = pinBinary(path.resolve(opts.floe), OUT)
const PEER = path.join(HERE, 'windows_duckdb.mjs')

// The window shapes of the issue; fixed, so every results file measures the same aggregate.
const TUMBLE_MIN = 5
const GAP_MIN = 10
const BASE = Date.UTC(2026, 0, 1)   // a day boundary (the checkpoint part's 1-day window)

const log = (line) => console.log(line)
const problems = []
const { floeRun, floeSync, devCluster, stopLive } = jobRunner({ floe: FLOE, cpu: CPU })
function must(r, what) {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.out}${r.err}`)
  return r
}
const run = (cmd, args, { env = process.env } = {}) => runAsync(cmd, args, env)
const fresh = (name) => freshJobDir(OUT, name)
// `floe table describe` of bench.<table>: data commits (no compaction's "replace"), in order, and the file totals.
function describe(wh, table) {
  const d = parseIds(must(floeSync(['table', 'describe', `bench.${table}`, '--warehouse', wh]), `describe bench.${table}`).out)
  const snaps = (d.snapshots || []).filter((s) => s.summary.operation !== 'replace').map((s) => ({
    id: s['snapshot-id'], ts: Number(s['timestamp-ms']), seq: Number(s['sequence-number']),
    records: Number(s.summary['added-records'] || 0),
  })).sort((a, b) => a.seq - b.seq)
  return { snaps, files: d.files }
}
const dataGlob = (wh, table) => path.join(wh, 'bench', table, 'data', '*.parquet')
// ---- inputs ---------------------------------------------------------------------------------

// The throughput input for `keys` keys (cached in OUT/input): window_job.mjs eventsInput.
const throughputInput = (keys) => eventsInput(path.join(OUT, 'input'),
  { events: EVENTS, keys, rate: RATE, disorderS: DISORDER_S, seed: SEED, base: BASE }, log)

// The checkpoint input: the first CK.keys lines each key once (shuffled), then random keys;
// event time rising through one day from BASE, so a 1-day window holds every key until the end.
function checkpointInput() {
  const file = path.join(OUT, 'input', `checkpoint-${CK.events}-k${CK.keys}-s${SEED}.jsonl`)
  return keysOnceInput(file, { events: CK.events, keys: CK.keys, seed: SEED, base: BASE, spanMs: 86_400_000 - 60_000 })
}

// ---- throughput -----------------------------------------------------------------------------

async function floeThroughput(kind, input, keys, rep) {
  const table = `${kind}_k${keys}`
  const p = fresh(`tp-${table}`)
  const size = kind === 'tumble' ? `INTERVAL '${TUMBLE_MIN}' MINUTES` : `INTERVAL '${GAP_MIN}' MINUTES`
  const job = `-- window bench: ${kind}, ${keys} keys, ${EVENTS} events (rep ${rep})
${jobHead(opts.interval, PARALLELISM)}${CHAINING ? `\nSET 'pipeline.operator-chaining.enabled' = '${CHAINING}';` : ''}
${fileSource(input.file, DISORDER_S)}
${icebergSink('tiles', table)}
${windowQuery('tiles', tvfText(kind, 'events', size))}
`
  const r = await floeRun(p, job, { CHK: p.chk, WH: p.wh }).done
  if (r.code !== 0) throw new Error(`floe ${kind} ${keys} keys: floe run exited ${r.code}; ${path.join(p.dir, 'floe-run.log')}:\n${r.log.slice(-3000)}`)
  const d = describe(p.wh, table)
  return {
    p, table, out: {
      engine: 'floe', seconds: round(r.seconds, 3), events_per_s: Math.round(EVENTS / r.seconds), cpu_s: r.cpu_s, max_rss_mib: r.max_rss_mib,
      worker_cpus: r.worker_cpus, checkpoints: r.checkpoints, commits: d.snaps.length, rows: Number(d.files['data-records']),
      data_files: Number(d.files['data-files']), log_problems: r.log_problems.count,
    },
  }
}

async function duckdbThroughput(kind, input, keys) {
  const output = path.join(OUT, `duckdb-${kind}-k${keys}.parquet`)
  const args = [PEER, 'run', kind, input.file, output, String(kind === 'tumble' ? TUMBLE_MIN : GAP_MIN)]
  const env = { ...process.env, DUCKDB_THREADS: String(PARALLELISM) }
  const r = CPU != null ? await run('taskset', ['-c', String(CPU), process.execPath, ...args], { env })
    : await run(process.execPath, args, { env })
  if (r.code !== 0) throw new Error(`windows_duckdb.mjs run ${kind} failed (exit ${r.code}):\n${r.err}`)
  const d = JSON.parse(r.out.trim().split('\n').pop())
  if (d.events !== EVENTS) throw new Error(`DuckDB's ${kind} counts sum to ${d.events}, not the ${EVENTS} events of the input`)
  return { output, out: { engine: 'duckdb', seconds: d.seconds, events_per_s: Math.round(EVENTS / d.seconds), cpu_s: d.cpu_s, rows: d.rows } }
}

// floe's table against DuckDB's result: every row equal, or the bench stops here.
async function compare(p, table, floeRows, duckOutput, what) {
  const r = await run(process.execPath, [PEER, 'compare', dataGlob(p.wh, table), duckOutput])
  if (r.code !== 0) throw new Error(`${what}: windows_duckdb.mjs compare failed (exit ${r.code}):\n${r.err}`)
  const c = JSON.parse(r.out.trim().split('\n').pop())
  const bad = []
  if (c.floe_rows !== floeRows) bad.push(`floe's data files hold ${c.floe_rows} rows, its table ${floeRows} (describe)`)
  if (c.floe_events !== EVENTS) bad.push(`floe's counts sum to ${c.floe_events}, not ${EVENTS}`)
  if (c.duckdb_events !== EVENTS) bad.push(`DuckDB's counts sum to ${c.duckdb_events}, not ${EVENTS}`)
  if (c.only_floe || c.only_duckdb) bad.push(`${c.only_floe} rows only in floe's table, ${c.only_duckdb} only in DuckDB's result, e.g. ${JSON.stringify(c.examples)}`)
  if (bad.length) throw new Error(`${what}: floe and DuckDB DISAGREE:\n  ${bad.join('\n  ')}\n(floe's table: ${p.wh})`)
  return { rows: c.floe_rows, events: c.floe_events, equal: true }
}

async function throughput() {
  const inputs = Object.fromEntries(KEYS.map((k) => [k, throughputInput(k)]))
  const runs = []
  const pairs = []
  for (let rep = 1; rep <= REPS; rep++) {
    for (const keys of KEYS) {
      const input = inputs[keys]
      spawnSync('sh', ['-c', `cat '${input.file}' > /dev/null`])   // page cache, for both alike
      for (const kind of KINDS) {
        const order = rep % 2 ? ['floe', 'duckdb'] : ['duckdb', 'floe']
        const got = {}
        for (const engine of order) {
          got[engine] = engine === 'floe' ? await floeThroughput(kind, input, keys, rep) : await duckdbThroughput(kind, input, keys)
          runs.push({ rep, kind, keys, ...got[engine].out })
        }
        const f = got.floe.out
        const d = got.duckdb.out
        if (f.rows !== d.rows) throw new Error(`${kind}, ${keys} keys: floe wrote ${f.rows} rows, DuckDB ${d.rows}: they DISAGREE`)
        const verified = await compare(got.floe.p, got.floe.table, f.rows, got.duckdb.output, `${kind}, ${keys} keys, rep ${rep}`)
        fs.rmSync(got.floe.p.dir, { recursive: true, force: true })
        const ratio = round(f.events_per_s / d.events_per_s, 3)
        pairs.push({ rep, kind, keys, first: order[0], floe_events_per_s: f.events_per_s, duckdb_events_per_s: d.events_per_s, ratio,
                     cpu_ratio: f.cpu_s && d.cpu_s ? round(f.cpu_s / d.cpu_s, 3) : null, rows: f.rows, verified })
        log(`rep ${rep} ${kind} ${num(keys)} keys: floe ${num(f.events_per_s)} events/s (${f.seconds} s, CPU ${f.cpu_s ?? '?'} s, ` +
            `${f.checkpoints} checkpoints, worker on CPU ${f.worker_cpus ?? '?'}), DuckDB ${num(d.events_per_s)} events/s (${d.seconds} s); ` +
            `floe / DuckDB ${ratio}; ${num(f.rows)} rows, equal`)
      }
    }
  }
  const summary = []
  for (const keys of KEYS) {
    for (const kind of KINDS) {
      const ps = pairs.filter((x) => x.kind === kind && x.keys === keys)
      const rs = (engine) => runs.filter((x) => x.kind === kind && x.keys === keys && x.engine === engine)
      summary.push({
        kind, keys, distinct_keys: inputs[keys].distinct_keys, rows: ps[0].rows,
        floe_events_per_s_median: Math.round(median(rs('floe').map((x) => x.events_per_s))),
        duckdb_events_per_s_median: Math.round(median(rs('duckdb').map((x) => x.events_per_s))),
        ratio_median: round(median(ps.map((x) => x.ratio)), 3), ratios: ps.map((x) => x.ratio),
        floe_cpu_s_median: median(rs('floe').map((x) => x.cpu_s)), duckdb_cpu_s_median: median(rs('duckdb').map((x) => x.cpu_s)),
        floe_max_rss_mib_median: median(rs('floe').map((x) => x.max_rss_mib)),
        floe_checkpoints: rs('floe').map((x) => x.checkpoints),
      })
    }
  }
  return {
    inputs: Object.values(inputs).map((i) => ({ ...i, file: path.basename(i.file) })),
    runs, pairs, summary,
  }
}

// ---- latency --------------------------------------------------------------------------------

async function latency() {
  const p = fresh('latency')
  const W = LAT.windowS * 1000
  const D = LAT.delayS * 1000
  const cluster = await devCluster(p.dir, ['events:1', 'tiles:1'])
  const commitLog = path.join(p.dir, 'kafka-commits.jsonl')
  const size = `INTERVAL '${LAT.windowS}' SECONDS`
  const job = `-- window bench, latency: Kafka -> TUMBLE ${LAT.windowS} s COUNT(*) per key -> Kafka (exactly-once) and Iceberg
${jobHead(LAT.interval)}
CREATE TABLE events (user_id STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '${LAT.delayS}' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'format' = 'json',
        -- the test bed's setting (bench/kafka_bench.mjs): the mock holds an empty Fetch for the whole wait
        'properties.fetch.wait.max.ms' = '10');
CREATE TABLE tiles_kafka (${sinkColumns})
  WITH ('connector' = 'kafka', 'topic' = 'tiles', 'properties.bootstrap.servers' = '\${KAFKA}', 'format' = 'json',
        'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'windows-bench',
        'properties.transaction.timeout.ms' = '900000');
${icebergSink('tiles_lake', 'latency')}
${windowQuery('tiles_kafka', tvfText('tumble', 'events', size))}
${windowQuery('tiles_lake', tvfText('tumble', 'events', size))}
`
  let firstCheckpoint = null
  const job_ = floeRun(p, job, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap }, {
    pin: false, env: { FLOE_KAFKA_SINK_COMMIT_LOG: commitLog },
    onLine: (t, line) => { if (firstCheckpoint == null && /checkpoint \d+ completed/.test(line)) firstCheckpoint = t },
  })
  let ended = null
  job_.done.then((r) => { ended = r })
  const deadline = Date.now() + 60_000
  while (firstCheckpoint == null && !ended) {
    if (Date.now() > deadline) throw new Error('latency: the job completed no checkpoint within 60 s')
    await sleep(20)
  }
  if (ended) throw new Error(`latency: the job ended before it started:\n${ended.log.slice(-3000)}`)

  // the sink's commit log, stamped on arrival
  const commits = []
  let offset = 0
  let partial = ''
  const readLog = () => {
    let fd
    try { fd = fs.openSync(commitLog, 'r') } catch { return }
    try {
      const size = fs.fstatSync(fd).size
      if (size <= offset) return
      const buf = Buffer.alloc(size - offset)
      fs.readSync(fd, buf, 0, buf.length, offset)
      offset = size
      const t = Date.now()
      partial += buf.toString('utf8')
      const parts = partial.split('\n')
      partial = parts.pop()
      for (const l of parts) if (l.trim()) commits.push({ t, ...JSON.parse(l) })
    } finally { fs.closeSync(fd) }
  }
  const watcher = setInterval(readLog, 5)

  // the producer: one `floe kafka produce` per tick, event time = the tick's wall clock minus jitter
  log(`latency: producing ${LAT.rate} events/s over ${LAT.keys} keys for ${LAT.seconds} s, a tick every ${LAT.tickMs} ms`)
  const rand = mulberry32(SEED * 31 + 7)
  const tickFile = path.join(p.dir, 'tick.jsonl')
  const ticks = []
  const events = []
  const t0 = Date.now()
  while (Date.now() - t0 < LAT.seconds * 1000) {
    const tGen = Date.now()
    // the events due by now at --latency-rate (a slow produce makes the next tick bigger, not the rate lower)
    const n = Math.floor((LAT.rate * (tGen - t0)) / 1000) + 1 - events.length
    const lines = []
    let maxTs = -Infinity
    for (let i = 0; i < n; i++) {
      const ts = tGen - Math.floor(rand() * LAT.disorderMs)
      const key = `u${Math.floor(rand() * LAT.keys)}`
      events.push({ key, ts })
      if (ts > maxTs) maxTs = ts
      lines.push(`{"user_id":"${key}","ts":"${tsText(ts)}"}`)
    }
    if (n > 0) {
      fs.writeFileSync(tickFile, lines.join('\n') + '\n')
      const r = await run(FLOE, ['kafka', 'produce', '--bootstrap', cluster.bootstrap, '--topic', 'events', '--property', 'linger.ms=0', tickFile])
      if (r.code !== 0 || r.out.trim() !== String(n)) throw new Error(`floe kafka produce failed (exit ${r.code}): ${r.out}${r.err}`)
      ticks.push({ t_gen: tGen, t_ack: Date.now(), n, max_ts: maxTs })
    }
    if (ended) throw new Error(`latency: the job ended while producing:\n${ended.log.slice(-3000)}`)
    await sleep(Math.max(0, tGen + LAT.tickMs - Date.now()))
  }
  // the last closable windows: the watermark reaches them with the last ticks; their commit follows
  // at the next checkpoint
  await sleep(1000 + 3 * LAT.intervalMs)
  readLog()
  clearInterval(watcher)
  const rec = jobRecord(p.home)
  if (rec && !ended) must(floeSync(['cancel', rec.job_id], { FLOE_HOME: p.home }), 'floe cancel')
  const jr = await job_.done
  readLog()
  const consumed = floeSync(['kafka', 'consume', '--bootstrap', cluster.bootstrap, '--topic', 'tiles', '--from-beginning',
                             '--isolation', 'read_uncommitted', '--timeout-ms', '3000'])
  cluster.child.kill('SIGTERM')
  await cluster.exited
  must(consumed, 'floe kafka consume')

  // expected: one row per key and closable window, its count from the events produced
  let runningMax = -Infinity
  const closeTicks = ticks.map((t) => ({ ...t, running_max: (runningMax = Math.max(runningMax, t.max_ts)) }))
  const expected = new Map()   // "key|start" -> n
  for (const e of events) {
    const s = e.ts - (((e.ts % W) + W) % W)
    const k = `${e.key}|${s}`
    expected.set(k, (expected.get(k) || 0) + 1)
  }
  const windows = new Map()   // start -> {start, end, closable_tick}
  for (const k of expected.keys()) {
    const s = Number(k.split('|')[1])
    if (!windows.has(s)) windows.set(s, { start: s, end: s + W })
  }
  for (const w of windows.values()) {
    const need = w.end - 1 + D
    w.tick = closeTicks.find((t) => t.running_max >= need) || null
    w.close_event_time = need
  }
  const closable = [...windows.values()].filter((w) => w.tick).sort((a, b) => a.start - b.start)

  // Kafka: the committed view (records at the offsets of "commit" lines), each row stamped with its commit
  const byOffset = new Map()
  for (const l of consumed.out.split('\n').filter(Boolean)) {
    const r = JSON.parse(l)
    byOffset.set(`${r.partition}:${r.offset}`, JSON.parse(r.value))
  }
  const kafkaRows = new Map()   // "key|start" -> [{n, t}]
  for (const c of commits.filter((x) => x.how === 'commit')) {
    for (const [part, offs] of Object.entries(c.offsets)) {
      for (const o of offs) {
        const v = byOffset.get(`${part}:${o}`)
        if (!v) { problems.push(`latency: committed record ${part}:${o} not found in topic tiles`); continue }
        const k = `${v.user_id}|${parseTs(v.window_start)}`
        if (!kafkaRows.has(k)) kafkaRows.set(k, [])
        kafkaRows.get(k).push({ n: Number(v.n), t: c.t })
      }
    }
  }
  // Iceberg: the first snapshot whose scan holds each row
  const d = describe(p.wh, 'latency')
  const icebergRows = new Map()   // "key|start" -> {n, t}
  for (const s of d.snaps) {
    if (!s.records) continue
    const scan = must(floeSync(['table', 'scan', 'bench.latency', '--warehouse', p.wh, '--snapshot', String(s.id)]), 'scan')
    for (const l of scan.out.split('\n').filter(Boolean)) {
      const v = JSON.parse(l)
      const k = `${v.user_id}|${parseTs(v.window_start)}`
      if (!icebergRows.has(k)) icebergRows.set(k, { n: Number(v.n), t: s.ts })
    }
  }
  const finalScan = must(floeSync(['table', 'scan', 'bench.latency', '--warehouse', p.wh]), 'scan').out.split('\n').filter(Boolean)

  // every closable window exactly once with the right count, in both sinks
  const closableStarts = new Set(closable.map((w) => w.start))
  const wantRows = [...expected].filter(([k]) => closableStarts.has(Number(k.split('|')[1])))
  for (const [k, n] of wantRows) {
    const kr = kafkaRows.get(k)
    if (!kr) problems.push(`latency: kafka: row ${k} (count ${n}) never committed`)
    else if (kr.length !== 1 || kr[0].n !== n) problems.push(`latency: kafka: row ${k}: committed ${JSON.stringify(kr.map((x) => x.n))}, expected [${n}]`)
    const ir = icebergRows.get(k)
    if (!ir) problems.push(`latency: iceberg: row ${k} (count ${n}) never committed`)
    else if (ir.n !== n) problems.push(`latency: iceberg: row ${k}: count ${ir.n}, expected ${n}`)
  }
  for (const k of [...kafkaRows.keys(), ...icebergRows.keys()]) {
    if (!closableStarts.has(Number(k.split('|')[1]))) problems.push(`latency: row ${k} for a window the watermark cannot have passed`)
  }
  const finalKeys = finalScan.map((l) => { const v = JSON.parse(l); return `${v.user_id}|${parseTs(v.window_start)}` })
  if (new Set(finalKeys).size !== finalKeys.length) problems.push('latency: iceberg: a row twice in the final table')

  const perWindow = closable.map((w) => {
    const rows = wantRows.filter(([k]) => Number(k.split('|')[1]) === w.start).map(([k]) => k)
    const kt = rows.map((k) => kafkaRows.get(k)?.[0]?.t).filter((x) => x != null)
    const it = rows.map((k) => icebergRows.get(k)?.t).filter((x) => x != null)
    const lat = (ts, from) => (ts.length === rows.length ? Math.max(...ts) - from : null)
    return {
      window_start: tsText(w.start), rows: rows.length,
      closable_tick_gen_after_close_ms: w.tick.t_gen - w.close_event_time, producer_ms: w.tick.t_ack - w.tick.t_gen,
      kafka_ms: lat(kt, w.tick.t_ack), iceberg_ms: lat(it, w.tick.t_ack),
      kafka_ms_from_event_time: lat(kt, w.close_event_time), iceberg_ms_from_event_time: lat(it, w.close_event_time),
      rows_in_one_commit: { kafka: new Set(kt).size === 1, iceberg: new Set(it).size === 1 },
    }
  })
  const col = (k) => perWindow.map((w) => w[k]).filter((x) => x != null)
  const producer = ticks.map((t) => t.t_ack - t.t_gen)
  return {
    definition: 'latency = the time a window\'s rows became visible minus closable_at, the moment (t_ack) the first record ' +
      'with ts >= window_end - 1 ms + watermark delay was in Kafka (floe fires a window once the watermark, max ts - delay, ' +
      'reaches window_end - 1 ms). Kafka visible: the sink\'s commit_transaction returned (FLOE_KAFKA_SINK_COMMIT_LOG line, ' +
      'stamped by polling every 5 ms), because the dev cluster does not emulate read_committed; on real Kafka the ' +
      'transaction markers follow. Iceberg visible: the snapshot\'s timestamp-ms. *_from_event_time: against ' +
      'window_end - 1 ms + delay on the wall clock (event time = wall clock), i.e. including the producer\'s delay and the tick.',
    window_s: LAT.windowS, watermark_delay_s: LAT.delayS, max_out_of_order_ms: LAT.disorderMs, checkpoint_interval: LAT.interval,
    events_per_s: LAT.rate, keys: LAT.keys, tick_ms: LAT.tickMs, seconds: LAT.seconds, events: events.length, ticks: ticks.length,
    sinks: { kafka: "topic 'tiles' (1 partition), sink.delivery-guarantee exactly-once", iceberg: 'append table, maintenance off' },
    dev_cluster: 'floe kafka dev, 3 brokers, topics events:1 and tiles:1; the job unpinned, parallelism 1',
    job_exit: jr.code, job_checkpoints: jr.checkpoints, job_log_problems: jr.log_problems.count,
    kafka_commits: commits.filter((x) => x.how === 'commit').length, iceberg_snapshots: d.snaps.length,
    producer_ms: stats(producer),
    windows: perWindow,
    kafka_ms: stats(col('kafka_ms')), iceberg_ms: stats(col('iceberg_ms')),
    kafka_ms_from_event_time: stats(col('kafka_ms_from_event_time')), iceberg_ms_from_event_time: stats(col('iceberg_ms_from_event_time')),
  }
}

// ---- checkpoint -----------------------------------------------------------------------------

// One row per checkpoint read: duration, when the window's state file was written, events read,
// keys in state (events read capped at the keys: the first events are every key once; 0 after the
// final checkpoint, when the window has fired), state sizes.
function checkpointRows(seen, finals, keys) {
  return [...seen.values()].filter((c) => c.meta).sort((a, b) => a.id - b.id).map((c) => {
    const trigger = c.btime ?? c.first_seen
    const win = c.meta.tasks.find((t) => t.task.startsWith('window-'))
    const src = c.meta.tasks.filter((t) => t.task.startsWith('source-'))
    const final = finals.has(c.id)
    return {
      id: c.id, trigger_from: c.btime != null ? 'btime' : 'first seen', duration_ms: Math.round(c.meta.timestamp_millis - trigger),
      source_state_written_ms: src.length ? Math.round(Math.max(...src.map((t) => t.mtime)) - trigger) : null,
      window_state_written_ms: win ? Math.round(win.mtime - trigger) : null,
      events_read: c.read, keys_in_state: final ? 0 : c.read == null ? null : Math.min(c.read, keys), final,
      window_state_bytes: win ? win.size : null, state_bytes: c.meta.tasks.reduce((a, t) => a + t.size, 0),
      tasks: Object.fromEntries(c.meta.tasks.map((t) => [t.task, { bytes: t.size, written_ms: Math.round(t.mtime - trigger) }])),
    }
  })
}
const checkpointSummary = (rows) => ({
  checkpoints: rows.length, duration_ms: stats(rows.map((c) => c.duration_ms)),
  source_state_written_ms: stats(rows.map((c) => c.source_state_written_ms).filter((x) => x != null)),
  window_state_written_ms: stats(rows.map((c) => c.window_state_written_ms).filter((x) => x != null)),
  window_state_bytes_median: median(rows.map((c) => c.window_state_bytes)),
  state_bytes_median: median(rows.map((c) => c.state_bytes)),
})
const ckptJob = (comment, source) => `-- window bench, checkpoint duration (${comment}): TUMBLE 1 day COUNT(*) per key holds every key
${jobHead(CK.interval)}${CK.retained > 1 ? `\nSET 'execution.checkpointing.num-retained' = '${CK.retained}';` : ''}
${source}
${icebergSink('tiles', 'ckpt')}
${windowQuery('tiles', tvfText('tumble', 'events', "INTERVAL '1' DAY"))}
`
// The checkpoint job's table: one row per key, counts summing to `events` (checked when the job ended by itself).
async function checkCkptTable(wh, events, what) {
  const d = describe(wh, 'ckpt')
  const s = await run(process.execPath, [PEER, 'summary', dataGlob(wh, 'ckpt')])
  if (s.code !== 0) throw new Error(`windows_duckdb.mjs summary failed:\n${s.err}`)
  const sum = JSON.parse(s.out.trim().split('\n').pop())
  if (sum.rows !== CK.keys || sum.keys !== CK.keys || sum.events !== events || Number(d.files['data-records']) !== CK.keys) {
    problems.push(`checkpoint (${what}): the table holds ${sum.rows} rows (describe: ${d.files['data-records']}), ${sum.keys} keys, counts summing to ` +
                  `${sum.events}; expected ${CK.keys} rows and keys, ${events}`)
  }
  return { rows: sum.rows, keys: sum.keys, events: sum.events }
}

// Under load: the file, unthrottled; every checkpoint holding every key before the end of the input.
async function checkpointLoaded(input) {
  spawnSync('sh', ['-c', `cat '${input.file}' > /dev/null`])
  const p = fresh('checkpoint-load')
  const finals = new Set()
  const watch = watchCheckpoints(p.chk, 'filesystem')
  log(`checkpoint, under load: ${num(CK.events)} events, ${num(CK.keys)} keys in one 1-day window, checkpoints every ${CK.interval}`)
  const r = await floeRun(p, ckptJob('under load', fileSource(input.file, 1)), { CHK: p.chk, WH: p.wh }, {
    onLine: (t, line) => { const m = /checkpoint (\d+) completed.*, final/.exec(line); if (m) finals.add(Number(m[1])) },
  }).done
  await watch.stop()
  if (r.code !== 0) throw new Error(`checkpoint: floe run exited ${r.code}:\n${r.log.slice(-3000)}`)
  const table = await checkCkptTable(p.wh, CK.events, 'under load')
  const list = checkpointRows(watch.seen, finals, CK.keys)
  const full = list.filter((c) => c.keys_in_state === CK.keys && !c.final && c.events_read < CK.events)
  fs.rmSync(p.dir, { recursive: true, force: true })
  return {
    events: CK.events, run_seconds: round(r.seconds, 2), events_per_s: Math.round(CK.events / r.seconds), cpu_s: r.cpu_s,
    max_rss_mib: r.max_rss_mib, worker_cpus: r.worker_cpus, checkpoints_completed: r.checkpoints, checkpoints_read: list.length,
    log_problems: r.log_problems.count, table, full_state: checkpointSummary(full), list,
  }
}

// Idle: the --checkpoint-keys events (every key once) in a Kafka topic; once the source has read
// them all nothing is in flight, and each further checkpoint is the state's cost alone.
async function checkpointIdle(input) {
  const p = fresh('checkpoint-idle')
  const keysFile = path.join(p.dir, 'keys.jsonl')
  const text = fs.readFileSync(input.file, 'utf8')
  let cut = 0
  for (let i = 0; i < CK.keys; i++) cut = text.indexOf('\n', cut) + 1
  fs.writeFileSync(keysFile, text.slice(0, cut))
  // the dev cluster keeps ~5 MiB per partition: at most 2 MiB of records in each
  const partitions = Math.max(1, Math.ceil(cut / (2 << 20)))
  const cluster = await devCluster(p.dir, [`ckpt:${partitions}`])
  try {
    log(`checkpoint, idle: ${num(CK.keys)} keys into a Kafka topic of ${partitions} partition(s), then ${CK.idle} checkpoints with nothing in flight`)
    const pr = await run(FLOE, ['kafka', 'produce', '--bootstrap', cluster.bootstrap, '--topic', 'ckpt', '--property', 'linger.ms=50', keysFile])
    if (pr.code !== 0 || pr.out.trim() !== String(CK.keys)) throw new Error(`floe kafka produce failed (exit ${pr.code}): ${pr.out}${pr.err}`)
    const source = `CREATE TABLE events (user_id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'ckpt', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'format' = 'json', 'properties.fetch.wait.max.ms' = '10');`
    const watch = watchCheckpoints(p.chk, 'kafka')
    const job = floeRun(p, ckptJob('idle', source), { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap })
    let ended = null
    job.done.then((x) => { ended = x })
    const t0 = Date.now()
    const idleRows = () => checkpointRows(watch.seen, new Set(), CK.keys).filter((c) => c.events_read === CK.keys)
    // the first checkpoint that has every key may have had records in flight: idle ones come after it
    while (!ended && idleRows().length < CK.idle + 1) {
      if (Date.now() - t0 > 600_000) throw new Error('checkpoint, idle: not enough checkpoints in 10 min')
      await sleep(100)
    }
    if (ended) throw new Error(`checkpoint, idle: the job ended (exit ${ended.code}):\n${ended.log.slice(-3000)}`)
    const rec = jobRecord(p.home)
    must(floeSync(['cancel', rec.job_id], { FLOE_HOME: p.home }), 'floe cancel')
    const r = await job.done
    await watch.stop()
    const list = checkpointRows(watch.seen, new Set(), CK.keys)
    const all = list.filter((c) => c.events_read === CK.keys)
    const idle = all.slice(1)
    const reached = all[0]
    return {
      partitions, checkpoints_completed: r.checkpoints, checkpoints_read: list.length, cpu_s: r.cpu_s, max_rss_mib: r.max_rss_mib,
      worker_cpus: r.worker_cpus, log_problems: r.log_problems.count,
      all_keys_read_by_checkpoint: reached ? reached.id : null, idle: checkpointSummary(idle), list,
    }
  } finally {
    cluster.child.kill('SIGTERM')
    await cluster.exited
  }
}

async function checkpoint() {
  const input = checkpointInput()
  const out = {
    definition: 'duration = _metadata timestamp_millis (wall clock when the checkpoint was finalized) - birth time of its ' +
      'chk-N directory (created when it was triggered): barrier alignment behind queued records, every task\'s snapshot, the ' +
      'state files written and fsynced; *_state_written_ms: a state file\'s mtime after the trigger (the source\'s: when it took ' +
      'the barrier; an idle Kafka source first finishes its poll, up to 100 ms). Keys in state = events the source had read at the barrier, capped at the keys (the ' +
      'first events are every key once). Under load: the file read unthrottled; the checkpoints holding every key, taken ' +
      'before the end of the input. Idle: the keys alone in a Kafka topic; the checkpoints after the first one holding every key ' +
      '(nothing in flight: the state\'s cost alone).',
    keys: CK.keys, events: CK.events, interval: CK.interval, retained: CK.retained, window: 'TUMBLE 1 day, COUNT(*) per key', input_bytes: input.bytes,
  }
  out.loaded = await checkpointLoaded(input)
  out.idle = await checkpointIdle(input)
  return out
}

// ---- main -----------------------------------------------------------------------------------

log(`windows: parts ${PARTS.join(', ')}; ${num(EVENTS)} events, keys ${KEYS.map(num).join(' and ')}, ${KINDS.join(' + ')}, ` +
    `${REPS} rep(s); floe and DuckDB pinned to CPU ${CPU ?? 'none'}; floe ${FLOE}; scratch ${OUT}`)
fs.mkdirSync(OUT, { recursive: true })
// inputs first (outside the load sample and the runs)
if (PARTS.includes('throughput')) for (const k of KEYS) throughputInput(k)
if (PARTS.includes('checkpoint')) checkpointInput()
const load0 = await sampleLoad()
const T0 = Date.now()
const figures = {
  windows: {
    parts: PARTS, events: EVENTS, keys: KEYS, kinds: KINDS, reps: REPS, seed: SEED,
    event_time_rate_per_s: RATE, watermark_delay_s: DISORDER_S, max_out_of_order_ms: (DISORDER_S - 1) * 1000,
    tumble: `TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '${TUMBLE_MIN}' MINUTES) COUNT(*) per user_id`,
    session: `SESSION(TABLE events PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '${GAP_MIN}' MINUTES) COUNT(*) per user_id`,
    checkpoint_interval: opts.interval, cpu: CPU, parallelism: PARALLELISM, chaining: CHAINING || null,
    floe_setup: `filesystem source (JSON lines) -> window -> Iceberg append table, 'parallelism.default' ${PARALLELISM} ` +
      `(throughput; 1 elsewhere), EXACTLY_ONCE, restarts off, maintenance off; \`floe run\`${CPU != null ? ' under taskset' : ', unpinned'}, spawn to exit`,
    duckdb_setup: `bench/windows_duckdb.mjs: @duckdb/node-api, SET threads=${PARALLELISM}${CPU != null ? ', under the same taskset' : ', unpinned'}; COPY (aggregate over ` +
      'read_json of the same file) TO one zstd Parquet file, timed around the statement',
  },
}
try {
  if (PARTS.includes('throughput')) figures.throughput = await throughput()
  if (PARTS.includes('latency')) figures.latency = await latency()
  if (PARTS.includes('checkpoint')) figures.checkpoint = await checkpoint()
} catch (e) {
  stopLive()
  throw e
}
await writeResults({ result: RESULT, bench: 'windows', floe: FLOE, start: load0, t0: T0, figures, problems })

const T = figures.throughput
if (T) {
  log('| window | keys | floe events/s (median) | DuckDB events/s (median) | floe / DuckDB (median of pairs) | per pair | output rows |')
  log('| --- | --- | --- | --- | --- | --- | --- |')
  for (const s of T.summary) {
    log(`| ${s.kind} | ${num(s.keys)} | ${num(s.floe_events_per_s_median)} | ${num(s.duckdb_events_per_s_median)} | ${s.ratio_median} | ` +
        `${s.ratios.join(', ')} | ${num(s.rows)} |`)
  }
}
const L = figures.latency
if (L) {
  log(`latency (ms, ${L.windows.length} windows of ${L.window_s} s, checkpoints every ${L.checkpoint_interval}): ` +
      `kafka median ${L.kafka_ms.median}, max ${L.kafka_ms.max}; iceberg median ${L.iceberg_ms.median}, max ${L.iceberg_ms.max}; ` +
      `from event time: kafka median ${L.kafka_ms_from_event_time.median}, iceberg median ${L.iceberg_ms_from_event_time.median}; ` +
      `producer median ${L.producer_ms.median}`)
}
const C = figures.checkpoint
if (C) {
  const line = (what, x) => `${x.checkpoints} checkpoints ${what}: duration median ${x.duration_ms.median} ms (${x.duration_ms.min}-${x.duration_ms.max}), ` +
    `window state ${round((x.window_state_bytes_median || 0) / 2 ** 20, 1)} MiB`
  log(`checkpoint with ${num(C.keys)} keys: ${line('under load', C.loaded.full_state)} (${C.loaded.checkpoints_completed} completed, ` +
      `${C.loaded.checkpoints_read} read); ${line('idle', C.idle.idle)}`)
}
log(JSON.stringify({ ok: figures.ok, problems }))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = figures.ok ? 0 : 1
