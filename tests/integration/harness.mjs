// What the multi-process tests (tests/integration/*.test.mjs) share: the floe binary (FLOE_BIN,
// which ctest passes), temp roots, polling waits, `floe` run to completion or in the background,
// `floe kafka dev` clusters, JSON-lines files and `floe kafka produce`, the sandbox a pipeline job
// runs in (FLOE_HOME, warehouse, checkpoint dir, job file), its job records, and `floe table
// verify`. Plain ESM, node's own modules only. What a test checks stays in the test file.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const FLOE = process.env.FLOE_BIN;
assert.ok(FLOE && fs.existsSync(FLOE), 'FLOE_BIN must point at the floe binary');

// The default wait for a condition: generous, as tests never assert on timing.
export const WAIT_MS = 240_000;

// A fresh directory under the system temp dir, e.g. tempRoot('floe-eo-').
export const tempRoot = (prefix) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `cond` (which may be async) every `pollMs` until it returns something truthy, and
// returns that.
export async function waitFor(what, cond, timeoutMs = WAIT_MS, pollMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

// The environment of a floe process: this one's with `overrides` applied; an override that is
// undefined removes the variable (e.g. FLOE_CRASH_AT, which must reach only the runs that set it).
export function envWith(overrides = {}) {
  const env = { ...process.env, ...overrides };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

// `floe args...` run to completion.
export function floe(args, env = {}) {
  const r = spawnSync(FLOE, args, { encoding: 'utf8', maxBuffer: 256 << 20, env: envWith(env) });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

// `floe args...` in the background. `out` and `err` are what it wrote so far (stdout only with
// stdout: 'pipe'); `exited` resolves with {code, signal} when it exits, `done` with {code,
// signal, out, err} once its output is closed too. `cwd`: its working directory.
export function start(args, { env = {}, stdin = 'ignore', stdout = 'ignore', cwd } = {}) {
  const child = spawn(FLOE, args, { env: envWith(env), stdio: [stdin, stdout, 'pipe'], cwd });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return {
    child,
    get out() { return out; },
    get err() { return err; },
    exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))),
    done: new Promise((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal, out, err }))),
  };
}

// `floe kafka dev` (librdkafka's mock cluster, 3 brokers) as its own process, serving until
// stopClusters(); resolves once it wrote its bootstrap servers, with them as `bootstrap`.
// `topics` are 'name:partitions'; `args` more options (e.g. '--rtt-ms', '20'); stdin: 'pipe' keeps
// its stdin open for fault injection commands (answers on stdout with stdout: 'pipe').
const clusters = [];
export async function startCluster(dir, name, { topics = [], args = [], stdin = 'ignore',
                                                stdout = 'ignore' } = {}) {
  const file = path.join(dir, `${name}.bootstrap`);
  const c = start(['kafka', 'dev', '--brokers', '3', ...topics.flatMap((t) => ['--topic', t]),
                   ...args, '--bootstrap-file', file], { stdin, stdout });
  clusters.push(c);
  c.bootstrap = await waitFor(`dev cluster ${name}: ${c.err}`, () =>
    fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : null, 30_000);
  return c;
}
// For `after`: stops every dev cluster and checks each exits cleanly.
export async function stopClusters() {
  for (const c of clusters) {
    c.child.stdin?.end();
    c.child.kill('SIGTERM');
    const { code } = await c.done;
    assert.equal(code, 0, 'floe kafka dev exits 0 on SIGTERM');
  }
}

// Writes rows (objects, or lines already in JSON) one a line; returns the file.
export function writeJsonl(file, rows) {
  const lines = rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r)));
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

// `floe kafka produce` of a JSON-lines file (`args`: more options such as --property or
// --partition-by); asserts it sent every line.
export function produce(bootstrap, topic, file, args = []) {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  const r = floe(['kafka', 'produce', '--bootstrap', bootstrap, '--topic', topic, ...args, file]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out.trim(), String(lines));
}

