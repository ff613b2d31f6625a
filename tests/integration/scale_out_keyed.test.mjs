// Keyed scale-out (docs/architecture.md, "Keyed jobs"): the Flink lesson's course tile, a
// TUMBLE(10 s) COUNT(*) per course, over a topic partitioned by course, run by up to four
// `floe run` instances of one job (SET 'floe.scale-out' = 'kafka-group', the Kafka table
// declaring 'floe.partition-key' = 'course') through a JDBC catalog on SQLite. Between waves of
// events, at random (seeded; the schedule is printed, FLOE_SCALE_OUT_SEED replays it): an
// instance added, one SIGKILLed whole, one cancelled, or one's worker SIGKILLed; at one wave a
// worker frozen past its session and resumed (a zombie). Each partition's
// open windows move with it: the table names their state beside the partition's position, and
// the next holder restores it. At the end every window of every course is in the table once,
// with the count this test computes from the events it produced. The same churn with a GROUP BY
// course COUNT(*) into an upsert table, the checkpoints of every instance on S3 when an S3 server
// is given (FLOE_TEST_S3_DIR, as CTest's fixture runs it): every course at its count.
// FLOE_SCALE_OUT_WAVES x FLOE_SCALE_OUT_PER_WAVE events (default 8 x 2,000); by hand at 40 x
// 50,000 (2,000,000 events), `--test-name-pattern` picking one test.
//
// Why no row is late here: waves wait until the table holds the previous ones, every wave
// spans 20 s of event time over every course, and the watermark delay is 60 s. So the rows a
// new holder reads again (those after the table's position) are never behind its watermark.
// Per-instance watermarks (a documented difference from Flink) make lateness depend on which
// instance holds which partitions when event times of partitions drift further apart: the last
// test shows a row that one instance (and Flink) keeps dropped when two instances split the topic.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../../bench/prng.mjs';
import { checkpointSets, committedRecords, consumeTopic, floe, instanceFleet, jobRecords, produce, sleep, startCluster,
         stopClusters, tempRoot, waitFor, writeJsonl } from './harness.mjs';

const ROOT = tempRoot('floe-scale-out-keyed-');
const WAVES = Number(process.env.FLOE_SCALE_OUT_WAVES || 8);
const PER_WAVE = Number(process.env.FLOE_SCALE_OUT_PER_WAVE || 2000);
const SEED = Number(process.env.FLOE_SCALE_OUT_SEED || Math.floor(Math.random() * 1e9));
const PARTITIONS = 8;
const COURSES = 40;
const MAX_INSTANCES = 4;
const SESSION_MS = 6000;
const WINDOW_MS = 10_000;
const WAVE_MS = 20_000;  // event time one wave spans
const BASE = Date.parse('2026-01-01T00:00:00Z');
// With an S3 server (CTest's fixture `s3rver`), the GROUP BY test keeps every instance's
// checkpoints under one s3:// prefix: the next holder reads a partition's state from there.
const S3_DIR = process.env.FLOE_TEST_S3_DIR;
const S3_ENDPOINT = S3_DIR ? fs.readFileSync(path.join(S3_DIR, 'endpoint'), 'utf8').trim() : '';
after(stopClusters);

const stamp = (ms) => new Date(ms).toISOString().replace('Z', '');
// Wave w: PER_WAVE events spread over [w * WAVE_MS, (w + 1) * WAVE_MS), every course in turn.
function wave(w) {
  return Array.from({ length: PER_WAVE }, (_, i) => ({
    seq: w * PER_WAVE + i + 1,
    course: `c${i % COURSES}`,
    ts: stamp(BASE + w * WAVE_MS + Math.floor((i * WAVE_MS) / PER_WAVE)),
  }));
}
// One event per course far ahead: the watermark passes every window of the waves.
const flush = () => Array.from({ length: COURSES }, (_, i) => ({
  seq: WAVES * PER_WAVE + i + 1, course: `c${i}`, ts: stamp(BASE + (WAVES + 10) * WAVE_MS),
}));

