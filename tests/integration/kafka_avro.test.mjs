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
// * The Kafka sink writes avro-confluent: the schema Flink derives from the columns, registered
//   under '<topic>-value'; avsc decodes every record with the registered schema.
// * The registry's compatibility answers (BACKWARD); a sink whose derived schema is not
//   compatible with the subject's fails at start with the registry's 409.
// * 'format' = 'avro' (Flink's plain avro: the derived schema, no framing) written by the sink,
//   decoded by avsc with that schema, read back by the source into Iceberg.
// * avro-confluent -> upsert Iceberg with the worker SIGKILLed at a random point mid-feed: the
//   table is the last revision of every key, and the commits added every record once.
// * Writer schemas that gain fields grow the table ('sink.schema-evolution' = 'add-columns'),
//   a field widened from int to long widens its column; SIGKILLed mid-feed, every record once;
//   protobuf-confluent messages' fields grow a table the same way.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import protobuf from 'protobufjs';
import { checkpointSets, floe, icebergTable, killWorkerMidFeed, recordsAdded, runJob, runs, sandbox,
         startCluster, stopClusters, tempRoot, verifyLatest, waitFor, writeJsonl } from './harness.mjs';
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

function job(p, topic, formatOptions, { upsert = false, interval = '300 ms' } = {}) {
  fs.writeFileSync(p.job, `${checkpointSets(interval)}
CREATE TABLE src (${COLUMNS})
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        ${formatOptions});
CREATE TABLE users (${COLUMNS}${upsert ? ', PRIMARY KEY (name) NOT ENFORCED' : ''})
  WITH (${icebergTable(p.name)}${upsert ? ", 'write.upsert.enabled' = 'true', 'sink.parallelism' = '2'" : ''});
INSERT INTO users SELECT * FROM src;
`);
}

const AVRO_OPTIONS = () => `'format' = 'avro-confluent', 'avro-confluent.url' = '${registry.url}',
        'avro-confluent.basic-auth.credentials-source' = 'USER_INFO',
        'avro-confluent.basic-auth.user-info' = '${USER}'`;

const PROTOBUF_OPTIONS = () => `'format' = 'protobuf-confluent', 'protobuf-confluent.url' = '${registry.url}',
        'protobuf-confluent.basic-auth.credentials-source' = 'USER_INFO',
        'protobuf-confluent.basic-auth.user-info' = '${USER}'`;

