// Kafka changelogs and partition splitting, end to end through processes. A dev cluster (`floe
// kafka dev`, librdkafka's mock cluster) runs as its own process; `floe kafka produce` loads
// JSON-lines files; bounded jobs ('scan.bounded.mode' = 'latest-offset') run through `floe run`;
// `floe table scan` / `floe table verify` read the Iceberg tables. FLOE_BIN points at floe.
//
// 1. A Debezium feed (debezium-json: inserts, several updates per key, deletes, deletes followed
//    by re-inserts) over 3 partitions, every event of a key in one partition (`floe kafka
//    produce --partition-by`), into an upsert Iceberg table read by 3 source subtasks: the table
//    equals the final state the test computes -- once straight, once with the worker SIGKILLed
//    mid-feed.
// 2. Partition splitting: a 4-partition topic read with 'scan.parallelism' = 2, 3 (uneven: one
//    subtask gets two splits) and 5 (one subtask gets none), and a topic list 'topic' = 'a;b': every seq exactly once in
//    an append table, and every source subtask's position in the table's floe.source-offsets.
// 3. Rescaling: 'scan.parallelism' 2 -> 3 (positions from the table) -> 1 (from the last
//    checkpoint): every seq exactly once.
//
// Mock limits these tests stay inside (docs/kafka.md): ~5 MiB per partition (a few thousand
// events of ~200 B), no offsets by timestamp (not used), unique group ids per test.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, floe, icebergTable, killWorkerMidFeed, moreOptions, produce as produceFile,
         runJob, sandbox, startCluster, stopClusters, tempRoot, verifySeqs, writeJsonl } from './harness.mjs';

const ROOT = tempRoot('floe-kafka-cl-');

// A dev cluster with `topics` and `extra` options; resolves with its bootstrap servers.
async function cluster(name, topics, extra = []) {
  return (await startCluster(ROOT, name, { topics, args: extra })).bootstrap;
}
after(stopClusters);

function produce(bootstrap, topic, lines, extra = []) {
  const file = path.join(ROOT, `${topic}-${lines.length}-${Math.random().toString(36).slice(2)}.jsonl`);
  produceFile(bootstrap, topic, writeJsonl(file, lines), extra);
}

// A deterministic pseudo-random generator (mulberry32), so a failure can be replayed.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A Debezium feed over `keys` keys: the first event of a key is a snapshot read ("r") or a
// create ("c"); then updates (several per key), deletes, and re-inserts after deletes. Returns
// the events and the final state (id -> row) that applying them in order gives.
function debeziumFeed(events, keys, seed) {
  const next = rng(seed);
  const state = new Map();
  const out = [];
  let reinserts = 0;
  let deletes = 0;
  let updates = 0;
  const deleted = new Set();
  for (let i = 0; i < events; i++) {
    const id = 1 + Math.floor(next() * keys);
    const before = state.get(id) ?? null;
    let op;
    let afterRow = null;
    if (before === null) {
      op = i < keys / 2 ? 'r' : 'c';
      if (deleted.has(id)) reinserts++;
      afterRow = { id, name: `n${id}-${i}`, version: 1, city: next() < 0.2 ? null : `city-${i % 17}` };
    } else if (next() < 0.22) {
      op = 'd';
      deletes++;
      deleted.add(id);
    } else {
      op = 'u';
      updates++;
      afterRow = { ...before, name: `n${id}-${i}`, version: before.version + 1,
                   city: next() < 0.2 ? null : `city-${i % 23}` };
    }
    out.push(JSON.stringify({ before, after: afterRow, op, ts_ms: 1700000000000 + i,
                              source: { connector: 'test', db: 'inventory', table: 'people' } }));
    if (afterRow) state.set(id, afterRow); else state.delete(id);
  }
  assert.ok(updates > events / 3 && deletes > 50 && reinserts > 20,
            `feed mix: ${updates} updates, ${deletes} deletes, ${reinserts} re-inserts`);
  return { lines: out, state, mix: `${updates} updates, ${deletes} deletes, ${reinserts} re-inserts` };
}

function changelogJob(name, { interval = '200 ms', sourceProps = {} } = {}) {
  const p = sandbox(ROOT, name);
  fs.writeFileSync(p.job, `-- ${name}: debezium-json changelog -> upsert iceberg table
${checkpointSets(interval)}
CREATE TABLE people (id BIGINT NOT NULL, name STRING, version INT, city STRING)
  WITH ('connector' = 'kafka', 'topic' = 'people', 'format' = 'debezium-json',
        'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = 'floe-${name}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        'scan.parallelism' = '3'${moreOptions(sourceProps)});
CREATE TABLE lake (id BIGINT NOT NULL, name STRING, version INT, city STRING,
                   PRIMARY KEY (id) NOT ENFORCED)
  WITH (${icebergTable(name)}, 'sink.parallelism' = '2',
        'write.upsert.enabled' = 'true');
INSERT INTO lake SELECT * FROM people;
`);
  return p;
}

function run(p, kafka, { sql = p.job, extra = [] } = {}) {
  return runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: kafka }, { sql, args: extra });
}

