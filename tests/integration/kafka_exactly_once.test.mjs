// Kafka -> Iceberg exactly once, shown by failure. A dev cluster (`floe kafka dev`, librdkafka's
// mock cluster) runs as its own process; `floe kafka produce` loads 12,000 JSON records with a
// seq over 3 partitions; bounded jobs ('scan.bounded.mode' = 'latest-offset') land them in an
// Iceberg table through `floe run`; workers are SIGKILLed mid-feed and at named crash points;
// `floe table verify` counts every seq (append) or compares the table with the expected last
// revision per key (upsert). The reference study's offsets experiment: group offsets rewound to
// 0 behind the job's back, then (a) a restore from the retained checkpoint and (b) a fresh job
// with 'group-offsets': neither replays. A librdkafka property refused only when the worker
// creates its client fails the run at once. FLOE_BIN points at the floe binary.
//
// What the mock cannot emulate, and so what these tests do not rely on (docs/kafka.md):
// offsets by timestamp ('scan.startup.mode' = 'timestamp' is covered by no test here),
// read_committed isolation and fencing (sink work, later), and standalone offset commits on a
// group that ever had a member (floe's source never joins its group: it assigns partitions, so
// its commits and the test's rewinds are standalone commits on a memberless group). Each
// partition keeps only ~5 MiB: 12,000 records of ~150 B over 3 partitions stay far inside.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, floe, icebergTable, jobRecords, killWorkerMidFeed, moreOptions,
         produce as produceFile, runJob, sandbox, sleep, start, startCluster, stopClusters, tempRoot,
         recordsAdded, verifyLatest, verifySeqs, waitFor, writeJsonl } from './harness.mjs';

const ROOT = tempRoot('floe-kafka-eo-');
const N = 12000;
const COLUMNS = 'seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT NOT NULL, city STRING';

// A dev cluster with the topic `roster` (3 partitions) and `extra` options.
const cluster = (name, extra = []) => startCluster(ROOT, name, { topics: ['roster:3'], args: extra });
after(stopClusters);

// The append feed: seq 1..N, one record per seq (`first` shifts it for a later batch).
function appendRecords(n = N, first = 1) {
  const out = [];
  for (let seq = first; seq < first + n; seq++) {
    out.push({ seq, npi: `N${String(seq % 997).padStart(9, '0')}`, revision: seq, city: `city-${seq % 31}` });
  }
  return out;
}

// The upsert feed: N records over KEYS npis, REVISIONS_PER_KEY (about 12) revisions each. Line i
// goes to partition i % 3 (`floe kafka produce` is round-robin) and its key is i % KEYS with
// KEYS a multiple of 3, so every revision of a key lands in ONE partition, in order: the last
// line of a key is its final state whatever the interleaving of partitions.
const KEYS = 999;
function upsertRecords() {
  const out = [];
  for (let i = 0; i < N; i++) {
    out.push({ seq: i + 1, npi: `N${String(i % KEYS).padStart(9, '0')}`,
               revision: Math.floor(i / KEYS) + 1, city: `city-${(i * 7) % 31}` });
  }
  return out;
}
function upsertExpected() {
  const last = new Map();
  for (const r of upsertRecords()) last.set(r.npi, r);
  return [...last.values()];
}

function produce(bootstrap, { topic = 'roster', records = appendRecords(), props = [] } = {}) {
  const file = writeJsonl(path.join(ROOT, `${topic}-${records[0].seq}-${records.length}.jsonl`), records);
  produceFile(bootstrap, topic, file, props.flatMap((p) => ['--property', p]));
}

// `dedup`: the feed keeps the first record of each seq, in arrival order (Flink's proctime
// deduplication), into the append table.
function pipeline(name, { interval = '200 ms', sourceProps = {}, topic = 'roster', bounded = true,
                          upsert = false, sets = '', dedup = false } = {}) {
  const p = { ...sandbox(ROOT, name), group: `floe-${name}`, topic };
  fs.writeFileSync(p.job, `-- ${name}: kafka -> iceberg ${upsert ? 'upsert' : 'append'}, \
${bounded ? 'bounded at the offsets seen at start' : 'unbounded'}
${checkpointSets(interval)}
${sets}
CREATE TABLE roster (${COLUMNS}${dedup ? ', pt AS PROCTIME()' : ''})
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'format' = 'json',
        'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = '${p.group}',
        'scan.startup.mode' = '\${MODE}', 'scan.bounded.mode' = '${bounded ? 'latest-offset' : 'unbounded'}'${moreOptions(sourceProps)});
CREATE TABLE lake (${COLUMNS}${upsert ? ', PRIMARY KEY (npi) NOT ENFORCED' : ''})
  WITH (${icebergTable(name)}, 'sink.parallelism' = '2'${
          upsert ? ", 'write.upsert.enabled' = 'true'" : ''});
INSERT INTO lake ${dedup ? `SELECT seq, npi, revision, city FROM (SELECT *,
  ROW_NUMBER() OVER (PARTITION BY seq ORDER BY pt) AS rn FROM roster) WHERE rn = 1`
    : 'SELECT * FROM roster'};
`);
  return p;
}

