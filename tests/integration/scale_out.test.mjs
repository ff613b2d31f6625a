// Scale-out (SET 'floe.scale-out' = 'kafka-group'): three `floe run` instances of one job share
// a 6-partition topic through its consumer group and commit to one Iceberg table through a JDBC
// catalog on SQLite (in one test, floe's REST catalog server in front of it); each commit checks
// and sets the positions of its partitions in the table.
// Failures: an instance's worker SIGKILLed (its coordinator restarts it, it rejoins the group),
// an instance SIGKILLed whole (its partitions move to the others after the session timeout), and
// an instance's worker paused past the session timeout (SIGSTOP) while the others take its
// partitions and commit them, then resumed: a zombie, whose commit of those partitions the table
// must fence. Then the second half of the feed arrives. `floe table verify --catalog` counts
// every seq: none twice, none missing. FLOE_BIN points at the floe binary.
//
// What the mock cluster cannot show: a broker outage in the middle of a rebalance. The exact
// interleaving of a zombie's commit after its successor's is also the committer's unit test
// `IcebergCommitter.ScaledOutInstancesCommitEachOffsetOnceAndTheTableFencesAZombie`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { checkpointSets, floe, jobRecords, produce, runJob, sandbox, scaledOutJob, sleep, start, startCluster,
         stopClusters, stopInstances, tempRoot, waitFor, writeJsonl } from './harness.mjs';

const ROOT = tempRoot('floe-scale-out-');
const HALF = 3000;
after(stopClusters);

// seq first..first+n-1; `name` is the upsert key: 300 keys, each revised every 300 seqs (the
// upsert feed is produced with --partition-by name: all revisions of a key in one partition).
const KEYS = 300;
function records(first, n) {
  const out = [];
  for (let seq = first; seq < first + n; seq++) out.push({ seq, name: `k${seq % KEYS}` });
  return out;
}

const servers = [];
after(() => { for (const s of servers) s.child.kill('SIGKILL'); });

// `floe catalog serve` over the JDBC catalog `catalog`; resolves with its URI once it listens.
async function serve(catalog, wh) {
  const s = start(['catalog', 'serve', '--catalog', catalog, '--warehouse', wh, '--listen', '127.0.0.1:0'],
                  { stdout: 'pipe' });
  servers.push(s);
  const m = await waitFor('the catalog server to listen', () => s.out.match(/at (http:\/\/127\.0\.0\.1:\d+)/) ||
                          (s.child.exitCode !== null && assert.fail(`catalog serve exited: ${s.err}`)), 30_000);
  return m[1];
}

// A topic `events` (6 partitions) with seq 1..HALF, the job file, and what the tests do with it.
// The table's catalog: JDBC on SQLite, or (`rest`) floe's REST catalog server in front of it.
async function scaledJob(name, { rest = false, upsert = false } = {}) {
  const dir = fs.mkdtempSync(path.join(ROOT, `${name}-`));
  const cluster = await startCluster(dir, name, { topics: ['events:6'] });
  const feed = (first) => produce(cluster.bootstrap, 'events',
                                  writeJsonl(path.join(dir, `events-${first}.jsonl`), records(first, HALF)),
                                  upsert ? ['--partition-by', 'name'] : []);
  feed(1);
  const wh = path.join(dir, 'wh');
  const jdbc = `jdbc:sqlite:${path.join(dir, 'catalog.db')}`;
  const catalog = rest ? await serve(jdbc, wh) : jdbc;
  const options = rest ? `'catalog-type' = 'rest', 'uri' = '${catalog}', 'warehouse' = 'lake'`
                       : `'catalog-type' = 'jdbc', 'uri' = '${catalog}', 'warehouse' = '${wh}'`;
  const job = path.join(dir, `${name}.sql`);
  fs.writeFileSync(job, scaledOutJob({ sets: checkpointSets('300 ms'), bootstrap: cluster.bootstrap, group: name,
                                     catalogOptions: options, table: 'scaled', upsert }));
  const table = (args) => floe(['table', args[0], 'demo.scaled', '--catalog', catalog,
                                ...(rest ? [] : ['--warehouse', wh]), ...args.slice(1)]);
  const instances = [];
  return {
    feed,
    instances,
    table,
    launch(instance, { crashAt } = {}) {
      const p = sandbox(dir, instance);
      const run = runJob(p, { CHK: p.chk }, { sql: job, crashAt });
      instances.push({ p, run });
      return { p, run };
    },
    worker: (p) => waitFor(`a worker of ${p.name}`, () => jobRecords(p.home)[0]?.worker_pid),
    // Append: every seq once. Upsert: the last revision of every key.
    verify() {
      if (!upsert) return table(['verify', '--unique', 'seq', '--expect-range', `seq:1..${2 * HALF}`]);
      const last = new Map();
      for (const r of records(1, 2 * HALF)) last.set(r.name, r);
      const expected = writeJsonl(path.join(dir, 'expected.jsonl'), [...last.values()]);
      return table(['verify', '--expected', expected, '--key', 'name', '--unique', 'name']);
    },
    // Until the table's newest snapshot holds `n` rows.
    // A timeout names the newest total and shows each instance's log.
    async waitForRows(n) {
      let total = 'no snapshot';
      try {
        return await waitFor(`${n} rows committed`, () => {
          const summaries = this.summaries();
          if (summaries.length > 0) total = summaries.at(-1)['total-records'];
          return summaries.length > 0 && Number(total) === n;
        }, 120_000, 500);
      } catch (e) {
        throw new Error(`${e.message} (newest snapshot: ${total} rows)\n` +
          instances.map(({ p, run }) => `--- ${p.name}\n${run.err.slice(-3000)}`).join('\n'));
      }
    },
    // Every snapshot's summary, oldest first.
    summaries() {
      const r = table(['snapshots']);
      assert.equal(r.code, 0, r.err);
      return r.out.split('\n').filter(Boolean).map((l) => JSON.parse(l).summary);
    },
  };
}

