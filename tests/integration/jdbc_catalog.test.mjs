// Iceberg's JDBC catalog under failure: the roster job writes through 'catalog-type' = 'jdbc' on
// SQLite and on a real PostgreSQL server (CTest's fixture `postgres` starts it with
// tests/postgres/test_postgres.sh and passes its directory in FLOE_TEST_POSTGRES_DIR); workers
// are SIGKILLed at random moments and at the catalog's crash points, then `floe table verify
// --catalog` counts duplicates and missing rows and icebird reads the current metadata file.
// Also: the password never shows, bad catalog options are refused at start, two jobs commit
// to one table concurrently through PostgreSQL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { icebirdKeys } from './icebird_read.mjs';
import { spawnSync } from 'node:child_process';
import { checkpointSets, checkpointed, floe, jobRecords, killWorkerMidFeed, runJob, sandbox, sleep, tempRoot, waitFor, ROSTER_COLUMNS, testPostgres } from './harness.mjs';

const ROOT = tempRoot('floe-jdbc-');
const SEED = 42;
const EVENTS = 12000;

const { uri: PG_URI, password: PG_PASSWORD } = testPostgres();

// The S3 server of CTest's fixture `s3rver` (tests/s3/test_s3rver.sh), bucket floe-test.
const S3_DIR = process.env.FLOE_TEST_S3_DIR;
assert.ok(S3_DIR && fs.existsSync(path.join(S3_DIR, 'endpoint')),
          'FLOE_TEST_S3_DIR must name a running s3rver (ctest starts one: fixture s3rver)');
const S3_ENDPOINT = fs.readFileSync(path.join(S3_DIR, 'endpoint'), 'utf8').trim();
const S3_BUCKET = 'floe-test';
const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_ENDPOINT_URL: S3_ENDPOINT };

// Each pipeline its own catalog name (the PostgreSQL database is shared) and, on SQLite, its
// own database file. The database outlives one run when the tests are run by hand: catalog
// names of this run only. Kind 's3': the PostgreSQL catalog with the table on S3, its settings
// in Iceberg's s3.* options (the commands take them from the AWS environment).
const RUN = Math.random().toString(36).slice(2, 8);

function backend(kind, p, table) {
  const name = `${table}_${RUN}`;
  if (kind === 'sqlite') {
    const uri = `jdbc:sqlite:${path.join(p.dir, 'catalog.db')}`;
    return { uri, options: `'uri' = '${uri}'`, cli: ['--catalog', uri, '--catalog-name', name], env: {} };
  }
  const pg = { uri: PG_URI,
               options: `'uri' = '${PG_URI}', 'jdbc.user' = 'floe', 'jdbc.password' = '\${PGPW}'`,
               cli: ['--catalog', PG_URI, '--catalog-name', name, '--jdbc-user', 'floe'],
               env: { PGPASSWORD: PG_PASSWORD } };
  if (kind === 's3') {
    p.wh = `s3://${S3_BUCKET}/${name}`;
    pg.options += `, 's3.endpoint' = '${S3_ENDPOINT}', 's3.path-style-access' = 'true',
        's3.access-key-id' = 'S3RVER', 's3.secret-access-key' = 'S3RVER'`;
    pg.env = { ...pg.env, ...S3_ENV };
  }
  return pg;
}