// "<course> <window start ISO> <count>" per window of `events`, sorted.
function expectedTiles(events) {
  const counts = new Map();
  for (const e of events) {
    const t = Date.parse(e.ts + 'Z');
    const key = `${e.course} ${new Date(t - (t % WINDOW_MS)).toISOString()}`;
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k} ${n}`).sort();
}

// The tile (TUMBLE 10 s, COUNT per course, append) or, `counts`, a GROUP BY course COUNT(*)
// into an upsert table (its changelog: -U/+U per change).
// `delay`: the WATERMARK's delay in seconds; `idle`: 'scan.watermark.idle-timeout', or none.
const job = ({ bootstrap, group, catalog, wh, counts, s3, delay = 60, idle = '2 s' }) => `-- scaled out by Kafka partition
${checkpointSets('500 ms')}${s3 ? `
SET 's3.endpoint' = '${S3_ENDPOINT}';
SET 's3.path.style.access' = 'true';
SET 's3.access-key' = 'S3RVER';
SET 's3.secret-key' = 'S3RVER';` : ''}
SET 'restart-strategy.fixed-delay.attempts' = '100';
SET 'floe.scale-out' = 'kafka-group';
CREATE TABLE events (seq BIGINT NOT NULL, course STRING NOT NULL, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '${delay}' SECOND)
  WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json',
        'properties.bootstrap.servers' = '${bootstrap}', 'properties.group.id' = '${group}',
        'properties.heartbeat.interval.ms' = '300', 'properties.session.timeout.ms' = '${SESSION_MS}',
        'scan.startup.mode' = 'earliest-offset',${idle ? ` 'scan.watermark.idle-timeout' = '${idle}',` : ''}
        'floe.partition-key' = 'course');
${counts ? `CREATE TABLE tiles (course STRING NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (course) NOT ENFORCED)
  WITH ('connector' = 'iceberg', 'catalog-type' = 'jdbc', 'uri' = '${catalog}', 'warehouse' = '${wh}',
        'catalog-database' = 'demo', 'catalog-table' = 'tiles', 'write.upsert.enabled' = 'true');
INSERT INTO tiles SELECT course, COUNT(*) FROM events GROUP BY course;`
  : `CREATE TABLE tiles (course STRING NOT NULL, window_start TIMESTAMP(3) NOT NULL, n BIGINT NOT NULL)
  WITH ('connector' = 'iceberg', 'catalog-type' = 'jdbc', 'uri' = '${catalog}', 'warehouse' = '${wh}',
        'catalog-database' = 'demo', 'catalog-table' = 'tiles');
INSERT INTO tiles
  SELECT course, window_start, COUNT(*)
  FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY course, window_start, window_end;`}
