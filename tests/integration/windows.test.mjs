// Event time and windows run as a user would: a job file with Flink's SQL (the Flink lesson's
// course tile: WATERMARK, TUMBLE, COUNT(*) per course), `floe run`, then the table read back.
// The expected rows are computed here from the generated events, independently of floe.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, committedView, consumeTopic, floe, icebergTable, jobRecords, killWorkerMidFeed,
         produce, runJob, sandbox, sleep, startCluster, stopClusters, tempRoot, waitFor,
         writeJsonl } from './harness.mjs';
import { MINUTE, expectedSessions, expectedTiles, progressEvents, sessionEvents } from './lesson_events.mjs';

after(stopClusters);

const ROOT = tempRoot('floe-windows-');

// A TIMESTAMP value as floe's JSON writes it ("2026-01-01 00:05:00[.fff...]") as ISO-8601 UTC.
const iso = (v) => new Date(Date.parse(String(v).replace(' ', 'T') + 'Z')).toISOString();

// The rows of a 5-minute tile table as "<key> <window_start ISO> <count>", sorted; asserts every
// window is 5 minutes long.
function tiles(p, keyColumn, countColumn) {
  const s = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
  assert.equal(s.code, 0, s.err);
  return s.out.split('\n').filter(Boolean).map((l) => {
    const row = JSON.parse(l);
    const start = Date.parse(row.window_start + 'Z');
    assert.equal(Date.parse(row.window_end + 'Z') - start, 5 * MINUTE);
    return `${row[keyColumn]} ${new Date(start).toISOString()} ${row[countColumn]}`;
  }).sort();
}

// The Flink lesson's course tile as a job file: `source` and `sink` are the WITH clauses of the
// progress and course_activity_tile tables, `sets` extra SET lines; `computed`: the event time
// is a computed column over epoch milliseconds (ts_ms).
function writeTileJob(p, { source, sink, sets = '', computed = false }) {
  fs.writeFileSync(p.job, `-- the Flink lesson's course tile
${checkpointSets('300 ms')}
${sets}
CREATE TABLE progress (
  event_id STRING, course_id STRING, lesson_id STRING,
  ${computed ? 'ts_ms BIGINT, event_time AS TO_TIMESTAMP_LTZ(ts_ms, 3)' : 'event_time TIMESTAMP(3)'},
  WATERMARK FOR event_time AS event_time - INTERVAL '10' MINUTE
) WITH (${source}, 'format' = 'json', 'json.timestamp-format.standard' = 'ISO-8601');
CREATE TABLE course_activity_tile (
  course_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), event_count BIGINT
) WITH (${sink});
INSERT INTO course_activity_tile
SELECT course_id, window_start, window_end, COUNT(*) AS event_count
FROM TABLE(TUMBLE(TABLE progress, DESCRIPTOR(event_time), INTERVAL '5' MINUTES))
GROUP BY course_id, window_start, window_end;
`);
}

function tileJob(p, eventsFile) {
  writeTileJob(p, { source: `'connector' = 'filesystem', 'path' = '${eventsFile}'`, sink: icebergTable(p.name) });
}

test('course tile: TUMBLE 5 min COUNT(*) per course with a 10-minute watermark lands every window once', async () => {
  const p = sandbox(ROOT, 'tile');
  const events = progressEvents(20000, 9 * MINUTE);
  const file = writeJsonl(path.join(p.dir, 'events.jsonl'), events);
  tileJob(p, file);
  const r = await runJob(p, { CHK: p.chk, WH: p.wh }).done;
  assert.equal(r.code, 0, r.err);
  const got = tiles(p, 'course_id', 'event_count');
  assert.deepEqual(got, expectedTiles(events, 5 * MINUTE));
});

// What Flink gives for the tile over `events` in file order, from its rules alone: each record
// goes out, then the watermark (highest time - 10 min), emitted on every rise
// (pipeline.auto-watermark-interval 0); a record is dropped once the watermark has reached its
// window's last millisecond.
function flinkTiles(events, sizeMs, delayMs) {
  const kept = [];
  let watermark = -Infinity;
  for (const e of events) {
    const t = Date.parse(e.event_time + 'Z');
    const start = t - (((t % sizeMs) + sizeMs) % sizeMs);
    if (start + sizeMs - 1 > watermark) kept.push(e);
    watermark = Math.max(watermark, t - delayMs);
  }
  return expectedTiles(kept, sizeMs);
}

// Late rows follow record order, not files or chunks: the same events, some 25 minutes late,
// as one file and cut into 7 files, give Flink's tiles both times.
test('course tile with late rows: the same windows as one file or as many, late rows dropped as Flink drops them', async () => {
  const events = progressEvents(3000, 9 * MINUTE).map((e, i) => (i % 37 === 36
    ? { ...e, event_time: new Date(Date.parse(e.event_time + 'Z') - 25 * MINUTE).toISOString().replace('Z', '') }
    : e));
  const expected = flinkTiles(events, 5 * MINUTE, 10 * MINUTE);
  assert.ok(expected.reduce((n, l) => n + Number(l.split(' ')[2]), 0) < events.length, 'some rows are late');
  const sets = "SET 'pipeline.auto-watermark-interval' = '0';\nSET 'parallelism.default' = '1';";
  for (const files of [1, 7]) {
    const p = sandbox(ROOT, `tile_late_${files}`);
    const dir = path.join(p.dir, 'events');
    fs.mkdirSync(dir);
    const per = Math.ceil(events.length / files);
    for (let f = 0; f < files; f++) {
      writeJsonl(path.join(dir, `part-${String(f).padStart(2, '0')}.jsonl`), events.slice(f * per, (f + 1) * per));
    }
    writeTileJob(p, { source: `'connector' = 'filesystem', 'path' = '${dir}'`, sink: icebergTable(p.name), sets });
    const r = await runJob(p, { CHK: p.chk, WH: p.wh }).done;
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(tiles(p, 'course_id', 'event_count'), expected, `${files} file(s)`);
  }
});

