// One job writing 50 Iceberg tables (docs/connectors.md, "One job, many tables"): a Kafka topic
// whose records name their table in `kind`, landed by a sink with 'catalog-table' = 'ev_{kind}'
// against the mock cluster run as its own process. Each table is created on first sight and
// read back by icebird; the 50 tables together hold every record once (duplicates counted,
// missing reported as runs) and each table only its own kind:
// * the worker SIGKILLed at a random point mid-feed, and at crash points whose hit counts fall
//   between two tables' commits of one checkpoint;
// * the whole job stopped between two tables' commits (restarts off): a fresh run is refused
//   (the tables hold different checkpoints), `floe run --from latest` finishes exactly once;
// * upsert tables: 10 routed tables keyed by id, each id updated four times, killed mid-feed:
//   each table holds its ids once, at their last version (icebird applies the equality deletes);
// * a record naming no valid table fails the job with the column and value, nothing committed
//   for it;
// * routing by topic: Flink's METADATA columns (topic, partition, offset, timestamp and its
//   type) of a source reading three topics, 'catalog-table' = 'raw_{topic}', the watermark on the Kafka timestamp.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, consumeTopic, floe, icebergTable, killWorkerMidFeed, produce, runJob,
         runs, sandbox, startCluster, stopClusters, tempRoot, writeJsonl } from './harness.mjs';
import { icebirdRows } from './icebird_read.mjs';

const ROOT = tempRoot('floe-routed-tables-');
const N = 10000;
const TABLES = 50;
after(stopClusters);

const kindOf = (seq) => `k${String(seq % TABLES).padStart(2, '0')}`;
const record = (seq) => ({ seq, kind: kindOf(seq), score: seq / 4 });

function routedJob(p, topic, { interval = '200 ms', sets = '', more = '' } = {}) {
  return `${checkpointSets(interval)}
${sets}
CREATE TABLE src (seq BIGINT NOT NULL, kind STRING, score DOUBLE)
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'properties.bootstrap.servers' = '\${KAFKA}',
        'format' = 'json', 'scan.startup.mode' = 'earliest-offset',
        'scan.bounded.mode' = 'latest-offset', 'properties.max.partition.fetch.bytes' = '2048');
CREATE TABLE events (seq BIGINT NOT NULL, kind STRING, score DOUBLE)
  WITH (${icebergTable(`${p.name}_{kind}`)}${more});
INSERT INTO events SELECT * FROM src;
`;
}

// Runs the sandbox's job on `cluster`, SIGKILLs its worker once `after` checkpoints completed,
// and waits for the restarted job to finish.
async function runKilledMidFeed(p, cluster, after = 2) {
  const r = runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh });
  await killWorkerMidFeed(p, after);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
}

// A topic of N records over 3 partitions on a slow cluster, so a bounded job reads for seconds.
async function feed(name) {
  const cluster = await startCluster(ROOT, name, { topics: ['routed:3'], args: ['--rtt-ms', '20'] });
  const p = sandbox(ROOT, name);
  const seqs = Array.from({ length: N }, (_, i) => i + 1);
  produce(cluster.bootstrap, 'routed', writeJsonl(path.join(p.dir, 'in.jsonl'), seqs.map(record)),
          ['--property', 'batch.num.messages=50']);
  return { cluster, p, seqs };
}

// The snapshots of table demo.<name>: what each added, and whether it was a compaction.
function snapshots(p, name) {
  const d = floe(['table', 'describe', `demo.${name}`, '--warehouse', p.wh]);
  assert.equal(d.code, 0, d.err);
  const json = JSON.parse(d.out.replace(/"((?:current-|parent-)?snapshot-id)":\s*(-?\d+)/g, '"$1":"$2"'));
  return json.snapshots.map((x) => ({ operation: x.summary.operation,
                                      added: Number(x.summary['added-records'] || 0) }));
}

// Every table read by icebird: each holds its own kind only, all together every seq once, and
// each table's snapshots (compactions aside) added its rows once.
async function everyTableOnce(t, p, seqs) {
  const dirs = fs.readdirSync(path.join(p.wh, 'demo')).filter((d) => d.startsWith(`${p.name}_`));
  assert.equal(dirs.length, TABLES, `tables: ${dirs.join(', ')}`);
  const seen = new Map();
  for (const dir of dirs) {
    const rows = await icebirdRows({ location: path.join(p.wh, 'demo', dir) });
    const added = snapshots(p, dir).filter((x) => x.operation !== 'replace')
      .reduce((a, x) => a + x.added, 0);
    assert.equal(added, rows.length, `${dir}: snapshots added ${added} rows, it holds ${rows.length}`);
    for (const x of rows) {
      assert.equal(`${p.name}_${x.kind}`, dir, `seq ${x.seq} in ${dir}`);
      assert.equal(x.kind, kindOf(Number(x.seq)));
      seen.set(Number(x.seq), (seen.get(Number(x.seq)) || 0) + 1);
    }
  }
  const duplicates = [...seen.values()].reduce((a, n) => a + (n > 1 ? n - 1 : 0), 0);
  const missing = runs(seqs.filter((s) => !seen.has(s)));
  t.diagnostic(`${TABLES} tables: ${[...seen.values()].reduce((a, n) => a + n, 0)} rows, ` +
               `${duplicates} duplicates, missing [${missing}]`);
  assert.deepEqual({ duplicates, missing }, { duplicates: 0, missing: '' });
}

