#!/usr/bin/env node
// Kafka formats bench (issue 26): the same roster rows as JSON and as Avro (avro-confluent), each
// on its own topic of the dev cluster, read by a bounded Kafka -> Iceberg append job (one worker)
// in turn, the two formats alternating over REPS rounds. Figures: floe's CPU seconds (`floe run`
// and its worker, /usr/bin/time), rows and MiB of record values per CPU second, and Avro's rows
// per CPU second over JSON's, in the same run.
//
//   bash bench/kafka_formats.sh        (N=500000: both topics fit the dev cluster's ~5 MiB per
//                                       partition over 64 partitions, produced before the jobs)
//
// The records are produced before each job starts, so a job reads as fast as it can: its CPU is
// the cost of the format, the Iceberg write being the same rows either way. The Avro records are
// avsc-encoded (a library floe did not write) with Confluent's framing; the schema is registered
// with tests/integration/schema_registry.mjs, run as its own process. Each table is verified:
// every seq 1..N exactly once (`floe table verify`), else the bench fails.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import avro from 'avsc'
import { sampleLoad, writeResults } from './provenance.mjs'
import { median, parseTs, round } from './window_job.mjs'

const env = process.env
const FLOE = path.resolve(env.FLOE || 'build/src/floe/cli/floe')
const OUT = path.resolve(env.OUT || 'bench/out/kafka-formats')
const INPUT_DIR = path.resolve(env.INPUT_DIR || 'bench/out')
const N = Number(env.N || 500_000)
const SEED = Number(env.SEED || 42)
const REPS = Number(env.REPS || 3)
const PARTITIONS = Number(env.PARTITIONS || 64)
const MiB = 1 << 20

const COLUMNS = `seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,
  event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING,
  city STRING, zip STRING, phone STRING, active BOOLEAN`
const optional = (name, type) => ({ name, type: ['null', type], default: null })
const SCHEMA = {
  type: 'record', name: 'Roster', namespace: 'bench', fields: [
    { name: 'seq', type: 'long' }, { name: 'npi', type: 'string' }, { name: 'source', type: 'string' },
    { name: 'revision', type: 'int' },
    { name: 'event_time', type: { type: 'long', logicalType: 'timestamp-millis' } },
    ...['first_name', 'last_name', 'specialty', 'state', 'city', 'zip', 'phone'].map((f) => optional(f, 'string')),
    optional('active', 'boolean')],
}

const log = (...a) => console.error('kafka_formats:', ...a)

function floe(args, extraEnv = {}) {
  const r = spawnSync(FLOE, args, { encoding: 'utf8', maxBuffer: 256 << 20, env: { ...env, ...extraEnv } })
  if (r.error) throw r.error
  if (r.status !== 0) throw new Error(`floe ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`)
  return r.stdout
}

async function waitForFile(file, what) {
  for (let i = 0; i < 600; i++) {
    if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim()
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`${what} did not start`)
}

// The JSON lines file and, beside it, the same rows as base64 avro-confluent values (schema
// `id`); the bytes of the record values of each.
function inputs(id) {
  const json = path.join(INPUT_DIR, `roster-${N}-${SEED}.jsonl`)
  if (!fs.existsSync(json)) {
    const r = spawnSync('node', ['bench/gen_roster.mjs', String(N), `${json}.tmp`, String(SEED)], { stdio: 'inherit' })
    if (r.status !== 0) throw new Error('gen_roster.mjs failed')
    fs.renameSync(`${json}.tmp`, json)
  }
  const type = avro.Type.forSchema(SCHEMA)
  const header = Buffer.alloc(5)
  header.writeInt32BE(id, 1)
  const lines = fs.readFileSync(json, 'utf8').split('\n').filter(Boolean)
  let jsonBytes = 0
  let avroBytes = 0
  const out = []
  for (const line of lines) {
    jsonBytes += Buffer.byteLength(line)
    const r = JSON.parse(line)
    const value = Buffer.concat([header, type.toBuffer({ ...r, event_time: parseTs(r.event_time) })])
    avroBytes += value.length
    out.push(value.toString('base64'))
  }
  const b64 = path.join(OUT, `roster-${N}-${SEED}.avro.b64`)
  fs.writeFileSync(b64, out.join('\n') + '\n')
  return { json, b64, bytes: { json: jsonBytes, avro: avroBytes } }
}