// One 40 MB file read by every subtask in 4 MiB splits (docs/connectors.md, "Parallel reads"):
// killed mid-read at parallelism 2 (no restart), resumed from that checkpoint at parallelism 3,
// whose subtasks take over the old ones' stripes at their bytes. Every window once, full counts
// (each subtask reads its splits in file order and the window takes the smallest watermark, so
// no row is late).
test('course tile from one file at parallelism 2, killed mid-read, resumed at parallelism 3: every window once', async () => {
  const p = sandbox(ROOT, 'tile_file_parallel');
  const events = progressEvents(400000, 9 * MINUTE);
  const file = writeJsonl(path.join(p.dir, 'events.jsonl'), events);
  assert.ok(fs.statSync(file).size > 9 * 4 * 2 ** 20, 'the file spans ten splits');
  writeTileJob(p, { source: `'connector' = 'filesystem', 'path' = '${file}'`, sink: icebergTable(p.name),
                    sets: "SET 'parallelism.default' = '${PAR}';" });
  fs.writeFileSync(p.job, fs.readFileSync(p.job, 'utf8')
    .replace("'restart-strategy.type' = 'fixed-delay'", "'restart-strategy.type' = 'none'")
    .replace("'execution.checkpointing.interval' = '300 ms'", "'execution.checkpointing.interval' = '20 ms'"));
  const first = await runJob(p, { CHK: p.chk, WH: p.wh, PAR: 2 }, { crashAt: 'keyed-state-written:3' }).done;
  assert.notEqual(first.code, 0, 'the job must die at the crash point, without a restart');
  assert.match(first.err, /killed by SIGKILL/, `the crash point was never reached:\n${first.err}`);
  const second = await runJob(p, { CHK: p.chk, WH: p.wh, PAR: 3 }, { from: 'latest' }).done;
  assert.equal(second.code, 0, second.err);
  assert.match(second.err, /rescaling from 2 to 3 subtasks/, second.err);
  // The kill fell mid-read: a subtask resumes inside the file, not at its end.
  assert.match(second.err, /filesystem source '[^']+': starts at byte \d+ of .* \(\d+ splits to read\) \(from the restored checkpoint\)/,
               second.err);
  assert.deepEqual(tiles(p, 'course_id', 'event_count'), expectedTiles(events, 5 * MINUTE));
});

// ---- exactly once under SIGKILL ------------------------------------------------------------

const ROSTER_COLUMNS = `seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,
  event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING,
  city STRING, zip STRING, phone STRING, active BOOLEAN`;
const EVENTS = 12000;

