// Kafka 'format' = 'avro-confluent' -> Iceberg. A dev cluster (`floe kafka dev`) and a schema
// registry (tests/integration/schema_registry.mjs, which speaks Confluent's REST API, with basic
// auth) run as their own processes. avsc, an Avro library floe did not write, encodes the records
// and Confluent's framing (magic byte 0, the schema id big-endian) is added here; `floe kafka
// produce --value-encoding base64` sends them. icebird reads the table back. FLOE_BIN points at
// floe.
//
// * Two writer schemas on one topic: version 1 has a nested record floe's table lacks (skipped)
//   and no `email`; version 2 drops the nested record, adds `email` and lists the fields in
//   another order. Every record lands once, each with its own writer's fields.
// * A record with a schema id the registry does not know stops the job with an error naming the
//   topic, partition, offset and id, and nothing after it is committed.
// * Options floe does not honour with this format are refused at start.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import { checkpointSets, floe, icebergTable, runJob, sandbox, startCluster, stopClusters,
         tempRoot, waitFor } from './harness.mjs';
import { icebirdRows } from './icebird_read.mjs';

const ROOT = tempRoot('floe-kafka-avro-');
const USER = 'floe:s3cret';
const N = 3000;
const COLUMNS = `seq BIGINT NOT NULL, name STRING NOT NULL, city STRING, score DOUBLE, kind STRING,
  created TIMESTAMP(3), email STRING`;

const V1 = {
  type: 'record', name: 'User', namespace: 'com.example', fields: [
    { name: 'seq', type: 'long' },
    { name: 'profile', type: { type: 'record', name: 'Profile', fields: [
      { name: 'tags', type: { type: 'array', items: 'string' } },
      { name: 'counts', type: { type: 'map', values: 'int' } }] } },
    { name: 'name', type: 'string' },
    { name: 'city', type: ['null', 'string'], default: null },
    { name: 'score', type: 'float' },
    { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['NEW', 'MOVED', 'LEFT'] } },
    { name: 'created', type: { type: 'long', logicalType: 'timestamp-millis' } }],
};
const V2 = {
  type: 'record', name: 'User', namespace: 'com.example', fields: [
    { name: 'email', type: ['null', 'string'], default: null },
    { name: 'seq', type: 'long' },
    { name: 'name', type: 'string' },
    { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['NEW', 'MOVED', 'LEFT'] } },
    { name: 'score', type: 'double' },
    { name: 'city', type: ['null', 'string'], default: null },
    { name: 'created', type: { type: 'long', logicalType: 'timestamp-millis' } }],
};
const T0 = Date.UTC(2026, 0, 1);

let registry;
after(async () => {
  if (registry) {
    registry.child.kill('SIGTERM');
    await registry.done;
  }
  await stopClusters();
});

async function startRegistry() {
  const file = path.join(ROOT, 'registry.url');
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'schema_registry.mjs');
  const child = (await import('node:child_process')).spawn(process.execPath,
    [script, '--port-file', file, '--user', USER], { stdio: ['ignore', 'ignore', 'pipe'] });
  const done = new Promise((resolve) => child.on('close', resolve));
  const url = await waitFor('the schema registry', () =>
    fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null, 30_000);
  return { child, done, url };
}

async function registerSchema(subject, schema) {
  const res = await fetch(`${registry.url}/subjects/${subject}/versions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json',
               Authorization: `Basic ${Buffer.from(USER).toString('base64')}` },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).id;
}

// Confluent's framing around an avsc-encoded datum, base64 for `floe kafka produce`.
function framed(id, type, value) {
  const header = Buffer.alloc(5);
  header.writeInt32BE(id, 1);
  return Buffer.concat([header, type.toBuffer(value)]).toString('base64');
}

function user(seq) {
  return {
    seq, name: `user-${seq}`, city: seq % 5 === 0 ? null : `city-${seq % 7}`, score: seq / 4,
    kind: ['NEW', 'MOVED', 'LEFT'][seq % 3], created: T0 + seq * 1000,
    email: seq % 2 === 0 ? `u${seq}@example.com` : null,
    profile: { tags: ['a', `t${seq}`], counts: { x: seq } },
  };
}

function produceBase64(bootstrap, topic, lines) {
  const file = path.join(ROOT, `${topic}-${Date.now()}.b64`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const r = floe(['kafka', 'produce', '--bootstrap', bootstrap, '--topic', topic,
                  '--value-encoding', 'base64', '--property', 'batch.num.messages=50', file]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out.trim(), String(lines.length));
}

function job(p, topic, formatOptions) {
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
CREATE TABLE src (${COLUMNS})
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        ${formatOptions});
CREATE TABLE users (${COLUMNS}) WITH (${icebergTable(p.name)});
INSERT INTO users SELECT * FROM src;
`);
}

const AVRO_OPTIONS = () => `'format' = 'avro-confluent', 'avro-confluent.url' = '${registry.url}',
        'avro-confluent.basic-auth.credentials-source' = 'USER_INFO',
        'avro-confluent.basic-auth.user-info' = '${USER}'`;