function run(p, kafka, { crashAt, chk = p.chk, mode = 'earliest-offset', from } = {}) {
  return runJob(p, { CHK: chk, WH: p.wh, KAFKA: kafka, MODE: mode }, { crashAt, from });
}

const verify = (p, last = N) => verifySeqs(p, last);

// Upsert: the table equals the last revision of every key (same seq, revision, city), no key
// twice, no key missing or extra.
function verifyUpsert(p) {
  return verifyLatest(p, writeJsonl(path.join(p.dir, 'expected.jsonl'), upsertExpected()), 'npi');
}

function groupOffsets(kafka, p, set) {
  const args = ['kafka', 'offsets', '--bootstrap', kafka, '--group', p.group, '--topic', p.topic];
  if (set) args.push('--set', set);
  const r = floe(args);
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out);
}

let fast;  // the dev cluster every crash-point test reads; produced once
async function fastCluster() {
  if (!fast) {
    fast = await cluster('fast', ['--topic', 'live:3', '--topic', 'paced:3', '--topic', 'small:1']);
    produce(fast.bootstrap);
  }
  return fast.bootstrap;
}

// 20 ms per broker response and ~10-record fetches keep a bounded job reading for seconds, so
// a kill lands mid-feed. Nothing asserts on timing: a late kill only weakens a test.
let slow;
async function slowCluster() {
  if (!slow) {
    slow = await cluster('slow', ['--rtt-ms', '20', '--topic', 'upserts:3', '--topic', 'dupes:3']);
    const props = ['batch.num.messages=10', 'linger.ms=0'];
    produce(slow.bootstrap, { props });
    produce(slow.bootstrap, { topic: 'upserts', records: upsertRecords(), props });
    // An at-least-once feed: every seq, then every third one again (a producer's retries).
    const records = appendRecords();
    produce(slow.bootstrap, { topic: 'dupes', records: [...records, ...records.filter((r) => r.seq % 3 === 0)],
                              props });
  }
  return slow.bootstrap;
}
const SLOW_FETCH = { 'properties.max.partition.fetch.bytes': '1024' };

async function killMidFeed(p, r) {
  await killWorkerMidFeed(p);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
}

const CRASH_POINTS = ['after-data-file-written:1', 'after-checkpoint-complete-before-commit:1',
                      'after-commit-before-record:1', 'worker-checkpoint-completed:1'];
for (const point of CRASH_POINTS) {
  const name = `kafka_crash_${point.split(':')[0].replace(/-/g, '_')}`;
  test(`${name}: worker SIGKILLed at ${point}, restarted: every seq exactly once`, async (t) => {
    const kafka = await fastCluster();
    const p = pipeline(name);
    const { code, err } = await run(p, kafka, { crashAt: point }).done;
    assert.equal(code, 0, err);
    assert.match(err, /killed by SIGKILL/, `crash point ${point} was never reached:\n${err}`);
    t.diagnostic(verify(p));
    // Group offsets were committed after the checkpoints (monitoring only): at the end.
    assert.deepEqual(groupOffsets(kafka, p), { 0: N / 3, 1: N / 3, 2: N / 3 });
  });
}