// The roster events as a plain append job lands them: the input of the expected tiles (read by
// floe's source, aggregated here).
async function rosterEvents() {
  const p = sandbox(ROOT, 'roster_raw');
  fs.writeFileSync(p.job, `${checkpointSets('1 s')}
CREATE TABLE roster (${ROSTER_COLUMNS}) WITH ('connector' = 'roster', 'seed' = '42', 'events' = '${EVENTS}');
CREATE TABLE raw (${ROSTER_COLUMNS}) WITH (${icebergTable(p.name)});
INSERT INTO raw SELECT * FROM roster;
`);
  const r = await runJob(p, { CHK: p.chk, WH: p.wh }).done;
  assert.equal(r.code, 0, r.err);
  const s = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
  assert.equal(s.code, 0, s.err);
  return s.out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

let expectedStateTiles;
async function expectedByState() {
  if (!expectedStateTiles) {
    const rows = await rosterEvents();
    assert.equal(rows.length, EVENTS);
    expectedStateTiles = expectedTiles(rows.map((r) => ({ course_id: String(r.state), event_time: r.event_time })), 5 * MINUTE);
  }
  return expectedStateTiles;
}

// The roster's event time is out of order by up to 10 minutes either way: a 21-minute watermark
// delay keeps every row in time, so the expected tiles need no lateness model.
// `sets`: extra SET lines; `rate`: the roster's rows per second; `sink`: the tiles' WITH clause.
function stateTileJob(p, { sets = '', rate = 4000, sink = icebergTable(p.name) } = {}) {
  fs.writeFileSync(p.job, `-- roster -> TUMBLE 5 min COUNT(*) per state -> iceberg
${checkpointSets('300 ms')}
${sets}
CREATE TABLE roster (${ROSTER_COLUMNS}, WATERMARK FOR event_time AS event_time - INTERVAL '21' MINUTE)
  WITH ('connector' = 'roster', 'seed' = '42', 'events' = '${EVENTS}', 'rows-per-second' = '${rate}');
CREATE TABLE tiles (state STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT)
  WITH (${sink});
INSERT INTO tiles
SELECT state, window_start, window_end, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE roster, DESCRIPTOR(event_time), INTERVAL '5' MINUTE))
GROUP BY state, window_start, window_end;
`);
}

test('window job with the worker SIGKILLed at a random point: every window exactly once, right counts', async () => {
  const expected = await expectedByState();
  const p = sandbox(ROOT, 'tiles_kill');
  stateTileJob(p);
  const r = runJob(p, { CHK: p.chk, WH: p.wh });
  await killWorkerMidFeed(p, 2, 1000);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
  assert.deepEqual(tiles(p, 'state', 'n'), expected);
});

test('window job at parallelism 2 with operator chaining, worker SIGKILLed at a random point: every window exactly once', async () => {
  const expected = await expectedByState();
  const p = sandbox(ROOT, 'tiles_chained_kill');
  stateTileJob(p, { sets: "SET 'parallelism.default' = '2';\nSET 'pipeline.operator-chaining.enabled' = 'true';" });
  const r = runJob(p, { CHK: p.chk, WH: p.wh });
  await killWorkerMidFeed(p, 2, 1000);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
  assert.match(err, /task 'source-roster\/0' runs 'watermarks-roster\/0' on its thread/, err);
  for (const sub of [0, 1]) {
    assert.match(err, new RegExp(`task 'window-tiles/${sub}' runs 'calc-tiles/${sub}' on its thread`), err);
  }
  assert.deepEqual(tiles(p, 'state', 'n'), expected);
});

// The job's watermark at each checkpoint goes into that checkpoint's snapshot (floe.watermark,
// shown by `floe table snapshots`): any reader sees how far in event time the table is complete.
test('each commit records the watermark of its checkpoint: rising, behind the newest event by the delay', async () => {
  const rows = await rosterEvents();
  const newest = Math.max(...rows.map((r) => Date.parse(r.event_time + 'Z')));
  const p = sandbox(ROOT, 'tiles_watermark');
  stateTileJob(p);
  const r = await runJob(p, { CHK: p.chk, WH: p.wh }).done;
  assert.equal(r.code, 0, r.err);
  const s = floe(['table', 'snapshots', p.table, '--warehouse', p.wh]);
  assert.equal(s.code, 0, s.err);
  const commits = s.out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((x) => x.floe_checkpoint != null);
  const marks = commits.filter((x) => x.floe_watermark != null).map((x) => Date.parse(x.floe_watermark));
  assert.ok(marks.length >= 2, `too few commits carry a watermark: ${JSON.stringify(commits.map((x) => x.summary))}`);
  assert.deepEqual(marks, [...marks].sort((a, b) => a - b), 'watermarks never go back');
  for (const m of marks) assert.ok(m <= newest - 21 * MINUTE, `${new Date(m).toISOString()} is past the newest event minus the delay`);
  for (const x of commits.filter((c) => c.floe_watermark != null)) {
    assert.equal(Number(x.summary['floe.watermark']), Date.parse(x.floe_watermark));
  }
});

for (const point of ['window-after-fire', 'after-checkpoint-complete-before-commit', 'keyed-state-written']) {
  test(`window job killed at crash point ${point} (2nd hit), then restarted: every window exactly once`, async () => {
    const expected = await expectedByState();
    const p = sandbox(ROOT, `tiles_${point.replace(/-/g, '_')}`);
    stateTileJob(p);
    const { code, err } = await runJob(p, { CHK: p.chk, WH: p.wh }, { crashAt: `${point}:2` }).done;
    assert.equal(code, 0, err);
    assert.match(err, /killed by SIGKILL/, `crash point ${point} was never reached:\n${err}`);
    assert.deepEqual(tiles(p, 'state', 'n'), expected);
  });
}

// ---- Kafka: per-partition watermarks and idleness ------------------------------------------

function kafkaTileJob(p, { bounded, idleTimeout, computed } = {}) {
  const extra = (bounded ? ", 'scan.bounded.mode' = 'latest-offset'" : '') +
                (idleTimeout ? `, 'scan.watermark.idle-timeout' = '${idleTimeout}'` : '');
  writeTileJob(p, {
    source: `'connector' = 'kafka', 'topic' = 'learning.progress',
        'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = 'tlp-flink-course-tile',
        'scan.startup.mode' = 'earliest-offset'${extra}`,
    sink: icebergTable(p.name), computed });
}

test('course tile from Kafka (3 partitions, bounded): every window exactly once', async () => {
  const p = sandbox(ROOT, 'kafka_tile');
  const cluster = await startCluster(p.dir, 'tile', { topics: ['learning.progress:3'] });
  const events = progressEvents(6000, 9 * MINUTE);
  produce(cluster.bootstrap, 'learning.progress', writeJsonl(path.join(p.dir, 'events.jsonl'), events));
  kafkaTileJob(p, { bounded: true });
  const r = await runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap }).done;
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(tiles(p, 'course_id', 'event_count'), expectedTiles(events, 5 * MINUTE));
});

