#!/usr/bin/env node
// Where the CPU time of each speed path goes (issue 25, part 1): each path runs once under
// Debian's `perf record -g` (frame-pointer call chains, the process and its worker), pinned to
// one core like the speed benches, and every sample is put in one stage by its call chain.
//
//   node bench/profile.mjs [--paths append,tumble,session,kafka] [--rows 1000000]
//        [--events 5000000] [--keys 10000] [--kafka-rows 500000] [--cpu N|none] ...
//                                       (normally via bench/profile.sh)
//
// append   `floe table append` of the roster file (bench/gen_roster.mjs, --rows rows), as
//          bench/append_bench.sh runs it.
// tumble   the window job of bench/windows.sh: TUMBLE 5 min COUNT(*) per key over --events
//          events of --keys keys (window_job.mjs eventsInput), filesystem source -> Iceberg.
// session  the same with SESSION(PARTITION BY key, 10 min gap).
// kafka    a bounded Kafka source (the dev cluster, 64 partitions, --kafka-rows roster rows
//          produced before the job starts, so the profile holds the consumer's side only)
//          -> Iceberg append, one worker.
// Stages, from the first frame of a sample's chain (leaf first) that names one: `page faults`
// (the kernel's fault path), `thread hand-off` (futex, scheduler, floe's channels and task
// loop), `read` / `write` (file system calls, the line reader), `network` (socket calls),
// `kafka client` (librdkafka, floe's consumer), `JSON parse` (simdjson, floe's decoder and its
// value parsers), `window` (the window operator and its aggregates), `keyed state` (the
// backends and timers), `encode` (Parquet), `compress` (zstd, page checksums), `files and
// commit` (Iceberg, Avro), `columns` (record batches, exchange), else `memory` (copies and
// allocation whose caller the chain lost) or `other`. Frame pointers are not always kept
// across libc and third-party code, so a sample whose chain breaks counts where its leaf is.
// Beside each path, its stages alone on the same input, pinned alike (`ceilings`,
// bench/stage_ceilings.cc): simdjson over every field, zstd levels 1 and 3 on the fields'
// values, floe's FlatStringMap counting per key and window (tumble: 5 min, session: 10 min
// buckets), librdkafka's consumer taking the topic (kafka).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sampleLoad, writeResults } from './provenance.mjs'
import { benchArgs, startDevCluster } from './roster_job.mjs'
import { eventsInput, fileSource, icebergSink, jobHead, tvfText, windowQuery } from './window_job.mjs'

const USAGE = `usage: node bench/profile.mjs [--paths append,tumble,session,kafka] [--rows 1000000]
         [--events 5000000] [--keys 10000] [--kafka-rows 500000] [--cpu N|none] [--frequency 999]
         [--floe PATH] [--ceilings PATH] [--out DIR] [--result FILE.json]`
const { opts, die, int } = benchArgs('profile', USAGE, {
  paths: { type: 'string', default: 'append,tumble,session,kafka' },
  rows: { type: 'string', default: '1000000' },
  events: { type: 'string', default: '5000000' },
  keys: { type: 'string', default: '10000' },
  'kafka-rows': { type: 'string', default: '500000' },
  cpu: { type: 'string', default: String(Math.max(0, os.cpus().length - 1)) },
  frequency: { type: 'string', default: '999' },
  floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
  ceilings: { type: 'string', default: '' },  // beside the floe binary's build: src/floe/kafka/
  out: { type: 'string', default: process.env.OUT || 'bench/out/profile' },
  result: { type: 'string', default: process.env.RESULT ?? '' },
})
const PATHS = opts.paths.split(',').filter(Boolean)
for (const p of PATHS) if (!['append', 'tumble', 'session', 'kafka'].includes(p)) die(`unknown path '${p}'`)
const ROWS = int('rows', 1)
const EVENTS = int('events', 1)
const KEYS = int('keys', 1)
const KAFKA_ROWS = int('kafka-rows', 1)
const FREQ = int('frequency', 1)
const CPU = opts.cpu === 'none' ? null : String(int('cpu'))
const FLOE = path.resolve(opts.floe)
const CEILINGS = path.resolve(opts.ceilings || path.join(path.dirname(FLOE), '..', 'kafka', 'stage_ceiling_bench'))
if (!fs.existsSync(CEILINGS)) die(`${CEILINGS} not found: it is built with the tests (make build), or give --ceilings PATH`)
const OUT = path.resolve(opts.out)
const SEED = 42
const ROSTER_SCHEMA = 'seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL, ' +
  'event_time TIMESTAMP NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING, city STRING, ' +
  'zip STRING, phone STRING, active BOOLEAN'
