// 'scan.bad-records' on a Kafka source (docs/kafka.md, "Bad records"), against the mock cluster
// run as its own process:
// * 'dead-letter' with 1% poison records of four kinds and the worker SIGKILLed at a random point
//   mid-feed: every good record once in the table, every bad one once in the dead-letter table
//   with its topic, partition, offset, value and the reason, both read back by icebird; the
//   snapshots of both tables add each record once; `floe table scan` shows the reason.
// * 'skip' on an unbounded job: the bad records are counted in /metrics (numRecordsInErrors)
//   and the good ones land.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, floe, icebergTable, jobRecords, killWorkerMidFeed, produce, recordsAdded,
         runJob, runs, sandbox, startCluster, stopClusters, tempRoot, waitFor, writeJsonl } from './harness.mjs';
import { icebirdRows } from './icebird_read.mjs';

const ROOT = tempRoot('floe-kafka-dead-letter-');
const N = 6000;
after(stopClusters);

// 1% of the seqs, spread by a fixed stride, each bad in one of four ways, and 1% more whose
// computed column fails (`code` is no number); the seq is in the value so the dead-letter table's
// rows can be told apart.
const isBad = (seq) => seq % 100 === 37;
const isUncomputable = (seq) => seq % 100 === 71;
function record(seq) {
  if (isUncomputable(seq)) return { seq, name: `user-${seq}`, score: seq / 4, code: `x${seq}` };
  if (!isBad(seq)) return { seq, name: `user-${seq}`, score: seq / 4, code: String(seq % 1000) };
  switch (Math.floor(seq / 100) % 4) {
    case 0: return `not json ${seq}`;
    case 1: return { seq: `s${seq}`, name: `user-${seq}` };  // a string where BIGINT is
    case 2: return { name: `user-${seq}`, score: seq };       // seq missing: NOT NULL
    default: return `{"seq":${seq},"name":"user-${seq}"`;     // cut short
  }
}

// Duplicates and missing runs of `got` against `want` (both arrays of numbers).
function compare(got, want) {
  const seen = new Map();
  for (const x of got) seen.set(x, (seen.get(x) || 0) + 1);
  const duplicates = [...seen.values()].reduce((a, n) => a + (n > 1 ? n - 1 : 0), 0);
  const missing = want.filter((x) => !seen.has(x)).sort((a, b) => a - b);
  const extra = [...seen.keys()].filter((x) => !want.includes(x));
  return { duplicates, missing: runs(missing), extra: extra.length };
}

const COLUMNS = 'seq BIGINT NOT NULL, name STRING, score DOUBLE, code STRING';
const DEAD_COLUMNS = `source_table STRING, kafka_topic STRING, kafka_partition INT, kafka_offset BIGINT,
  kafka_timestamp TIMESTAMP_LTZ(3), kafka_key BYTES, kafka_value BYTES, kafka_headers STRING,
  error_message STRING`;

function deadLetterJob(p, topic, { interval = '200 ms', policy = 'dead-letter', bounded = true, more = '' } = {}) {
  const dead = policy === 'dead-letter';
  return `${checkpointSets(interval)}
CREATE TABLE src (${COLUMNS}, code_n AS CAST(code AS INT))
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'properties.bootstrap.servers' = '\${KAFKA}',
        'format' = 'json', 'scan.startup.mode' = 'earliest-offset',
        'scan.bounded.mode' = '${bounded ? 'latest-offset' : 'unbounded'}',
        'scan.bad-records' = '${policy}'${dead ? ", 'scan.bad-records.table' = 'bad'" : ''}${more});
CREATE TABLE users (${COLUMNS}, code_n INT) WITH (${icebergTable(p.name)});
${dead ? `CREATE TABLE bad (${DEAD_COLUMNS}) WITH (${icebergTable(`${p.name}_bad`)});` : ''}
INSERT INTO users SELECT * FROM src;
`;
}

// The seq of a dead letter: the first number in its raw value (icebird hands BYTES back as text).
const seqOf = (x) => Number(/(\d+)/.exec(Buffer.from(x.kafka_value).toString('utf8'))[1]);