// Flink evaluates a computed rowtime in the source, so watermarks stay per partition; so does
// floe's Kafka source. Unbounded here: windows can only fire while the job runs if the source
// makes watermarks from the computed column (a source that ignored it would make none, and
// nothing would fire before the end of input); every row that fires has its full count.
test('course tile from Kafka with the event time computed from epoch milliseconds: windows fire while it runs, full counts', async () => {
  const p = sandbox(ROOT, 'kafka_tile_computed');
  const cluster = await startCluster(p.dir, 'computed', { topics: ['learning.progress:3'] });
  const events = progressEvents(6000, 9 * MINUTE);
  const withMillis = events.map(({ event_time: t, ...e }) => ({ ...e, ts_ms: Date.parse(t + 'Z') }));
  produce(cluster.bootstrap, 'learning.progress', writeJsonl(path.join(p.dir, 'events.jsonl'), withMillis));
  kafkaTileJob(p, { computed: true });
  const expected = expectedTiles(events, 5 * MINUTE);
  // Round-robin over three partitions puts events of the last minutes in each: every
  // partition's newest event is within the 9-minute disorder and a few seconds of the newest
  // overall, so the windows ending 20 minutes before it are behind every partition's watermark.
  const newest = Math.max(...withMillis.map((e) => e.ts_ms));
  const surely = expected.filter((row) => Date.parse(row.split(' ')[1]) + 5 * MINUTE <= newest - 20 * MINUTE);
  assert.ok(surely.length > 10);
  const r = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap });
  await waitFor('the windows every partition\'s watermark passed', () => {
    const s = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
    return s.code === 0 && s.out.split('\n').filter(Boolean).length >= surely.length;
  }, 60_000, 200);
  const c = floe(['cancel', jobRecords(p.home)[0].job_id], { FLOE_HOME: p.home });
  assert.equal(c.code, 0, c.err);
  await r.done;
  const got = tiles(p, 'course_id', 'event_count');
  const all = new Set(expected);
  for (const row of got) assert.ok(all.has(row), `a window with a wrong count: ${row}`);
  for (const row of surely) assert.ok(got.includes(row), `not fired while running: ${row}`);
});

// Every event lands in one partition; the two others never produce. Flink holds the watermark
// back for a partition that has produced nothing, so without an idle timeout no window of an
// unbounded job fires; with 'scan.watermark.idle-timeout' the empty partitions are left out and
// the windows the watermark passed appear while the job runs, with the right counts.
test('an idle partition holds windows back until scan.watermark.idle-timeout lets them fire', async () => {
  const p = sandbox(ROOT, 'kafka_idle');
  const cluster = await startCluster(p.dir, 'idle', { topics: ['learning.progress:3'] });
  const events = progressEvents(3000, 0).map((e) => ({ ...e, lane: 'one' }));
  produce(cluster.bootstrap, 'learning.progress', writeJsonl(path.join(p.dir, 'events.jsonl'), events),
          ['--partition-by', 'lane']);
  const expected = new Set(expectedTiles(events, 5 * MINUTE));
  const maxTs = Math.max(...events.map((e) => Date.parse(e.event_time + 'Z')));
  const watermark = maxTs - 10 * MINUTE;

  const held = sandbox(ROOT, 'kafka_held');
  kafkaTileJob(held, {});
  const h = runJob(held, { CHK: held.chk, WH: held.wh, KAFKA: cluster.bootstrap });
  await waitFor('a checkpoint of the job without idle timeout', () => {
    const j = jobRecords(held.home)[0];
    return j && (j.last_checkpoint || 0) >= 5;
  });
  const c1 = floe(['cancel', jobRecords(held.home)[0].job_id], { FLOE_HOME: held.home });
  assert.equal(c1.code, 0, c1.err);
  await h.done;
  const heldRows = floe(['table', 'scan', held.table, '--warehouse', held.wh]);
  assert.equal(heldRows.out.trim(), '', 'no window may fire while two partitions hold the watermark back');

  kafkaTileJob(p, { idleTimeout: '300 ms' });
  const r = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap });
  const fired = [...expected].filter((row) => {
    const start = Date.parse(row.split(' ')[1]);
    return start + 5 * MINUTE - 1 <= watermark;
  });
  await waitFor('the windows the watermark passed', () => {
    const s = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
    return s.code === 0 && s.out.split('\n').filter(Boolean).length >= fired.length;
  }, 60_000, 200);
  const c2 = floe(['cancel', jobRecords(p.home)[0].job_id], { FLOE_HOME: p.home });
  assert.equal(c2.code, 0, c2.err);
  await r.done;
  assert.deepEqual(tiles(p, 'course_id', 'event_count'), fired.sort());
});

// ---- the session job --------------------------------------------------------------------------

// The session table's rows in expectedSessions' form.
function sessionsOf(p) {
  const s = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
  assert.equal(s.code, 0, s.err);
  return s.out.split('\n').filter(Boolean).map((l) => {
    const row = JSON.parse(l);
    return `${row.learner_id} ${iso(row.session_start)} ${iso(row.session_end)} ${row.events}`;
  }).sort();
}

