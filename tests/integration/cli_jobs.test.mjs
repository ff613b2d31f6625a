// `floe run` (coordinator) + `floe worker` + job control, driven as a user would: real processes,
// SIGKILLs, a second terminal issuing `floe list/savepoint/stop/cancel`. FLOE_BIN points at the
// floe binary (ctest passes it). Every wait polls for a condition with a generous timeout; no test
// asserts on timing. Each test gets its own FLOE_HOME (job directories) and checkpoint directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as h from './harness.mjs';

const ROOT = h.tempRoot('floe-jobs-');
const WAIT_MS = 180_000;

const waitFor = (what, cond, timeoutMs = WAIT_MS) => h.waitFor(what, cond, timeoutMs, 100);
function alive(pid) {
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}

// A fresh sandbox: FLOE_HOME, checkpoint dir, job file.
// `chkUri(chk)`: how the job file spells the checkpoint directory.
function sandbox(name, { events = 4000, rps = 400, interval = '200 ms', attempts = 3,
                         delay = '200 ms', extra = '', chkUri = (c) => c, dir: shared } = {}) {
  const dir = shared ?? fs.mkdtempSync(path.join(ROOT, `${name}-`));
  const home = path.join(dir, 'home');
  const chk = path.join(dir, 'chk');
  const job = path.join(dir, `${name}.sql`);
  fs.writeFileSync(job, `-- ${name}
SET 'execution.checkpointing.interval' = '${interval}';
SET 'execution.checkpointing.dir' = '${chkUri(chk)}';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '${attempts}';
SET 'restart-strategy.fixed-delay.delay' = '${delay}';
${extra}
CREATE TABLE roster (seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT)
  WITH ('connector' = 'roster', 'seed' = '7', 'events' = '\${EVENTS}', 'rows-per-second' = '${rps}');
CREATE TABLE sink (seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT)
  WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT seq, npi, revision FROM roster;
`);
  // Over this process's environment; undefined removes a variable.
  const env = { FLOE_HOME: home, EVENTS: String(events), FLOE_CRASH_AT: undefined };
  return { dir, home, chk, job, env };
}

const floe = (sb, ...args) => h.floe(args, sb.env);
function ok(sb, ...args) {
  const r = floe(sb, ...args);
  assert.equal(r.code, 0, `floe ${args.join(' ')} failed (${r.code}): ${r.err}`);
  return r.out;
}

// Starts `floe run` in the background (in sb.dir).
function run(sb, args = [], extraEnv = {}) {
  const r = h.start(['run', sb.job, ...args], { env: { ...sb.env, ...extraEnv }, stdin: 'pipe',
                                                stdout: 'pipe', cwd: sb.dir });
  r.wait = async () => {
    let timer;
    const timeout = new Promise((res) => { timer = setTimeout(() => res(null), WAIT_MS); });
    const e = await Promise.race([r.exited, timeout]);
    clearTimeout(timer);
    if (!e) { r.child.kill('SIGKILL'); throw new Error(`floe run did not end; stderr:\n${r.err}`); }
    return e;
  };
  return r;
}

const jobs = (sb) => h.jobRecords(sb.home);
const onlyJob = (sb) => { const j = jobs(sb); return j.length === 1 ? j[0] : null; };
const running = (sb) => { const j = onlyJob(sb); return j && j.state === 'RUNNING' && j.worker_pid > 0 ? j : null; };
const checkpointed = (sb, n = 1) => { const j = running(sb); return j && j.last_checkpoint >= n ? j : null; };
const count = (text, re) => (text.match(re) || []).length;

test('a bounded job finishes: final checkpoint, exit 0, job FINISHED', async () => {
  const sb = sandbox('bounded', { events: 500, rps: 0 });
  const r = run(sb);
  const e = await r.wait();
  assert.equal(e.code, 0, r.err);
  assert.match(r.err, /floe: job [0-9a-f]{32} \(bounded\.sql\) started/);
  assert.match(r.err, /checkpoint \d+ completed \([\d.]+ s\), final/);
  assert.match(r.err, /finished/);
  const j = onlyJob(sb);
  assert.equal(j.state, 'FINISHED');
  assert.ok(j.last_checkpoint >= 1);
  assert.equal(j.worker_pid, 0);
  assert.equal(j.token.length, 32);
});

