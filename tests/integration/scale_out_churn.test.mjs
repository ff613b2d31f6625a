// Scale-out under churn: instances of one Kafka -> Iceberg job (SET 'floe.scale-out' =
// 'kafka-group') come and go at random while records arrive, committing through floe's REST
// catalog server over PostgreSQL (CTest's fixture `postgres`). Between waves of records, at
// random (seeded; the schedule is printed, FLOE_SCALE_OUT_SEED replays it): an instance added,
// an instance SIGKILLed whole (coordinator and worker), an instance cancelled (`floe cancel`: it
// leaves the group at once), a worker SIGKILLed (its coordinator restarts it). At chosen waves:
// one worker frozen (SIGSTOP) past the 6 s session timeout and then resumed (a zombie), and the
// REST catalog server SIGKILLed and restarted on its port. At the end every seq is in the table
// exactly once (append), or every key at its last revision (upsert), by `floe table verify`.
//
// Size: 40,000 records in 8 waves over 16 partitions (CTest); the full size by hand:
//   FLOE_SCALE_OUT_RECORDS=2000000 FLOE_SCALE_OUT_WAVES=40 FLOE_BIN=build/src/floe/cli/floe \
//   FLOE_TEST_POSTGRES_DIR=... node --test tests/integration/scale_out_churn.test.mjs
// Each wave waits until the table holds the previous one: the dev cluster keeps about 5 MiB per
// partition, and a wave must not outrun it while instances are down.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../../bench/prng.mjs';
import { checkpointSets, committedRecords, floe, instanceFleet, produce, scaledOutJob, sleep, start, startCluster, stopClusters,
         tempRoot, testPostgres, waitFor, writeJsonl } from './harness.mjs';

const ROOT = tempRoot('floe-scale-out-churn-');
const RECORDS = Number(process.env.FLOE_SCALE_OUT_RECORDS || 40_000);
const WAVES = Number(process.env.FLOE_SCALE_OUT_WAVES || 8);
const SEED = Number(process.env.FLOE_SCALE_OUT_SEED || Math.floor(Math.random() * 1e9));
const PARTITIONS = 16;
const KEYS = 997;  // upsert keys; every revision of a key in one partition (--partition-by name)
const MAX_INSTANCES = 5;
const SESSION_MS = 6000;
const { uri: PG_URI, password: PG_PASSWORD } = testPostgres();
const RUN = Math.random().toString(36).slice(2, 8);  // the database outlives a run by hand
const servers = [];
after(stopClusters);
after(() => { for (const s of servers) s.child.kill('SIGKILL'); });

const records = (first, n) => Array.from({ length: n }, (_, i) => ({ seq: first + i, name: `k${(first + i) % KEYS}` }));

// `floe catalog serve` over PostgreSQL on `port` (0: a free one); resolves once it listens.
async function serve(name, wh, port = 0) {
  const s = start(['catalog', 'serve', '--catalog', PG_URI, '--catalog-name', `${name}_${RUN}`,
                   '--jdbc-user', 'floe', '--warehouse', wh, '--listen', `127.0.0.1:${port}`],
                  { env: { PGPASSWORD: PG_PASSWORD }, stdout: 'pipe' });
  servers.push(s);
  const m = await waitFor('the catalog server to listen', () => s.out.match(/at http:\/\/127\.0\.0\.1:(\d+)/) ||
                          (s.child.exitCode !== null && assert.fail(`catalog serve exited: ${s.err}`)), 30_000);
  s.port = Number(m[1]);
  return s;
}

