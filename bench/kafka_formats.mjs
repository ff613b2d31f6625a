#!/usr/bin/env node
// Kafka formats bench (issue 26): the same roster rows as JSON, as Avro (avro-confluent) and as
// Protobuf (protobuf-confluent), each on its own topic of the dev cluster, read by a bounded
// Kafka -> Iceberg append job (one worker) in turn, the formats rotating over REPS rounds.
// Figures: floe's CPU seconds (`floe run` and its worker, /usr/bin/time), rows and MiB of record
// values per CPU second, and Avro's and Protobuf's rows per CPU second over JSON's, in the same
// run.
//
//   bash bench/kafka_formats.sh        (N=500000: both topics fit the dev cluster's ~5 MiB per
//                                       partition over 64 partitions, produced before the jobs)
//
// The records are produced before each job starts, so a job reads as fast as it can: its CPU is
// the cost of the format, the Iceberg write being the same rows either way. The Avro records are
// avsc-encoded and the Protobuf ones protobufjs-encoded (libraries floe did not write) with
// Confluent's framing; the schemas are registered with tests/integration/schema_registry.mjs,
// run as its own process. Each table is verified:
// every seq 1..N exactly once (`floe table verify`), else the bench fails.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import avro from 'avsc'
import protobuf from 'protobufjs'
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

// The same columns as a .proto message (proto3: `optional` for the nullable strings and bool).
const PROTO = `syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";
message Roster {
  int64 seq = 1; string npi = 2; string source = 3; int32 revision = 4;
  google.protobuf.Timestamp event_time = 5;
${['first_name', 'last_name', 'specialty', 'state', 'city', 'zip', 'phone'].map((f, i) => `  optional string ${f} = ${6 + i};`).join('\n')}
  optional bool active = 13;
}
`
const FORMATS = ['json', 'avro', 'protobuf']

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
// `ids.avro`) and protobuf-confluent values (schema `ids.protobuf`, message index [0]); the bytes
// of the record values of each.
function inputs(ids) {
  const json = path.join(INPUT_DIR, `roster-${N}-${SEED}.jsonl`)
  if (!fs.existsSync(json)) {
    const r = spawnSync('node', ['bench/gen_roster.mjs', String(N), `${json}.tmp`, String(SEED)], { stdio: 'inherit' })
    if (r.status !== 0) throw new Error('gen_roster.mjs failed')
    fs.renameSync(`${json}.tmp`, json)
  }
  const type = avro.Type.forSchema(SCHEMA)
  const root = new protobuf.Root()
  root.addJSON(protobuf.common['google/protobuf/timestamp.proto'].nested)
  protobuf.parse(PROTO, root, { keepCase: true })
  root.resolveAll()
  const message = root.lookupType('bench.Roster')
  const header = (id, extra) => {
    const h = Buffer.alloc(5)
    h.writeInt32BE(id, 1)
    return Buffer.concat([h, Buffer.from(extra)])
  }
  const avroHeader = header(ids.avro, [])
  const protoHeader = header(ids.protobuf, [0])  // message indexes [0]: the first message
  const lines = fs.readFileSync(json, 'utf8').split('\n').filter(Boolean)
  const bytes = { json: 0, avro: 0, protobuf: 0 }
  const out = { avro: [], protobuf: [] }
  for (const line of lines) {
    bytes.json += Buffer.byteLength(line)
    const r = JSON.parse(line)
    const ms = parseTs(r.event_time)
    const a = Buffer.concat([avroHeader, type.toBuffer({ ...r, event_time: ms })])
    const fields = Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null))
    const pb = Buffer.concat([protoHeader, Buffer.from(message.encode(message.create({
      ...fields, event_time: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 } })).finish())])
    bytes.avro += a.length
    bytes.protobuf += pb.length
    out.avro.push(a.toString('base64'))
    out.protobuf.push(pb.toString('base64'))
  }
  const files = { json }
  for (const f of ['avro', 'protobuf']) {
    files[f] = path.join(OUT, `roster-${N}-${SEED}.${f}.b64`)
    fs.writeFileSync(files[f], out[f].join('\n') + '\n')
  }
  return { files, bytes }
}