// The restore line names the run's next checkpoint id, and it is the first one that completes
// or fails after it (the tester saw "continue at 19" followed by 21).
function assertNextCheckpointAnnounced(err, restoreLine) {
  const start = err.search(restoreLine);
  assert.ok(start >= 0, `no line matching ${restoreLine}:\n${err}`);
  const rest = err.slice(start);
  const next = rest.match(/the next checkpoint is (\d+)/);
  assert.ok(next, rest);
  const first = rest.match(/checkpoint (\d+) (completed|failed)/);
  assert.ok(first, rest);
  assert.equal(first[1], next[1], rest);
}

test('a SIGKILLed worker is restarted from the latest checkpoint with the same job id', async () => {
  const sb = sandbox('kill');
  const r = run(sb);
  const before = await waitFor('a completed checkpoint', () => checkpointed(sb));
  process.kill(before.worker_pid, 'SIGKILL');
  const e = await r.wait();
  assert.equal(e.code, 0, r.err);
  assert.match(r.err, /worker exited \(killed by SIGKILL\); restarting in [\d.]+ s from checkpoint \d+ \(restart 1\/3\)/);
  assert.match(r.err, /restored from checkpoint \d+/);
  assertNextCheckpointAnnounced(r.err, /restored from checkpoint \d+ .*sources start from its positions/);
  const after = onlyJob(sb);  // one job directory: same job id
  assert.equal(after.job_id, before.job_id);
  assert.equal(after.state, 'FINISHED');
  assert.equal(after.restarts, 1);
  assert.ok(after.last_checkpoint > before.last_checkpoint);
  assert.ok(!alive(before.worker_pid));
});

test('restart attempts exhausted: exit 1 with the reason', async () => {
  const sb = sandbox('exhaust', { events: 1_000_000, rps: 200, attempts: 1 });
  const r = run(sb);
  const first = await waitFor('the first worker', () => running(sb));
  process.kill(first.worker_pid, 'SIGKILL');
  const second = await waitFor('the restarted worker', () => {
    const j = running(sb);
    return j && j.worker_pid !== first.worker_pid ? j : null;
  });
  assert.equal(second.job_id, first.job_id);
  process.kill(second.worker_pid, 'SIGKILL');
  const e = await r.wait();
  assert.equal(e.code, 1, r.err);
  assert.match(r.err, /killed by SIGKILL; restart attempts exhausted \(1 of 1, restart-strategy\.fixed-delay\.attempts\)/);
  assert.equal(onlyJob(sb).state, 'FAILED');
});

test('FLOE_CRASH_AT reaches only the first attempt', async () => {
  const sb = sandbox('crashpoint', { events: 1500, rps: 500 });
  const r = run(sb, [], { FLOE_CRASH_AT: 'worker-checkpoint-completed:2' });
  const e = await r.wait();
  assert.equal(e.code, 0, r.err);
  assert.equal(count(r.err, /crash point 'worker-checkpoint-completed' reached/g), 1, r.err);
  assert.equal(count(r.err, /restarting in/g), 1, r.err);
  assert.match(r.err, /restored from checkpoint \d+/);
  assert.equal(onlyJob(sb).state, 'FINISHED');
});

test('a job named by pipeline.name is listed by that name', async () => {
  const sb = sandbox('named', { events: 600, rps: 2000, extra: "SET 'pipeline.name' = 'roster to nowhere';" });
  const r = run(sb);
  const e = await r.wait();
  assert.equal(e.code, 0, r.err);
  assert.equal(onlyJob(sb).name, 'roster to nowhere');
  assert.match(ok(sb, 'list', '--all'), /FINISHED\s.*roster to nowhere/);
});