function pipeline(kind, name, { upsert = false, rps = 3000, interval = '300 ms', where = '', sinkId = '',
                                table = name, extra = '' } = {}) {
  const p = { ...sandbox(ROOT, name), upsert, kind };
  p.catalog = backend(kind, p, table);
  p.table = `demo.${table}`;
  // Kind 's3': the checkpoints on S3 too, with Flink's S3 keys.
  if (kind === 's3') p.chk = `${p.wh}-checkpoints`;
  const s3Sets = kind !== 's3' ? '' : `
SET 's3.endpoint' = '${S3_ENDPOINT}';
SET 's3.path.style.access' = 'true';
SET 's3.access-key' = 'S3RVER';
SET 's3.secret-key' = 'S3RVER';`;
  fs.writeFileSync(p.job, `-- ${name}: roster -> iceberg through a JDBC catalog (${kind})
${checkpointSets(interval)}${s3Sets}
CREATE TABLE roster (${ROSTER_COLUMNS})
  WITH ('connector' = 'roster', 'seed' = '${SEED}', 'events' = '${EVENTS}', 'rows-per-second' = '${rps}');
CREATE TABLE lake (${ROSTER_COLUMNS}${upsert ? ', PRIMARY KEY (npi) NOT ENFORCED' : ''})
  WITH ('connector' = 'iceberg', 'catalog-type' = 'jdbc', 'catalog-name' = '${table}_${RUN}',
        ${p.catalog.options}, 'warehouse' = '\${WH}', 'catalog-database' = 'demo',
        'catalog-table' = '${table}', 'write.upsert.enabled' = '${upsert}',
        'sink.parallelism' = '2'${sinkId ? `, 'sink-id' = '${sinkId}'` : ''}${extra});
INSERT INTO lake SELECT * FROM roster${where};
`);
  return p;
}

function run(p, { crashAt, args = [] } = {}) {
  return runJob(p, { CHK: p.chk, WH: p.wh, PGPW: PG_PASSWORD }, { crashAt, args });
}

function table(p, args) {
  return floe(['table', ...args.slice(0, 1), p.table, '--warehouse', p.wh, ...p.catalog.cli, ...args.slice(1)],
              p.catalog.env);
}

function verify(p) {
  let r;
  if (!p.upsert) {
    r = table(p, ['verify', '--unique', 'seq', '--expect-range', `seq:1..${EVENTS}`]);
  } else {
    const expected = path.join(p.dir, 'expected.jsonl');
    const e = floe(['roster', 'expected', '--seed', String(SEED), '--events', String(EVENTS)]);
    assert.equal(e.code, 0, e.err);
    fs.writeFileSync(expected, e.out);
    r = table(p, ['verify', '--expected', expected, '--key', 'npi', '--unique', 'npi']);
  }
  assert.equal(r.code, 0, `verify ${p.table} found problems:\n${r.out}\n${r.err}`);
  assert.match(r.out, /result: OK/);
  return r.out;
}

// icebird reads the metadata file the catalog's row names (it cannot ask a JDBC catalog) and
// must see what `floe table scan` sees.
async function assertIcebirdReads(p, key) {
  const d = table(p, ['describe']);
  assert.equal(d.code, 0, d.err);
  const location = JSON.parse(d.out.replace(/"((?:current-|parent-)?snapshot-id)":\s*(-?\d+)/g, '"$1":"$2"'))['metadata-location'];
  assert.match(path.basename(location), /^\d{5}-[0-9a-f-]{36}\.metadata\.json$/);
  const s = table(p, ['scan']);
  assert.equal(s.code, 0, s.err);
  const scanned = s.out.split('\n').filter(Boolean).map((l) => String(JSON.parse(l)[key])).sort();
  assert.deepEqual(await icebirdKeys({ location, key, s3Endpoint: S3_ENDPOINT }), scanned,
                   'icebird rows differ from floe table scan');
}

for (const kind of ['sqlite', 'postgres', 's3']) {
  for (const upsert of [false, true]) {
    const name = `${kind}_${upsert ? 'upsert' : 'append'}_kill`;
    test(`${name}: worker SIGKILLed at a random point, every event lands exactly once; icebird reads the table`, async (t) => {
      const p = pipeline(kind, name, { upsert });
      const r = run(p);
      await killWorkerMidFeed(p, 2, 1200);
      const { code, err } = await r.done;
      assert.equal(code, 0, err);
      assert.match(err, /killed by SIGKILL/, err);
      t.diagnostic(verify(p));
      await assertIcebirdReads(p, upsert ? 'npi' : 'seq');
    });
  }
  // The JDBC commit's own window: metadata file written, row not yet swapped.
  for (const point of ['before-metadata-file', 'after-metadata-file-before-swap', 'after-commit-before-record']) {
    const name = `${kind}_crash_${point.replace(/-/g, '_')}`;
    test(`${name}: SIGKILL at ${point} (2nd hit), then restart: exactly once`, async () => {
      const p = pipeline(kind, name, { rps: 6000 });
      const { code, err } = await run(p, { crashAt: `${point}:2` }).done;
      assert.equal(code, 0, err);
      assert.match(err, /killed by SIGKILL/, `crash point ${point} was never reached:\n${err}`);
      verify(p);
    });
  }
}

