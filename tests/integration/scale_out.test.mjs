// Scale-out (SET 'floe.scale-out' = 'kafka-group'): three `floe run` instances of one job share
// a 6-partition topic through its consumer group and commit to one Iceberg table through a JDBC
// catalog on SQLite; each commit checks and sets the positions of its partitions in the table.
// One instance's worker is SIGKILLed (its coordinator restarts it, it rejoins the group), another
// instance is SIGKILLed whole (its partitions move to the others after the session timeout),
// then the second half of the feed arrives. `floe table verify --catalog` counts every seq:
// none twice, none missing. FLOE_BIN points at the floe binary.
//
// What the mock cluster cannot show: a broker-side session expiry racing a commit (the
// instances here die or restart; a paused instance whose commit lands after the new holder's is
// the committer's unit test `IcebergCommitter.ScaledOutInstancesCommitEachOffsetOnceAndTheTableFencesAZombie`).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, floe, jobRecords, produce, runJob, sandbox, sleep, startCluster,
         stopClusters, tempRoot, waitFor, writeJsonl } from './harness.mjs';

const ROOT = tempRoot('floe-scale-out-');
const HALF = 3000;
after(stopClusters);

function records(first, n) {
  const out = [];
  for (let seq = first; seq < first + n; seq++) out.push({ seq, name: `n${seq}` });
  return out;
}

test('three instances share a topic: kills and rebalances leave every seq exactly once', async (t) => {
  const cluster = await startCluster(ROOT, 'scale', { topics: ['events:6'] });
  const feed = (first) => produce(cluster.bootstrap, 'events',
                                  writeJsonl(path.join(ROOT, `events-${first}.jsonl`), records(first, HALF)));
  feed(1);
  const catalog = `jdbc:sqlite:${path.join(ROOT, 'catalog.db')}`;
  const wh = path.join(ROOT, 'wh');
  const job = path.join(ROOT, 'scale.sql');
  fs.writeFileSync(job, `-- kafka -> iceberg, scaled out over the group 'scale'
${checkpointSets('300 ms')}
SET 'floe.scale-out' = 'kafka-group';
CREATE TABLE events (seq BIGINT NOT NULL, name STRING)
  WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json',
        'properties.bootstrap.servers' = '${cluster.bootstrap}', 'properties.group.id' = 'scale',
        'properties.heartbeat.interval.ms' = '300', 'properties.session.timeout.ms' = '6000',
        'scan.startup.mode' = 'earliest-offset');
CREATE TABLE lake (seq BIGINT NOT NULL, name STRING)
  WITH ('connector' = 'iceberg', 'catalog-type' = 'jdbc', 'uri' = '${catalog}',
        'warehouse' = '${wh}', 'catalog-database' = 'demo', 'catalog-table' = 'scaled');
INSERT INTO lake SELECT * FROM events;
`);
  const instances = [];
  const launch = (name) => {
    const p = sandbox(ROOT, name);
    const run = runJob(p, { CHK: p.chk }, { sql: job });
    instances.push({ p, run });
    return { p, run };
  };
  const verify = () => floe(['table', 'verify', 'demo.scaled', '--catalog', catalog, '--warehouse', wh,
                             '--unique', 'seq', '--expect-range', `seq:1..${2 * HALF}`]);
  const worker = (p) => waitFor(`a worker of ${p.name}`, () => jobRecords(p.home)[0]?.worker_pid);
  try {
    // The first instance creates the table; the others join once it runs.
    const a = launch('a');
    await worker(a.p);
    const b = launch('b');
    const c = launch('c');
    await worker(b.p);
    await worker(c.p);
    await sleep(3000);  // the group spreads the partitions; rows land
    process.kill(await worker(a.p), 'SIGKILL');  // a's coordinator restarts its worker
    await sleep(1000 + Math.floor(Math.random() * 2000));
    c.run.child.kill('SIGKILL');  // c dies whole: its partitions move after the session timeout
    feed(HALF + 1);
    let last = verify();
    for (const deadline = Date.now() + 180_000; Date.now() < deadline; await sleep(2000)) {
      last = verify();
      if (last.code === 0 && /result: OK/.test(last.out)) break;
    }
    assert.equal(last.code, 0, `not every seq exactly once:\n${last.out}\n${last.err}\n` +
                 instances.map(({ p, run }) => `--- ${p.name}\n${run.err.slice(-3000)}`).join('\n'));
    t.diagnostic(last.out);
  } finally {
    for (const { run } of instances) run.child.kill('SIGTERM');
    for (const { run } of instances) await run.exited;
  }
  // Nothing arrives twice later either (a late commit of a restarted or dead instance).
  await sleep(2000);
  const again = verify();
  assert.equal(again.code, 0, again.out + again.err);
  assert.match(again.out, /result: OK/);
  // The instances shared the work: commits by at least two of them, and partitions that moved
  // started where the table held them.
  const snaps = floe(['table', 'snapshots', 'demo.scaled', '--catalog', catalog, '--warehouse', wh]);
  assert.equal(snaps.code, 0, snaps.err);
  const summaries = snaps.out.split('\n').filter(Boolean).map((l) => JSON.parse(l).summary);
  const jobs = new Set(summaries.map((s) => s['floe.job-id']));
  assert.ok(jobs.size >= 2, `commits by ${jobs.size} instance(s)`);
  const claims = summaries.flatMap((s) => Object.values(JSON.parse(s['floe.source-offsets']))
    .flatMap((position) => position.claims));
  assert.ok(claims.some((c) => c.from !== null && c.from > 0), 'no partition started at a table position');
  t.diagnostic(`${summaries.length} commits by ${jobs.size} instances`);
});