test('list, savepoint, stop --savepoint, restore from it, cancel', async () => {
  const sb = sandbox('control', { events: 1_000_000, rps: 200 });
  const r = run(sb);
  const j = await waitFor('a running worker', () => running(sb));

  const list = ok(sb, 'list');
  assert.match(list, /^JOB ID\s+STATE\s+CHECKPOINT\s+PID\s+WORKER\s+JOB\s+TABLES$/m);
  // TABLES: each table's freshness (docs/monitoring.md).
  assert.match(list, new RegExp(`^${j.job_id}\\s+RUNNING\\s+\\S+\\s+${j.pid}\\s+\\d+\\s+control\\.sql\\s+` +
                                `(-|\\S+ (no commit yet|\\d+\\.\\d s ago))$`, 'm'));
  const listed = ok(sb, 'list', '--json').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(listed.length, 1);
  assert.equal(listed[0].job_id, j.job_id);
  assert.equal(listed[0].token, undefined, 'the token is not listed');
  // A second `floe run` of the live job id is refused (docs/processes.md), the job unharmed.
  const second = floe(sb, 'run', sb.job, '--job-id', j.job_id);
  assert.notEqual(second.code, 0, second.err);
  assert.match(second.err, new RegExp(`job ${j.job_id} is already running \\(pid ${j.pid}\\)`), second.err);
  assert.ok(running(sb), 'the first run still runs');

  // Savepoint into the default savepoint directory, then into a given one (by id prefix).
  const sp1 = ok(sb, 'savepoint', j.job_id).trim();
  assert.ok(sp1.startsWith(path.join(sb.chk, 'savepoints') + path.sep), sp1);
  assert.ok(fs.existsSync(path.join(sp1, '_metadata')));
  const spDir = path.join(sb.dir, 'sp');
  const sp2 = ok(sb, 'savepoint', j.job_id.slice(0, 8), spDir).trim();
  assert.equal(path.dirname(sp2), spDir);
  assert.ok(fs.existsSync(path.join(sp2, '_metadata')));
  // (spawnSync blocked the event loop: the coordinator's stderr may not be read yet.)
  await waitFor('the savepoint progress line', () => /savepoint \d+ completed/.test(r.err));

  // Stop with a savepoint: prints its path, `floe run` exits 0, the job is STOPPED.
  const stopDir = path.join(sb.dir, 'stop');
  const sp3 = ok(sb, 'stop', j.job_id, '--savepoint', stopDir).trim();
  assert.equal(path.dirname(sp3), stopDir);
  assert.ok(fs.existsSync(path.join(sp3, '_metadata')));
  const e = await r.wait();
  assert.equal(e.code, 0, r.err);
  assert.equal(onlyJob(sb).state, 'STOPPED');
  assert.equal(onlyJob(sb).message, sp3);
  assert.equal(ok(sb, 'list').trim().split('\n').length, 1, 'no running job listed');
  assert.match(ok(sb, 'list', '--all'), /STOPPED/);
  assert.notEqual(floe(sb, 'savepoint', j.job_id).code, 0, 'a stopped job takes no savepoint');

  // Resume from the stop savepoint: same job id (recorded in its _metadata), then cancel.
  const r2 = run(sb, ['--from', sp3]);
  await waitFor('the resumed job', () => running(sb));
  const c = ok(sb, 'cancel', j.job_id);
  assert.match(c, new RegExp(`job ${j.job_id} cancelled`));
  const e2 = await r2.wait();
  assert.equal(e2.code, 0, r2.err);
  assert.match(r2.err, /restored from savepoint \d+/);
  assert.equal(onlyJob(sb).job_id, j.job_id);
  assert.equal(onlyJob(sb).state, 'CANCELED');
});

// The stop's savepoint commits its side effects (docs/processes.md): the worker reports it
// complete first, then the sinks commit. A worker dying in between must not be restarted from
// an older checkpoint (that would replay rows the sinks are committing): the job is STOPPED at
// the savepoint, which a resumed run restores (its sinks commit or re-send what it staged).
test('savepoint and stop are refused while the job restarts (no worker runs)', async () => {
  // A long restart delay holds the job in RESTARTING until it is cancelled.
  const sb = sandbox('restarting', { events: 1_000_000, rps: 200, delay: '10 min' });
  const r = run(sb);
  const first = await waitFor('a running worker', () => running(sb));
  process.kill(first.worker_pid, 'SIGKILL');
  await waitFor('RESTARTING', () => onlyJob(sb)?.state === 'RESTARTING');
  for (const args of [['savepoint', first.job_id], ['stop', first.job_id, '--savepoint', path.join(sb.dir, 'sp')]]) {
    const refused = floe(sb, ...args);
    assert.notEqual(refused.code, 0, `floe ${args.join(' ')}: ${refused.out}`);
    assert.match(refused.err, /job is RESTARTING \(no running worker\); try again/, refused.err);
  }
  assert.ok(!fs.existsSync(path.join(sb.dir, 'sp')), 'no savepoint written');
  ok(sb, 'cancel', first.job_id);
  await r.wait();
  assert.equal(onlyJob(sb).state, 'CANCELED');
});