// The lesson's session job over `source` (a WITH clause): SESSION windows with a ten-minute gap
// PARTITION BY learner, counted, into an Iceberg table; `sets`: extra SET lines.
function sessionJob(p, source, sets = '') {
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
${sets}
CREATE TABLE progress (learner_id STRING, lesson_id STRING, event_time TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '1' MINUTE)
  WITH (${source}, 'format' = 'json', 'json.timestamp-format.standard' = 'ISO-8601');
CREATE TABLE learner_sessions (learner_id STRING, session_start TIMESTAMP(3),
  session_end TIMESTAMP(3), events BIGINT) WITH (${icebergTable(p.name)});
INSERT INTO learner_sessions
SELECT learner_id, window_start, window_end, COUNT(*)
FROM TABLE(SESSION(TABLE progress PARTITION BY learner_id, DESCRIPTOR(event_time), INTERVAL '10' MINUTES))
GROUP BY learner_id, window_start, window_end;
`);
}

test('session job: per-learner sessions with a 10-minute gap, every session once with its count', async () => {
  const p = sandbox(ROOT, 'sessions');
  const events = sessionEvents(4000);
  const file = writeJsonl(path.join(p.dir, 'events.jsonl'), events);
  sessionJob(p, `'connector' = 'filesystem', 'path' = '${file}'`);
  const r = await runJob(p, { CHK: p.chk, WH: p.wh }).done;
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(sessionsOf(p), expectedSessions(events, 10 * MINUTE));
});

// ---- both jobs from Kafka, exactly once under SIGKILL ------------------------------------------
//
// A dev cluster answering every request after 20 ms keeps a bounded job reading for seconds, so
// kills land mid-feed. The tile goes to a Kafka topic exactly once; the mock shows the records
// of aborted transactions to every reader, so the check reads the committed view rebuilt from
// the sink's commit log (harness.committedView; kafka_sink.test.mjs says why). The sessions go
// to Iceberg.

const TILE_TOPICS = ['tile_kill', 'tile_fire', 'tile_commit', 'tile_rescaled'];
let kafkaShared;
async function killCluster() {
  if (!kafkaShared) {
    const dir = fs.mkdtempSync(path.join(ROOT, 'kafka-kill-'));
    const cluster = await startCluster(dir, 'kill', {
      topics: ['learning.progress:3', 'learner.progress:3', `learner.many:${manyLearnerPartitions()}`,
               ...TILE_TOPICS.map((t) => `${t}:3`)],
      args: ['--rtt-ms', '20'] });
    const slow = ['--property', 'batch.num.messages=10', '--property', 'linger.ms=0'];
    const tileEvents = progressEvents(6000, 9 * MINUTE);
    produce(cluster.bootstrap, 'learning.progress', writeJsonl(path.join(dir, 'tile.jsonl'), tileEvents), slow);
    const sessions = sessionEvents(4000);
    produce(cluster.bootstrap, 'learner.progress', writeJsonl(path.join(dir, 'sessions.jsonl'), sessions), slow);
    kafkaShared = { bootstrap: cluster.bootstrap, tileEvents, sessions };
  }
  return kafkaShared;
}

const kafkaSource = (topic, fetchBytes = 2048) => `'connector' = 'kafka', 'topic' = '${topic}',
        'properties.bootstrap.servers' = '\${KAFKA}', 'scan.startup.mode' = 'earliest-offset',
        'scan.bounded.mode' = 'latest-offset', 'properties.max.partition.fetch.bytes' = '${fetchBytes}'`;

// Many learners' sessions (FLOE_TEST_LEARNERS, default 40,000, 2.5 events each) in
// 'learner.many', produced once.
const manyLearnerCount = () => Number(process.env.FLOE_TEST_LEARNERS || 40_000);
// The mock cluster keeps about 5 MiB per partition and silently drops older records (`floe
// kafka produce` fails when it drops any it wrote): one partition per 4 MiB of events (~80 bytes
// each), at least three.
const manyLearnerPartitions = () => Math.max(3, Math.ceil(manyLearnerCount() * 2.5 * 80 / (4 << 20)));
let manyLearners;
async function manyLearnerSessions() {
  if (!manyLearners) {
    const { bootstrap } = await killCluster();
    const learners = manyLearnerCount();
    const events = sessionEvents(Math.round(learners * 2.5), learners);
    const file = writeJsonl(path.join(ROOT, 'many-learners.jsonl'), events);
    // Batches of 200 records: a fetch of 2048 bytes per partition returns one, so the job reads
    // for a few seconds and is killed mid-feed (in large batches it finished within a second).
    produce(bootstrap, 'learner.many', file,
            ['--property', 'batch.num.messages=200', '--property', 'linger.ms=0']);
    manyLearners = { bootstrap, learners, expected: expectedSessions(events, 10 * MINUTE) };
  }
  return manyLearners;
}

// The lesson's tile from Kafka into Kafka, exactly once.
function kafkaToKafkaTileJob(p) {
  writeTileJob(p, {
    sets: "SET 'execution.checkpointing.timeout' = '30 s';",
    source: kafkaSource('learning.progress'),
    sink: `'connector' = 'kafka', 'topic' = '${p.topic}', 'properties.bootstrap.servers' = '\${KAFKA}',
        'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once',
        'sink.transactional-id-prefix' = '\${PREFIX}', 'properties.transaction.timeout.ms' = '60000'` });
}

// The tiles a read_committed reader of the sink topic sees, in expectedTiles' form (windows
// 5 minutes long).
function committedTiles(p, bootstrap) {
  const view = committedView(p.commitLog, consumeTopic(bootstrap, p.topic));
  return view.records.map((rec) => {
    const row = JSON.parse(rec.value);
    const start = Date.parse(iso(row.window_start));
    assert.equal(Date.parse(iso(row.window_end)) - start, 5 * MINUTE);
    return `${row.course_id} ${new Date(start).toISOString()} ${row.event_count}`;
  }).sort();
}

for (const [topic, crashAt, what] of [['tile_kill', null, 'a random point'],
                                      ['tile_fire', 'window-after-fire:2', 'window-after-fire (windows fired, not yet checkpointed)'],
                                      ['tile_commit', 'kafka-sink-after-checkpoint-before-commit:2',
                                       'kafka-sink-after-checkpoint-before-commit']]) {
  test(`course tile Kafka -> Kafka exactly-once, worker SIGKILLed at ${what}: every window once in the committed view`, async () => {
    const { bootstrap, tileEvents } = await killCluster();
    const p = { ...sandbox(ROOT, topic), topic };
    p.commitLog = path.join(p.dir, 'commits.jsonl');
    kafkaToKafkaTileJob(p);
    const r = runJob(p, { CHK: p.chk, KAFKA: bootstrap, PREFIX: `floe-${topic}` },
                     { crashAt: crashAt || undefined, env: { FLOE_KAFKA_SINK_COMMIT_LOG: p.commitLog } });
    if (!crashAt) await killWorkerMidFeed(p, 2, 1000);
    const { code, err } = await r.done;
    assert.equal(code, 0, err);
    assert.match(err, /killed by SIGKILL/, `the worker was never killed:\n${err}`);
    assert.deepEqual(committedTiles(p, bootstrap), expectedTiles(tileEvents, 5 * MINUTE));
  });
}

// The session state on RocksDB with incremental checkpoints (three retained, so retention
// deletes shared files the newer checkpoints no longer list), killed at random and between an
// incremental checkpoint's upload and its completion.
const ROCKSDB_INCREMENTAL = `SET 'state.backend.type' = 'rocksdb';
SET 'execution.checkpointing.incremental' = 'true';
SET 'state.checkpoints.num-retained' = '3';`;

for (const [name, crashAt, what, sets] of [
  ['sessions_kill', null, 'a random point', ''],
  ['sessions_fire', 'window-after-fire:2', 'window-after-fire', ''],
  ['sessions_rocksdb_kill', null, 'a random point, on RocksDB with incremental checkpoints', ROCKSDB_INCREMENTAL],
  ['sessions_rocksdb_upload', 'keyed-state-written:3',
   'keyed-state-written (3rd hit: shared files uploaded, checkpoint not complete), on RocksDB with incremental checkpoints',
   ROCKSDB_INCREMENTAL]]) {
  test(`session job from Kafka, worker SIGKILLed at ${what}: every session once with its count`, async () => {
    const { bootstrap, sessions } = await killCluster();
    const p = sandbox(ROOT, name);
    sessionJob(p, kafkaSource('learner.progress'), sets);
    const r = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: bootstrap }, { crashAt: crashAt || undefined });
    if (!crashAt) await killWorkerMidFeed(p, 2, 1000);
    const { code, err } = await r.done;
    assert.equal(code, 0, err);
    assert.match(err, /killed by SIGKILL/, `the worker was never killed:\n${err}`);
    assert.deepEqual(sessionsOf(p), expectedSessions(sessions, 10 * MINUTE));
  });
}