async function churn(t, name, { upsert }) {
  const rand = mulberry32(SEED);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const dir = fs.mkdtempSync(path.join(ROOT, `${name}-`));
  const cluster = await startCluster(dir, name, { topics: [`events:${PARTITIONS}`] });
  const wh = path.join(dir, 'wh');
  let server = await serve(name, wh);
  const uri = `http://127.0.0.1:${server.port}`;
  const job = path.join(dir, `${name}.sql`);
  // Restarts: a fenced zombie, a killed worker and the catalog's outage each cost one (the last
  // SET of a key wins).
  const sets = `${checkpointSets('500 ms')}\nSET 'restart-strategy.fixed-delay.attempts' = '100';`;
  fs.writeFileSync(job, scaledOutJob({ sets, bootstrap: cluster.bootstrap, group: name, table: name, upsert,
                                       catalogOptions: `'catalog-type' = 'rest', 'uri' = '${uri}', 'warehouse' = 'lake'`,
                                       sessionMs: SESSION_MS }));
  const table = (cmd, ...args) => floe(['table', cmd, `demo.${name}`, '--catalog', uri, ...args]);
  const committed = () => committedRecords(table('positions'));
  const fleet = instanceFleet(dir, job, SESSION_MS);
  const { live, launch } = fleet;
  const actions = {
    ...fleet.actions,
    catalog: async () => {
      server.child.kill('SIGKILL');
      await server.exited;
      await sleep(1000);
      server = await serve(name, wh, server.port);
    },
  };
  const schedule = [];
  const freezeAt = 1 + Math.floor(rand() * (WAVES - 1));
  const catalogAt = 1 + Math.floor(rand() * (WAVES - 1));
  const size = Math.ceil(RECORDS / WAVES);
  try {
    await launch();  // creates the table; the others join it
    await launch();
    await launch();
    for (let w = 0, first = 1; first <= RECORDS; ++w, first += size) {
      const n = Math.min(size, RECORDS - first + 1);
      await waitFor(`the table to hold the ${first - 1} records before wave ${w}`,
                    () => committed() >= first - 1, 300_000, 500);
      produce(cluster.bootstrap, 'events', writeJsonl(path.join(dir, `wave-${w}.jsonl`), records(first, n)),
              ['--partition-by', 'name']);
      await sleep(500 + Math.floor(rand() * 2500));
      const chosen = [...(w === freezeAt ? ['freeze'] : []), ...(w === catalogAt ? ['catalog'] : [])];
      const random = live.length >= MAX_INSTANCES ? pick(['kill', 'cancel', 'worker'])
        : live.length <= 1 ? pick(['add', 'worker']) : pick(['add', 'kill', 'cancel', 'worker']);
      for (const action of [...chosen, random]) {
        const target = live.length ? pick(live) : undefined;
        schedule.push(`wave ${w}: ${action}${target && action !== 'add' && action !== 'catalog' ? ` ${target.p.name}` : ''}`);
        await actions[action](target);
      }
    }
    if (live.length === 0) await launch();
    t.diagnostic(`seed ${SEED}, ${RECORDS} records in ${WAVES} waves; ${schedule.join('; ')}`);
    const expected = upsert ? (() => {
      const last = new Map();
      for (const r of records(1, RECORDS)) last.set(r.name, r);
      return ['--expected', writeJsonl(path.join(dir, 'expected.jsonl'), [...last.values()]), '--key', 'name', '--unique', 'name'];
    })() : ['--unique', 'seq', '--expect-range', `seq:1..${RECORDS}`];
    let last;
    for (const deadline = Date.now() + 300_000; Date.now() < deadline; await sleep(2000)) {
      last = table('verify', ...expected);
      if (last.code === 0 && /result: OK/.test(last.out)) break;
    }
    assert.equal(last.code, 0, `seed ${SEED}: ${schedule.join('; ')}\n${last.out}\n${last.err}\n${fleet.logs()}`);
    t.diagnostic(last.out);
    const jobs = new Set(table('snapshots').out.split('\n').filter(Boolean)
      .map((l) => JSON.parse(l).summary['floe.job-id']));
    t.diagnostic(`${fleet.all.length} instances launched, ${jobs.size} committed`);
    assert.ok(jobs.size >= 2, `commits by ${jobs.size} instance(s)`);
  } finally {
    await fleet.stop();
  }
}

test(`append: instances added, killed, cancelled, a zombie and a catalog outage; every seq exactly once`,
     (t) => churn(t, 'churn_append', { upsert: false }));
test(`upsert: the same churn; every key at its last revision`, (t) => churn(t, 'churn_upsert', { upsert: true }));