async function runJob(format, kafka, registryUrl, rep) {
  const dir = path.join(OUT, `${format}-${rep}`)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const formatOptions = format === 'json'
    ? "'format' = 'json'"
    : `'format' = 'avro-confluent', 'avro-confluent.url' = '${registryUrl}'`
  const job = path.join(dir, 'job.sql')
  fs.writeFileSync(job, `SET 'execution.checkpointing.interval' = '10 s';
CREATE TABLE src (${COLUMNS})
  WITH ('connector' = 'kafka', 'topic' = '${format}_in', 'properties.bootstrap.servers' = '${kafka}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        'properties.fetch.wait.max.ms' = '10', ${formatOptions});
CREATE TABLE lake (${COLUMNS})
  WITH ('connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '${dir}/wh',
        'catalog-database' = 'bench', 'catalog-table' = 'roster', 'sink.parallelism' = '1');
INSERT INTO lake SELECT * FROM src;
`)
  const cpuFile = path.join(dir, 'cpu')
  const t0 = process.hrtime.bigint()
  const child = spawn('/usr/bin/time', ['-f', '%U %S %M', '-o', cpuFile, FLOE, 'run', job],
                      { env: { ...env, FLOE_HOME: path.join(dir, 'home') }, stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const code = await new Promise((resolve) => child.on('close', resolve))
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  if (code !== 0) throw new Error(`${format} job failed (exit ${code}):\n${err}`)
  const [user, sys, rssKiB] = fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number)
  floe(['table', 'verify', 'bench.roster', '--warehouse', `${dir}/wh`, '--unique', 'seq', '--expect-range', `seq:1..${N}`])
  return { format, rep, seconds: round(seconds, 3), cpu_s: round(user + sys, 2), max_rss_mib: round(rssKiB / 1024, 0) }
}

async function main() {
  if (!fs.existsSync('/usr/bin/time')) throw new Error('/usr/bin/time is needed (Debian package time)')
  fs.mkdirSync(OUT, { recursive: true })
  const start = await sampleLoad()
  const t0 = Date.now()
  const children = []
  try {
    const urlFile = path.join(OUT, 'registry.url')
    fs.rmSync(urlFile, { force: true })
    children.push(spawn(process.execPath, ['tests/integration/schema_registry.mjs', '--port-file', urlFile], { stdio: 'ignore' }))
    const registryUrl = await waitForFile(urlFile, 'the schema registry')
    const bootFile = path.join(OUT, 'cluster.bootstrap')
    fs.rmSync(bootFile, { force: true })
    children.push(spawn(FLOE, ['kafka', 'dev', '--brokers', '3', '--topic', `json_in:${PARTITIONS}`,
                               '--topic', `avro_in:${PARTITIONS}`, '--bootstrap-file', bootFile], { stdio: 'ignore' }))
    const kafka = await waitForFile(bootFile, 'the dev cluster')
    const res = await fetch(`${registryUrl}/subjects/avro_in-value/versions`, {
      method: 'POST', headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schema: JSON.stringify(SCHEMA) }) })
    const { id } = await res.json()
    const input = inputs(id)
    log(`producing ${N} rows as JSON (${round(input.bytes.json / MiB, 1)} MiB) and Avro (${round(input.bytes.avro / MiB, 1)} MiB)`)
    floe(['kafka', 'produce', '--bootstrap', kafka, '--topic', 'json_in', '--property', 'linger.ms=100', input.json])
    floe(['kafka', 'produce', '--bootstrap', kafka, '--topic', 'avro_in', '--property', 'linger.ms=100',
          '--value-encoding', 'base64', input.b64])
    const runs = []
    for (let rep = 1; rep <= REPS; rep++) {
      for (const format of rep % 2 ? ['json', 'avro'] : ['avro', 'json']) {
        const r = await runJob(format, kafka, registryUrl, rep)
        r.rows_per_cpu_s = round(N / r.cpu_s, 0)
        r.mib_per_cpu_s = round(input.bytes[format] / MiB / r.cpu_s, 1)
        log(JSON.stringify(r))
        runs.push(r)
      }
    }
    const summary = {}
    for (const format of ['json', 'avro']) {
      const mine = runs.filter((r) => r.format === format)
      summary[format] = {
        value_mib: round(input.bytes[format] / MiB, 1),
        cpu_s_median: median(mine.map((r) => r.cpu_s)),
        seconds_median: median(mine.map((r) => r.seconds)),
        rows_per_cpu_s_median: median(mine.map((r) => r.rows_per_cpu_s)),
        mib_per_cpu_s_median: median(mine.map((r) => r.mib_per_cpu_s)),
      }
    }
    const pairs = []
    for (let rep = 1; rep <= REPS; rep++) {
      const [j, a] = ['json', 'avro'].map((f) => runs.find((r) => r.format === f && r.rep === rep))
      pairs.push(round(j.cpu_s / a.cpu_s, 3))
    }
    summary['avro/json rows per cpu s'] = median(pairs)
    summary.ratios = pairs
    const figures = { kafka_formats: { rows: N, partitions: PARTITIONS, reps: REPS, schema: SCHEMA }, runs, summary }
    console.log(JSON.stringify(summary))
    await writeResults({ result: env.RESULT, bench: 'kafka-formats', floe: FLOE, start, t0, figures, problems: [] })
    if (env.RESULT) log(`wrote ${env.RESULT}`)
  } finally {
    for (const c of children) c.kill('SIGTERM')
  }
}

main().catch((e) => { console.error(e); process.exit(1) })