let cluster;
async function setUp() {
  if (cluster) return;
  cluster = await startCluster(ROOT, 'avro', { topics: ['users:3', 'bad:1', 'users_out:2', 'plain:2',
                                                         'users_bad:1', 'avro_poison:1', 'cdc:1', 'orders_pb:2',
                                                         'orders_grow:1'] });
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

// A bounded copy of the 'users' topic (avro-confluent) to `topic` through the Kafka sink with
// `sinkFormat` (its format options); resolves with the run's exit.
function copyUsers(name, topic, sinkFormat) {
  const p = sandbox(ROOT, name);
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
CREATE TABLE src (${COLUMNS})
  WITH ('connector' = 'kafka', 'topic' = 'users', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        ${AVRO_OPTIONS()});
CREATE TABLE out (${COLUMNS})
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'properties.bootstrap.servers' = '\${KAFKA}',
        ${sinkFormat});
INSERT INTO out SELECT * FROM src;
`);
  return runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk }).done;
}

// The newest version under `subject`: {id, schema (parsed)}.
async function latestSchema(subject) {
  const auth = { Authorization: `Basic ${Buffer.from(USER).toString('base64')}` };
  const latest = await (await fetch(`${registry.url}/subjects/${subject}/versions/latest`,
                                    { headers: auth })).json();
  return { id: latest.id, schema: JSON.parse(latest.schema) };
}

// Every record value of `topic`, as Buffers (`floe kafka consume --value-encoding base64`).
function consumeValues(topic) {
  const r = floe(['kafka', 'consume', '--bootstrap', cluster.bootstrap, '--topic', topic,
                  '--from-beginning', '--value-encoding', 'base64']);
  assert.equal(r.code, 0, r.err);
  return r.out.split('\n').filter(Boolean).map((line) => Buffer.from(JSON.parse(line).value, 'base64'));
}

test('the Kafka sink writes avro-confluent with the schema Flink derives, registered by topic', async () => {
  await setUp();  // the 'users' topic holds the first test's records
  const copied = await copyUsers('sink', 'users_out', AVRO_OPTIONS());
  assert.equal(copied.code, 0, copied.err);
  const { id, schema } = await latestSchema('users_out-value');
  assert.equal(`${schema.namespace}.${schema.name}`, 'org.apache.flink.avro.generated.record');
  assert.deepEqual(schema.fields.find((f) => f.name === 'city'),
                   { name: 'city', type: ['null', 'string'], default: null });
  assert.deepEqual(schema.fields.find((f) => f.name === 'created').type,
                   ['null', { type: 'long', logicalType: 'timestamp-millis' }]);
  const type = avro.Type.forSchema(schema);
  const seen = new Map();
  for (const value of consumeValues('users_out')) {
    assert.equal(value[0], 0, 'magic byte');
    assert.equal(value.readInt32BE(1), id, 'the registered id');
    const row = type.fromBuffer(value.subarray(5));
    seen.set(Number(row.seq), row);
  }
  assert.equal(seen.size, N, 'every seq (at-least-once: no loss)');
  for (const seq of [1, 2, N / 2 + 2, N]) {
    const u = user(seq);
    const row = seen.get(seq);
    assert.equal(row.name, u.name);
    assert.equal(row.city, u.city);
    assert.equal(row.kind, u.kind);
    assert.equal(Number(row.created), u.created);
    assert.equal(row.email, seq <= N / 2 ? null : u.email);
  }
});

test("the registry answers compatibility; a sink whose schema the subject refuses fails with its 409", async () => {
  await setUp();  // the first test registered V1 and V2 under users-value
  const auth = { Authorization: `Basic ${Buffer.from(USER).toString('base64')}`,
                 'Content-Type': 'application/vnd.schemaregistry.v1+json' };
  const check = async (schema) => (await (await fetch(
    `${registry.url}/compatibility/subjects/users-value/versions/latest`,
    { method: 'POST', headers: auth, body: JSON.stringify({ schema: JSON.stringify(schema) }) })).json()).is_compatible;
  assert.equal(await check(V2), true);
  const narrowed = { ...V2, fields: V2.fields.map((f) => (f.name === 'seq' ? { name: 'seq', type: 'int' } : f)) };
  assert.equal(await check(narrowed), false, 'long -> int is no promotion');
  const required = { ...V2, fields: [...V2.fields, { name: 'zip', type: 'string' }] };
  assert.equal(await check(required), false, 'a new field needs a default');
  // The subject holds a schema whose `name` is an int: floe's (a string) cannot read its data.
  const taken = { type: 'record', name: 'User', fields: [{ name: 'name', type: 'int' }] };
  await registerSchema('users_bad-value', taken);
  const run = await copyUsers('incompatible', 'users_bad', AVRO_OPTIONS());
  assert.notEqual(run.code, 0);
  assert.match(run.err, /registering the schema under subject 'users_bad-value': HTTP 409, error 409: Schema being registered is incompatible/);
  const r = floe(['kafka', 'consume', '--bootstrap', cluster.bootstrap, '--topic', 'users_bad', '--from-beginning']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out.trim(), '', 'nothing written');
});

test("plain 'avro': the sink writes bare datums of the derived schema, the source reads them back", async () => {
  await setUp();  // the sink test registered the derived schema under users_out-value
  const copied = await copyUsers('plain', 'plain', "'format' = 'avro', 'avro.encoding' = 'binary'");
  assert.equal(copied.code, 0, copied.err);
  const type = avro.Type.forSchema((await latestSchema('users_out-value')).schema);
  const seqs = new Set();
  for (const value of consumeValues('plain')) {
    const row = type.fromBuffer(value);
    assert.equal(row.name, user(Number(row.seq)).name);
    seqs.add(Number(row.seq));
  }
  assert.equal(seqs.size, N);

  const back = sandbox(ROOT, 'plainback');
  job(back, 'plain', "'format' = 'avro'");
  const run2 = await runJob(back, { KAFKA: cluster.bootstrap, CHK: back.chk, WH: back.wh }).done;
  assert.equal(run2.code, 0, run2.err);
  const rows = await icebirdRows({ location: path.join(back.wh, 'demo', back.name) });
  assert.equal(new Set(rows.map((x) => Number(x.seq))).size, N);
  const row = rows.find((x) => Number(x.seq) === N);
  assert.equal(row.email, user(N).email);
  assert.equal(new Date(row.created).getTime(), user(N).created);

  const refused = sandbox(ROOT, 'plainjson');
  job(refused, 'plain', "'format' = 'avro', 'avro.encoding' = 'json'");
  const run3 = await runJob(refused, { KAFKA: cluster.bootstrap, CHK: refused.chk, WH: refused.wh }).done;
  assert.notEqual(run3.code, 0);
  assert.match(run3.err, /'avro\.encoding' .*must be 'binary'/);
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

test("'scan.bad-records' = 'dead-letter': an unknown id, a schema that cannot be resolved and a cut datum land beside the good records", async () => {
  await setUp();
  const v1 = avro.Type.forSchema(V1);
  const id1 = await registerSchema('avro_poison-value', V1);
  // `name` as a long cannot be read into the STRING column (a narrowing Avro's rules refuse).
  const V3 = { ...V1, fields: V1.fields.map((f) => (f.name === 'name' ? { name: 'name', type: 'long' } : f)) };
  const id3 = await registerSchema('avro_poison-other', V3);
  const v3 = avro.Type.forSchema(V3);
  const lines = [];
  for (let seq = 1; seq <= 200; seq++) {
    if (seq === 50) lines.push(framed(999, v1, user(seq)));
    else if (seq === 100) lines.push(framed(id3, v3, { ...user(seq), name: seq }));
    else if (seq === 150) lines.push(Buffer.from(framed(id1, v1, user(seq)), 'base64').subarray(0, 12).toString('base64'));
    else lines.push(framed(id1, v1, user(seq)));
  }
  produceBase64(cluster.bootstrap, 'avro_poison', lines);
  const p = sandbox(ROOT, 'avro_poison');
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
CREATE TABLE src (${COLUMNS})
  WITH ('connector' = 'kafka', 'topic' = 'avro_poison', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        ${AVRO_OPTIONS()}, 'scan.bad-records' = 'dead-letter', 'scan.bad-records.table' = 'bad');
CREATE TABLE users (${COLUMNS}) WITH (${icebergTable(p.name)});
CREATE TABLE bad (kafka_offset BIGINT, kafka_value BYTES, error_message STRING)
  WITH (${icebergTable(`${p.name}_bad`)});
INSERT INTO users SELECT * FROM src;
`);
  const run = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
  assert.equal(run.code, 0, run.err);
  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  assert.deepEqual(rows.map((r) => Number(r.seq)).sort((a, b) => a - b),
                   Array.from({ length: 200 }, (_, i) => i + 1).filter((s) => s % 50 !== 0 || s === 200));
  const letters = (await icebirdRows({ location: path.join(p.wh, 'demo', `${p.name}_bad`) }))
    .sort((a, b) => Number(a.kafka_offset) - Number(b.kafka_offset));
  assert.deepEqual(letters.map((x) => Number(x.kafka_offset)), [49, 99, 149]);
  assert.match(letters[0].error_message, /offset 49: schema registry .*schema id 999 is not registered/);
  assert.match(letters[1].error_message, new RegExp(`offset 99: writer schema id ${id3} against the table's columns: .*name`));
  assert.match(letters[2].error_message, /offset 149: /);
  // The raw value, framing and all, as it was on the topic (`floe table scan` writes BYTES in
  // base64; icebird hands BYTE_ARRAY columns back as UTF-8 text).
  const scan = floe(['table', 'scan', `demo.${p.name}_bad`, '--warehouse', p.wh]);
  assert.equal(scan.code, 0, scan.err);
  const scanned = scan.out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.equal(scanned.find((x) => x.kafka_offset === 149).kafka_value, lines[149]);
});

