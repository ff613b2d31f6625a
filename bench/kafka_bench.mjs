#!/usr/bin/env node
// Kafka bench (issue 4 §4): Kafka (the dev cluster, `floe kafka dev` as its own process) ->
// Iceberg append with one worker, in MiB/s and rows/s, against peers measured in the same run.
//
//   node bench/kafka_bench.mjs        (normally via bench/kafka_bench.sh, which sets the env)
//
// kafka       `floe run` of an unbounded kafka -> iceberg job (earliest-offset, 1 s checkpoints,
//             sink.parallelism 1) and `floe kafka produce` of the N-row file, both spawned at t0.
//             The dev cluster keeps only ~5 MiB per partition and silently drops older records,
//             so the producer is paced by the job's committed group offsets (`--group G
//             --max-lag L`: at most L records per partition ahead of the group, L x record size
//             = LAG_BYTES, 4 MiB) over PARTITIONS (64) partitions. End = `timestamp-ms` of the
//             first snapshot whose `floe.source-offsets` hold all N records (the moment the
//             last row is visible); then `floe cancel`. rows/s = N / (end - t0).
// filesystem  the same file through `'connector' = 'filesystem'` into the same sink: `floe run`
//             spawn to exit (bounded: final checkpoint and commit included).
// duckdb      bench/duckdb_peer.mjs: DuckDB (1 thread) writes the same rows to one zstd Parquet
//             file (as bench/append_bench.sh).
// Each floe table is verified: every seq 1..N exactly once (`floe table verify`), else the
// bench fails: a number for a table that lost or doubled rows means nothing.
// kafka's steady_rows_per_s: rows committed between its first and last snapshot over the time
// between them (no start-up, no wait for the last checkpoint).
// MiB/s counts the JSON record values (the file's bytes less its newlines), MiB = 2^20 bytes.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { record, sampleLoad } from './provenance.mjs'

const env = process.env
const FLOE = path.resolve(env.FLOE || 'build/src/floe/cli/floe')
const OUT = path.resolve(env.OUT || 'bench/out/kafka')
const INPUT_DIR = path.resolve(env.INPUT_DIR || 'bench/out')
const RESULT = env.RESULT || ''
const SEED = Number(env.SEED || 42)
const N = Number(env.N || 2_000_000)
const PARTITIONS = Number(env.PARTITIONS || 64)
const BROKERS = Number(env.BROKERS || 3)
const INTERVAL = env.INTERVAL || '1 s'
const LAG_BYTES = Number(env.LAG_BYTES || 4 << 20)
// librdkafka producer properties (`--property`). linger.ms: the mock broker answers a Fetch
// with ONE record batch per partition, so small batches (the 5 ms default linger over 64
// partitions makes ~10-record batches) would cap the consumer at a few batches per round trip.
const PRODUCER_PROPS = (env.PRODUCER_PROPS ?? 'linger.ms=100').trim().split(/\s+/).filter(Boolean)
// librdkafka consumer properties for the job ('properties.*'), in two knobs so that the test
// bed's setting stays when the others change. TESTBED_CONSUMER_PROPS (fetch.wait.max.ms=10): the
// mock holds an empty Fetch answer for the full wait (500 ms by default) and does not cut it
// short when records arrive; real Kafka answers as soon as fetch.min.bytes are there.
// CONSUMER_PROPS (none): anything else, e.g. 'queued.min.messages=100000
// queued.max.messages.kbytes=65536' for librdkafka 2.0.2's own pre-fetch queue limits, which
// make the source read in 1 s bursts; with none set the job runs on floe's defaults
// (500,000 messages, 128 MiB; docs/kafka.md, bench/README.md has the figures).
const props = (s) => s.trim().split(/\s+/).filter(Boolean)
const TESTBED_CONSUMER_PROPS = props(env.TESTBED_CONSUMER_PROPS ?? 'fetch.wait.max.ms=10')
const CONSUMER_PROPS = [...TESTBED_CONSUMER_PROPS, ...props(env.CONSUMER_PROPS ?? '')]
const REPS = Number(env.REPS || 3)
const PEERS = (env.PEERS || 'filesystem duckdb').trim().split(/[\s,]+/).filter(Boolean)
// 'pipeline.operator-chaining.enabled' of every floe job (unset: floe's default, true).
const CHAINING = env.CHAINING || ''
if (CHAINING && !['true', 'false'].includes(CHAINING)) throw new Error(`CHAINING must be true or false, got '${CHAINING}'`)