// Waits until `floe table verify` finds every seq exactly once (fails with its report and the
// instances' logs otherwise), then checks again after a while: no late commit adds a row.
async function assertExactlyOnce(t, job) {
  let last = job.verify();
  for (const deadline = Date.now() + 180_000; Date.now() < deadline; await sleep(2000)) {
    last = job.verify();
    if (last.code === 0 && /result: OK/.test(last.out)) break;
  }
  assert.equal(last.code, 0, `not every seq exactly once:\n${last.out}\n${last.err}\n` +
               job.instances.map(({ p, run }) => `--- ${p.name}\n${run.err.slice(-3000)}`).join('\n'));
  t.diagnostic(last.out);
  await sleep(2000);
  const again = job.verify();
  assert.equal(again.code, 0, again.out + again.err);
}

// Instances a and b (b with `crashAt`), started one after the other; with `bothCommit`, once
// each has committed.
async function startTwo(job, { crashAt, bothCommit = true } = {}) {
  const a = job.launch('a');
  await job.worker(a.p);
  const b = job.launch('b', { crashAt });
  if (!crashAt) await job.worker(b.p);
  if (bothCommit) {
    await waitFor('commits by both instances', () =>
      new Set(job.summaries().map((s) => s['floe.job-id'])).size === 2, 60_000, 500);
  }
  return { a, b };
}

const stopAll = (job) => stopInstances(job.instances);

test('three instances share a topic: kills and rebalances leave every seq exactly once', async (t) => {
  const job = await scaledJob('kills');
  try {
    // The first instance creates the table; the others join once it runs.
    const a = job.launch('a');
    await job.worker(a.p);
    const b = job.launch('b');
    const c = job.launch('c');
    await job.worker(b.p);
    await job.worker(c.p);
    await sleep(3000);  // the group spreads the partitions; rows land
    process.kill(await job.worker(a.p), 'SIGKILL');  // a's coordinator restarts its worker
    await sleep(1000 + Math.floor(Math.random() * 2000));
    c.run.child.kill('SIGKILL');  // c dies whole: its partitions move after the session timeout
    job.feed(HALF + 1);
    await assertExactlyOnce(t, job);
    // Each instance's `floe status` lists the partitions it reads now. A fourth instance joins:
    // a and b give it some of theirs (c's among them) without restarting. Together every
    // partition, each once.
    const d = job.launch('d');
    await job.worker(d.p);
    const held = (p) => {
      const r = floe(['status', jobRecords(p.home)[0].job_id, '--json'], { FLOE_HOME: p.home });
      return r.code === 0 ? (JSON.parse(r.out).overview?.sources ?? []).map((s) => s.partition) : [];
    };
    let listed = [];
    await waitFor('every partition in the status of exactly one instance', () => {
      listed = [a, b, d].map(({ p }) => held(p));
      return listed.every((l) => l.length > 0) &&
        JSON.stringify(listed.flat().sort()) === JSON.stringify([0, 1, 2, 3, 4, 5]);
    }, 60_000, 500).catch(() => assert.fail(`partitions in a's, b's and d's status: ${JSON.stringify(listed)}`));
    t.diagnostic(`partitions read now: a ${JSON.stringify(listed[0])}, b ${JSON.stringify(listed[1])}, ` +
                 `d ${JSON.stringify(listed[2])}`);
  } finally {
    await stopAll(job);
  }
  // The instances shared the work: commits by at least two of them. How many claims began at a
  // table position depends on when the group moved which partition (a diagnostic only).
  const summaries = job.summaries();
  const jobs = new Set(summaries.map((s) => s['floe.job-id']));
  assert.ok(jobs.size >= 2, `commits by ${jobs.size} instance(s)`);
  const claims = summaries.flatMap((s) => Object.values(JSON.parse(s['floe.source-offsets']))
    .flatMap((position) => position.claims));
  const moved = claims.filter((c) => c.from !== null && c.from > 0).length;
  t.diagnostic(`${summaries.length} commits by ${jobs.size} instances; ${moved} claims began at a table position`);
  // `floe table positions`: every partition at its end, and which instance committed it last.
  const positions = job.table(['positions']);
  assert.equal(positions.code, 0, positions.err);
  const rows = positions.out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual(rows.map((r) => [r.topic, r.partition, r.next_offset]),
                   [0, 1, 2, 3, 4, 5].map((p) => ['events', p, 2 * HALF / 6]));
  for (const r of rows) assert.ok(jobs.has(r.committed_by_job), JSON.stringify(r));
  t.diagnostic(positions.out);
});