// Debezium's Avro converter writes this envelope around the table's row record.
const ENVELOPE = {
  type: 'record', name: 'Envelope', namespace: 'shop.public.orders', fields: [
    { name: 'before', type: ['null', { type: 'record', name: 'Value', fields: [
      { name: 'id', type: 'long' }, { name: 'item', type: ['null', 'string'], default: null },
      { name: 'qty', type: 'int' }] }], default: null },
    { name: 'after', type: ['null', 'Value'], default: null },
    { name: 'source', type: { type: 'record', name: 'Source', namespace: 'io.debezium.connector.postgresql',
      fields: [{ name: 'db', type: 'string' }, { name: 'lsn', type: ['null', 'long'], default: null }] } },
    { name: 'op', type: 'string' },
    { name: 'ts_ms', type: ['null', 'long'], default: null }],
};

test("'debezium-avro-confluent' -> upsert Iceberg: creates, updates and deletes land as the final state", async () => {
  await setUp();
  const type = avro.Type.forSchema(ENVELOPE);
  const id = await registerSchema('cdc-value', ENVELOPE);
  // 300 keys: created, updated twice, every fifth deleted (one partition: the events in order).
  const state = new Map();
  const lines = [];
  // avsc takes a nullable union's value as is.
  const event = (before, after, op) => ({ before, after, source: { db: 'shop', lsn: 1 }, op, ts_ms: T0 });
  for (let round = 0; round < 4; round++) {
    for (let k = 1; k <= 300; k++) {
      const prev = state.get(k);
      let after = null;
      let op = 'd';
      if (round === 0) [after, op] = [{ id: k, item: `item-${k}`, qty: 1 }, 'c'];
      else if (round < 3) [after, op] = [{ ...prev, qty: prev.qty + round }, 'u'];
      else if (k % 5 !== 0) continue;
      if (after) state.set(k, after); else state.delete(k);
      lines.push(framed(id, type, event(prev ?? null, after, op)));
    }
  }
  produceBase64(cluster.bootstrap, 'cdc', lines);
  const p = sandbox(ROOT, 'cdc');
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
CREATE TABLE src (id BIGINT NOT NULL, item STRING, qty INT)
  WITH ('connector' = 'kafka', 'topic' = 'cdc', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        'format' = 'debezium-avro-confluent', 'debezium-avro-confluent.url' = '${registry.url}',
        'debezium-avro-confluent.basic-auth.credentials-source' = 'USER_INFO',
        'debezium-avro-confluent.basic-auth.user-info' = '${USER}');
CREATE TABLE orders (id BIGINT NOT NULL, item STRING, qty INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH (${icebergTable(p.name)}, 'write.upsert.enabled' = 'true');
INSERT INTO orders SELECT * FROM src;
`);
  const run = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
  assert.equal(run.code, 0, run.err);
  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  const got = rows.map((r) => `${r.id}:${r.item}:${r.qty}`).sort();
  const want = [...state.values()].map((v) => `${v.id}:${v.item}:${v.qty}`).sort();
  assert.equal(got.length, 240);
  assert.deepEqual(got, want);
});

const ORDERS_PROTO = `syntax = "proto3";
package shop.v1;
import "google/protobuf/timestamp.proto";

message Other { int32 x = 1; }
message Order {
  int64 id = 1;
  string item = 2;
  optional int32 qty = 3;
  Status status = 4;
  google.protobuf.Timestamp placed = 5;
  double price = 6;
  repeated string tags = 7;
  enum Status { STATUS_UNSPECIFIED = 0; NEW = 1; SHIPPED = 2; }
}
`;

// ORDERS_PROTO registered under `subject`; N_PB Orders encoded by protobufjs as the schema's
// second message, framed as Confluent's, base64 for `floe kafka produce`.
const N_PB = 500;
async function encodedOrders(subject) {
  const res = await fetch(`${registry.url}/subjects/${subject}/versions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json',
               Authorization: `Basic ${Buffer.from(USER).toString('base64')}` },
    body: JSON.stringify({ schema: ORDERS_PROTO, schemaType: 'PROTOBUF' }),
  });
  assert.equal(res.status, 200);
  const { id } = await res.json();
  const root = new protobuf.Root();
  root.addJSON(protobuf.common['google/protobuf/timestamp.proto'].nested);
  protobuf.parse(ORDERS_PROTO, root, { keepCase: true });
  root.resolveAll();
  const Order = root.lookupType('shop.v1.Order');
  // Confluent's framing: magic byte, schema id, message indexes [1] (zigzag: count 1 = 2, index
  // 1 = 2), then the message.
  const header = Buffer.alloc(5);
  header.writeInt32BE(id, 1);
  const lines = [];
  for (let i = 1; i <= N_PB; i++) {
    const m = Order.create({ id: i, item: `item-${i}`, status: i % 3,
                             placed: { seconds: 1700000000 + i, nanos: 1000 * i }, price: i / 4, tags: ['a', `t${i}`],
                             ...(i % 2 === 0 ? { qty: i } : {}) });
    lines.push(Buffer.concat([header, Buffer.from([2, 2]), Buffer.from(Order.encode(m).finish())]).toString('base64'));
  }
  return lines;
}