const COLUMNS = `seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,
  event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING,
  city STRING, zip STRING, phone STRING, active BOOLEAN`
const MiB = 1 << 20

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const log = (...a) => console.error('kafka_bench:', ...a)
const round = (x, d = 0) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))

const TIME_BIN = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null
const timed = (cmd, args, cpuFile) =>
  TIME_BIN ? [TIME_BIN, ['-f', '%U %S %M', '-o', cpuFile, cmd, ...args]] : [cmd, args]
function readCpu(cpuFile) {
  try {
    const [u, s] = fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number)
    return round(u + s, 2)
  } catch { return null }
}
// Peak resident set in MiB of the process or of one of the children it waited for (the worker),
// whichever is larger (GNU time's %M, from wait4's rusage).
function readRssMiB(cpuFile) {
  try {
    const kib = Number(fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ')[2])
    return round(kib / 1024, 0)
  } catch { return null }
}
// CPU seconds a live process used so far (/proc/PID/stat utime + stime, in clock ticks of 1/100 s).
function procCpu(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) / 100
  } catch { return null }
}

function floe(args, { home } = {}) {
  const e = { ...env }
  delete e.FLOE_CRASH_AT
  if (home) e.FLOE_HOME = home
  const r = spawnSync(FLOE, args, { encoding: 'utf8', maxBuffer: 256 << 20, env: e })
  if (r.error) throw r.error
  return { code: r.status, out: r.stdout, err: r.stderr }
}
function must(r, what) {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.out || ''}${r.err || ''}`)
  return r
}
// Spawns a command; resolves {code, end, err} on exit.
function start(cmd, args, { home, cpuFile } = {}) {
  const e = { ...env }
  delete e.FLOE_CRASH_AT
  if (home) e.FLOE_HOME = home
  const [c, a] = cpuFile ? timed(cmd, args, cpuFile) : [cmd, args]
  const child = spawn(c, a, { env: e, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, end: Date.now(), out, err })))
  return { child, done }
}

function snapshots(wh, table) {
  const r = must(floe(['table', 'describe', table, '--warehouse', wh]), `describe ${table}`)
  const text = r.out.replace(/"((?:current-|parent-)?snapshot-id)":\s*(-?\d+)/g, '"$1":"$2"')
  // Data commits only: a compaction's "replace" snapshot re-adds rows it rewrote.
  return (JSON.parse(text).snapshots || []).filter((s) => s.summary.operation !== 'replace').map((s) => ({
    ts: Number(s['timestamp-ms']),
    seqNo: Number(s['sequence-number']),
    records: Number(s.summary['added-records'] || 0),
    files: Number(s.summary['added-data-files'] || 0),
    bytes: Number(s.summary['added-files-size'] || 0),
    offsets: JSON.parse(s.summary['floe.source-offsets'] || '{}'),
  })).sort((a, b) => a.seqNo - b.seqNo)
}
// Records a snapshot's kafka positions account for (next offsets summed over partitions): per
// subtask {"topics":{"bench":{"0":N,..}}}, or {"partitions":{"0":N,..}} as written before topic
// lists (state version 1).
const sumOffsets = (m) => Object.values(m || {}).reduce((x, y) => x + y, 0)
const kafkaNext = (s) => Object.values(s.offsets)
  .filter((o) => o && (o.topics || o.partitions))
  .reduce((a, o) => a + (o.topics ? Object.values(o.topics).reduce((x, t) => x + sumOffsets(t), 0)
                                  : sumOffsets(o.partitions)), 0)

function verify(wh, table) {
  const r = floe(['table', 'verify', table, '--warehouse', wh, '--unique', 'seq', '--expect-range', `seq:1..${N}`])
  if (r.code !== 0 || !/result: OK/.test(r.out)) {
    throw new Error(`${table} does not hold every seq 1..${N} exactly once:\n${r.out}${r.err}`)
  }
  return r.out.trim()
}

function freshDir(name) {
  const dir = path.join(OUT, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  return { dir, wh: path.join(dir, 'wh'), chk: path.join(dir, 'chk'), home: path.join(dir, 'home') }
}

function writeJob(dir, name, sourceWith) {
  const file = path.join(dir, `${name}.sql`)
  fs.writeFileSync(file, `-- kafka bench: ${name} -> iceberg append