test('a worker paused past its session is a zombie: the others take its partitions, its old claims never commit (lost or fenced)', async (t) => {
  const job = await scaledJob('zombie');
  try {
    const { b } = await startTwo(job);
    const zombie = await job.worker(b.p);
    process.kill(zombie, 'SIGSTOP');  // mid-checkpoint, maybe mid-commit
    job.feed(HALF + 1);
    // a takes b's partitions after b's 6 s session and commits every row, b's included.
    await job.waitForRows(2 * HALF);
    process.kill(zombie, 'SIGCONT');  // b wakes up holding claims the table has moved past
    await assertExactlyOnce(t, job);
    // b's worker learnt it had lost its partitions (the group, or a fence and a restart).
    const gaveUp = /[^\n]*(fenced by the table|the group took \d+ partition\(s\) of 'events' \(lost\))[^\n]*/;
    await waitFor(`b gives up its old claims:\n${b.run.err.slice(-2000)}`,
                  () => gaveUp.test(b.run.err), 60_000, 500);
    t.diagnostic(`b: ${b.run.err.match(gaveUp)[0]}`);
  } finally {
    await stopAll(job);
  }
});

test('through the REST catalog: two instances, one SIGKILLed whole, every seq exactly once', async (t) => {
  const job = await scaledJob('rest', { rest: true });
  try {
    const { b } = await startTwo(job);
    b.run.child.kill('SIGKILL');
    job.feed(HALF + 1);
    await assertExactlyOnce(t, job);
  } finally {
    await stopAll(job);
  }
});

test('a zombie paused right before its commit swaps, after the group moved its partitions on: the table fences it', async (t) => {
  const job = await scaledJob('fenced');
  try {
    // b stops itself (SIGSTOP) with its first rows staged, just before the catalog swap.
    const { b } = await startTwo(job, { crashAt: 'scale-out-before-commit:1:stop', bothCommit: false });
    await waitFor(`b pauses before its commit:\n${b.run.err}`,
                  () => /crash point 'scale-out-before-commit' reached: SIGSTOP/.test(b.run.err));
    const zombie = jobRecords(b.p.home)[0].worker_pid;
    // a takes b's partitions after b's 6 s session and commits every row of them.
    await job.waitForRows(HALF);
    process.kill(zombie, 'SIGCONT');
    await waitFor(`the table fences b:\n${b.run.err.slice(-3000)}`,
                  () => /fenced by table demo\.scaled/.test(b.run.err), 60_000, 500);
    t.diagnostic(b.run.err.match(/[^\n]*fenced by table[^\n]*/)[0]);
    job.feed(HALF + 1);  // b restarted and rejoined: the rest lands once too
    await assertExactlyOnce(t, job);
  } finally {
    await stopAll(job);
  }
});

test('upsert: two instances, a worker SIGKILLed, every key at its last revision', async (t) => {
  const job = await scaledJob('upsert', { upsert: true });
  try {
    const { b } = await startTwo(job);
    process.kill(await job.worker(b.p), 'SIGKILL');
    job.feed(HALF + 1);
    await assertExactlyOnce(t, job);
  } finally {
    await stopAll(job);
  }
});