const log = (line) => console.log(`profile: ${line}`)

// ---- stages ---------------------------------------------------------------------------------

// [stage, test on one frame {sym, dso}]; the first stage whose test a frame passes, leaf first.
const KERNEL = (re) => (f) => f.dso === '[kernel.kallsyms]' && re.test(f.sym)
const SYM = (re) => (f) => re.test(f.sym) || re.test(f.dso)
const STAGES = [
  ['page faults', KERNEL(/^(exc_page_fault|asm_exc_page_fault|do_anonymous_page|handle_mm_fault)$/)],
  ['thread hand-off', KERNEL(/futex|^schedule$|^__schedule$|finish_task_switch|try_to_wake_up/)],
  ['read', KERNEL(/^(ksys_read|vfs_read|filemap_read|ksys_pread64)$/)],
  ['write', KERNEL(/^(ksys_write|vfs_write|ksys_pwrite64|ext4_sync_file|vfs_fsync_range|do_fsync)$/)],
  ['network', KERNEL(/^(tcp_recvmsg|tcp_sendmsg|sock_recvmsg|sock_sendmsg|__sys_recvfrom|__sys_sendto|___sys_recvmsg|___sys_sendmsg|sock_poll|do_sys_poll)$/)],
  ['compress', SYM(/libzstd|libsnappy|PageCompressor|parquet::Crc32/)],
  ['JSON parse', SYM(/simdjson|json::|ParseTimestamp|ParseDatePart|ParseTimePart|DaysFromCivil|DebeziumJson/)],
  ['kafka client', SYM(/librdkafka|floe::kafka::|KafkaSource|KafkaConsumer/)],
  ['read', SYM(/LineChunkReader|FilesystemSource/)],
  ['window', SYM(/WindowAggregateOperator|sql::internal::Aggregat|FlatStringMap|KeyOfInto|WindowsOf|WindowClock|ClaimedSplits/)],
  ['keyed state', SYM(/KeyedState|Stamped|TimerService|CopyOnWrite|librocksdb|HashKeyValue|HashKeyRow|KeyGroup/)],
  ['encode', SYM(/floe::parquet::/)],
  ['files and commit', SYM(/floe::iceberg::|floe::avro::|floe::io::/)],
  ['columns', SYM(/floe::Column::|floe::RecordBatch|HashPartitionRows|EmitRowRange|WatermarkAssigner/)],
  ['thread hand-off', SYM(/InputGate|TaskCollector|LocalExecutor|OperatorRunner|pthread_cond|lll_lock|pthread_mutex|futex/)],
]
const MEMORY = /^(__)?(mem(move|cpy|set|cmp)|operator new|operator delete|malloc|free|realloc|calloc)|jemalloc|_avx512_|_evex|_erms/

function stageOf(frames) {
  for (const f of frames) {
    for (const [stage, test] of STAGES) if (test(f)) return stage
  }
  const leaf = frames[0]
  return leaf && (MEMORY.test(leaf.sym) || /jemalloc/.test(leaf.dso)) ? 'memory' : 'other'
}

