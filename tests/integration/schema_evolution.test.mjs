// 'sink.schema-evolution' = 'add-columns' (docs/connectors.md, "Schema evolution"): a job writes
// a table, a second job declares two more columns and an INT widened to BIGINT; the table evolves
// at its start and icebird, which floe did not write, reads the old and the new files together:
// the old rows with nulls in the new columns and their INT values as BIGINT. Then the same
// mid-stream on Kafka, across a savepoint, with a SIGKILL.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, floe, icebergTable, jobRecords, killWorkerMidFeed, produce, runJob, runs, sandbox,
         startCluster, stopClusters, tempRoot, waitFor, writeJsonl } from './harness.mjs';
import { icebirdRows } from './icebird_read.mjs';

const ROOT = tempRoot('floe-schema-evolution-');
after(stopClusters);

// Each input file is its own pipeline (a 'sink-id' each, as two loads into one table need).
function job(p, input, columns, evolve) {
  fs.writeFileSync(p.job, `${checkpointSets('200 ms')}
CREATE TABLE src (${columns}) WITH ('connector' = 'filesystem', 'path' = '${input}', 'format' = 'json');
CREATE TABLE events (${columns})
  WITH (${icebergTable(p.name)}, 'sink-id' = '${path.basename(input)}'${evolve ? ", 'sink.schema-evolution' = 'add-columns'" : ''});
INSERT INTO events SELECT * FROM src;
`);
}

test('two columns added and an INT widened between runs: icebird reads old and new files together', async () => {
  const p = sandbox(ROOT, 'evolving');
  const V1 = 'seq BIGINT NOT NULL, n INT';
  const V2 = 'seq BIGINT NOT NULL, n BIGINT, email STRING, score DOUBLE';
  const old = writeJsonl(path.join(p.dir, 'v1.jsonl'),
                         Array.from({ length: 1000 }, (_, i) => ({ seq: i + 1, n: i })));
  job(p, old, V1, false);
  let r = await runJob(p, { CHK: p.chk, WH: p.wh }).done;
  assert.equal(r.code, 0, r.err);

  const fresh = writeJsonl(path.join(p.dir, 'v2.jsonl'), Array.from({ length: 1000 }, (_, i) => (
    { seq: 1001 + i, n: 2 ** 40 + i, email: `u${1001 + i}@example.com`, score: i / 8 })));
  // Without the option the new declaration is refused, naming it.
  job(p, fresh, V2, false);
  r = await runJob(p, { CHK: p.chk, WH: p.wh }).done;
  assert.notEqual(r.code, 0);
  assert.match(r.err, /column 'n' is declared BIGINT but the table has INT.*'sink\.schema-evolution' = 'add-columns'/);
  job(p, fresh, V2, true);
  r = await runJob(p, { CHK: p.chk, WH: p.wh }).done;
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /schema evolved to schema id 1: widened column 'n' INT -> BIGINT, added column 'email' STRING \(id 3\), added column 'score' DOUBLE \(id 4\)/);

  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  assert.equal(rows.length, 2000);
  const bySeq = new Map(rows.map((x) => [Number(x.seq), x]));
  for (let seq = 1; seq <= 2000; seq++) {
    const x = bySeq.get(seq);
    assert.ok(x, `seq ${seq}`);
    if (seq <= 1000) {
      assert.equal(Number(x.n), seq - 1);
      assert.equal(x.email ?? null, null);
      assert.equal(x.score ?? null, null);
    } else {
      assert.equal(BigInt(x.n), 2n ** 40n + BigInt(seq - 1001));
      assert.equal(x.email, `u${seq}@example.com`);
      assert.equal(x.score, (seq - 1001) / 8);
    }
  }
  // floe's own scan reads the same, the old files through the new schema.
  const scan = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
  assert.equal(scan.code, 0, scan.err);
  const scanned = scan.out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.equal(scanned.length, 2000);
  assert.deepEqual(scanned.find((x) => x.seq === 7), { seq: 7, n: 6, email: null, score: null });
});