test('group offsets rewound behind the job, fresh job with group-offsets: the table holds the positions, no duplicate', async () => {
  const kafka = await fastCluster();
  const p = pipeline('kafka_group_offsets');
  const r1 = await run(p, kafka).done;
  assert.equal(r1.code, 0, r1.err);
  verify(p);
  assert.deepEqual(groupOffsets(kafka, p), { 0: N / 3, 1: N / 3, 2: N / 3 });
  // Rewind the group to zero behind the job's back (the study's Flink run doubled the table here).
  assert.deepEqual(groupOffsets(kafka, p, '0:0,1:0,2:0'), { 0: 0, 1: 0, 2: 0 });
  const r2 = await run(p, kafka, { chk: path.join(p.dir, 'chk-fresh'), mode: 'group-offsets' }).done;
  assert.equal(r2.code, 0, r2.err);
  assert.match(r2.err, /sources start from the table's positions/, r2.err);
  // Before: "no checkpoint to restore: starting from the beginning" beside the line above.
  assert.match(r2.err, /no checkpoint to restore: sources start from the positions the table holds; the next checkpoint is \d+/, r2.err);
  assert.doesNotMatch(r2.err, /starting from the beginning/, r2.err);
  verify(p);
  // The finished job committed its positions to the group again.
  assert.deepEqual(groupOffsets(kafka, p), { 0: N / 3, 1: N / 3, 2: N / 3 });
});

test('worker SIGKILLed at a random point mid-feed (slow dev cluster): every seq exactly once', async (t) => {
  const kafka = await slowCluster();
  const p = pipeline('kafka_kill_mid_feed', { sourceProps: SLOW_FETCH });
  await killMidFeed(p, run(p, kafka));
  t.diagnostic(verify(p));
});

// Deduplication makes an at-least-once feed exact: the first record of each seq, kept in keyed
// state that a checkpoint restores, so a replay after the kill neither lets a duplicate through
// nor loses a first record.
test('proctime deduplication of a feed with duplicates, worker SIGKILLed mid-feed: every seq exactly once', async (t) => {
  const kafka = await slowCluster();
  const p = pipeline('kafka_dedup_kill_mid_feed', { topic: 'dupes', dedup: true, sourceProps: SLOW_FETCH });
  await killMidFeed(p, run(p, kafka));
  t.diagnostic(verify(p));
});

test('upsert: worker SIGKILLed at a random point mid-feed: the table is the last revision per key', async (t) => {
  // 12,000 records, 999 keys, ~12 revisions each; PRIMARY KEY (npi), 'write.upsert.enabled'.
  // A replay after the kill re-applies revisions the table may already hold: equality deletes by
  // key make that harmless only if no revision is committed twice or lost across the restore.
  const kafka = await slowCluster();
  const p = pipeline('kafka_upsert_kill_mid_feed', { topic: 'upserts', upsert: true,
                                                      sourceProps: SLOW_FETCH });
  await killMidFeed(p, run(p, kafka));
  t.diagnostic(verifyUpsert(p));
  // Every revision's fate: the final table shows only the last one per key, so count what the
  // commits added: each of the N records written once (a replay committed twice adds more, a lost
  // one fewer), whichever snapshot took it.
  const { added, snapshots } = recordsAdded(p);
  assert.equal(added, N, `records added over ${snapshots} snapshots`);
  t.diagnostic(`${snapshots} snapshots added ${added} records`);
  // Every record was read once into the committed positions: the group is at the end.
  assert.deepEqual(groupOffsets(kafka, p), { 0: N / 3, 1: N / 3, 2: N / 3 });
});

function cancel(p) {
  const rec = jobRecords(p.home)[0];
  const r = floe(['cancel', rec.job_id], { FLOE_HOME: p.home });
  assert.equal(r.code, 0, r.err);
}
const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);

test('group offsets rewound behind the job, restore from the retained checkpoint: nothing replayed', async (t) => {
  // The study's experiment (a). An unbounded job with retained checkpoints reads `live`; once
  // the table holds everything it is cancelled (checkpoints retained), the group's offsets are
  // set to 0, more records arrive, and `floe run --from latest` restores the checkpoint.
  const kafka = await fastCluster();
  const M = 3000;
  produce(kafka, { topic: 'live' });
  const p = pipeline('kafka_restore_retained', { topic: 'live', bounded: false, sets:
    "SET 'execution.checkpointing.externalized-checkpoint-retention' = 'RETAIN_ON_CANCELLATION';\n" +
    "SET 'execution.checkpointing.num-retained' = '2';" });
  // The study's table: step | committed offsets summed | rows in the table | duplicate rows.
  const steps = [];
  const step = (what, last) => {
    const offsets = groupOffsets(kafka, p);
    const report = verify(p, last);  // every seq 1..last exactly once, or it fails
    const rows = Number(report.match(/: (\d+) rows;/)[1]);
    assert.equal(rows, last, report);
    steps.push(`${what} | ${sum(offsets)} | ${rows} | 0`);
    return offsets;
  };

  const r1 = run(p, kafka);
  await waitFor('the group at the end of the log', () => sum(groupOffsets(kafka, p)) === N);
  cancel(p);
  const d1 = await r1.done;
  assert.equal(d1.code, 0, d1.err);
  assert.match(d1.err, /starts at \{"parallelism":1,"topics":\{"live":\{"0":0,"1":0,"2":0\}\}\} \(from 'scan.startup.mode'\)/, d1.err);
  assert.match(d1.err, /cancelled/, d1.err);
  step('the first job, all events landed', N);

  // Rewind behind the job's back, then more data arrives while it is down.
  assert.deepEqual(groupOffsets(kafka, p, '0:0,1:0,2:0'), { 0: 0, 1: 0, 2: 0 });
  step('committed offsets rewound to the start of the log', N);
  produce(kafka, { topic: 'live', records: appendRecords(M, N + 1) });

  const r2 = run(p, kafka, { from: 'latest' });
  await waitFor('the restored job at the new end', () => sum(groupOffsets(kafka, p)) === N + M);
  cancel(p);
  const d2 = await r2.done;
  assert.equal(d2.code, 0, d2.err);
  assert.match(d2.err, /restored from checkpoint \d+/, d2.err);
  // (ii) it started where the checkpoint was, not at the rewound 0.
  assert.match(d2.err, new RegExp(`starts at \\{"parallelism":1,"topics":\\{"live":\\{"0":${N / 3},"1":${N / 3},` +
                                  `"2":${N / 3}\\}\\}\\} \\(from the restored checkpoint\\)`), d2.err);
  // (i) no seq twice, none missing, old or new; the group offsets were simply overwritten.
  const after = step('restored from the retained checkpoint (+3,000 new records)', N + M);
  assert.deepEqual(after, { 0: (N + M) / 3, 1: (N + M) / 3, 2: (N + M) / 3 });
  t.diagnostic('step | committed offsets summed | rows in the table | duplicate rows');
  for (const line of steps) t.diagnostic(line);
  if (process.env.FLOE_TEST_VERBOSE) t.diagnostic(d1.err + d2.err);
});

