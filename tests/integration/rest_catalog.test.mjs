// floe's REST catalog server (`floe catalog serve`, Iceberg's JDBC catalog on the PostgreSQL
// server of CTest's fixture `postgres` behind it) with clients floe did not write, and floe's
// REST client under failure: iceberg-js creates namespaces and tables and loads what a floe job
// committed, icebird reads the tables; a floe job writes through the server while its worker
// is SIGKILLed and the server itself is killed and restarted, then `floe table verify` counts
// duplicates and missing rows.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { IcebergRestCatalog } from 'iceberg-js';
import { icebirdKeys } from './icebird_read.mjs';
import { checkpointSets, checkpointed, floe, jobRecords, killWorkerMidFeed, runJob, sandbox, sleep, start,
         tempRoot, waitFor, ROSTER_COLUMNS, testPostgres } from './harness.mjs';

const ROOT = tempRoot('floe-rest-');
const SEED = 42;
const EVENTS = 12000;
const CREDENTIAL = `floe-test:${Math.random().toString(36).slice(2)}${Date.now()}`;
const SECRET = CREDENTIAL.split(':')[1];

const { uri: PG_URI, password: PG_PASSWORD } = testPostgres();

// The PostgreSQL database outlives one run when the tests are run by hand: catalog names of
// this run only.
const RUN = Math.random().toString(36).slice(2, 8);
const servers = [];
after(() => { for (const s of servers) s.child.kill('SIGKILL'); });

// `floe catalog serve` over PostgreSQL (catalog name `name`); resolves once it listens.
async function serve(name, warehouse, port = 0) {
  const s = start(['catalog', 'serve', '--catalog', PG_URI, '--catalog-name', `${name}_${RUN}`, '--jdbc-user', 'floe',
                   '--warehouse', warehouse, '--listen', `127.0.0.1:${port}`],
                  { env: { PGPASSWORD: PG_PASSWORD, FLOE_CATALOG_CREDENTIAL: CREDENTIAL }, stdout: 'pipe' });
  servers.push(s);
  const m = await waitFor('the catalog server to listen', () => s.out.match(/at http:\/\/127\.0\.0\.1:(\d+)/) ||
                          (s.child.exitCode !== null && assert.fail(`catalog serve exited: ${s.err}`)), 30_000);
  s.port = Number(m[1]);
  s.uri = `http://127.0.0.1:${s.port}`;
  return s;
}