let cluster;
async function setUp() {
  if (cluster) return;
  cluster = await startCluster(ROOT, 'avro', { topics: ['users:3', 'bad:1'] });
  registry = await startRegistry();
}

test('two writer schemas on one topic land every record once, each with its own fields', async () => {
  await setUp();
  const v1 = avro.Type.forSchema(V1);
  const v2 = avro.Type.forSchema(V2);
  const id1 = await registerSchema('users-value', V1);
  const id2 = await registerSchema('users-value', V2);
  assert.notEqual(id1, id2);
  assert.equal(await registerSchema('users-value', V1), id1, 'registering again returns the id');
  const lines = [];
  for (let seq = 1; seq <= N; seq++) {
    lines.push(seq <= N / 2 ? framed(id1, v1, user(seq)) : framed(id2, v2, user(seq)));
  }
  produceBase64(cluster.bootstrap, 'users', lines);

  const p = sandbox(ROOT, 'users');
  job(p, 'users', AVRO_OPTIONS());
  const run = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
  assert.equal(run.code, 0, run.err);
  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  const bySeq = new Map();
  for (const r of rows) bySeq.set(Number(r.seq), [...(bySeq.get(Number(r.seq)) ?? []), r]);
  const missing = [];
  for (let seq = 1; seq <= N; seq++) if (!bySeq.has(seq)) missing.push(seq);
  assert.deepEqual(missing, [], 'every record lands');
  assert.equal(rows.length, N, 'no record twice');
  for (const seq of [1, 5, 10, N / 2, N / 2 + 1, N / 2 + 2, N]) {
    const [r] = bySeq.get(seq);
    const u = user(seq);
    assert.equal(r.name, u.name);
    assert.equal(r.city, u.city);
    assert.equal(r.score, seq <= N / 2 ? Math.fround(u.score) : u.score);
    assert.equal(r.kind, u.kind);
    assert.equal(new Date(r.created).getTime(), u.created, `created of ${seq}`);
    assert.equal(r.email, seq <= N / 2 ? null : u.email, `email of ${seq}`);
  }
});

test('a record with a schema id the registry does not know stops the job, naming where', async () => {
  await setUp();
  const v1 = avro.Type.forSchema(V1);
  const id1 = await registerSchema('bad-value', V1);
  const lines = [];
  for (let seq = 1; seq <= 20; seq++) lines.push(framed(seq === 8 ? 999 : id1, v1, user(seq)));
  produceBase64(cluster.bootstrap, 'bad', lines);
  const p = sandbox(ROOT, 'bad');
  job(p, 'bad', AVRO_OPTIONS());
  const run = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
  assert.notEqual(run.code, 0, 'the job fails');
  assert.match(run.err, /topic 'bad' partition 0 offset 7: schema registry http:\/\/127\.0\.0\.1:\d+: schema id 999 is not registered/);
  assert.match(run.err, /value starts \(hex\) 00 00 00 03 e7/);
  const table = path.join(p.wh, 'demo', p.name);
  // The job may fail before its first commit: a table with no snapshot holds no rows.
  const rows = await icebirdRows({ location: table }).catch((e) => {
    if (/No current snapshot/.test(String(e))) return [];
    throw e;
  });
  assert.ok(rows.every((r) => Number(r.seq) < 8), 'nothing past the bad record is committed');
});

test('options the format does not honour are refused at start, with the rule', async () => {
  await setUp();
  const cases = [
    [`'format' = 'avro-confluent'`, /'avro-confluent\.url' is required/],
    [`${AVRO_OPTIONS()}, 'json.ignore-parse-errors' = 'true'`,
     /'json\.ignore-parse-errors' .*does not apply to 'format' = 'avro-confluent'/],
    [`'format' = 'avro-confluent', 'avro-confluent.url' = '${registry.url}',
        'avro-confluent.basic-auth.credentials-source' = 'SASL_INHERIT'`, /must be 'USER_INFO'/],
    [`'format' = 'avro-confluent', 'avro-confluent.url' = 'ftp://x'`, /not an http\(s\):\/\/ URL/],
    [`'format' = 'json', 'avro-confluent.url' = '${registry.url}'`,
     /'avro-confluent\.url' .*does not apply to 'format' = 'json'/],
  ];
  for (const [i, [options, says]] of cases.entries()) {
    const p = sandbox(ROOT, `refused${i}`);
    job(p, 'users', options);
    const run = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
    assert.notEqual(run.code, 0, options);
    assert.match(run.err, says);
  }
});

test('the registry refuses a request without credentials', async () => {
  await setUp();
  const p = sandbox(ROOT, 'noauth');
  job(p, 'users', `'format' = 'avro-confluent', 'avro-confluent.url' = '${registry.url}'`);
  const run = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
  assert.notEqual(run.code, 0);
  assert.match(run.err, /schema id \d+: HTTP 401, error 401: Unauthorized/);
});