// On S3 a client floe did not write (the AWS SDK) finds every object the table references, and
// the data prefix holds no object of a killed attempt: the restart removed them by listing S3.
test('s3: the AWS SDK finds every file the table references; the killed attempt left no data object behind', async (t) => {
  const p = pipeline('s3', 's3_objects', { extra: `, 'flink-maintenance.rewrite.enabled' = 'false',
        'flink-maintenance.expire-snapshots.enabled' = 'false',
        'flink-maintenance.delete-orphan-files.enabled' = 'false'` });
  const { code, err } = await run(p, { crashAt: 'after-barrier-ack:2' }).done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
  verify(p);
  const { S3Client, HeadObjectCommand, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const s3 = new S3Client({ endpoint: S3_ENDPOINT, region: 'us-east-1', forcePathStyle: true,
                            credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  const prefix = `${p.wh.slice(`s3://${S3_BUCKET}/`.length)}/demo/s3_objects/`;
  const files = table(p, ['files']);
  assert.equal(files.code, 0, files.err);
  const referenced = files.out.split('\n').filter(Boolean).map((l) => JSON.parse(l).file_path);
  assert.ok(referenced.length > 0);
  for (const f of referenced) {
    assert.ok(f.startsWith(`s3://${S3_BUCKET}/${prefix}data/`), f);
    const head = await s3.send(new HeadObjectCommand({ Bucket: S3_BUCKET, Key: f.slice(`s3://${S3_BUCKET}/`.length) }));
    assert.ok(head.ContentLength > 0, `${f} is empty`);
  }
  // The checkpoints are on S3 too: the AWS SDK finds completed ones (their _metadata).
  const chkPrefix = p.chk.slice(`s3://${S3_BUCKET}/`.length) + '/';
  const chk = await s3.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: chkPrefix }));
  assert.ok((chk.Contents ?? []).some((o) => o.Key.endsWith('/_metadata')), `no checkpoint _metadata under ${p.chk}`);
  const keys = [];
  let token;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: `${prefix}data/`, ContinuationToken: token }));
    for (const o of page.Contents ?? []) keys.push(`s3://${S3_BUCKET}/${o.Key}`);
    token = page.NextContinuationToken;
  } while (token);
  assert.deepEqual(keys.sort(), [...referenced].sort(), 'data objects on S3 differ from the files the table references');
  // An object nothing references (a writer killed before any restart cleaned up) is listed by
  // remove-orphan-files on S3 as on disk, and removed.
  const { PutObjectCommand, DeleteObjectCommand } = await import('@aws-sdk/client-s3');
  // The killed worker's lease covers what was written after it for its ttl (5 min); the job has
  // ended, so it is removed here as if that had passed.
  const leases = await s3.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: `${prefix}metadata/floe-leases/` }));
  assert.ok((leases.Contents ?? []).length > 0, 'the killed worker left its lease on S3');
  for (const o of leases.Contents ?? []) await s3.send(new DeleteObjectCommand({ Bucket: S3_BUCKET, Key: o.Key }));
  const stray = `${prefix}data/stray-writer-00000.parquet`;
  await s3.send(new PutObjectCommand({ Bucket: S3_BUCKET, Key: stray, Body: 'PAR1' }));
  await sleep(1100);  // S3's LastModified has whole seconds
  const dry = table(p, ['remove-orphan-files', '--older-than', '0s', '--force-unsafe-interval', '--dry-run']);
  assert.equal(dry.code, 0, dry.err);
  assert.ok(dry.out.includes(`s3://${S3_BUCKET}/${stray}`), `the stray object is not listed:\n${dry.out}`);
  const rm = table(p, ['remove-orphan-files', '--older-than', '0s', '--force-unsafe-interval']);
  assert.equal(rm.code, 0, rm.err);
  await assert.rejects(s3.send(new HeadObjectCommand({ Bucket: S3_BUCKET, Key: stray })), (e) => e.$metadata?.httpStatusCode === 404);
  const removed = err.match(/removed (\d+) files \(\d+ bytes\) from demo\.s3_objects/);
  t.diagnostic(`${referenced.length} data objects, all referenced; ${removed ? removed[1] : 0} objects of the killed attempt removed at restart`);
  await assertIcebirdReads(p, 'seq');
});