function scan(p) {
  const r = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
  assert.equal(r.code, 0, r.err);
  return r.out.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

function assertFinalState(p, state) {
  const rows = scan(p);
  const byId = new Map();
  for (const row of rows) {
    assert.ok(!byId.has(row.id), `id ${row.id} appears twice in ${p.table}`);
    byId.set(row.id, row);
  }
  const missing = [...state.keys()].filter((id) => !byId.has(id));
  const extra = [...byId.keys()].filter((id) => !state.has(id));
  assert.deepEqual({ missing: missing.slice(0, 10), extra: extra.slice(0, 10) },
                   { missing: [], extra: [] }, `${missing.length} missing, ${extra.length} extra`);
  for (const [id, want] of state) assert.deepEqual(byId.get(id), want, `row ${id}`);
  assert.equal(rows.length, state.size);
  return rows.length;
}

// The newest table metadata's current snapshot summary.
function currentSummary(p) {
  const dir = path.join(p.wh, 'demo', p.name, 'metadata');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.metadata.json'));
  const newest = files.map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))
    .sort((a, b) => (a['last-updated-ms'] - b['last-updated-ms']) ||
                    ((a.snapshots?.length ?? 0) - (b.snapshots?.length ?? 0))).pop();
  const snap = newest.snapshots.find((s) => s['snapshot-id'] === newest['current-snapshot-id']);
  return snap.summary;
}

const FEED = debeziumFeed(3000, 400, 20261130);
const PARTITION_BY = ['--partition-by', 'after.id|before.id'];

test('debezium-json feed (c/r/u/d, re-inserts) over 3 partitions into an upsert table: the table equals the final state', async (t) => {
  const kafka = await cluster('cdc', ['people:3']);
  produce(kafka, 'people', FEED.lines, PARTITION_BY);
  const p = changelogJob('cdc_upsert');
  const { code, err } = await run(p, kafka).done;
  assert.equal(code, 0, err);
  const n = assertFinalState(p, FEED.state);
  t.diagnostic(`${FEED.lines.length} events (${FEED.mix}), ${n} rows in the final state`);
  // Every source subtask's position reached the table.
  const offsets = JSON.parse(currentSummary(p)['floe.source-offsets']);
  assert.deepEqual(Object.keys(offsets).sort(),
                   ['source-people/0', 'source-people/1', 'source-people/2']);
  let total = 0;
  for (const pos of Object.values(offsets)) {
    assert.equal(pos.parallelism, 3);
    for (const next of Object.values(pos.topics.people)) total += next;
  }
  assert.equal(total, FEED.lines.length, JSON.stringify(offsets));
});

test('debezium-json feed with the worker SIGKILLed mid-feed: exactly the final state', async () => {
  // 20 ms per broker response and ~1 KiB fetches keep the bounded job reading for seconds.
  const kafka = await cluster('cdc-slow', ['people:3'], ['--rtt-ms', '20']);
  produce(kafka, 'people', FEED.lines, [...PARTITION_BY, '--property', 'batch.num.messages=10',
                                        '--property', 'linger.ms=0']);
  const p = changelogJob('cdc_kill', { sourceProps: { 'properties.max.partition.fetch.bytes': '1024' } });
  const r = run(p, kafka);
  await killWorkerMidFeed(p);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
  assertFinalState(p, FEED.state);
});

test('an append-only iceberg sink for a debezium-json source is refused at plan time', async () => {
  const p = changelogJob('cdc_refused');
  const sql = path.join(p.dir, 'append.sql');
  fs.writeFileSync(sql, fs.readFileSync(p.job, 'utf8')
    .replace(",\n                   PRIMARY KEY (id) NOT ENFORCED", '')
    .replace(",\n        'write.upsert.enabled' = 'true'", ''));
  const { code, err } = await run(p, '127.0.0.1:1', { sql }).done;
  assert.notEqual(code, 0);
  assert.match(err, /is a changelog .* but iceberg table 'lake' is append-only/, err);
  assert.match(err, /'write\.upsert\.enabled' = 'true'/, err);
});

// --- Partition splitting.

function appendJob(name, topic, sourceParallelism) {
  const p = sandbox(ROOT, name);
  fs.writeFileSync(p.job, `-- ${name}: kafka (${topic}) -> iceberg append, source parallelism ${sourceParallelism}
SET 'execution.checkpointing.interval' = '200 ms';
SET 'execution.checkpointing.dir' = '\${CHK}';
CREATE TABLE seqs (seq BIGINT NOT NULL, pad STRING)
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'format' = 'json',
        'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = 'floe-${name}',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        'scan.parallelism' = '${sourceParallelism}');
CREATE TABLE lake (seq BIGINT NOT NULL, pad STRING)
  WITH (${icebergTable(name)});
INSERT INTO lake SELECT * FROM seqs;
`);
  return p;
}

function seqLines(first, last) {
  const lines = [];
  for (let seq = first; seq <= last; seq++) lines.push(JSON.stringify({ seq, pad: `p${seq % 97}` }));
  return lines;
}