`;

// "<course> <count>" per course of `events`, sorted.
function expectedCounts(events) {
  const counts = new Map();
  for (const e of events) counts.set(e.course, (counts.get(e.course) || 0) + 1);
  return [...counts].map(([c, n]) => `${c} ${n}`).sort();
}

// demo.tiles through `catalog`: `table(cmd, ...args)` runs `floe table cmd`; `committed()` the
// records its positions cover; `tiles()` its rows as expectedTiles (or expectedCounts) gives them.
function tilesTable(catalog, wh, counts) {
  const table = (cmd, ...args) => floe(['table', cmd, 'demo.tiles', '--catalog', catalog, '--warehouse', wh, ...args]);
  const tiles = () => {
    const r = table('scan');
    if (r.code !== 0) return [];
    return r.out.split('\n').filter(Boolean).map((l) => {
      const row = JSON.parse(l);
      if (counts) return `${row.course} ${row.n}`;
      return `${row.course} ${new Date(Date.parse(String(row.window_start).replace(' ', 'T') + 'Z')).toISOString()} ${row.n}`;
    }).sort();
  };
  return { table, tiles, committed: () => committedRecords(table('positions')) };
}

async function churn(t, { counts, s3 = false }) {
  const rand = mulberry32(SEED);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const dir = fs.mkdtempSync(path.join(ROOT, 'tiles-'));
  const cluster = await startCluster(dir, 'tiles', { topics: [`events:${PARTITIONS}`] });
  const wh = path.join(dir, 'wh');
  const catalog = `jdbc:sqlite:${path.join(dir, 'catalog.db')}`;
  const sql = path.join(dir, 'tiles.sql');
  fs.writeFileSync(sql, job({ bootstrap: cluster.bootstrap, group: 'tiles', catalog, wh, counts, s3 }));
  const { table, committed, tiles } = tilesTable(catalog, wh, counts);
  const chk = s3 ? `s3://floe-test/keyed-${path.basename(dir)}` : undefined;
  const fleet = instanceFleet(dir, sql, SESSION_MS, { chk });
  const { live, launch, actions } = fleet;
  const freezeAt = 1 + Math.floor(rand() * (WAVES - 1));
  const events = [];
  const schedule = [];
  const dump = () => `seed ${SEED}: ${schedule.join('; ')}\n${fleet.logs()}`;
  const committers = () => new Set(table('snapshots').out.split('\n').filter(Boolean)
    .map((l) => JSON.parse(l).summary['floe.job-id']));
  const send = (w) => {
    const rows = wave(w);
    events.push(...rows);
    produce(cluster.bootstrap, 'events', writeJsonl(path.join(dir, `wave-${w}.jsonl`), rows), ['--partition-by', 'course']);
  };
  try {
    // Two instances share wave 0 before anything happens to them: state has somewhere to move.
    await launch();
    await launch();
    send(0);
    await waitFor('both instances to commit wave 0', () => committed() >= events.length && committers().size >= 2,
                  300_000, 500);
    for (let w = 1; w < WAVES; ++w) {
      await waitFor(`the table to hold the ${events.length} events before wave ${w}`,
                    () => committed() >= events.length, 300_000, 500);
      send(w);
      await sleep(500 + Math.floor(rand() * 2500));
      const random = live.length >= MAX_INSTANCES ? pick(['kill', 'cancel', 'worker'])
        : live.length <= 1 ? pick(['add', 'worker']) : pick(['add', 'kill', 'cancel', 'worker']);
      for (const action of [...(w === freezeAt && live.length > 1 ? ['freeze'] : []), random]) {
        const target = live.length ? pick(live) : undefined;
        schedule.push(`wave ${w}: ${action}${action !== 'add' ? ` ${target.p.name}` : ''}`);
        await actions[action](target);
      }
    }
    if (live.length === 0) await launch();
    await waitFor('the table to hold every wave', () => committed() >= events.length, 300_000, 500);
    if (!counts) {
      produce(cluster.bootstrap, 'events', writeJsonl(path.join(dir, 'flush.jsonl'), flush()), ['--partition-by', 'course']);
    }
    const want = counts ? expectedCounts(events) : expectedTiles(events);
    t.diagnostic(`seed ${SEED}, ${events.length} events in ${WAVES} waves, ${want.length} windows, checkpoints ` +
                 `${chk ?? 'on local disk'}; ${schedule.join('; ')}`);
    let got = [];
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(1000)) {
      got = tiles();
      if (counts ? got.join() === want.join() : got.length >= want.length) break;
    }
    await sleep(3000);  // anything fired twice would land by now
    got = tiles();
    const missing = want.filter((x) => !got.includes(x));
    const extra = got.filter((x, k) => !want.includes(x) || got.indexOf(x) !== k);
    assert.deepEqual({ missing: missing.slice(0, 20), extra: extra.slice(0, 20), rows: got.length },
                     { missing: [], extra: [], rows: want.length }, dump());
    t.diagnostic(`${fleet.all.length} instances launched, ${committers().size} committed`);
  } finally {
    await fleet.stop();
  }
}

test('the course tile under churn: every window of every course once, with its count',
     (t) => churn(t, { counts: false }));
test('a GROUP BY into an upsert table under churn: every course at its count', (t) => churn(t, { counts: true, s3: !!S3_DIR }));