test('postgres maintenance: compaction and expiry inside the job through the JDBC catalog, with a kill: exactly once', async (t) => {
  const p = pipeline('postgres', 'postgres_maintenance', {
    upsert: true,
    extra: `, 'flink-maintenance.rewrite.schedule.commit-count' = '2',
        'flink-maintenance.rewrite.min-input-files' = '2',
        'flink-maintenance.expire-snapshots.schedule.commit-count' = '3',
        'flink-maintenance.expire-snapshots.max-snapshot-age-seconds' = '0',
        'flink-maintenance.expire-snapshots.retain-last' = '2'` });
  const r = run(p);
  await killWorkerMidFeed(p, 3, 1000);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  t.diagnostic(verify(p));
  await assertIcebirdReads(p, 'npi');
});

// One job writing 120 tables through PostgreSQL, whose server takes 100 connections: a routed
// sink's writer and committer tasks each share one catalog connection among their tables (a
// connection per table would exhaust the server). Killed mid-feed: every event once over all
// tables, each in the table its route names.
test('postgres: one job routing the roster to 120 tables, killed mid-feed: every event once, in its table', async (t) => {
  const TABLES = 120;
  const p = { ...sandbox(ROOT, 'postgres_routed'), kind: 'postgres' };
  p.catalog = backend('postgres', p, 'postgres_routed');
  fs.writeFileSync(p.job, `-- roster -> ${TABLES} iceberg tables through a JDBC catalog (postgres)
${checkpointSets('300 ms')}
CREATE TABLE roster (${ROSTER_COLUMNS})
  WITH ('connector' = 'roster', 'seed' = '${SEED}', 'events' = '${EVENTS}', 'rows-per-second' = '1500');
CREATE TABLE lake (${ROSTER_COLUMNS}, route STRING)
  WITH ('connector' = 'iceberg', 'catalog-type' = 'jdbc', 'catalog-name' = 'postgres_routed_${RUN}',
        ${p.catalog.options}, 'warehouse' = '\${WH}', 'catalog-database' = 'demo',
        'catalog-table' = 'r{route}', 'sink.parallelism' = '2');
INSERT INTO lake SELECT *, CAST(seq % ${TABLES} AS STRING) FROM roster;
`);
  const r = run(p);
  await killWorkerMidFeed(p, 2, 1200);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /killed by SIGKILL/, err);
  const seen = new Map();
  for (let route = 0; route < TABLES; ++route) {
    const s = floe(['table', 'scan', `demo.r${route}`, '--warehouse', p.wh, ...p.catalog.cli], p.catalog.env);
    assert.equal(s.code, 0, s.err);
    for (const row of s.out.split('\n').filter(Boolean).map((l) => JSON.parse(l))) {
      assert.equal(Number(row.seq) % TABLES, route, `seq ${row.seq} in demo.r${route}`);
      seen.set(Number(row.seq), (seen.get(Number(row.seq)) || 0) + 1);
    }
  }
  const duplicates = [...seen.values()].filter((n) => n > 1).length;
  const missing = [];
  for (let seq = 1; seq <= EVENTS; ++seq) if (!seen.has(seq)) missing.push(seq);
  t.diagnostic(`${TABLES} tables: ${seen.size} events, ${duplicates} duplicated, ${missing.length} missing`);
  assert.deepEqual({ duplicates, missing: missing.slice(0, 20) }, { duplicates: 0, missing: [] });
});