// Mid-stream: a Kafka -> Iceberg job reads records of the old shape, stops with a savepoint; the
// feed gains two fields; the job restarts from the savepoint declaring them (and the evolution
// option), and its worker is SIGKILLed at a random point while it reads the new records. Every
// record is once in the table; the old ones read null in the new columns, the new ones carry
// them; icebird reads both generations of files.
test('two columns added mid-stream: stop with a savepoint, restart with the new columns, SIGKILL: every record once', async (t) => {
  const cluster = await startCluster(ROOT, 'evolve', { topics: ['evolve:2'], args: ['--rtt-ms', '20'] });
  const p = sandbox(ROOT, 'midstream');
  const N = 3000;
  const kafkaJob = (columns, evolve, bounded) => `${checkpointSets('200 ms')}
CREATE TABLE src (${columns})
  WITH ('connector' = 'kafka', 'topic' = 'evolve', 'properties.bootstrap.servers' = '\${KAFKA}',
        'format' = 'json', 'scan.startup.mode' = 'earliest-offset',
        'scan.bounded.mode' = '${bounded ? 'latest-offset' : 'unbounded'}',
        'properties.max.partition.fetch.bytes' = '1024');
CREATE TABLE events (${columns})
  WITH (${icebergTable(p.name)}${evolve ? ", 'sink.schema-evolution' = 'add-columns'" : ''});
INSERT INTO events SELECT * FROM src;
`;
  produce(cluster.bootstrap, 'evolve', writeJsonl(path.join(p.dir, 'old.jsonl'),
    Array.from({ length: N }, (_, i) => ({ seq: i + 1, name: `n${i + 1}` }))));
  fs.writeFileSync(p.job, kafkaJob('seq BIGINT NOT NULL, name STRING', false, false));
  const first = runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh });
  await waitFor('the old records committed', () => {
    const d = floe(['table', 'describe', p.table, '--warehouse', p.wh]);
    return d.code === 0 && new RegExp(`"total-records":\\s*"?${N}"?`).test(d.out);
  }, 120_000, 250);
  const rec = jobRecords(p.home)[0];
  const stop = floe(['stop', rec.job_id, '--savepoint', path.join(p.dir, 'sp')], { FLOE_HOME: p.home });
  assert.equal(stop.code, 0, stop.err);
  const savepoint = stop.out.trim().split('\n').pop();
  assert.equal((await first.done).code, 0);

  produce(cluster.bootstrap, 'evolve', writeJsonl(path.join(p.dir, 'new.jsonl'),
    Array.from({ length: N }, (_, i) => ({ seq: N + i + 1, name: `n${N + i + 1}`, email: `e${N + i + 1}`, score: i / 2 }))),
    ['--property', 'batch.num.messages=50']);
  fs.writeFileSync(p.job, kafkaJob('seq BIGINT NOT NULL, name STRING, email STRING, score DOUBLE', true, true));
  const second = runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }, { from: savepoint });
  await killWorkerMidFeed(p);
  const r = await second.done;
  assert.equal(r.code, 0, r.err);
  assert.match(r.err, /killed by SIGKILL/, r.err);
  assert.match(r.err, /schema evolved to schema id 1: added column 'email' STRING \(id 3\), added column 'score' DOUBLE \(id 4\)/);

  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  const seen = new Map();
  for (const x of rows) seen.set(Number(x.seq), (seen.get(Number(x.seq)) || 0) + 1);
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  const missing = [];
  for (let s = 1; s <= 2 * N; s++) if (!seen.has(s)) missing.push(s);
  t.diagnostic(`${rows.length} rows, ${duplicates} duplicated seqs, ${missing.length} missing`);
  assert.equal(duplicates, 0);
  assert.deepEqual(missing, []);
  for (const x of rows) {
    const seq = Number(x.seq);
    assert.equal(x.email ?? null, seq <= N ? null : `e${seq}`, `email of ${seq}`);
  }
});