test('50 routed tables, worker SIGKILLed mid-feed: every record once, each in its own table', async (t) => {
  const { cluster, p, seqs } = await feed('mid_feed');
  // Compaction due after every commit of a table, every file a candidate: each table is
  // maintained on its own.
  fs.writeFileSync(p.job, routedJob(p, 'routed', { more: `, 'flink-maintenance.rewrite.schedule.commit-count' = '1',
    'flink-maintenance.rewrite.rewrite-all' = 'true'` }));
  await runKilledMidFeed(p, cluster);
  await everyTableOnce(t, p, seqs);
  const compacted = fs.readdirSync(path.join(p.wh, 'demo'))
    .filter((d) => snapshots(p, d).some((x) => x.operation === 'replace'));
  t.diagnostic(`${compacted.length} of ${TABLES} tables compacted in the job`);
  assert.equal(compacted.length, TABLES);
});

// Hit counts over the 50 tables' committers: the kill lands between two tables' commits (or
// file writes) of one checkpoint.
for (const point of ['after-checkpoint-complete-before-commit:80', 'after-commit-before-record:120',
                     'after-data-file-written:75']) {
  test(`50 routed tables, worker SIGKILLed at ${point}: every record once`, async (t) => {
    const name = `at_${point.split(':')[0].replace(/-/g, '_')}`;
    const { cluster, p, seqs } = await feed(name);
    fs.writeFileSync(p.job, routedJob(p, 'routed'));
    const { code, err } = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh },
                                       { crashAt: point }).done;
    assert.equal(code, 0, err);
    assert.match(err, /killed by SIGKILL/, `never killed at ${point}:\n${err}`);
    await everyTableOnce(t, p, seqs);
  });
}

test('50 routed tables, job stopped between two tables\' commits: a fresh run is refused, --from latest finishes exactly once', async (t) => {
  const { cluster, p, seqs } = await feed('stopped');
  fs.writeFileSync(p.job, routedJob(p, 'routed', { sets: "SET 'restart-strategy.type' = 'none';" }));
  const vars = { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh };
  const crashed = await runJob(p, vars, { crashAt: 'after-commit-before-record:3' }).done;
  assert.notEqual(crashed.code, 0, 'the job fails: restarts are off');
  assert.match(crashed.err, /killed by SIGKILL/, crashed.err);
  const fresh = await runJob(p, vars).done;
  assert.notEqual(fresh.code, 0, fresh.err);
  assert.match(fresh.err, /holds (no checkpoint|checkpoint \d+) of it while another of its tables holds checkpoint \d+.*--from latest/s, fresh.err);
  const resumed = await runJob(p, vars, { from: 'latest' }).done;
  assert.equal(resumed.code, 0, resumed.err);
  await everyTableOnce(t, p, seqs);
});

test('10 routed upsert tables, worker SIGKILLed mid-feed: each id once, at its last version, in its table', async (t) => {
  const cluster = await startCluster(ROOT, 'upsert', { topics: ['changes:3'], args: ['--rtt-ms', '20'] });
  const p = sandbox(ROOT, 'upsert');
  const IDS = 1000;
  const VERSIONS = 4;
  const kinds = 10;
  const kindOfId = (id) => `u${id % kinds}`;
  // Version v of every id, then v + 1: the last version of each id comes last.
  const records = [];
  for (let v = 1; v <= VERSIONS; ++v) {
    for (let id = 1; id <= IDS; ++id) records.push({ id, kind: kindOfId(id), version: v });
  }
  produce(cluster.bootstrap, 'changes', writeJsonl(path.join(p.dir, 'in.jsonl'), records),
          ['--property', 'batch.num.messages=50', '--partition-by', 'id']);
  fs.writeFileSync(p.job, `${checkpointSets('200 ms')}
CREATE TABLE src (id BIGINT NOT NULL, kind STRING, version INT)
  WITH ('connector' = 'kafka', 'topic' = 'changes', 'properties.bootstrap.servers' = '\${KAFKA}',
        'format' = 'json', 'scan.startup.mode' = 'earliest-offset',
        'scan.bounded.mode' = 'latest-offset', 'properties.max.partition.fetch.bytes' = '2048');
CREATE TABLE latest (id BIGINT NOT NULL, kind STRING, version INT, PRIMARY KEY (id) NOT ENFORCED)
  WITH (${icebergTable('up_{kind}')}, 'write.upsert.enabled' = 'true', 'sink.parallelism' = '2');
INSERT INTO latest SELECT * FROM src;
`);
  await runKilledMidFeed(p, cluster, 1);
  let total = 0;
  for (let k = 0; k < kinds; ++k) {
    const rows = await icebirdRows({ location: path.join(p.wh, 'demo', `up_u${k}`) });
    const ids = rows.map((x) => Number(x.id)).sort((a, b) => a - b);
    const want = Array.from({ length: IDS }, (_, i) => i + 1).filter((id) => id % kinds === k);
    assert.deepEqual(ids, want, `up_u${k}: each of its ids once`);
    for (const x of rows) assert.equal(Number(x.version), VERSIONS, `id ${x.id}: the last version`);
    total += rows.length;
  }
  t.diagnostic(`${kinds} upsert tables: ${total} rows, each id once at version ${VERSIONS}`);
});