const verify = (p, n) => { verifySeqs(p, n); };

let splitCluster;
async function splits() {
  if (!splitCluster) {
    splitCluster = await cluster('splits', ['seqs:4', 'ta:2', 'tb:3', 'rs:4']);
    produce(splitCluster, 'seqs', seqLines(1, 4000));
    produce(splitCluster, 'ta', seqLines(1, 1500));
    produce(splitCluster, 'tb', seqLines(1501, 4000));
  }
  return splitCluster;
}

// 2: two splits each; 3: one subtask gets two; 5: one subtask gets none (bounded: it ends at
// once, and still checkpoints and reports its empty position).
for (const parallelism of [2, 3, 5]) {
  test(`4 partitions read by ${parallelism} source subtasks: every seq exactly once, every subtask's position in the table`, async () => {
    const kafka = await splits();
    const p = appendJob(`split_${parallelism}`, 'seqs', parallelism);
    const { code, err } = await run(p, kafka).done;
    assert.equal(code, 0, err);
    verify(p, 4000);
    const offsets = JSON.parse(currentSummary(p)['floe.source-offsets']);
    const owned = [];
    for (let i = 0; i < parallelism; i++) {
      const pos = offsets[`source-seqs/${i}`];
      assert.ok(pos, `subtask ${i} position missing: ${JSON.stringify(offsets)}`);
      assert.equal(pos.parallelism, parallelism);
      for (const [part, next] of Object.entries(pos.topics.seqs)) {
        assert.equal(next, 1000, `partition ${part} read to its end`);
        owned.push(Number(part));
      }
    }
    assert.deepEqual(owned.sort(), [0, 1, 2, 3]);
  });
}

test("a topic list 'ta;tb' (2 + 3 partitions) read by 2 subtasks: every seq exactly once", async () => {
  const kafka = await splits();
  const p = appendJob('topic_list', 'ta;tb', 2);
  const { code, err } = await run(p, kafka).done;
  assert.equal(code, 0, err);
  verify(p, 4000);
  const offsets = JSON.parse(currentSummary(p)['floe.source-offsets']);
  let ta = 0;
  let tb = 0;
  for (const pos of Object.values(offsets)) {
    for (const next of Object.values(pos.topics.ta ?? {})) ta += next;
    for (const next of Object.values(pos.topics.tb ?? {})) tb += next;
  }
  assert.deepEqual({ ta, tb }, { ta: 1500, tb: 2500 });
});

// The positions the table's newest commit holds for `topic`: next offsets summed, and the
// parallelism every position says wrote it.
function tablePositions(p, topic) {
  const offsets = JSON.parse(currentSummary(p)['floe.source-offsets']);
  let next = 0;
  const parallelism = new Set();
  for (const pos of Object.values(offsets)) {
    parallelism.add(pos.parallelism);
    for (const n of Object.values(pos.topics[topic] ?? {})) next += n;
  }
  return { tasks: Object.keys(offsets).sort(), next, parallelism: [...parallelism] };
}

test('restarting with another source parallelism rescales 2 -> 3 (from the table) -> 1 (from --from latest): every seq exactly once', async () => {
  const kafka = await splits();
  produce(kafka, 'rs', seqLines(1, 2000));
  const p = appendJob('rescale', 'rs', 2);
  const r1 = await run(p, kafka).done;
  assert.equal(r1.code, 0, r1.err);
  verify(p, 2000);
  // A fresh run (new checkpoint dir) of the same pipeline with 3 subtasks starts from the table,
  // whose positions 2 subtasks wrote: the new subtasks split them.
  produce(kafka, 'rs', seqLines(2001, 4000));
  const setParallelism = (from, to) => fs.writeFileSync(
    p.job, fs.readFileSync(p.job, 'utf8').replace(`'scan.parallelism' = '${from}'`, `'scan.parallelism' = '${to}'`));
  setParallelism(2, 3);
  const chk2 = path.join(p.dir, 'chk-2');
  const r2 = await run({ ...p, chk: chk2 }, kafka).done;
  assert.equal(r2.code, 0, r2.err);
  assert.match(r2.err, /written with source parallelism 2, redistributed over 3 subtasks/, r2.err);
  verify(p, 4000);
  assert.deepEqual(tablePositions(p, 'rs'),
                   { tasks: ['source-seqs/0', 'source-seqs/1', 'source-seqs/2'], next: 4000, parallelism: [3] });
  // Down to 1 from the second run's last checkpoint: the one subtask takes every old subtask's
  // position and bounded end offset. Records produced now lie past those end offsets (a
  // restored bounded job keeps the ends it started with): none of them is read.
  produce(kafka, 'rs', seqLines(4001, 4500));
  setParallelism(3, 1);
  const r3 = await run({ ...p, chk: chk2 }, kafka, { extra: ['--from', 'latest'] }).done;
  assert.equal(r3.code, 0, r3.err);
  assert.match(r3.err, /rescaling from 3 to 1 subtasks/, r3.err);
  verify(p, 4000);  // nothing read twice, nothing skipped
});