test('a kafka property librdkafka refuses only at client creation fails the run at once, not after every attempt', async (t) => {
  // 'fetch.max.bytes' < 'message.max.bytes' passes rd_kafka_conf_set (checked at plan time)
  // and is refused by rd_kafka_new in the worker. Restarting cannot fix that: one attempt.
  const kafka = await fastCluster();
  const p = pipeline('kafka_bad_property', { sourceProps: { 'properties.fetch.max.bytes': '1024' } });
  const { code, err } = await run(p, kafka).done;
  assert.equal(code, 1, err);
  assert.match(err, /fetch\.max\.bytes/, err);
  assert.match(err, /exit code 3: .*not restarted: refused before its first checkpoint/, err);
  assert.equal((err.match(/worker \d+ started/g) || []).length, 1, err);
  assert.doesNotMatch(err, /restarting in/, err);
  const rec = jobRecords(p.home)[0];
  assert.equal(rec.state, 'FAILED');
  assert.equal(rec.restarts, 0);
  assert.match(rec.message, /fetch\.max\.bytes/);
  t.diagnostic(err);
});

// A produce the cluster did not keep whole (the dev cluster's retention, ~5 MiB per partition)
// fails naming the partition and how many of its records were dropped, instead of leaving a
// shorter topic than the file for a test to count against.
test('floe kafka produce fails when the cluster dropped records it wrote', async () => {
  const kafka = await fastCluster();
  const file = path.join(ROOT, 'large.jsonl');
  const line = JSON.stringify({ pad: 'x'.repeat(1000) });
  fs.writeFileSync(file, `${line}\n`.repeat(7000));  // ~7 MB into one partition
  const r = floe(['kafka', 'produce', '--bootstrap', kafka, '--topic', 'small', file]);
  assert.equal(r.code, 1, r.out);
  assert.match(r.err, /topic 'small' partition 0 now starts at offset [1-9]\d*: its retention dropped [1-9]\d* of the records written here from offset 0/, r.err);
});

test('floe kafka produce --max-lag waits for the group to commit, then goes on', async () => {
  // The dev cluster drops records beyond ~5 MiB per partition: benchmarks pace the producer by
  // the job's committed offsets. Here nobody consumes: 30 records, at most 5 per partition
  // ahead of the group, so the producer must stop at 15 until the group's offsets move.
  const kafka = await fastCluster();
  const file = writeJsonl(path.join(ROOT, 'paced.jsonl'), appendRecords(30));
  const group = 'floe-paced';
  const producer = start(['kafka', 'produce', '--bootstrap', kafka, '--topic', 'paced', '--group', group,
                          '--max-lag', '5', file], { stdout: 'pipe' });
  let exited = null;
  const done = producer.done.then(({ code }) => (exited = code));
  await sleep(3000);
  assert.equal(exited, null, `the producer did not wait for the group: ${producer.out} ${producer.err}`);
  const p = { group, topic: 'paced' };
  assert.deepEqual(groupOffsets(kafka, p, '0:10,1:10,2:10'), { 0: 10, 1: 10, 2: 10 });
  assert.equal(await done, 0, producer.err);
  assert.equal(producer.out.trim(), '30');
  assert.match(producer.err, /waited for group 'floe-paced' [1-9]\d* time\(s\) \(--max-lag 5\)/, producer.err);
  // Refused without a group to pace by.
  const bad = floe(['kafka', 'produce', '--bootstrap', kafka, '--topic', 'paced', '--max-lag', '5', file]);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /--max-lag N \(>= 1\) and --group G go together/);
});