test("'protobuf-confluent': messages encoded by protobufjs, the second message of the schema by its index, land in Iceberg", async () => {
  await setUp();
  produceBase64(cluster.bootstrap, 'orders_pb', await encodedOrders('orders_pb-value'));
  const p = sandbox(ROOT, 'orders_pb');
  const columns = 'id BIGINT NOT NULL, item STRING, qty INT, status STRING, placed TIMESTAMP_LTZ(6), price DOUBLE';
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
CREATE TABLE src (${columns})
  WITH ('connector' = 'kafka', 'topic' = 'orders_pb', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        ${PROTOBUF_OPTIONS()});
CREATE TABLE orders (${columns}) WITH (${icebergTable(p.name)});
INSERT INTO orders SELECT * FROM src;
`);
  const run = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
  assert.equal(run.code, 0, run.err);
  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  assert.equal(rows.length, N_PB);
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  for (let i = 1; i <= N_PB; i++) {
    const r = byId.get(i);
    assert.ok(r, `id ${i}`);
    assert.equal(r.item, `item-${i}`);
    assert.equal(r.qty ?? null, i % 2 === 0 ? i : null, `qty of ${i}: optional, absent is null`);
    assert.equal(r.status, ['STATUS_UNSPECIFIED', 'NEW', 'SHIPPED'][i % 3]);
    assert.equal(new Date(r.placed).getTime(), (1700000000 + i) * 1000, `placed of ${i}`);
    assert.equal(r.price, i / 4);
  }
});

// Evolution by the messages' schema ('sink.schema-evolution' = 'add-columns' over SELECT *): the
// job declares id and item only; every other field of the message that can be a column grows
// the table with its type (qty INT, absent as null; status the enum's name; placed
// TIMESTAMP_LTZ; price DOUBLE); the repeated tags stay out.
test("'protobuf-confluent': the fields no column names grow the table", async () => {
  await setUp();
  produceBase64(cluster.bootstrap, 'orders_grow', await encodedOrders('orders_grow-value'));
  const p = sandbox(ROOT, 'orders_grow');
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
CREATE TABLE src (id BIGINT NOT NULL, item STRING)
  WITH ('connector' = 'kafka', 'topic' = 'orders_grow', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        ${PROTOBUF_OPTIONS()});
CREATE TABLE orders (id BIGINT NOT NULL, item STRING)
  WITH (${icebergTable(p.name)}, 'sink.schema-evolution' = 'add-columns');
INSERT INTO orders SELECT * FROM src;
`);
  const run = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
  assert.equal(run.code, 0, run.err);
  assert.match(run.err, /grew the schema by its rows' fields.*added column 'placed' TIMESTAMP_LTZ/);
  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  assert.equal(rows.length, N_PB);
  for (const r of rows) {
    const i = Number(r.id);
    assert.equal(r.item, `item-${i}`);
    assert.equal(r.qty ?? null, i % 2 === 0 ? i : null, `qty of ${i}`);
    assert.equal(r.status, ['STATUS_UNSPECIFIED', 'NEW', 'SHIPPED'][i % 3]);
    assert.equal(new Date(r.placed).getTime(), (1700000000 + i) * 1000, `placed of ${i}`);
    assert.equal(r.price, i / 4);
    assert.equal(r.tags, undefined, 'a repeated field is not a column');
  }
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

test('avro-confluent -> upsert Iceberg, worker SIGKILLed mid-feed: the last revision of every key', async (t) => {
  await setUp();
  // 20 ms per broker response and 1 KiB fetches keep the bounded job reading for seconds, so the
  // kill lands mid-feed; one partition keeps each key's revisions in order.
  const slow = await startCluster(ROOT, 'slow', { topics: ['upserts:1'], args: ['--rtt-ms', '20'] });
  const v1 = avro.Type.forSchema(V1);
  const v2 = avro.Type.forSchema(V2);
  const id1 = await registerSchema('upserts-value', V1);
  const id2 = await registerSchema('upserts-value', V2);
  // 1,000 keys, 3 revisions each, in rounds: a commit of ~200 ms holds a few hundred records, so
  // no two revisions of a key (an upsert commit writes only a key's last row: added-records
  // counts each record once only while no commit holds two revisions of one key).
  const KEYS = 1000;
  const last = new Map();
  const lines = [];
  for (let seq = 1; seq <= N; seq++) {
    const u = { ...user(seq), name: `key-${seq % KEYS}`, city: `revision-${Math.ceil(seq / KEYS)}` };
    last.set(u.name, { seq, name: u.name, city: u.city, email: seq <= N / 2 ? null : u.email });
    lines.push(seq <= N / 2 ? framed(id1, v1, u) : framed(id2, v2, u));
  }
  produceBase64(slow.bootstrap, 'upserts', lines);
  const p = sandbox(ROOT, 'upserts');
  job(p, 'upserts', `${AVRO_OPTIONS()}, 'properties.max.partition.fetch.bytes' = '1024'`,
      { upsert: true, interval: '200 ms' });
  const r = runJob(p, { KAFKA: slow.bootstrap, CHK: p.chk, WH: p.wh });
  await killWorkerMidFeed(p);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
  t.diagnostic(verifyLatest(p, writeJsonl(path.join(p.dir, 'expected.jsonl'), [...last.values()]), 'name'));
  // Every record committed once, whichever snapshot took it (a replay committed twice adds more).
  const { added, snapshots } = recordsAdded(p);
  assert.equal(added, N, `records added over ${snapshots} snapshots`);
  // icebird, which floe did not write, reads the same last revisions.
  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  assert.equal(rows.length, KEYS);
  for (const row of rows) assert.equal(row.city, last.get(row.name).city, row.name);
});

// Evolution by the registry's writer schemas ('sink.schema-evolution' = 'add-columns' over
// SELECT *; docs/connectors.md, "Schema evolution"): the job declares seq and name; version 2 of
// the subject adds email (a union with null), visits (int) and day (date); version 3 widens
// visits to long. The table grows by them in the commits of their first records (visits INT,
// then widened to BIGINT), the worker is SIGKILLed mid-feed, and icebird reads every record once
// with its own writer's fields, null where its writer had none. A fourth version (the subject's
// compatibility off) makes email an int, which its column cannot take: its records are bad
// records ('scan.bad-records' = 'skip' here), named in the log, and nothing else is lost.
test("avro-confluent writer schemas that gain fields grow the table, SIGKILL mid-feed: every record once", async (t) => {
  await setUp();
  const slow = await startCluster(ROOT, 'grow', { topics: ['grow:2'], args: ['--rtt-ms', '20'] });
  const G1 = { type: 'record', name: 'Event', namespace: 'com.example',
               fields: [{ name: 'seq', type: 'long' }, { name: 'name', type: 'string' }] };
  const G2 = { ...G1, fields: [...G1.fields, { name: 'email', type: ['null', 'string'], default: null },
                               { name: 'visits', type: 'int', default: 0 },
                               { name: 'day', type: { type: 'int', logicalType: 'date' }, default: 0 }] };
  const G3 = { ...G2, fields: G2.fields.map((f) => (f.name === 'visits' ? { ...f, type: 'long' } : f)) };
  const G4 = { ...G3, fields: G3.fields.map((f) => (f.name === 'email' ? { name: 'email', type: 'int' } : f)) };
  const types = [G1, G2, G3, G4].map((s) => avro.Type.forSchema(s));
  const ids = [];
  for (const s of [G1, G2, G3]) ids.push(await registerSchema('grow-value', s));
  const none = await fetch(`${registry.url}/config/grow-value`, {
    method: 'PUT', body: JSON.stringify({ compatibility: 'NONE' }),
    headers: { 'Content-Type': 'application/vnd.schemaregistry.v1+json',
               Authorization: `Basic ${Buffer.from(USER).toString('base64')}` } });
  assert.equal(none.status, 200);
  ids.push(await registerSchema('grow-value', G4));
  const TOTAL = 6000;
  const BAD = 100;  // seqs TOTAL + 1 .. TOTAL + BAD, in version 4
  const version = (seq) => (seq <= 300 ? 0 : seq <= 3000 ? 1 : seq <= TOTAL ? 2 : 3);
  const event = (seq) => {
    const v = version(seq);
    if (v === 0) return { seq, name: `n${seq}` };
    return { seq, name: `n${seq}`, email: v === 3 ? seq : seq % 2 ? null : `e${seq}`,
             visits: v === 1 ? seq * 2 : seq * 1_000_000, day: 20_000 + (seq % 10) };
  };
  produceBase64(slow.bootstrap, 'grow', Array.from({ length: TOTAL + BAD }, (_, i) =>
    framed(ids[version(i + 1)], types[version(i + 1)], event(i + 1))));
  const p = sandbox(ROOT, 'grow');
  fs.writeFileSync(p.job, `${checkpointSets('200 ms')}
CREATE TABLE src (seq BIGINT NOT NULL, name STRING)
  WITH ('connector' = 'kafka', 'topic' = 'grow', 'properties.bootstrap.servers' = '\${KAFKA}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        'properties.max.partition.fetch.bytes' = '1024', 'scan.bad-records' = 'skip',
        ${AVRO_OPTIONS()});
CREATE TABLE events (seq BIGINT NOT NULL, name STRING)
  WITH (${icebergTable(p.name)}, 'sink.schema-evolution' = 'add-columns');
INSERT INTO events SELECT * FROM src;
`);
  const r = runJob(p, { KAFKA: slow.bootstrap, CHK: p.chk, WH: p.wh });
  await killWorkerMidFeed(p, 1);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
  assert.match(err, /grew the schema by its rows' fields .*added column 'day' DATE/);
  assert.match(err, /widened column 'visits' INT -> BIGINT/);
  assert.match(err, /undeclared field 'email' is INT in this writer schema but STRING in an earlier one/);

  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  const seen = new Map();
  for (const x of rows) seen.set(Number(x.seq), (seen.get(Number(x.seq)) || 0) + 1);
  const missing = [];
  for (let s = 1; s <= TOTAL; s++) if (!seen.has(s)) missing.push(s);
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  t.diagnostic(`${rows.length} rows, ${duplicates} duplicated seqs, missing: ${runs(missing) || 'none'}`);
  assert.equal(duplicates, 0);
  assert.equal(runs(missing), '');
  assert.equal(rows.length, TOTAL, "the bad version's records are left out");
  const days = (d) => (d == null ? null : d instanceof Date ? d.getTime() / 86_400_000 : Number(d));
  for (const x of rows) {
    const e = event(Number(x.seq));
    assert.equal(x.email ?? null, e.email ?? null, `email of ${x.seq}`);
    assert.equal(x.visits == null ? null : Number(x.visits), e.visits ?? null, `visits of ${x.seq}`);
    assert.equal(days(x.day), e.day ?? null, `day of ${x.seq}`);
  }
});