// Per-instance watermarks, a difference from Flink on purpose (docs/kafka.md): course `fast`,
// alone in its partition, runs ahead; course `slow`, in the other partition, stays behind. A row
// of `fast` arrives behind its own partition's watermark. One Flink job keeps it: its windows
// wait for the minimum over every partition, which `slow` holds back. So does one floe instance
// holding both partitions. Two instances holding one partition each drop it: the instance of
// `fast` fired the row's window before the row came. Returns the table's rows.
async function lateRowUnder(t, instances) {
  const dir = fs.mkdtempSync(path.join(ROOT, `late-${instances}-`));
  const cluster = await startCluster(dir, 'late', { topics: ['events:2', 'probe:2'] });
  const courseIn = new Map();  // partition -> a course `--partition-by course` sends there
  produce(cluster.bootstrap, 'probe', writeJsonl(path.join(dir, 'probe.jsonl'),
                                                 Array.from({ length: 16 }, (_, i) => ({ course: `c${i}` }))),
          ['--partition-by', 'course']);
  for (const r of consumeTopic(cluster.bootstrap, 'probe')) {
    if (!courseIn.has(r.partition)) courseIn.set(r.partition, JSON.parse(r.value).course);
  }
  assert.equal(courseIn.size, 2, 'the probe courses reach both partitions');
  const [fast, slow] = [courseIn.get(0), courseIn.get(1)];
  const wh = path.join(dir, 'wh');
  const catalog = `jdbc:sqlite:${path.join(dir, 'catalog.db')}`;
  const sql = path.join(dir, 'late.sql');
  // No idle timeout: `slow`'s partition holds the watermark of whoever reads it.
  fs.writeFileSync(sql, job({ bootstrap: cluster.bootstrap, group: 'late', catalog, wh, delay: 1, idle: null }));
  const { committed, tiles } = tilesTable(catalog, wh, false);
  const fleet = instanceFleet(dir, sql, SESSION_MS);
  let seq = 0;
  const events = [];
  const send = (name, rows) => {
    const batch = rows.map(([course, s]) => ({ seq: ++seq, course, ts: stamp(BASE + s * 1000) }));
    events.push(...batch);
    produce(cluster.bootstrap, 'events', writeJsonl(path.join(dir, `${name}.jsonl`), batch), ['--partition-by', 'course']);
  };
  const held = ({ p }) => {
    const r = floe(['status', jobRecords(p.home)[0].job_id, '--json'], { FLOE_HOME: p.home });
    return r.code === 0 ? (JSON.parse(r.out).overview?.sources ?? []).map((s) => s.partition).sort() : [];
  };
  const window = (course, s, n) => `${course} ${new Date(BASE + s * 1000).toISOString()} ${n}`;
  try {
    for (let i = 0; i < instances; ++i) await fleet.launch();
    const layout = instances === 1 ? '[[0,1]]' : '[[0],[1]]';
    let listed = [];
    await waitFor(`the partitions held as ${layout}`, () => {
      listed = fleet.live.map(held).sort();
      return JSON.stringify(listed) === layout;
    }, 60_000, 500).catch(() => assert.fail(`partitions held: ${JSON.stringify(listed)}\n${fleet.logs()}`));
    // `fast` at 1, 2, 3 and 30 s: its partition's watermark reaches 29 s; `slow` at 1 s.
    send('ahead', [[fast, 1], [fast, 2], [fast, 3], [fast, 30], [slow, 1]]);
    await waitFor('the table to cover the first rows', () => committed() >= events.length, 60_000, 250);
    // The instance of `fast` alone fires [0 s, 10 s) on its own watermark.
    if (instances > 1) await waitFor('fast [0 s, 10 s) to fire', () => tiles().includes(window(fast, 0, 3)), 60_000, 250);
    send('late', [[fast, 5]]);  // behind `fast`'s watermark, ahead of `slow`'s
    await waitFor('the table to cover the late row', () => committed() >= events.length, 60_000, 250);
    send('flush', [[fast, 100], [slow, 100]]);  // every watermark passes 40 s
    await waitFor('[30 s, 40 s) of fast to fire', () => tiles().includes(window(fast, 30, 1)), 60_000, 250);
    await sleep(2000);  // anything fired twice would land by now
    t.diagnostic(`${instances} instance(s): fast = ${fast} in partition 0, slow = ${slow} in partition 1`);
    return { got: tiles(), window: (...a) => window(...a), fast, slow, logs: fleet.logs() };
  } finally {
    await fleet.stop();
  }
}

test('watermarks are per instance: a row one Flink job keeps is dropped as late when another instance holds the partition that held the watermark back', async (t) => {
  const one = await lateRowUnder(t, 1);
  assert.deepEqual(one.got, [one.window(one.fast, 0, 4), one.window(one.fast, 30, 1), one.window(one.slow, 0, 1)].sort(),
                   `one instance, both partitions: the late row counted, as in Flink\n${one.logs}`);
  const two = await lateRowUnder(t, 2);
  assert.deepEqual(two.got, [two.window(two.fast, 0, 3), two.window(two.fast, 30, 1), two.window(two.slow, 0, 1)].sort(),
                   `two instances, a partition each: the late row dropped\n${two.logs}`);
});