SET 'execution.checkpointing.interval' = '${INTERVAL}';
SET 'execution.checkpointing.dir' = '\${CHK}';
SET 'restart-strategy.type' = 'none';
${CHAINING ? `SET 'pipeline.operator-chaining.enabled' = '${CHAINING}';\n` : ''}CREATE TABLE feed (${COLUMNS})
  WITH (${sourceWith});
CREATE TABLE lake (${COLUMNS})
  WITH ('connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '\${WH}',
        'catalog-database' = 'bench', 'catalog-table' = '${name}', 'sink.parallelism' = '1');
INSERT INTO lake SELECT * FROM feed;
`)
  return file
}

function ensureInput() {
  fs.mkdirSync(INPUT_DIR, { recursive: true })
  const input = path.join(INPUT_DIR, `roster-${N}-${SEED}.jsonl`)
  if (!fs.existsSync(input) || fs.statSync(input).size === 0) {
    log(`generating ${input}`)
    const r = spawnSync('node', ['bench/gen_roster.mjs', String(N), `${input}.tmp`, String(SEED)], { stdio: 'inherit' })
    if (r.status !== 0) throw new Error('gen_roster.mjs failed')
    fs.renameSync(`${input}.tmp`, input)
  }
  return input
}

async function devCluster(dir) {
  const file = path.join(dir, 'bootstrap')
  const child = spawn(FLOE, ['kafka', 'dev', '--brokers', String(BROKERS), '--topic', `bench:${PARTITIONS}`,
                             '--bootstrap-file', file], { stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)))
  const deadline = Date.now() + 30_000
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`floe kafka dev did not start: ${err}`)
    await sleep(50)
  }
  return { bootstrap: fs.readFileSync(file, 'utf8').trim(), child, exited }
}

async function kafkaRun(input, valueBytes) {
  const p = freshDir('kafka')
  const cluster = await devCluster(p.dir)
  const group = 'floe-kafka-bench'
  const maxLag = Math.max(1, Math.floor(LAG_BYTES / (valueBytes / N + 16)))  // + record overhead
  const job = writeJob(p.dir, 'kafka', `'connector' = 'kafka', 'topic' = 'bench', 'format' = 'json',
        'properties.bootstrap.servers' = '${cluster.bootstrap}', 'properties.group.id' = '${group}',
        'scan.startup.mode' = 'earliest-offset'${CONSUMER_PROPS.map((kv) => {
          const [k, ...v] = kv.split('=')
          return `, 'properties.${k}' = '${v.join('=')}'`
        }).join('')}`)
  const cpu0 = procCpu(cluster.child.pid)
  const runCpu = path.join(p.dir, 'run.cpu')
  const prodCpu = path.join(p.dir, 'produce.cpu')
  log(`kafka: ${N} rows over ${PARTITIONS} partitions, ${BROKERS} broker(s), --max-lag ${maxLag} records/partition`)
  const t0 = Date.now()
  const run = start(FLOE, ['run', job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`], { home: p.home, cpuFile: runCpu })
  const prod = start(FLOE, ['kafka', 'produce', '--bootstrap', cluster.bootstrap, '--topic', 'bench',
                            '--group', group, '--max-lag', String(maxLag),
                            ...PRODUCER_PROPS.flatMap((kv) => ['--property', kv]), input], { cpuFile: prodCpu })
  let produced = null
  prod.done.then((r) => (produced = r))
  // Done when the group's committed offsets (committed after each table commit) reach N.
  for (;;) {
    await sleep(200)
    const o = floe(['kafka', 'offsets', '--bootstrap', cluster.bootstrap, '--group', group, '--topic', 'bench'])
    if (o.code === 0 && Object.values(JSON.parse(o.out)).reduce((a, b) => a + Math.max(0, b), 0) >= N) break
    if (produced && produced.code !== 0) throw new Error(`floe kafka produce failed:\n${produced.err}`)
    if (Date.now() - t0 > 1_800_000) throw new Error('kafka run did not finish in 30 min')
  }
  const clusterCpu = procCpu(cluster.child.pid) - cpu0
  const jobs = fs.readdirSync(path.join(p.home, 'jobs'))
  must(floe(['cancel', jobs[0]], { home: p.home }), 'floe cancel')
  const r = await run.done
  const pr = await prod.done
  if (pr.code !== 0) throw new Error(`floe kafka produce failed:\n${pr.err}`)
  cluster.child.kill('SIGTERM')
  await cluster.exited
  fs.writeFileSync(path.join(p.dir, 'floe-run.log'), r.err)
  const snaps = snapshots(p.wh, 'bench.kafka')
  const last = snaps.find((s) => kafkaNext(s) >= N)
  if (!last) throw new Error(`no snapshot holds all ${N} records:\n${r.err}`)
  const report = verify(p.wh, 'bench.kafka')
  const seconds = (last.ts - t0) / 1000
  // Steady state: rows committed after the first snapshot over the time between it and the last
  // one (no start-up, no wait for the final checkpoint); null with fewer than 3 commits.
  const upto = snaps.indexOf(last)
  const steady = upto >= 2 ? (kafkaNext(last) - kafkaNext(snaps[0])) / ((last.ts - snaps[0].ts) / 1000) : null
  const waits = Number((pr.err.match(/waited for group '[^']*' (\d+) time/) || [])[1] ?? NaN)
  return {
    engine: 'floe kafka -> iceberg', rows: N, seconds: round(seconds, 3), rows_per_s: Math.round(N / seconds),
    mib_per_s: round(valueBytes / MiB / seconds, 1), steady_rows_per_s: round(steady),
    steady_mib_per_s: round(steady && (steady * valueBytes) / N / MiB, 1), produce_seconds: round((pr.end - t0) / 1000, 3),
    commits: snaps.length, data_files: snaps.reduce((a, s) => a + s.files, 0),
    parquet_bytes: snaps.reduce((a, s) => a + s.bytes, 0),
    cpu_s: { floe_run: readCpu(runCpu), producer: readCpu(prodCpu), dev_cluster: round(clusterCpu, 2) },
    floe_run_max_rss_mib: readRssMiB(runCpu),
    max_lag_records: maxLag, producer_waits: Number.isFinite(waits) ? waits : null, verified: report,
  }
}

async function filesystemRun(input, valueBytes) {
  const p = freshDir('filesystem')
  const job = writeJob(p.dir, 'files', `'connector' = 'filesystem', 'path' = '${input}', 'format' = 'json'`)
  const cpuFile = path.join(p.dir, 'run.cpu')
  log(`filesystem: ${N} rows`)
  const t0 = Date.now()
  const r = await start(FLOE, ['run', job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`], { home: p.home, cpuFile }).done
  if (r.code !== 0) throw new Error(`filesystem run failed:\n${r.err}`)
  const snaps = snapshots(p.wh, 'bench.files')
  const report = verify(p.wh, 'bench.files')
  const seconds = (r.end - t0) / 1000
  return {
    peer: 'filesystem', engine: 'floe filesystem -> iceberg', rows: N, seconds: round(seconds, 3), rows_per_s: Math.round(N / seconds),
    mib_per_s: round(valueBytes / MiB / seconds, 1), commits: snaps.length,
    data_files: snaps.reduce((a, s) => a + s.files, 0), parquet_bytes: snaps.reduce((a, s) => a + s.bytes, 0),
    cpu_s: { floe_run: readCpu(cpuFile) }, verified: report,
  }
}

function duckdbRun(input, valueBytes) {
  log('duckdb: same rows to one zstd Parquet file')
  const r = spawnSync('node', ['bench/duckdb_peer.mjs', input, path.join(OUT, 'duckdb.parquet')], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`duckdb_peer failed:\n${r.stderr}`)
  const d = JSON.parse(r.stdout.trim().split('\n').pop())
  if (d.rows !== N) throw new Error(`duckdb wrote ${d.rows} rows, expected ${N}`)
  return { ...d, peer: 'duckdb', engine: 'duckdb (1 thread) -> parquet', mib_per_s: round(valueBytes / MiB / d.seconds, 1) }
}

const median = (xs) => {
  const v = xs.filter((x) => x != null).sort((a, b) => a - b)
  return v.length ? (v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2) : null
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true })
  const input = ensureInput()
  const valueBytes = fs.statSync(input).size - N  // one newline per row
  spawnSync('cat', [input], { stdio: ['ignore', 'ignore', 'ignore'] })  // page cache, for all alike
  const load0 = await sampleLoad()
  const reps = []
  for (let rep = 1; rep <= REPS; rep++) {
    log(`round ${rep}/${REPS}`)
    const runs = [await kafkaRun(input, valueBytes)]
    if (PEERS.includes('filesystem')) runs.push(await filesystemRun(input, valueBytes))
    if (PEERS.includes('duckdb')) runs.push(duckdbRun(input, valueBytes))
    for (const r of runs) console.log(JSON.stringify({ round: rep, ...r, verified: r.verified ? 'OK' : undefined }))
    const [kafka, ...peers] = runs
    reps.push({ round: rep, runs,
      ratios: Object.fromEntries(peers.map((p) => [`kafka/${p.peer}`, round(kafka.rows_per_s / p.rows_per_s, 3)])) })
  }
  const med = (f) => median(reps.map((r) => f(r)))
  const peerNames = reps[0].runs.slice(1).map((p) => p.peer)
  const summary = {
    bench: 'kafka', rows: N, value_bytes: valueBytes, rounds: REPS, partitions: PARTITIONS, brokers: BROKERS,
    producer_properties: PRODUCER_PROPS, consumer_properties: CONSUMER_PROPS, checkpoint_interval: INTERVAL,
    median: {
      kafka_rows_per_s: med((r) => r.runs[0].rows_per_s), kafka_mib_per_s: med((r) => r.runs[0].mib_per_s),
      kafka_steady_rows_per_s: med((r) => r.runs[0].steady_rows_per_s),
      kafka_steady_mib_per_s: med((r) => r.runs[0].steady_mib_per_s),
      kafka_cpu_s: med((r) => r.runs[0].cpu_s.floe_run),
      kafka_max_rss_mib: med((r) => r.runs[0].floe_run_max_rss_mib),
      ...Object.fromEntries(peerNames.flatMap((name, k) => [
        [`${name}_rows_per_s`, med((r) => r.runs[k + 1].rows_per_s)],
        [`${name}_mib_per_s`, med((r) => r.runs[k + 1].mib_per_s)],
        ...(name === 'filesystem' ? [['filesystem_cpu_s', med((r) => r.runs[k + 1].cpu_s.floe_run)]] : []),
        [`kafka/${name}`, round(med((r) => r.ratios[`kafka/${name}`]), 3)],
      ])),
    },
  }
  console.log(JSON.stringify(summary))
  if (RESULT) {
    fs.mkdirSync(path.dirname(RESULT), { recursive: true })
    fs.writeFileSync(RESULT, JSON.stringify({
      ...(await record({ bench: 'kafka', floe: FLOE, start: load0 })), ...summary,
      input: { file: path.basename(input), rows: N, bytes: fs.statSync(input).size },
      rounds: reps,
    }, null, 2) + '\n')
    log(`wrote ${RESULT}`)
  }
}

main().catch((e) => {
  console.error(`kafka_bench: ${e.stack || e}`)
  process.exit(1)
})