// Both tables of a dead-letter run, read by icebird: every good seq once in the table, every
// bad one once in the dead-letter table (duplicates, missing runs and extras asserted away).
async function bothTablesOnce(t, p, seqs) {
  const good = seqs.filter((s) => !isBad(s) && !isUncomputable(s));
  const bad = seqs.filter((s) => isBad(s) || isUncomputable(s));
  const rows = await icebirdRows({ location: path.join(p.wh, 'demo', p.name) });
  const g = compare(rows.map((x) => Number(x.seq)), good);
  t.diagnostic(`table: ${rows.length} rows, ${g.duplicates} duplicates, missing [${g.missing}]`);
  assert.deepEqual(g, { duplicates: 0, missing: '', extra: 0 });
  const letters = await icebirdRows({ location: path.join(p.wh, 'demo', `${p.name}_bad`) });
  const b = compare(letters.map(seqOf), bad);
  t.diagnostic(`dead letters: ${letters.length} rows, ${b.duplicates} duplicates, missing [${b.missing}]`);
  assert.deepEqual(b, { duplicates: 0, missing: '', extra: 0 });
  return { good, bad, rows, letters };
}

// 1% poison through a dead-letter job on the slow cluster, the worker SIGKILLed at `crashAt` (a
// crash point; its hit count counts both tables' committers) or, without it, at a random point
// mid-feed; then both tables checked.
async function poisonRun(t, name, crashAt) {
  // 20 ms per broker response and 1 KiB fetches keep the bounded job reading for seconds.
  const cluster = await startCluster(ROOT, name, { topics: ['poison:3'], args: ['--rtt-ms', '20'] });
  const p = sandbox(ROOT, name);
  const seqs = Array.from({ length: N }, (_, i) => i + 1);
  produce(cluster.bootstrap, 'poison', writeJsonl(path.join(p.dir, 'in.jsonl'), seqs.map(record)),
          ['--property', 'batch.num.messages=50']);
  fs.writeFileSync(p.job, deadLetterJob(p, 'poison',
    { more: ", 'properties.max.partition.fetch.bytes' = '1024'" }));
  const r = runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh }, { crashAt });
  if (!crashAt) await killWorkerMidFeed(p);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, `never killed (${crashAt || 'at random'}):\n${err}`);
  assert.match(err, /dead-lettered a bad record \('scan\.bad-records'\): kafka record topic 'poison' partition \d offset \d+/, err);

  const { good, bad, rows, letters } = await bothTablesOnce(t, p, seqs);
  assert.ok(rows.every((x) => x.code_n === Number(x.code)));
  const why = { 0: /JSON|json|parse/i, 1: /field 'seq'/, 2: /seq/, 3: /./ };
  for (const x of letters) {
    const seq = seqOf(x);
    assert.equal(x.source_table, 'src');
    if (isUncomputable(seq)) {
      // A row past the source: its decoded columns, no coordinates.
      assert.deepEqual(JSON.parse(Buffer.from(x.kafka_value).toString('utf8')),
                       { seq, name: `user-${seq}`, score: seq / 4, code: `x${seq}` });
      assert.equal(x.kafka_topic, null);
      assert.match(x.error_message, new RegExp(`computed column 'code_n': CAST\\(code AS INT\\) cannot be evaluated for the value 'x${seq}'`));
      continue;
    }
    assert.equal(x.kafka_topic, 'poison');
    assert.ok(Number(x.kafka_partition) >= 0 && Number(x.kafka_offset) >= 0, `seq ${seq}`);
    assert.ok(x.kafka_timestamp, `seq ${seq} has its Kafka timestamp`);
    assert.match(x.error_message, new RegExp(`partition ${x.kafka_partition} offset ${x.kafka_offset}: `));
    assert.match(x.error_message, why[Math.floor(seq / 100) % 4], x.error_message);
  }
  // Each snapshot of either table added its records once (a replayed commit would add more).
  assert.equal(recordsAdded(p).added, good.length);
  assert.equal(recordsAdded({ ...p, table: `demo.${p.name}_bad` }).added, bad.length);
  return p;
}

test('dead-letter, 1% poison, worker SIGKILLed mid-feed: every good record once, every bad one once beside it', async (t) => {
  const p = await poisonRun(t, 'poison');
  // `floe table scan` shows why each record failed.
  const scan = floe(['table', 'scan', `demo.${p.name}_bad`, '--warehouse', p.wh]);
  assert.equal(scan.code, 0, scan.err);
  const scanned = scan.out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.equal(scanned.length, N / 50);
  assert.ok(scanned.every((x) => /kafka record topic 'poison'|computed column/.test(x.error_message)), scan.out.slice(0, 500));
});