// Evolution driven by the records (docs/connectors.md, "Schema evolution"): the job declares two
// columns and copies them with SELECT *; after the first records, the feed's records carry three
// more fields (a string, an integral number, an array). The table grows by them (STRING, BIGINT,
// and STRING holding the array's JSON) in the commits of the first rows that carry them, never in
// a commit of its own; the worker is SIGKILLed at a random point, and crashes at named points
// around the first grown files' commit (between the checkpoint that holds them and their commit,
// the restored committer commits them with the grown schema and the restored writer takes the
// ids it had given, from its state).
// Every record is once in the table (icebird), the early ones null in the new columns.
test('records gain three fields mid-stream: the table grows with the rows that carry them; SIGKILL at random and at crash points: every record once', async (t) => {
  const cluster = await startCluster(ROOT, 'grow', { topics: ['grow:2'], args: ['--rtt-ms', '20'] });
  const OLD = 300;
  const TOTAL = 6000;
  const record = (seq) => (seq <= OLD ? { seq, name: `n${seq}` }
    : { seq, name: `n${seq}`, email: `e${seq}`, visits: seq * 2, tags: [`t${seq % 3}`, 'x'] });
  const feed = writeJsonl(path.join(ROOT, 'grow.jsonl'),
                          Array.from({ length: TOTAL }, (_, i) => record(i + 1)));
  produce(cluster.bootstrap, 'grow', feed, ['--property', 'batch.num.messages=50']);
  const cases = [['random', undefined], ['before-commit', 'after-checkpoint-complete-before-commit:2'],
                 ['before-commit-later', 'after-checkpoint-complete-before-commit:3'],
                 ['file-written', 'after-data-file-written:3']];
  for (const [name, crashAt] of cases) {
    const p = sandbox(ROOT, `grow_${name.replace(/-/g, '_')}`);
    fs.writeFileSync(p.job, `${checkpointSets('200 ms')}
CREATE TABLE src (seq BIGINT NOT NULL, name STRING)
  WITH ('connector' = 'kafka', 'topic' = 'grow', 'properties.bootstrap.servers' = '\${KAFKA}',
        'format' = 'json', 'scan.startup.mode' = 'earliest-offset',
        'scan.bounded.mode' = 'latest-offset', 'properties.max.partition.fetch.bytes' = '1024');
CREATE TABLE events (seq BIGINT NOT NULL, name STRING)
  WITH (${icebergTable(p.name)}, 'sink.schema-evolution' = 'add-columns');
INSERT INTO events SELECT * FROM src;
`);
    const run = runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }, { crashAt });
    if (!crashAt) await killWorkerMidFeed(p, 1);
    const r = await run.done;
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /killed by SIGKILL/, `never killed (${crashAt || 'at random'})`);
    assert.match(r.err, /grew the schema by its rows' fields/);

    const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
    const seen = new Map();
    for (const x of rows) seen.set(Number(x.seq), (seen.get(Number(x.seq)) || 0) + 1);
    const duplicates = [...seen.values()].filter((n) => n > 1).length;
    const missing = [];
    for (let s = 1; s <= TOTAL; s++) if (!seen.has(s)) missing.push(s);
    t.diagnostic(`${name}: ${rows.length} rows, ${duplicates} duplicated seqs, missing: ${runs(missing) || 'none'}`);
    assert.equal(duplicates, 0, name);
    assert.equal(runs(missing), '', name);
    for (const x of rows) {
      const seq = Number(x.seq);
      const want = record(seq);
      assert.equal(x.name, want.name);
      assert.equal(x.email ?? null, want.email ?? null, `email of ${seq}`);
      assert.equal(x.visits == null ? null : Number(x.visits), want.visits ?? null, `visits of ${seq}`);
      assert.equal(x.tags ?? null, want.tags ? JSON.stringify(want.tags) : null, `tags of ${seq}`);
    }

    // The table's schema: the declared columns, then the grown ones (optional, new ids); each
    // snapshot names the schema its files were committed with, and every metadata version is a
    // snapshot's commit (none holds a schema alone).
    const d = floe(['table', 'describe', p.table, '--warehouse', p.wh]);
    assert.equal(d.code, 0, d.err);
    const location = JSON.parse(d.out.replace(/"((?:current-|parent-)?snapshot-id)":\s*(-?\d+)/g, '"$1":"$2"'))['metadata-location'];
    const md = JSON.parse(fs.readFileSync(location.replace(/^file:\/\//, ''), 'utf8')
      .replace(/"((?:current-|parent-)?snapshot-id)":\s*(-?\d+)/g, '"$1":"$2"'));
    const current = md.schemas.find((s) => s['schema-id'] === md['current-schema-id']);
    const fields = Object.fromEntries(current.fields.map((f) => [f.name, f]));
    assert.deepEqual(current.fields.slice(0, 2).map((f) => f.name), ['seq', 'name']);
    assert.equal(fields.email.type, 'string');
    assert.equal(fields.visits.type, 'long');
    assert.equal(fields.tags.type, 'string');
    for (const f of ['email', 'visits', 'tags']) assert.equal(fields[f].required, false, f);
    const grown = md.schemas.find((s) => s.fields.some((f) => f.name === 'email'))['schema-id'];
    const first = md.snapshots.find((s) => s['schema-id'] >= grown);
    assert.ok(Number(first.summary['added-records']) > 0, 'the grown schema came with rows');
    const versions = fs.readdirSync(path.join(p.wh, 'demo', p.name, 'metadata'))
      .map((f) => /^v(\d+)\.metadata\.json$/.exec(f)).filter(Boolean).map((m) => Number(m[1]));
    t.diagnostic(`${name}: ${md.snapshots.length} snapshots, metadata v${Math.max(...versions)}, schemas ${md.schemas.length}`);
    assert.equal(Math.max(...versions), md.snapshots.length + 1, 'a metadata version per snapshot, after the creation');
  }
});