// An old savepoint restored into a job with keyed state between source and sink: the table is
// ahead of the savepoint, and fast-forwarding the source would leave the window state behind
// the table. The default refuses, naming --on-stale-restore, and changes nothing.
// skip-to-table runs from the table's positions with the savepoint's state: windows that were
// open at the savepoint fire again with the counts that state holds (docs/windows.md says so);
// nothing committed is lost.
test('old savepoint of a window job: refused by default; --on-stale-restore=skip-to-table loses nothing', async () => {
  const p = sandbox(ROOT, 'tiles_stale');
  stateTileJob(p);
  const first = runJob(p, { CHK: p.chk, WH: p.wh });
  const rec = await waitFor('checkpoint 2', () => {
    const j = jobRecords(p.home)[0];
    return j && j.worker_pid && (j.last_checkpoint || 0) >= 2 && j.state === 'RUNNING' ? j : null;
  });
  const sp = floe(['savepoint', rec.job_id, path.join(p.dir, 'savepoints')], { FLOE_HOME: p.home });
  assert.equal(sp.code, 0, sp.err);
  const savepoint = sp.out.trim().split('\n').pop();
  const r1 = await first.done;
  assert.equal(r1.code, 0, r1.err);
  const before = tiles(p, 'state', 'n');
  assert.deepEqual(before, await expectedByState());

  const refused = await runJob(p, { CHK: p.chk, WH: p.wh }, { from: savepoint }).done;
  assert.notEqual(refused.code, 0);
  assert.match(refused.err, /--on-stale-restore=fail\|skip-to-table\|replay/, refused.err);
  assert.deepEqual(tiles(p, 'state', 'n'), before, 'a refused restore changes nothing');

  const skipped = await runJob(p, { CHK: p.chk, WH: p.wh }, { from: savepoint,
                                                              args: ['--on-stale-restore', 'skip-to-table'] }).done;
  assert.equal(skipped.code, 0, skipped.err);
  assert.match(skipped.err, /table's positions|ahead/, skipped.err);
  const after = new Set(tiles(p, 'state', 'n'));
  for (const row of before) assert.ok(after.has(row), `lost: ${row}`);
});

// ---- GROUP BY without a window: a changelog ------------------------------------------------

test('GROUP BY into an upsert Iceberg table lands the latest count per key; print shows +I/-U/+U', async () => {
  const rows = await rosterEvents();
  const expected = new Map();
  for (const r of rows) expected.set(String(r.state), (expected.get(String(r.state)) || 0) + 1);
  const p = sandbox(ROOT, 'per_state');
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
CREATE TABLE roster (${ROSTER_COLUMNS})
  WITH ('connector' = 'roster', 'seed' = '42', 'events' = '${EVENTS}', 'rows-per-second' = '6000');
CREATE TABLE per_state (state STRING NOT NULL, n BIGINT, PRIMARY KEY (state) NOT ENFORCED)
  WITH (${icebergTable(p.name)}, 'write.upsert.enabled' = 'true');
CREATE TABLE changes (state STRING, n BIGINT)
  WITH ('connector' = 'print', 'print-identifier' = 'ca', 'standard-error' = 'true');
INSERT INTO per_state SELECT state, COUNT(*) AS n FROM roster WHERE state IS NOT NULL GROUP BY state;
INSERT INTO changes SELECT state, COUNT(*) FROM roster WHERE state = 'CA' GROUP BY state;
`);
  const r = runJob(p, { CHK: p.chk, WH: p.wh });
  await killWorkerMidFeed(p, 2, 800);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  const s = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
  assert.equal(s.code, 0, s.err);
  const got = new Map(s.out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((x) => [x.state, x.n]));
  expected.delete('null');
  assert.deepEqual(got, expected);
  // The changelog of one key as print shows it: an insert, then retract/update pairs.
  assert.match(err, /ca> \+I \{"state":"CA","n":\d+\}/, err.slice(0, 2000));
  assert.match(err, /ca> -U \{"state":"CA","n":\d+\}\n(.*\n)*?ca> \+U \{"state":"CA","n":\d+\}/);
});

// ---- rescaling through savepoints ----------------------------------------------------------
//
// The job runs at parallelism.default 1, is stopped with a savepoint mid-stream, resumed from it
// at 3, stopped again, resumed at 2 and run to the end: keyed state moves with its key groups
// (the roster source and the Iceberg writer keep parallelism 1). Every window and every
// per-key count must come out as one uninterrupted run gives them.

// Runs `p.job` once per entry of `steps` (its --var values, e.g. { PAR: 3 }), stopping each run
// but the last with a savepoint after two checkpoints of its own and resuming the next from it;
// returns the runs' stderr. `options`: runJob's (env, ...).
async function runThroughSavepoints(p, steps, options = {}) {
  let from;
  let err = '';
  const seen = new Set();
  for (let i = 0; i < steps.length; i++) {
    const run = runJob(p, { CHK: p.chk, WH: p.wh, ...steps[i] }, { ...options, from });
    if (i < steps.length - 1) {
      // This run's worker (a resumed run keeps the job id) with a checkpoint of its own.
      const fresh = () => jobRecords(p.home).find((j) => !seen.has(j.worker_pid) && j.state === 'RUNNING' &&
                                                          j.worker_pid && j.last_checkpoint);
      const first = await waitFor(`a checkpoint of run ${i + 1}`, fresh);
      await waitFor('a second checkpoint', () => {
        const j = fresh();
        return j && j.last_checkpoint > first.last_checkpoint ? j : null;
      });
      seen.add(first.worker_pid);
      const sp = floe(['stop', first.job_id, '--savepoint', path.join(p.dir, `sp-${i}`)], { FLOE_HOME: p.home });
      assert.equal(sp.code, 0, sp.err);
      from = sp.out.trim().split('\n').pop();
    }
    const r = await run.done;
    assert.equal(r.code, 0, r.err);
    err += r.err;
  }
  return err;
}
const runRescaled = (p, pars) => runThroughSavepoints(p, pars.map((PAR) => ({ PAR })));

// Slow enough that each run lasts past its two checkpoints and the stop.
const SLOW_RATE = 1500;
const rescaledRoster = `CREATE TABLE roster (${ROSTER_COLUMNS}, WATERMARK FOR event_time AS event_time - INTERVAL '21' MINUTE)
  WITH ('connector' = 'roster', 'seed' = '42', 'events' = '${EVENTS}', 'rows-per-second' = '${SLOW_RATE}');`;

test('window job rescaled 1 -> 3 -> 2 through savepoints mid-stream: every window once, right counts', async () => {
  const expected = await expectedByState();
  const p = sandbox(ROOT, 'tiles_rescaled');
  stateTileJob(p, { sets: "SET 'parallelism.default' = '${PAR}';", rate: SLOW_RATE });
  const err = await runRescaled(p, [1, 3, 2]);
  assert.match(err, /rescaling from 1 to 3 subtasks/, err);
  assert.match(err, /rescaling from 3 to 2 subtasks/, err);
  assert.deepEqual(tiles(p, 'state', 'n'), expected);
});

test('GROUP BY rescaled 1 -> 3 -> 2 through savepoints mid-stream: the latest count of every key', async () => {
  const rows = await rosterEvents();
  const expected = new Map();
  for (const r of rows) if (r.state !== null) expected.set(String(r.state), (expected.get(String(r.state)) || 0) + 1);
  const p = sandbox(ROOT, 'per_state_rescaled');
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}
SET 'parallelism.default' = '\${PAR}';
${rescaledRoster}
CREATE TABLE per_state (state STRING NOT NULL, n BIGINT, PRIMARY KEY (state) NOT ENFORCED)
  WITH (${icebergTable(p.name)}, 'write.upsert.enabled' = 'true');
INSERT INTO per_state SELECT state, COUNT(*) AS n FROM roster WHERE state IS NOT NULL GROUP BY state;
`);
  const err = await runRescaled(p, [1, 3, 2]);
  assert.match(err, /rescaling from 3 to 2 subtasks/, err);
  const s = floe(['table', 'scan', p.table, '--warehouse', p.wh]);
  assert.equal(s.code, 0, s.err);
  const got = new Map(s.out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((x) => [x.state, x.n]));
  assert.deepEqual(got, expected);
});