// A server of this test's own (the shared one serves other tests meanwhile), which it stops and
// starts again: an outage of the catalog while the job commits.
function privatePostgres() {
  const dir = fs.mkdtempSync('/tmp/floe-pg-');
  const script = path.join(import.meta.dirname, '..', 'postgres', 'test_postgres.sh');
  const ctl = (cmd) => {
    const r = spawnSync('bash', [script, cmd, dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, `test_postgres.sh ${cmd}: ${r.stderr}`);
  };
  ctl('start');
  return { ctl, uri: fs.readFileSync(path.join(dir, 'uri'), 'utf8').trim(),
           password: fs.readFileSync(path.join(dir, 'password'), 'utf8').trim() };
}

// The tester's case: a 20 s PostgreSQL outage cost 35 task restarts (3 fail a job by default).
// With 'sink.commit.unavailable-timeout' = '0 s' (the behaviour before) the job restarts here.
test('a PostgreSQL outage while the job commits is waited out inside the commit: no restart, exactly once', async (t) => {
  const pg = privatePostgres();
  t.after(() => pg.ctl('stop'));
  const p = pipeline('postgres', 'postgres_outage', { rps: 1500 });
  fs.writeFileSync(p.job, fs.readFileSync(p.job, 'utf8').replaceAll(PG_URI, pg.uri));
  p.catalog.cli = p.catalog.cli.map((a) => (a === PG_URI ? pg.uri : a));
  p.catalog.env = { PGPASSWORD: pg.password };
  const r = runJob(p, { CHK: p.chk, WH: p.wh, PGPW: pg.password }, {});
  await waitFor('a completed checkpoint', () => checkpointed(p.home, 1));
  pg.ctl('pause');
  await sleep(4000);
  pg.ctl('resume');
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  assert.match(err, /catalog unavailable while committing checkpoint \d+ to demo\.postgres_outage/, err);
  assert.doesNotMatch(err, /restarting in/, err);
  assert.equal(jobRecords(p.home)[0].restarts, 0);
  t.diagnostic(verify(p));
});

test('the PostgreSQL password shows nowhere: not in output, job records, floe list or status; a wrong one is refused at start', async () => {
  const p = pipeline('postgres', 'postgres_secret', { rps: 6000 });
  const r = run(p);
  await killWorkerMidFeed(p, 1, 300);
  const { code, err } = await r.done;
  assert.equal(code, 0, err);
  verify(p);
  const seen = [['floe run stderr', err]];
  const job = jobRecords(p.home)[0];
  seen.push(['floe list', floe(['list', '--all'], { FLOE_HOME: p.home }).out]);
  seen.push(['floe status', floe(['status', job.job_id, '--json'], { FLOE_HOME: p.home }).out]);
  const jobDir = path.join(p.home, 'jobs', job.job_id);
  for (const f of fs.readdirSync(jobDir, { recursive: true })) {
    const file = path.join(jobDir, f);
    if (!fs.statSync(file).isFile()) continue;
    if (f === 'run.json') {
      // The variables a restarted worker needs: readable by the job's user only.
      assert.equal(fs.statSync(file).mode & 0o077, 0, 'run.json is readable by others');
      continue;
    }
    seen.push([file, fs.readFileSync(file, 'latin1')]);
  }
  for (const [where, text] of seen) assert.ok(!text.includes(PG_PASSWORD), `the password shows in ${where}`);

  const wrong = `wrong-${PG_PASSWORD}`;
  const bad = runJob(p, { CHK: p.chk, WH: p.wh, PGPW: wrong }, {});
  const refused = await bad.done;
  assert.notEqual(refused.code, 0, 'a wrong password must fail the job');
  assert.match(refused.err, /password authentication failed/, refused.err);
  assert.ok(!refused.err.includes(wrong), `the wrong password shows in:\n${refused.err}`);
});

test('bad catalog options are refused at start, naming the option and the rule', () => {
  const p = pipeline('sqlite', 'bad_options');
  const text = fs.readFileSync(p.job, 'utf8');
  for (const [from, to, rule] of [
    ["'catalog-type' = 'jdbc'", "'catalog-type' = 'hive'", /'catalog-type' = 'hive' is not supported/],
    ["'catalog-type' = 'jdbc'", "'catalog-type' = 'rest'", /must be the REST catalog's http:\/\/ or https:\/\/ URI/],
    [/'uri' = '[^']*'/, "'uri' = 'mysql://db/lake'", /'uri' = 'mysql:\/\/db\/lake' is not a JDBC URI/],
    [/'uri' = '[^']*'/, "'uri' = 'jdbc:sqlite:x.db', 'jdbc.password' = 'p'", /SQLite has no users/],
  ]) {
    fs.writeFileSync(p.job, text.replace(from, to));
    const r = floe(['run', p.job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`], { FLOE_HOME: p.home });
    assert.notEqual(r.code, 0);
    assert.match(r.err, rule);
    assert.match(r.err, /iceberg table 'lake'/);
  }
});

test('two jobs commit to one table through PostgreSQL at once: conflicts retried, nothing lost or doubled', async (t) => {
  // 20 ms checkpoints for about 12 s: the two jobs' commits overlap often enough to conflict. Whether
  // one does is a race (a busy machine can serialize them), so the run is repeated on a fresh table,
  // up to 3 times, until one conflicted; every run must lose and double nothing.
  let conflicted = 0;
  for (let attempt = 1; attempt <= 3 && conflicted === 0; ++attempt) {
    const shared = `shared${attempt}`;
    const a = pipeline('postgres', `${shared}_a`, { table: shared, interval: '20 ms', rps: 1000, where: ' WHERE seq <= 6000', sinkId: 'a' });
    const b = pipeline('postgres', `${shared}_b`, { table: shared, interval: '20 ms', rps: 1000, where: ' WHERE seq > 6000', sinkId: 'b' });
    b.wh = a.wh;
    const [da, db] = await Promise.all([run(a).done, run(b).done]);
    assert.equal(da.code, 0, da.err);
    assert.equal(db.code, 0, db.err);
    t.diagnostic(verify(a));
    const snaps = table(a, ['snapshots']);
    assert.equal(snaps.code, 0, snaps.err);
    const bySink = {};
    const times = [];
    for (const line of snaps.out.split('\n').filter(Boolean)) {
      const s = JSON.parse(line);
      const sink = s.summary?.['floe.sink-id'];
      if (sink) {
        bySink[sink] = (bySink[sink] || 0) + 1;
        times.push(Date.parse(s.committed_at));
      }
    }
    assert.ok(bySink.a > 1 && bySink.b > 1, `both jobs committed several times: ${JSON.stringify(bySink)}`);
    const conflicts = [da.err, db.err].map((err) =>
      [...err.matchAll(/after (\d+) conflicts with other writers/g)].reduce((n, m) => n + Number(m[1]), 0));
    conflicted = conflicts[0] + conflicts[1];
    const seconds = (Math.max(...times) - Math.min(...times)) / 1000;
    t.diagnostic(`run ${attempt}: commits per sink: ${JSON.stringify(bySink)}; conflicts retried: a ${conflicts[0]}, ` +
                 `b ${conflicts[1]}; ${(times.length / seconds).toFixed(1)} commits/s over ${seconds.toFixed(1)} s`);
  }
  assert.ok(conflicted > 0, 'no commit conflicted in 3 runs: the test did not exercise the retry');
});