test('a worker killed right after the stop savepoint completed: STOPPED at it, not restarted', async () => {
  const sb = sandbox('stopkill', { events: 1_000_000, rps: 200 });
  const r = run(sb, [], { FLOE_CRASH_AT: 'worker-stop-savepoint-completed' });
  const j = await waitFor('a completed checkpoint', () => checkpointed(sb));
  const stopDir = path.join(sb.dir, 'stop');
  const sp = ok(sb, 'stop', j.job_id, '--savepoint', stopDir).trim();
  // The worker died before moving it into stopDir: it is where it completed.
  assert.ok(sp.startsWith(path.join(sb.chk, 'savepoints') + path.sep), sp);
  assert.ok(fs.existsSync(path.join(sp, '_metadata')));
  const e = await r.wait();
  assert.equal(e.code, 0, r.err);
  assert.equal(count(r.err, /crash point 'worker-stop-savepoint-completed' reached/g), 1, r.err);
  assert.ok(r.err.includes(`stopped with savepoint ${sp}`), r.err);
  assert.equal(count(r.err, /restarting in/g), 0, r.err);
  assert.equal(onlyJob(sb).state, 'STOPPED');
  assert.equal(onlyJob(sb).message, sp);

  const r2 = run(sb, ['--from', sp]);
  await waitFor('the resumed job', () => running(sb));
  ok(sb, 'cancel', j.job_id);
  const e2 = await r2.wait();
  assert.equal(e2.code, 0, r2.err);
  assert.match(r2.err, /restored from savepoint \d+/);
});

test('a killed coordinator takes its worker along; run --from latest resumes the job', async () => {
  const sb = sandbox('resume', { events: 3000, rps: 300 });
  const r = run(sb);
  const j = await waitFor('a completed checkpoint', () => checkpointed(sb));
  r.child.kill('SIGKILL');
  await r.wait();
  await waitFor('the orphaned worker to die', () => !alive(j.worker_pid));
  assert.match(ok(sb, 'list', '--all'), new RegExp(`^${j.job_id}\\s+LOST`, 'm'));

  const r2 = run(sb, ['--from', 'latest']);
  const e = await r2.wait();
  assert.equal(e.code, 0, r2.err);
  assert.match(r2.err, new RegExp(`job ${j.job_id} \\(resume\\.sql\\) started`));
  assert.match(r2.err, /restored from checkpoint \d+/);
  assert.equal(onlyJob(sb).state, 'FINISHED');
});

// Every process of a job (coordinator, worker) is this binary: its allocator is jemalloc, which
// gives freed memory back (docs/state.md, "Memory"), unless built with sanitizers.
test('floe --version names the commit and the allocator, jemalloc', () => {
  const r = h.floe(['--version']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^floe \S+ \(commit [0-9a-f]+/);
  assert.match(r.out, process.env.FLOE_SANITIZE ? /allocator: / : /\nallocator: jemalloc \d+\.\d+/);
});

test('a config error stops floe run before any worker or job directory exists', async () => {
  const sb = sandbox('badconfig', { interval: '5 ms' });
  const r = floe(sb, 'run', sb.job);
  assert.notEqual(r.code, 0);
  assert.match(r.err, /execution\.checkpointing\.interval must be at least 10 ms.*got 5 ?ms/);
  assert.doesNotMatch(r.err, /worker \d+ started/);
  assert.equal(jobs(sb).length, 0);
  assert.ok(!fs.existsSync(path.join(sb.home, 'jobs')) ||
            fs.readdirSync(path.join(sb.home, 'jobs')).length === 0);

  const u = floe(sb, 'run', sb.job, '--on-stale-restore', 'sometimes');
  assert.notEqual(u.code, 0);
  assert.match(u.err, /fail \| skip-to-table \| replay/);
  const l = floe(sb, 'run', sb.job.replace('badconfig', 'nothing'), '--from', 'latest');
  assert.notEqual(l.code, 0);
});

test('a SET floe does not read stops floe run with the closest key, before any job directory exists', () => {
  const sb = sandbox('typoset', { extra: "SET 'restart-strategy.fixed-delay.atempts' = '3';" });
  const r = floe(sb, 'run', sb.job);
  assert.notEqual(r.code, 0);
  assert.match(r.err, /line 7, column 1: 'restart-strategy\.fixed-delay\.atempts' is not a setting floe honours \(did you mean 'restart-strategy\.fixed-delay\.attempts'\?\)/);
  assert.equal(jobs(sb).length, 0, 'no job directory');
});

test('a misspelled Iceberg table property stops floe run with the closest key', () => {
  const sb = sandbox('typo');
  const wh = path.join(sb.dir, 'wh');
  fs.writeFileSync(sb.job, fs.readFileSync(sb.job, 'utf8').replace("WITH ('connector' = 'blackhole')",
    `WITH ('connector' = 'iceberg', 'warehouse' = '${wh}', 'catalog-database' = 'demo',
          'write.upsert.enabld' = 'true')`));
  const r = floe(sb, 'run', sb.job);
  assert.notEqual(r.code, 0);
  assert.match(r.err, /iceberg table 'sink': option 'write\.upsert\.enabld' is not a table property Iceberg defines \(did you mean 'write\.upsert\.enabled'\?\); set 'floe\.allow-unknown-properties' = 'true' to store it anyway/);
  assert.equal(jobs(sb).length, 0);
  assert.ok(!fs.existsSync(path.join(wh, 'demo', 'sink')), 'no table created');
});

test('variables come from --var, else from the environment', async () => {
  const sb = sandbox('vars', { events: 100, rps: 0 });
  sb.env.EVENTS = undefined;
  const missing = floe(sb, 'run', sb.job);
  assert.notEqual(missing.code, 0);
  assert.match(missing.err, /EVENTS/);
  assert.equal(jobs(sb).length, 0);
  const r = run(sb, ['--var', 'EVENTS=50']);
  assert.equal((await r.wait()).code, 0, r.err);
});

// Flink's URI forms of a checkpoint directory all name the same place, and a job's checkpoints
// go under <dir>/<job id>/ (Flink's layout), so jobs can share one directory.
const completedCheckpoints = (dir) =>
  fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => /^chk-\d+$/.test(n) &&
                                       fs.existsSync(path.join(dir, n, '_metadata'))) : [];