test('window job switched hashmap -> rocksdb -> hashmap through savepoints mid-stream: every window once, right counts', async () => {
  const expected = await expectedByState();
  const p = sandbox(ROOT, 'tiles_backends');
  stateTileJob(p, { sets: "SET 'state.backend.type' = '${BACKEND}';\nSET 'parallelism.default' = '2';",
                    rate: SLOW_RATE });
  await runThroughSavepoints(p, [{ BACKEND: 'hashmap' }, { BACKEND: 'rocksdb' }, { BACKEND: 'hashmap' }]);
  assert.deepEqual(tiles(p, 'state', 'n'), expected);
});

// The exactly-once Kafka sink runs at parallelism.default too: its pending transactions move to
// subtask 0 of the next run, which settles them (re-sends what did not land) and aborts what old
// subtasks it no longer has may have left open.
test('window job into Kafka exactly-once rescaled 1 -> 3 -> 2 through savepoints mid-stream: every window once in the committed view', async () => {
  const expected = await expectedByState();
  const { bootstrap } = await killCluster();
  const p = { ...sandbox(ROOT, 'tile_rescaled'), topic: 'tile_rescaled' };
  p.commitLog = path.join(p.dir, 'commits.jsonl');
  stateTileJob(p, {
    sets: "SET 'parallelism.default' = '${PAR}';\nSET 'execution.checkpointing.timeout' = '30 s';",
    rate: SLOW_RATE,
    sink: `'connector' = 'kafka', 'topic' = '${p.topic}', 'properties.bootstrap.servers' = '${bootstrap}',
        'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once',
        'sink.transactional-id-prefix' = 'floe-tile-rescaled', 'properties.transaction.timeout.ms' = '60000'` });
  const err = await runThroughSavepoints(p, [{ PAR: 1 }, { PAR: 3 }, { PAR: 2 }],
                                         { env: { FLOE_KAFKA_SINK_COMMIT_LOG: p.commitLog } });
  assert.match(err, /rescaling from 3 to 2 subtasks/, err);
  const view = committedView(p.commitLog, consumeTopic(bootstrap, p.topic));
  const got = view.records.map((rec) => {
    const row = JSON.parse(rec.value);
    return `${row.state} ${new Date(Date.parse(iso(row.window_start))).toISOString()} ${row.n}`;
  }).sort();
  assert.deepEqual(got, expected);
});