// Reads `perf script` output: one sample per block, its frames leaf first.
function stagesOf(dataFile) {
  const r = spawnSync('perf', ['script', '-i', dataFile, '-F', 'comm,tid,ip,sym,dso'],
    { encoding: 'utf8', maxBuffer: 2 ** 31 })
  if (r.status !== 0) throw new Error(`perf script failed: ${r.stderr}`)
  const counts = new Map()  // stage -> {samples, leaves: Map}
  let samples = 0
  const add = (frames) => {
    if (!frames.length) return
    samples++
    const stage = stageOf(frames)
    const s = counts.get(stage) || { samples: 0, leaves: new Map() }
    s.samples++
    s.leaves.set(frames[0].sym, (s.leaves.get(frames[0].sym) || 0) + 1)
    counts.set(stage, s)
  }
  let frames = []
  for (const line of r.stdout.split('\n')) {
    const m = /^\s+[0-9a-f]+ (.*) \((.*)\)$/.exec(line)
    if (m) {
      frames.push({ sym: m[1].replace(/\+0x[0-9a-f]+$/, ''), dso: path.basename(m[2]) })
    } else if (line.trim() === '') {
      add(frames)
      frames = []
    }
  }
  add(frames)
  const stages = [...counts.entries()].map(([stage, s]) => ({
    stage,
    share_pct: Number((100 * s.samples / samples).toFixed(1)),
    top: [...s.leaves.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3)
      .map(([sym, n]) => ({ sym: sym.length > 100 ? `${sym.slice(0, 100)}...` : sym, share_pct: Number((100 * n / samples).toFixed(1)) })),
  })).sort((a, b) => b.share_pct - a.share_pct)
  return { samples, stages }
}

// ---- paths ----------------------------------------------------------------------------------

// The stages alone (bench/stage_ceilings.cc `args`), pinned as the paths are.
function ceilings(...args) {
  const cmd = [...(CPU == null ? [] : ['taskset', '-c', CPU]), CEILINGS, ...args]
  const r = must(spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8', maxBuffer: 1 << 20 }), 'stage_ceiling_bench')
  return JSON.parse(r.stdout)
}

function must(r, what) {
  if (r.status !== 0) throw new Error(`${what} failed (${r.status}): ${r.stderr || ''}${r.stdout || ''}`)
  return r
}

// `cmd` under perf record (children included), pinned: {seconds, samples, stages}.
function profiled(name, cmd, env = {}) {
  const data = path.join(OUT, `${name}.perf.data`)
  const pin = CPU == null ? [] : ['taskset', '-c', CPU]
  const t0 = Date.now()
  must(spawnSync('perf', ['record', '-g', '-F', String(FREQ), '-o', data, '--', ...pin, ...cmd],
    { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, ...env } }), `perf record of ${name}`)
  const seconds = (Date.now() - t0) / 1000
  return { command: [...pin, ...cmd].map((a) => a.replace(OUT, '$OUT')).join(' '), seconds: Number(seconds.toFixed(2)),
           ...stagesOf(data) }
}

function rosterInput(rows) {
  const file = path.join(OUT, `roster-${rows}-${SEED}.jsonl`)
  if (!fs.existsSync(file)) {
    log(`generating ${file}`)
    must(spawnSync('node', ['bench/gen_roster.mjs', String(rows), `${file}.tmp`, String(SEED)], { encoding: 'utf8' }), 'gen_roster')
    fs.renameSync(`${file}.tmp`, file)
  }
  return file
}