// Every record of `topic` (`floe kafka consume --isolation read_committed`): objects with
// partition, offset and value (the record's text).
export function consumeTopic(bootstrap, topic) {
  const r = floe(['kafka', 'consume', '--bootstrap', bootstrap, '--topic', topic, '--from-beginning',
                  '--isolation', 'read_committed', '--timeout-ms', '20000']);
  assert.equal(r.code, 0, r.err);
  return r.out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// The records a read_committed reader of real Kafka would see. The mock cluster shows records of
// aborted and open transactions to every reader (docs/kafka.md), so the view is rebuilt from the
// exactly-once sink's log of the transactions it committed (FLOE_KAFKA_SINK_COMMIT_LOG=commitLog;
// "commit" lines only: a "found at restore" line repeats an earlier commit's).
export function committedView(commitLog, records) {
  assert.ok(fs.existsSync(commitLog), 'the sink logged no committed transaction');
  const committed = new Set();
  const lines = fs.readFileSync(commitLog, 'utf8').split('\n').filter(Boolean)
    .map((l) => JSON.parse(l)).filter((c) => c.how === 'commit');
  for (const c of lines) {
    for (const [partition, offsets] of Object.entries(c.offsets)) {
      for (const o of offsets) committed.add(`${partition}@${o}`);
    }
  }
  return { lines: lines.length,
           records: records.filter((r) => committed.has(`${r.partition}@${r.offset}`)) };
}

// The roster source's columns, as the pipeline jobs declare them.
export const ROSTER_COLUMNS = `seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,
  event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING,
  city STRING, zip STRING, phone STRING, active BOOLEAN`;

// The PostgreSQL server CTest's fixture `postgres` started (tests/postgres/test_postgres.sh):
// its JDBC URI and the password of its user floe.
export function testPostgres() {
  const dir = process.env.FLOE_TEST_POSTGRES_DIR;
  assert.ok(dir && fs.existsSync(path.join(dir, 'uri')),
            'FLOE_TEST_POSTGRES_DIR must name a running test server (ctest starts one: fixture postgres)');
  return { uri: fs.readFileSync(path.join(dir, 'uri'), 'utf8').trim(),
           password: fs.readFileSync(path.join(dir, 'password'), 'utf8').trim() };
}

// Where one pipeline job runs: a fresh directory under `root` with its FLOE_HOME (job records),
// warehouse, checkpoint dir and job file; its Iceberg table is demo.<name>.
export function sandbox(root, name) {
  const dir = fs.mkdtempSync(path.join(root, `${name}-`));
  return { dir, name, home: path.join(dir, 'home'), wh: path.join(dir, 'wh'),
           chk: path.join(dir, 'chk'), job: path.join(dir, `${name}.sql`), table: `demo.${name}` };
}

// The SET lines every pipeline job starts with: checkpoints every `interval` into the job's
// ${CHK}, up to 5 restarts 100 ms apart.
export const checkpointSets = (interval) => `SET 'execution.checkpointing.interval' = '${interval}';
SET 'execution.checkpointing.dir' = '\${CHK}';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '5';
SET 'restart-strategy.fixed-delay.delay' = '100 ms';`;

// A Kafka -> Iceberg job scaled out over the consumer group `group` (SET 'floe.scale-out' =
// 'kafka-group'): topic `events` (JSON seq, name) into demo.<table> through `catalogOptions`
// (the sink's catalog WITH options), after the SET lines `sets`; `upsert`: PRIMARY KEY (name).
export const scaledOutJob = ({ sets, bootstrap, group, catalogOptions, table, upsert = false, sessionMs = 6000 }) =>
  `-- kafka -> iceberg, scaled out over the group '${group}'
${sets}
SET 'floe.scale-out' = 'kafka-group';
CREATE TABLE events (seq BIGINT NOT NULL, name STRING NOT NULL)
  WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json',
        'properties.bootstrap.servers' = '${bootstrap}', 'properties.group.id' = '${group}',
        'properties.heartbeat.interval.ms' = '300', 'properties.session.timeout.ms' = '${sessionMs}',
        'scan.startup.mode' = 'earliest-offset');
CREATE TABLE lake (seq BIGINT NOT NULL, name STRING NOT NULL${upsert ? ', PRIMARY KEY (name) NOT ENFORCED' : ''})
  WITH ('connector' = 'iceberg', ${catalogOptions}, 'catalog-database' = 'demo', 'catalog-table' = '${table}'${
          upsert ? ", 'write.upsert.enabled' = 'true'" : ''});
INSERT INTO lake SELECT * FROM events;
`;

// What a scaled-out table holds, from `floe table positions` (its result): the partitions'
// next offsets add up to the records committed (offsets from 0); 0 while the command fails.
export function committedRecords(positions) {
  if (positions.code !== 0) return 0;
  return positions.out.split('\n').filter(Boolean).reduce((sum, l) => sum + JSON.parse(l).next_offset, 0);
}

// Instances of one scaled-out job file `sql`, each `floe run` in a sandbox of its own under `dir`
// (its ${CHK} its own checkpoint dir), and what the churn tests do to them: `add` one, `kill` one
// whole (coordinator and worker), `cancel` one (`floe cancel`: it leaves the group at once),
// SIGKILL its `worker` (its coordinator restarts it), or `freeze` its worker past the session
// timeout `sessionMs` and resume it (a zombie). `live`: those running; `all`: every one launched.
// `chk`: one checkpoint location they all share (each job under its own id), for ${CHK}.
export function instanceFleet(dir, sql, sessionMs, { chk } = {}) {
  const fleet = { live: [], all: [] };
  const workerOf = (i) => waitFor(`a worker of ${i.p.name}`, () => jobRecords(i.p.home)[0]?.worker_pid);
  const remove = (i) => fleet.live.splice(fleet.live.indexOf(i), 1);
  fleet.launch = async () => {
    const p = sandbox(dir, `i${fleet.all.length}`);
    const i = { p, run: runJob(p, { CHK: chk ?? p.chk }, { sql }) };
    fleet.live.push(i);
    fleet.all.push(i);
    await workerOf(i);
    return i;
  };
  fleet.actions = {
    add: async () => fleet.launch(),
    kill: async (i) => {
      const worker = jobRecords(i.p.home)[0]?.worker_pid;
      i.run.child.kill('SIGKILL');
      if (worker) try { process.kill(worker, 'SIGKILL'); } catch { /* gone with its coordinator */ }
      remove(i);
      await i.run.exited;
    },
    cancel: async (i) => {
      const r = floe(['cancel', jobRecords(i.p.home)[0].job_id], { FLOE_HOME: i.p.home });
      assert.equal(r.code, 0, r.err);
      remove(i);
      await i.run.exited;
    },
    worker: async (i) => process.kill(await workerOf(i), 'SIGKILL'),
    freeze: async (i) => {
      const worker = await workerOf(i);
      process.kill(worker, 'SIGSTOP');
      await sleep(sessionMs + 3000);  // the group moves its partitions on
      process.kill(worker, 'SIGCONT');
    },
  };
  // The last lines of every instance's stderr, for a failure's message.
  fleet.logs = () => fleet.all.map(({ p, run }) => `--- ${p.name}\n${run.err.slice(-3000)}`).join('\n');
  fleet.stop = () => stopInstances(fleet.live);
  return fleet;
}

// Stops `floe run` instances ({ p, run }) with SIGTERM, their workers resumed first (one left
// SIGSTOPped by a failed test would never see it); one still running after `graceMs` is SIGKILLed
// with its worker, so a failure is reported instead of hanging the test until its timeout.
export async function stopInstances(instances, graceMs = 30_000) {
  const workers = instances.map(({ p }) => jobRecords(p.home)[0]?.worker_pid).filter(Boolean);
  const signal = (pid, sig) => { try { process.kill(pid, sig); } catch { /* already gone */ } };
  for (const pid of workers) signal(pid, 'SIGCONT');
  for (const { run } of instances) run.child.kill('SIGTERM');
  const all = Promise.all(instances.map(({ run }) => run.exited));
  if (await Promise.race([all.then(() => true), sleep(graceMs).then(() => false)])) return;
  for (const { run } of instances) run.child.kill('SIGKILL');
  for (const pid of workers) signal(pid, 'SIGKILL');
  await all;
}

// The WITH options of the Iceberg table demo.<name> in the job's ${WH}.
export const icebergTable = (name) => `'connector' = 'iceberg', 'catalog-type' = 'hadoop',
        'warehouse' = '\${WH}', 'catalog-database' = 'demo', 'catalog-table' = '${name}'`;

// More WITH options from an object: ", 'k' = 'v'" each.
export const moreOptions = (options) =>
  Object.entries(options).map(([k, v]) => `, '${k}' = '${v}'`).join('');

// `floe run` of the sandbox's job (or `sql`) in the background, FLOE_HOME its home, --var for
// each of `vars`; FLOE_CRASH_AT only if `crashAt` is given.
export function runJob(p, vars, { sql = p.job, from, crashAt, env = {}, args = [] } = {}) {
  const all = ['run', sql, ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}=${v}`])];
  if (from) all.push('--from', from);
  return start([...all, ...args], { env: { FLOE_HOME: p.home, FLOE_CRASH_AT: crashAt, ...env } });
}

// The job records (job.json) under a FLOE_HOME; one being rewritten is skipped.
export function jobRecords(home) {
  const dir = path.join(home, 'jobs');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).map((j) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, j, 'job.json'), 'utf8'));
    } catch {
      return null;
    }
  }).filter(Boolean);
}

// The first job under `home` once it is RUNNING with a worker and `n` completed checkpoints.
export function checkpointed(home, n) {
  const j = jobRecords(home)[0];
  return j && j.worker_pid && (j.last_checkpoint || 0) >= n && j.state === 'RUNNING' ? j : null;
}

// SIGKILLs the worker once it has completed `after` checkpoints, after a random extra delay of
// up to `maxExtraMs`; returns its pid. A late kill only weakens a test: nothing asserts timing.
export async function killWorkerMidFeed(p, after = 2, maxExtraMs = 500) {
  const rec = await waitFor('a running worker with a checkpoint',
                            () => checkpointed(p.home, after));
  await sleep(Math.floor(Math.random() * maxExtraMs));
  try {
    process.kill(rec.worker_pid, 'SIGKILL');
  } catch { /* already gone: the run still must be right */ }
  return rec.worker_pid;
}

// `floe table verify` of the sandbox's table with `args`: asserts it found no problem, returns
// its report.
export function verifyTable(p, args) {
  const r = floe(['table', 'verify', p.table, '--warehouse', p.wh, ...args]);
  assert.equal(r.code, 0, `verify ${p.table} found problems:\n${r.out}\n${r.err}`);
  assert.match(r.out, /result: OK/);
  return r.out;
}
// `floe table describe` of the sandbox's table as an object; snapshot ids (above 2^53) as strings.
export function describeTable(p) {
  const d = floe(['table', 'describe', p.table, '--warehouse', p.wh]);
  assert.equal(d.code, 0, d.err);
  return JSON.parse(d.out.replace(/"((?:current-|parent-)?snapshot-id)":\s*(-?\d+)/g, '"$1":"$2"'));
}

// What the data commits of the sandbox's table added, as `floe table describe` lists its
// snapshots: { added, snapshots }. A compaction ("replace") re-adds the rows it rewrites, so it
// does not count. With upserts each record counts once only while no commit holds two revisions
// of one key (a commit writes a key's last row).
export function recordsAdded(p) {
  const snaps = describeTable(p).snapshots;
  const added = snaps.filter((x) => x.summary.operation !== 'replace')
    .reduce((a, x) => a + Number(x.summary['added-records'] || 0), 0);
  return { added, snapshots: snaps.length };
}

// Every seq 1..last exactly once.
export const verifySeqs = (p, last) =>
  verifyTable(p, ['--unique', 'seq', '--expect-range', `seq:1..${last}`]);
// The table equals the rows of `expectedFile` (JSON lines) by `key`, no key twice.
export const verifyLatest = (p, expectedFile, key) =>
  verifyTable(p, ['--expected', expectedFile, '--key', key, '--unique', key]);

// Sorted numbers as runs: [1,2,3,7] -> "1..3, 7".
export function runs(xs) {
  const out = [];
  for (let i = 0; i < xs.length;) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j] + 1) j++;
    out.push(i === j ? `${xs[i]}` : `${xs[i]}..${xs[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}