async function token(uri) {
  const [id, secret] = CREDENTIAL.split(':');
  const r = await fetch(`${uri}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret, scope: 'catalog' }),
  });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return JSON.parse(text).access_token;
}

// iceberg-js as a user would configure it (it has no OAuth2 flow: a bearer token).
async function icebergJs(uri) {
  return new IcebergRestCatalog({ baseUrl: uri, warehouse: 'lake', auth: { type: 'bearer', token: await token(uri) } });
}

const tableCli = (uri) => ['--catalog', uri];
const cliEnv = { FLOE_CATALOG_CREDENTIAL: CREDENTIAL };

// icebird reads the metadata file the catalog names, and must see what `floe table scan` sees.
async function assertIcebirdReads(uri, table, location, key) {
  const s = floe(['table', 'scan', table, ...tableCli(uri)], cliEnv);
  assert.equal(s.code, 0, s.err);
  const scanned = s.out.split('\n').filter(Boolean).map((l) => String(JSON.parse(l)[key])).sort();
  assert.deepEqual(await icebirdKeys({ location, key }), scanned, 'icebird rows differ from floe table scan');
}

test('iceberg-js creates a namespace and a table on floe\'s server, floe writes it, iceberg-js loads the commits; hostile calls get errors', async () => {
  const wh = path.join(ROOT, 'wh-js');
  const server = await serve('js', wh);
  const js = await icebergJs(server.uri);
  await js.createNamespace({ namespace: ['sales'] }, { properties: { owner: 'data-eng' } });
  assert.deepEqual((await js.loadNamespaceMetadata({ namespace: ['sales'] })).properties, { owner: 'data-eng' });
  const created = await js.createTable({ namespace: ['sales'] }, {
    name: 'orders',
    schema: { type: 'struct', fields: [
      { id: 1, name: 'order_id', type: 'long', required: true },
      { id: 2, name: 'amount', type: 'double', required: false },
      { id: 3, name: 'placed', type: 'timestamptz', required: false }] },
    'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 3, name: 'placed_day', transform: 'day' }] },
    properties: { 'write.parquet.compression-codec': 'zstd' },
  });
  assert.equal(created['format-version'], 2);
  assert.deepEqual(created['partition-specs'][0].fields.map((f) => f.transform), ['day']);

  // floe writes the table iceberg-js made (floe table append through the same server).
  const rows = path.join(ROOT, 'orders.jsonl');
  fs.writeFileSync(rows, [1, 2, 3].map((i) => JSON.stringify({ order_id: i, amount: i * 1.5, placed: `2026-11-0${i}T10:00:00Z` })).join('\n') + '\n');
  for (let i = 0; i < 2; i++) {
    const a = floe(['table', 'append', 'sales.orders', rows, ...tableCli(server.uri)], cliEnv);
    assert.equal(a.code, 0, a.err);
  }
  const loaded = await js.loadTableResult({ namespace: ['sales'], name: 'orders' });
  assert.equal(loaded.metadata.snapshots.length, 2);
  assert.equal(loaded.metadata.snapshots[1].summary['total-records'], '6');
  assert.match(loaded['metadata-location'], /\/sales\/orders\/metadata\/00002-[0-9a-f-]{36}\.metadata\.json$/);
  await assertIcebirdReads(server.uri, 'sales.orders', loaded['metadata-location'], 'order_id');
  assert.deepEqual((await js.listTables({ namespace: ['sales'] })).identifiers.map((t) => t.name), ['orders']);

  // A stale commit is a 409; an unknown update a 400; without a token a 401.
  const base = loaded.metadata;
  await assert.rejects(js.commitTable({ namespace: ['sales'], name: 'orders' }, {
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1 }], updates: [] }),
  (e) => e.status === 409);
  await assert.rejects(js.commitTable({ namespace: ['sales'], name: 'orders' }, {
    requirements: [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }], updates: [{ action: 'set-magic' }] }),
  (e) => e.status === 400);
  const anonymous = new IcebergRestCatalog({ baseUrl: server.uri });
  await assert.rejects(anonymous.listNamespaces(), (e) => e.status === 401);
  await js.dropTable({ namespace: ['sales'], name: 'orders' }, { purge: true });
  assert.equal(await js.tableExists({ namespace: ['sales'], name: 'orders' }), false);
});

// Issue 21, finding 6: with a valid token, a client commits to table `attacker` a snapshot whose
// manifest list is table `victim`'s, or points write.data.path elsewhere; the owner's routine
// expiry would then delete victim's files. floe's server refuses both with a 400 and Iceberg's
// ErrorModel, before anything is written; so does `floe table set-properties` through the
// server. Victim stays whole and readable. Failed before: both commits were accepted (200).
test('a commit pointing a table at files outside its location is a 400; the other table stays whole', async () => {
  const wh = path.join(ROOT, 'wh-paths');
  const server = await serve('paths', wh);
  const js = await icebergJs(server.uri);
  await js.createNamespace({ namespace: ['lake'] });
  const schema = { type: 'struct', fields: [{ id: 1, name: 'id', type: 'long', required: true }] };
  for (const name of ['victim', 'attacker']) {
    await js.createTable({ namespace: ['lake'] }, { name, schema });
    const rows = path.join(ROOT, `${name}.jsonl`);
    fs.writeFileSync(rows, '{"id": 1}\n{"id": 2}\n');
    const a = floe(['table', 'append', `lake.${name}`, rows, ...tableCli(server.uri)], cliEnv);
    assert.equal(a.code, 0, a.err);
  }
  const victim = await js.loadTableResult({ namespace: ['lake'], name: 'victim' });
  const base = (await js.loadTableResult({ namespace: ['lake'], name: 'attacker' })).metadata;
  const borrowed = victim.metadata.snapshots[0]['manifest-list'];
  const commit = async (updates) => {
    const r = await fetch(`${server.uri}/v1/namespaces/lake/tables/attacker`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await token(server.uri)}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ requirements: [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }], updates }),
    });
    return { status: r.status, body: JSON.parse(await r.text()) };
  };
  const snapshot = { 'snapshot-id': 4242, 'parent-snapshot-id': base['current-snapshot-id'],
                     'sequence-number': base['last-sequence-number'] + 1, 'timestamp-ms': Date.now(),
                     'manifest-list': borrowed, summary: { operation: 'append' }, 'schema-id': 0 };
  const stolen = await commit([{ action: 'add-snapshot', snapshot },
                               { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 4242 }]);
  assert.equal(stolen.status, 400, JSON.stringify(stolen.body));
  assert.equal(stolen.body.error.code, 400);
  assert.equal(stolen.body.error.type, 'BadRequestException');
  assert.match(stolen.body.error.message, /manifest-list '.*victim.*' is not inside the table's location/);
  for (const key of ['write.data.path', 'write.metadata.path']) {
    const moved = await commit([{ action: 'set-properties', updates: { [key]: '/tmp/elsewhere' } }]);
    assert.equal(moved.status, 400, JSON.stringify(moved.body));
    assert.match(moved.body.error.message, new RegExp(`${key.replace(/\./g, '\\.')} = '/tmp/elsewhere' is not inside`));
  }
  const cli = floe(['table', 'set-properties', 'lake.attacker', 'write.data.path=/tmp/elsewhere', ...tableCli(server.uri)], cliEnv);
  assert.notEqual(cli.code, 0);
  assert.match(cli.err, /write\.data\.path = '\/tmp\/elsewhere' is not inside the table's location/);
  const after = await js.loadTableResult({ namespace: ['lake'], name: 'attacker' });
  assert.deepEqual(after.metadata.snapshots.map((s) => s['snapshot-id']), base.snapshots.map((s) => s['snapshot-id']));
  assert.equal(after.metadata.properties['write.data.path'], undefined);
  const e = floe(['table', 'expire-snapshots', 'lake.attacker', '--max-snapshot-age-ms', '0', ...tableCli(server.uri)], cliEnv);
  assert.equal(e.code, 0, e.err);
  assert.ok(fs.existsSync(new URL(borrowed).pathname), 'victim\'s manifest list is gone');
  await assertIcebirdReads(server.uri, 'lake.victim', victim['metadata-location'], 'id');
});

function pipeline(name, uri, { upsert = false, rps = 3000 } = {}) {
  const p = sandbox(ROOT, name);
  p.table = `demo.${name}`;
  fs.writeFileSync(p.job, `-- ${name}: roster -> iceberg through floe's REST catalog server
${checkpointSets('300 ms')}
CREATE TABLE roster (${ROSTER_COLUMNS})
  WITH ('connector' = 'roster', 'seed' = '${SEED}', 'events' = '${EVENTS}', 'rows-per-second' = '${rps}');
CREATE TABLE lake (${ROSTER_COLUMNS}${upsert ? ', PRIMARY KEY (npi) NOT ENFORCED' : ''})
  WITH ('connector' = 'iceberg', 'catalog-type' = 'rest', 'uri' = '${uri}', 'warehouse' = 'lake',
        'credential' = '\${CRED}', 'catalog-database' = 'demo', 'catalog-table' = '${name}',
        'write.upsert.enabled' = '${upsert}', 'sink.parallelism' = '2');
INSERT INTO lake SELECT * FROM roster;
`);
  p.upsert = upsert;
  return p;
}

function verify(p, uri) {
  let args;
  if (!p.upsert) {
    args = ['--unique', 'seq', '--expect-range', `seq:1..${EVENTS}`];
  } else {
    const expected = path.join(p.dir, 'expected.jsonl');
    const e = floe(['roster', 'expected', '--seed', String(SEED), '--events', String(EVENTS)]);
    assert.equal(e.code, 0, e.err);
    fs.writeFileSync(expected, e.out);
    args = ['--expected', expected, '--key', 'npi', '--unique', 'npi'];
  }
  const r = floe(['table', 'verify', p.table, ...tableCli(uri), ...args], cliEnv);
  assert.equal(r.code, 0, `verify ${p.table} found problems:\n${r.out}\n${r.err}`);
  assert.match(r.out, /result: OK/);
  return r.out;
}

for (const upsert of [false, true]) {
  const name = `rest_${upsert ? 'upsert' : 'append'}`;
  test(`${name}: a job writes through floe's REST server; its worker SIGKILLed and the server killed and restarted mid-run: exactly once`, async (t) => {
    const wh = path.join(ROOT, `wh-${name}`);
    let server = await serve(name, wh);
    const p = pipeline(name, server.uri, { upsert });
    const r = runJob(p, { CHK: p.chk, CRED: CREDENTIAL }, {});
    // The server dies after two checkpoints and comes back on its port half a second later.
    await waitFor('two checkpoints', () => checkpointed(p.home, 2));
    server.child.kill('SIGKILL');
    await sleep(500);
    server = await serve(name, wh, server.port);
    await killWorkerMidFeed(p, 4, 800);
    const { code, err } = await r.done;
    assert.equal(code, 0, err);
    assert.match(err, /killed by SIGKILL/, err);
    t.diagnostic(`worker attempts: ${(err.match(/worker \d+ started/g) || []).length}; ${verify(p, server.uri)}`);
    // iceberg-js sees floe's commits, with floe's markers.
    const js = await icebergJs(server.uri);
    const loaded = await js.loadTableResult({ namespace: ['demo'], name });
    const marked = loaded.metadata.snapshots.filter((s) => s.summary['floe.sink-id']);
    assert.ok(marked.length > 0, 'no snapshot carries floe.sink-id');
    await assertIcebirdReads(server.uri, p.table, loaded['metadata-location'], upsert ? 'npi' : 'seq');
    // The credential's secret shows nowhere but the job's private run.json.
    const job = jobRecords(p.home)[0];
    const seen = [['floe run stderr', err], ['job.json', JSON.stringify(job)],
                  ['floe list', floe(['list', '--all'], { FLOE_HOME: p.home }).out]];
    for (const [where, text] of seen) assert.ok(!text.includes(SECRET), `the credential shows in ${where}`);
  });
}

// The REST commit's window: the request not yet sent, and committed but not yet recorded.
for (const point of ['before-metadata-file', 'after-commit-before-record']) {
  test(`SIGKILL at ${point} (2nd hit) with the commit going through REST, then restart: exactly once`, async () => {
    const name = `rest_crash_${point.replace(/-/g, '_')}`;
    const server = await serve(name, path.join(ROOT, `wh-${name}`));
    const p = pipeline(name, server.uri, { rps: 6000 });
    const { code, err } = await runJob(p, { CHK: p.chk, CRED: CREDENTIAL }, { crashAt: `${point}:2` }).done;
    assert.equal(code, 0, err);
    assert.match(err, /killed by SIGKILL/, `crash point ${point} was never reached:\n${err}`);
    verify(p, server.uri);
  });
}