function fresh(name) {
  const dir = path.join(OUT, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

function appendPath() {
  const input = rosterInput(ROWS)
  const wh = path.join(fresh('append'), 'warehouse')
  must(spawnSync(FLOE, ['table', 'create', 'bench.roster', '--warehouse', wh, '--schema', ROSTER_SCHEMA], { encoding: 'utf8' }),
    'floe table create')
  return { rows: ROWS, ...profiled('append', [FLOE, 'table', 'append', 'bench.roster', input, '--warehouse', wh]),
           ceilings: ceilings('file', input) }
}

function windowPath(kind) {
  const input = eventsInput(path.join(OUT, 'input'), { events: EVENTS, keys: KEYS, rate: 1000, disorderS: 60, seed: SEED,
    base: Date.UTC(2026, 0, 1) }, log)
  const dir = fresh(kind)
  const size = kind === 'session' ? "INTERVAL '10' MINUTES" : "INTERVAL '5' MINUTES"
  const job = path.join(dir, 'job.sql')
  fs.writeFileSync(job, [jobHead('10 s'), fileSource(input.file, 60), icebergSink('out1', 't'),
    windowQuery('out1', tvfText(kind, 'events', size))].join('\n'))
  const env = { FLOE_HOME: path.join(dir, 'home'), WH: path.join(dir, 'wh'), CHK: path.join(dir, 'chk') }
  return { events: EVENTS, keys: KEYS, ...profiled(kind, [FLOE, 'run', job], env),
           ceilings: ceilings('file', input.file, 'user_id', 'ts', kind === 'session' ? '10' : '5') }
}

async function kafkaPath() {
  const input = rosterInput(KAFKA_ROWS)
  const dir = fresh('kafka')
  const cluster = await startDevCluster(FLOE, dir, ['bench:64'])
  try {
    must(spawnSync(FLOE, ['kafka', 'produce', '--bootstrap', cluster.bootstrap, '--topic', 'bench', '--property', 'linger.ms=100',
      input], { encoding: 'utf8', maxBuffer: 1 << 26 }), 'floe kafka produce')
    const columns = ROSTER_SCHEMA.replace('TIMESTAMP NOT NULL', 'TIMESTAMP(3) NOT NULL')
    const job = path.join(dir, 'job.sql')
    fs.writeFileSync(job, `${jobHead('1 s')}
CREATE TABLE feed (${columns}) WITH ('connector' = 'kafka', 'topic' = 'bench', 'format' = 'json',
  'properties.bootstrap.servers' = '${cluster.bootstrap}', 'properties.group.id' = 'profile',
  'properties.fetch.wait.max.ms' = '10', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE lake (${columns}) WITH ('connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '\${WH}',
  'catalog-database' = 'bench', 'catalog-table' = 'kafka', 'sink.parallelism' = '1');
INSERT INTO lake SELECT * FROM feed;
`)
    const env = { FLOE_HOME: path.join(dir, 'home'), WH: path.join(dir, 'wh'), CHK: path.join(dir, 'chk') }
    return { rows: KAFKA_ROWS, partitions: 64, ...profiled('kafka', [FLOE, 'run', job], env),
             ceilings: { ...ceilings('file', input), ...ceilings('kafka', cluster.bootstrap, 'bench', String(KAFKA_ROWS)) } }
  } finally {
    cluster.child.kill('SIGTERM')
    await cluster.exited
  }
}

// ---- main -----------------------------------------------------------------------------------

if (spawnSync('perf', ['--version']).status !== 0) die('perf not found (Debian: linux-perf; scripts/install-deps.sh test)')
fs.mkdirSync(OUT, { recursive: true })
const start = await sampleLoad()
const t0 = Date.now()
const paths = {}
for (const p of PATHS) {
  log(`${p} ...`)
  paths[p] = p === 'append' ? appendPath() : p === 'kafka' ? await kafkaPath() : windowPath(p)
  log(`${p}: ${paths[p].samples} samples, ${paths[p].seconds} s: ` +
      paths[p].stages.map((s) => `${s.stage} ${s.share_pct}%`).join(', '))
}
const figures = { profile: { paths: PATHS, cpu: CPU, frequency_hz: FREQ, tool: spawnSync('perf', ['--version'], { encoding: 'utf8' }).stdout.trim() },
                  ...Object.fromEntries(PATHS.map((p) => [p, paths[p]])) }
await writeResults({ result: opts.result, bench: 'profile', floe: FLOE, start, t0, figures, problems: [] })
console.log(JSON.stringify({ ok: true }))