test('a record whose route column names no valid table fails the job naming column and value', async () => {
  const cluster = await startCluster(ROOT, 'bad_name', { topics: ['bad:1'] });
  const p = sandbox(ROOT, 'bad_name');
  const records = [record(1), record(2), { seq: 3, kind: '../x', score: 1 }];
  produce(cluster.bootstrap, 'bad', writeJsonl(path.join(p.dir, 'in.jsonl'), records));
  fs.writeFileSync(p.job, routedJob(p, 'bad', { sets: "SET 'restart-strategy.type' = 'none';" }));
  const { code, err } = await runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }).done;
  assert.notEqual(code, 0, err);
  assert.match(err, /routes to table name 'bad_name_\.\.\/x' \(kind = '\.\.\/x'\), which is not a valid table name/, err);
  assert.ok(!fs.existsSync(path.join(p.wh, 'x')), 'nothing written outside the namespace');
});

test('routing by topic: METADATA columns name each record\'s topic, partition, offset and timestamp; killed mid-feed, every record once in its topic\'s table', async (t) => {
  const topics = ['orders', 'clicks', 'views'];
  const cluster = await startCluster(ROOT, 'by_topic', { topics: topics.map((x) => `${x}:2`),
                                                        args: ['--rtt-ms', '20'] });
  const p = sandbox(ROOT, 'by_topic');
  const per = 4000;
  for (const [i, topic] of topics.entries()) {
    const seqs = Array.from({ length: per }, (_, k) => i * per + k + 1);
    produce(cluster.bootstrap, topic, writeJsonl(path.join(p.dir, `${topic}.jsonl`),
                                                 seqs.map((seq) => ({ seq, score: seq / 4 }))),
            ['--property', 'batch.num.messages=50']);
  }
  const before = Date.now();
  fs.writeFileSync(p.job, `${checkpointSets('200 ms')}
CREATE TABLE src (
  seq BIGINT NOT NULL, score DOUBLE,
  topic STRING METADATA VIRTUAL,
  part INT METADATA FROM 'partition' VIRTUAL,
  off BIGINT METADATA FROM 'offset' VIRTUAL,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  ts_type STRING METADATA FROM 'timestamp-type' VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka', 'topic' = '${topics.join(';')}',
        'properties.bootstrap.servers' = '\${KAFKA}', 'format' = 'json',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
        'properties.max.partition.fetch.bytes' = '1024');
CREATE TABLE raw (seq BIGINT NOT NULL, score DOUBLE, topic STRING, part INT, off BIGINT,
                  ts TIMESTAMP_LTZ(3), ts_type STRING)
  WITH (${icebergTable('raw_{topic}')});
INSERT INTO raw SELECT * FROM src;
`);
  await runKilledMidFeed(p, cluster, 1);
  for (const [i, topic] of topics.entries()) {
    // What Kafka holds for the topic: each record's partition and offset, by its seq.
    const where = new Map(consumeTopic(cluster.bootstrap, topic)
      .map((x) => [JSON.parse(x.value).seq, `${x.partition}/${x.offset}`]));
    const rows = await icebirdRows({ location: path.join(p.wh, 'demo', `raw_${topic}`) });
    const seqs = rows.map((x) => Number(x.seq)).sort((a, b) => a - b);
    const want = Array.from({ length: per }, (_, k) => i * per + k + 1);
    t.diagnostic(`raw_${topic}: ${rows.length} rows`);
    assert.deepEqual(seqs, want, `raw_${topic}: every record of ${topic} once`);
    for (const x of rows) {
      assert.equal(x.topic, topic);
      assert.equal(`${x.part}/${x.off}`, where.get(Number(x.seq)), `seq ${x.seq}: partition/offset`);
      const ms = new Date(x.ts).getTime();
      assert.ok(ms >= before - 60_000 && ms <= Date.now(), `seq ${x.seq}: ts ${x.ts}`);
      assert.equal(x.ts_type, 'CreateTime');  // the producer set it
    }
    // The watermark from the Kafka timestamps reached each table's commits.
    const d = floe(['table', 'describe', `demo.raw_${topic}`, '--warehouse', p.wh]);
    assert.match(d.out, /"floe\.watermark":\s*"\d+"/, `raw_${topic} commits carry a watermark`);
  }
});