// Hit counts over both committers: the second hit lands on one table's commit while the other's
// is done or not yet started.
for (const point of ['after-checkpoint-complete-before-commit:2', 'after-commit-before-record:2',
                     'after-data-file-written:3']) {
  test(`dead-letter, 1% poison, worker SIGKILLed at ${point}: both tables exactly once`, async (t) => {
    await poisonRun(t, `poison_${point.split(':')[0].replace(/-/g, '_')}`, point);
  });
}

// The whole job stops right after a table's commit (restarts off: nothing runs after the kill),
// so the other table may lack that checkpoint's commit; `floe run --from latest` restores the
// checkpoint that holds it: both tables end with every record once.
test('dead-letter, job stopped between the two tables\' commits, resumed with --from latest: both tables exactly once', async (t) => {
  const cluster = await startCluster(ROOT, 'stopped', { topics: ['poison:3'], args: ['--rtt-ms', '20'] });
  const p = sandbox(ROOT, 'stopped');
  const seqs = Array.from({ length: N }, (_, i) => i + 1);
  produce(cluster.bootstrap, 'poison', writeJsonl(path.join(p.dir, 'in.jsonl'), seqs.map(record)),
          ['--property', 'batch.num.messages=50']);
  const sql = deadLetterJob(p, 'poison', { more: ", 'properties.max.partition.fetch.bytes' = '1024'" });
  fs.writeFileSync(p.job, `${sql}\nSET 'restart-strategy.type' = 'none';\n`);
  const vars = { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh };
  const crashed = await runJob(p, vars, { crashAt: 'after-commit-before-record:3' }).done;
  assert.notEqual(crashed.code, 0, 'the job fails: restarts are off');
  assert.match(crashed.err, /killed by SIGKILL/, crashed.err);
  const resumed = await runJob(p, vars, { from: 'latest' }).done;
  assert.equal(resumed.code, 0, resumed.err);
  await bothTablesOnce(t, p, seqs);
});

test("skip: bad records are counted in /metrics as numRecordsInErrors and the good ones land", async () => {
  const cluster = await startCluster(ROOT, 'skip', { topics: ['skipped:2'] });
  const p = sandbox(ROOT, 'skipped');
  const seqs = Array.from({ length: 1000 }, (_, i) => i + 1);
  produce(cluster.bootstrap, 'skipped', writeJsonl(path.join(p.dir, 'in.jsonl'), seqs.map(record)));
  fs.writeFileSync(p.job, deadLetterJob(p, 'skipped', { policy: 'skip', bounded: false }));
  const r = runJob(p, { KAFKA: cluster.bootstrap, CHK: p.chk, WH: p.wh });
  // Records that do not decode (counted by the source) and rows whose computed column fails
  // (counted by the computed columns' operator).
  const bad = seqs.filter((s) => isBad(s) || isUncomputable(s)).length;
  let seen = 'no metrics yet';
  const counted = await waitFor('numRecordsInErrors = the bad records', async () => {
    const rec = jobRecords(p.home)[0];
    if (!rec || !rec.metrics_url) return null;
    try {
      const text = await (await fetch(rec.metrics_url)).text();
      const lines = text.split('\n').filter((l) => /numRecordsInErrors/.test(l) && !l.startsWith('#'));
      const total = lines.reduce((a, l) => a + Number(l.split(/\s+/).at(-1)), 0);
      seen = lines.join('\n');
      return total === bad ? { rec, total } : null;
    } catch { return null; }
  }, 60_000, 250).catch((e) => { throw new Error(`${e.message}; expected ${bad}, /metrics has:\n${seen}`); });
  assert.equal(counted.total, bad);
  await waitFor('the good records committed', () => {
    const d = floe(['table', 'describe', p.table, '--warehouse', p.wh]);
    return d.code === 0 && /"data-records":\s*"?(\d+)/.exec(d.out)?.[1] === String(1000 - bad);
  }, 60_000, 250);
  assert.equal(floe(['cancel', counted.rec.job_id], { FLOE_HOME: p.home }).code, 0);
  await r.done;
});
