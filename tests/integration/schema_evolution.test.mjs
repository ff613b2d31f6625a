// 'sink.schema-evolution' = 'add-columns' (docs/connectors.md, "Schema evolution"): a job writes
// a table, a second job declares two more columns and an INT widened to BIGINT; the table evolves
// at its start and icebird, which floe did not write, reads the old and the new files together:
// the old rows with nulls in the new columns and their INT values as BIGINT. Then the same
// mid-stream on Kafka, across a savepoint, with a SIGKILL.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, floe, icebergTable, jobRecords, killWorkerMidFeed, produce, runJob, sandbox, startCluster,
         stopClusters, tempRoot, waitFor, writeJsonl } from './harness.mjs';
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