for (const [form, uri] of [['file:///x', (c) => `file://${c}`], ['file:/x', (c) => `file:${c}`],
                           ['file://localhost/x', (c) => `file://localhost${c}`],
                           ['/x', (c) => c]]) {
  test(`execution.checkpointing.dir = '${form}': checkpoints in <dir>/<job id>/chk-N`, async () => {
    const sb = sandbox('uri', { events: 300, rps: 0, chkUri: uri });
    const r = run(sb);
    const e = await r.wait();
    assert.equal(e.code, 0, r.err);
    const j = onlyJob(sb);
    assert.equal(j.checkpoint_dir, path.join(sb.chk, j.job_id));
    assert.ok(completedCheckpoints(path.join(sb.chk, j.job_id)).length >= 1,
              `no completed checkpoint in ${path.join(sb.chk, j.job_id)}`);
    assert.deepEqual(fs.readdirSync(sb.chk).sort(), [j.job_id]);
    // Nothing written under the working directory in the URI's name (the old ./file:/... bug).
    assert.ok(!fs.existsSync(path.join(sb.dir, 'file:')), 'a ./file: directory was created');
  });
}

test('two jobs share one checkpoint directory; --from latest names them, --job-id picks one',
     async () => {
  const a = sandbox('share-a', { events: 2000, rps: 200 });
  const b = sandbox('share-b', { events: 2000, rps: 200, dir: a.dir });
  const ra = run(a);
  const rb = run(b);
  const ja = await waitFor('job a to checkpoint', () =>
    jobs(a).find((j) => j.name === 'share-a.sql' && j.last_checkpoint >= 1));
  const jb = await waitFor('job b to checkpoint', () =>
    jobs(b).find((j) => j.name === 'share-b.sql' && j.last_checkpoint >= 1));
  assert.notEqual(ja.job_id, jb.job_id);
  ra.child.kill('SIGKILL');
  rb.child.kill('SIGKILL');
  await ra.wait();
  await rb.wait();
  await waitFor('the workers to die', () => !alive(ja.worker_pid) && !alive(jb.worker_pid));
  for (const j of [ja, jb]) {
    assert.ok(completedCheckpoints(path.join(a.chk, j.job_id)).length >= 1, j.job_id);
  }

  const refused = floe(a, 'run', a.job, '--from', 'latest');
  assert.equal(refused.code, 1, refused.err);
  assert.match(refused.err, /holds checkpoints of 2 jobs \(.*\); name one with --job-id/);
  assert.ok(refused.err.includes(ja.job_id) && refused.err.includes(jb.job_id), refused.err);

  const r = run(a, ['--from', 'latest', '--job-id', ja.job_id]);
  const e = await r.wait();
  assert.equal(e.code, 0, r.err);
  assert.match(r.err, new RegExp(`job ${ja.job_id} \\(share-a\\.sql\\) started`));
  assert.match(r.err, /restored from checkpoint \d+/);
});

test('a checkpoint directory in a scheme floe does not write is refused at start', () => {
  const sb = sandbox('hdfs', { chkUri: () => 'hdfs://namenode/chk' });
  const r = floe(sb, 'run', sb.job);
  assert.equal(r.code, 1);
  assert.match(r.err, /execution\.checkpointing\.dir = 'hdfs:\/\/namenode\/chk': floe reads and writes local paths, file: URIs and s3:\/\/ URIs/);
  assert.ok(!fs.existsSync(sb.home), 'a job directory was created');
});