async function runJob(format, kafka, registryUrl, rep) {
  const dir = path.join(OUT, `${format}-${rep}`)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const formatOptions = {
    json: "'format' = 'json'",
    avro: `'format' = 'avro-confluent', 'avro-confluent.url' = '${registryUrl}'`,
    protobuf: `'format' = 'protobuf-confluent', 'protobuf-confluent.url' = '${registryUrl}'`,
  }[format]
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
    children.push(spawn(FLOE, ['kafka', 'dev', '--brokers', '3',
                               ...FORMATS.flatMap((f) => ['--topic', `${f}_in:${PARTITIONS}`]),
                               '--bootstrap-file', bootFile], { stdio: 'ignore' }))
    const kafka = await waitForFile(bootFile, 'the dev cluster')
    const register = async (subject, body) => (await (await fetch(`${registryUrl}/subjects/${subject}/versions`, {
      method: 'POST', headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify(body) })).json()).id
    const ids = { avro: await register('avro_in-value', { schema: JSON.stringify(SCHEMA) }),
                  protobuf: await register('protobuf_in-value', { schema: PROTO, schemaType: 'PROTOBUF' }) }
    const input = inputs(ids)
    log(`producing ${N} rows as ${FORMATS.map((f) => `${f} (${round(input.bytes[f] / MiB, 1)} MiB)`).join(', ')}`)
    for (const f of FORMATS) {
      floe(['kafka', 'produce', '--bootstrap', kafka, '--topic', `${f}_in`, '--property', 'linger.ms=100',
            ...(f === 'json' ? [] : ['--value-encoding', 'base64']), input.files[f]])
    }
    const runs = []
    for (let rep = 1; rep <= REPS; rep++) {
      // The order rotates from round to round, so no format always runs first.
      const order = FORMATS.map((_, i) => FORMATS[(i + rep - 1) % FORMATS.length])
      for (const format of order) {
        const r = await runJob(format, kafka, registryUrl, rep)
        r.rows_per_cpu_s = round(N / r.cpu_s, 0)
        r.mib_per_cpu_s = round(input.bytes[format] / MiB / r.cpu_s, 1)
        log(JSON.stringify(r))
        runs.push(r)
      }
    }
    const summary = {}
    for (const format of FORMATS) {
      const mine = runs.filter((r) => r.format === format)
      summary[format] = {
        value_mib: round(input.bytes[format] / MiB, 1),
        cpu_s_median: median(mine.map((r) => r.cpu_s)),
        seconds_median: median(mine.map((r) => r.seconds)),
        rows_per_cpu_s_median: median(mine.map((r) => r.rows_per_cpu_s)),
        mib_per_cpu_s_median: median(mine.map((r) => r.mib_per_cpu_s)),
      }
    }
    // Per round, JSON's CPU seconds over the format's: its rows per CPU second over JSON's.
    summary.ratios = {}
    for (const f of ['avro', 'protobuf']) {
      const pairs = []
      for (let rep = 1; rep <= REPS; rep++) {
        const [j, x] = ['json', f].map((g) => runs.find((r) => r.format === g && r.rep === rep))
        pairs.push(round(j.cpu_s / x.cpu_s, 3))
      }
      summary[`${f}/json rows per cpu s`] = median(pairs)
      summary.ratios[f] = pairs
    }
    const figures = { kafka_formats: { rows: N, partitions: PARTITIONS, reps: REPS, schema: SCHEMA, proto: PROTO }, runs, summary }
    console.log(JSON.stringify(summary))
    await writeResults({ result: env.RESULT, bench: 'kafka-formats', floe: FLOE, start, t0, figures, problems: [] })
    if (env.RESULT) log(`wrote ${env.RESULT}`)
  } finally {
    for (const c of children) c.kill('SIGTERM')
  }
}

main().catch((e) => { console.error(e); process.exit(1) })