// The lesson's session job with many learners on RocksDB with incremental checkpoints (three
// retained), its worker SIGKILLed twice at random, or at keyed-state-written (3rd and 6th hit):
// every session as the test cuts it from the generated events. FLOE_TEST_LEARNERS=2000000 runs
// the full size by hand.
for (const [name, crashAt, what] of [['many_kill', null, 'twice at random'],
                                     ['many_upload', 'keyed-state-written:3', 'at keyed-state-written']]) {
  test(`session job, many learners on RocksDB with incremental checkpoints, worker SIGKILLed ${what}: every session once`, async () => {
    const { bootstrap, learners, expected } = await manyLearnerSessions();
    const p = sandbox(ROOT, name);
    sessionJob(p, kafkaSource('learner.many'), ROCKSDB_INCREMENTAL);
    const r = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: bootstrap }, { crashAt: crashAt || undefined });
    if (!crashAt) {
      const first = await killWorkerMidFeed(p, 2, 1000);
      // The restarted worker, once it completed two checkpoints of its own (unless the job
      // finished first: then one kill is all this run got).
      const second = await waitFor('the restarted worker with two checkpoints, or the end', () => {
        const j = jobRecords(p.home)[0];
        if (!j || j.state !== 'RUNNING') return j && j.state !== 'CREATED' ? j : null;
        if (!j.worker_pid || j.worker_pid === first) return null;
        return j;
      });
      if (second.state === 'RUNNING') {
        const base = second.last_checkpoint || 0;
        await waitFor('two more checkpoints', () => {
          const j = jobRecords(p.home)[0];
          return j && (j.state !== 'RUNNING' || (j.last_checkpoint || 0) >= base + 2) ? j : null;
        });
        try {
          process.kill(second.worker_pid, 'SIGKILL');
        } catch { /* gone already */ }
      }
    }
    const { code, err } = await r.done;
    assert.equal(code, 0, err);
    assert.match(err, /killed by SIGKILL/, `the worker was never killed:\n${err}`);
    const got = sessionsOf(p);
    assert.ok(expected.length > learners / 2, `${expected.length} sessions for ${learners} learners`);
    assert.equal(got.length, expected.length);
    assert.deepEqual(got, expected);
  });
}


// The source alone rescales: 'scan.parallelism' 1 -> 3 -> 2 under a window operator of 2
// subtasks, through savepoints mid-stream; fetches of ~4 records per partition keep each run
// reading for seconds. The positions and bounded end offsets of the old subtasks are
// redistributed over the new ones (docs/kafka.md, "Rescaling").
test('course tile from Kafka with scan.parallelism 1 -> 3 -> 2 through savepoints mid-stream: every window once', async () => {
  const { bootstrap, tileEvents } = await killCluster();
  const p = sandbox(ROOT, 'kafka_tile_rescaled');
  writeTileJob(p, {
    sets: "SET 'parallelism.default' = '2';",
    source: kafkaSource('learning.progress').replace("'2048'", "'512'") + ", 'scan.parallelism' = '${PAR}'",
    sink: icebergTable(p.name) });
  const err = await runThroughSavepoints(p, [1, 3, 2].map((PAR) => ({ PAR, KAFKA: bootstrap })));
  assert.match(err, /rescaling from 1 to 3 subtasks/, err);
  assert.match(err, /rescaling from 3 to 2 subtasks/, err);
  assert.deepEqual(tiles(p, 'course_id', 'event_count'), expectedTiles(tileEvents, 5 * MINUTE));
});
