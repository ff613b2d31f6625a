// The `floe table` commands driven as a user would: real processes, real files.
// FLOE_BIN points at the floe binary (ctest passes it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as h from './harness.mjs';

const WH = h.tempRoot('floe-cli-');

const floe = (...args) => h.floe([...args, '--warehouse', WH]);
function ok(...args) {
  const r = floe(...args);
  assert.equal(r.code, 0, `floe ${args.join(' ')} failed: ${r.err}`);
  return r.out;
}
function scan(table, ...extra) {
  return ok('table', 'scan', table, ...extra).split('\n').filter(Boolean).map((l) => JSON.parse(l));
}
function describe(table) {
  return JSON.parse(ok('table', 'describe', table));
}
const writeLines = (name, rows) => h.writeJsonl(path.join(WH, name), rows);
function dataFiles(table) {
  const [ns, t] = table.split('.');
  const out = [];
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p); else out.push(p);
    }
  };
  walk(path.join(WH, ns, t, 'data'));
  return out.sort();
}
const byKey = (k) => (a, b) => (a[k] < b[k] ? -1 : a[k] > b[k] ? 1 : 0);

const SCHEMA = 'id BIGINT NOT NULL, name STRING, score DECIMAL(10, 2), ts TIMESTAMP(6), day DATE, ok BOOLEAN';

test('create, append, upsert, delete and scan with deletes applied', () => {
  ok('table', 'create', 'db.people', '--schema', SCHEMA, '--primary-key', 'id',
     '--property', 'write.target-file-size-bytes=1048576');
  const d0 = describe('db.people');
  assert.deepEqual(d0['primary-key'], ['id']);
  assert.equal(d0['current-snapshot-id'], null);
  assert.equal(d0.properties['write.target-file-size-bytes'], '1048576');

  const first = [];
  for (let i = 1; i <= 100; i++) {
    first.push({ id: i, name: `n${i}`, score: `${i}.50`, ts: '2024-03-01T10:00:00.000001', day: '2024-03-01', ok: i % 2 === 0 });
  }
  ok('table', 'append', 'db.people', writeLines('first.jsonl', first));
  assert.equal(scan('db.people').length, 100);

  // Upsert: ids 91..110, id 95 twice in the file (the last one wins), 101..110 are new.
  const up = [];
  for (let i = 91; i <= 110; i++) up.push({ id: i, name: `u${i}`, score: '1.00', ts: null, day: null, ok: null });
  up.push({ id: 95, name: 'u95-last', score: '2.25', ts: '1969-12-31 23:59:59.5', day: '1900-01-01', ok: true });
  ok('table', 'upsert', 'db.people', writeLines('up.jsonl', up));
  let rows = scan('db.people').sort(byKey('id'));
  assert.equal(rows.length, 110);
  assert.equal(new Set(rows.map((r) => r.id)).size, 110, 'no key twice');
  const r95 = rows.find((r) => r.id === 95);
  assert.equal(r95.name, 'u95-last');
  assert.equal(r95.score, '2.25');
  assert.equal(r95.ts, '1969-12-31T23:59:59.5');
  assert.equal(r95.day, '1900-01-01');
  assert.equal(rows.find((r) => r.id === 90).name, 'n90');

  // Delete: only key columns are needed.
  ok('table', 'delete', 'db.people', writeLines('del.jsonl', [{ id: 1 }, { id: 105 }, { id: 999 }]));
  rows = scan('db.people');
  assert.equal(rows.length, 108);
  assert.ok(!rows.some((r) => r.id === 1 || r.id === 105));

  const d = describe('db.people');
  assert.equal(d.snapshots.length, 3);
  assert.deepEqual(d.snapshots.map((s) => s.operation), ['append', 'overwrite', 'delete']);
  assert.equal(d.snapshots[2].summary['total-records'] !== undefined, true);
  assert.ok(d.files['delete-files'] >= 2);
  assert.equal(d.files['data-files'] >= 2, true);

  // Scan an older snapshot: the first append alone.
  const firstId = String(d.snapshots[0]['snapshot-id']);
  const raw = ok('table', 'describe', 'db.people');
  const idText = raw.match(/"snapshot-id": (\d+)/)[1];  // exact digits (ids exceed 2^53)
  assert.equal(scan('db.people', '--snapshot', idText).length, 100, firstId);
  assert.equal(scan('db.people', '--limit', '7').length, 7);
});

test('a bad line names file, line, field and type, and commits nothing', () => {
  ok('table', 'create', 'db.strict', '--schema', 'id BIGINT NOT NULL, qty INT');
  ok('table', 'append', 'db.strict', writeLines('good.jsonl', [{ id: 1, qty: 1 }]));
  const before = describe('db.strict');
  const filesBefore = dataFiles('db.strict');
  const lines = [];
  for (let i = 0; i < 5000; i++) lines.push({ id: i, qty: i });
  lines[4321] = '{"id": 4321, "qty": "lots"}';
  const bad = writeLines('bad.jsonl', lines);
  const r = floe('table', 'append', 'db.strict', bad);
  assert.notEqual(r.code, 0);
  assert.match(r.err, /bad\.jsonl:4322/);
  assert.match(r.err, /qty/);
  assert.match(r.err, /INT/);
  assert.match(r.err, /nothing was committed/);
  const after = describe('db.strict');
  assert.equal(after.snapshots.length, before.snapshots.length);
  assert.deepEqual(dataFiles('db.strict'), filesBefore, 'no orphan files left behind');
  assert.equal(scan('db.strict').length, 1);

  const missing = floe('table', 'append', 'db.strict', writeLines('nonull.jsonl', [{ qty: 3 }]));
  assert.notEqual(missing.code, 0);
  assert.match(missing.err, /nonull\.jsonl:1/);
  assert.match(missing.err, /'id'/);
});

test('append names content after the object and stray byte-order marks; skips a leading one', () => {
  ok('table', 'create', 'db.bom', '--schema', 'id BIGINT NOT NULL, name STRING');
  const file = (name, text) => {
    const f = path.join(WH, name);
    fs.writeFileSync(f, text);
    return f;
  };
  let r = floe('table', 'append', 'db.bom', file('junk.jsonl', '{"id":1}\n{"id":4} xyz\n'));
  assert.notEqual(r.code, 0);
  assert.match(r.err, /nothing was committed: .*junk\.jsonl:2: unexpected content after the JSON object at column 10: xyz/);
  const BOM = '\uFEFF';  // written as EF BB BF
  ok('table', 'append', 'db.bom', file('bom.jsonl', `${BOM}{"id":1}\n{"id":2}\n`));
  assert.deepEqual(scan('db.bom').map((x) => x.id).sort(), [1, 2]);
  r = floe('table', 'append', 'db.bom', file('joined.jsonl', `{"id":3}\n${BOM}{"id":4}\n`));
  assert.notEqual(r.code, 0);
  assert.match(r.err, /joined\.jsonl:2: stray UTF-8 byte-order mark \(EF BB BF\) at the start of the line; only the start of a file may hold one/);
  for (const [name, text] of [['bomonly.jsonl', BOM], ['empty.jsonl', ''], ['blank.jsonl', `${BOM}\n\n`]]) {
    r = floe('table', 'append', 'db.bom', file(name, text));
    assert.notEqual(r.code, 0);
    assert.match(r.err, new RegExp(`nothing was committed: .*${name.replace('.', '\\.')} holds no rows`));
  }
  assert.equal(describe('db.bom').snapshots.length, 1);
});

test('scan checks every file before printing a row, and says when output is incomplete', () => {
  ok('table', 'create', 'db.torn', '--schema', 'id BIGINT NOT NULL, name STRING');
  const rows = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => ({ id: a + i, name: `n${a + i}` }));
  ok('table', 'append', 'db.torn', writeLines('torn1.jsonl', rows(1, 100)));
  const [f1] = dataFiles('db.torn');
  ok('table', 'append', 'db.torn', writeLines('torn2.jsonl', rows(101, 200)));
  const [f2] = dataFiles('db.torn').filter((f) => f !== f1);
  // The file read second: scan reads files in plan order.
  const first = scan('db.torn')[0].id <= 100 ? f1 : f2;
  const second = first === f1 ? f2 : f1;
  const bytes = fs.readFileSync(second);

  // Truncated: its footer is gone. Nothing is printed, the error names the file.
  fs.writeFileSync(second, bytes.subarray(0, bytes.length - 100));
  let r = floe('table', 'scan', 'db.torn');
  assert.notEqual(r.code, 0);
  assert.equal(r.out, '', 'no row printed before the error');
  assert.match(r.err, new RegExp(path.basename(second).replace('.', '\\.')));

  // Footer intact, a page broken: found only when read, after the first file's rows.
  const broken = Buffer.from(bytes);
  for (let i = 4; i < 64; i++) broken[i] ^= 0x5a;
  fs.writeFileSync(second, broken);
  r = floe('table', 'scan', 'db.torn');
  assert.notEqual(r.code, 0);
  assert.equal(r.out.split('\n').filter(Boolean).length, 100);
  assert.match(r.err, /output incomplete: 100 rows printed before this error/);
  assert.match(r.err, new RegExp(path.basename(second).replace('.', '\\.')));
  fs.writeFileSync(second, bytes);
  assert.equal(scan('db.torn').length, 200);
});

test('config and usage errors are caught before anything is created', () => {
  let r = floe('table', 'create', 'db.bad1', '--schema', 'id BIGINT', '--property', 'write.parquet.compression-codec=lz5');
  assert.notEqual(r.code, 0);
  assert.match(r.err, /write\.parquet\.compression-codec/);
  assert.ok(!fs.existsSync(path.join(WH, 'db', 'bad1')));
  // A misspelled Iceberg property is refused with the closest key; the opt-in stores it.
  r = floe('table', 'create', 'db.bad1', '--schema', 'id BIGINT', '--property', 'write.target-file-size-byte=1048576');
  assert.notEqual(r.code, 0);
  assert.match(r.err, /--property 'write\.target-file-size-byte' is not a table property Iceberg defines \(did you mean 'write\.target-file-size-bytes'\?\); pass --allow-unknown-properties to store it anyway/);
  assert.ok(!fs.existsSync(path.join(WH, 'db', 'bad1')));
  ok('table', 'create', 'db.custom', '--schema', 'id BIGINT', '--property', 'write.custom.tag=blue',
     '--property', 'write.metadata.metrics.column.id=full', '--allow-unknown-properties');
  assert.equal(describe('db.custom').properties['write.custom.tag'], 'blue');
  r = floe('table', 'create', 'db.bad2', '--schema', 'id BIGINT, x FANCYTYPE');
  assert.notEqual(r.code, 0);
  assert.match(r.err, /FANCYTYPE/);
  assert.match(r.err, /--schema: .*column 'x'/);  // the argument and the column
  assert.match(r.err, /BINARY\(n\), DATE/);  // and what is accepted
  r = floe('table', 'create', 'db.bad2', '--schema', 'id BIGINT, ID INT');
  assert.notEqual(r.code, 0);
  assert.match(r.err, /duplicate column name/);
  r = floe('table', 'create', 'db.bad3', '--schema', 'id BIGINT, d DATE', '--primary-key', 'id', '--partition-by', 'day(d)');
  assert.notEqual(r.code, 0);
  assert.match(r.err, /primary key/);
  r = floe('table', 'create', 'db.bad4', '--schema', 'id BIGINT', '--partition-by', 'bucket(16, nope)');
  assert.notEqual(r.code, 0);
  assert.match(r.err, /nope/);
  ok('table', 'create', 'db.nokey', '--schema', 'id BIGINT');
  r = floe('table', 'upsert', 'db.nokey', writeLines('k.jsonl', [{ id: 1 }]));
  assert.notEqual(r.code, 0);
  assert.match(r.err, /primary key/);
  r = floe('table', 'create', 'db.nokey', '--schema', 'id BIGINT');
  assert.notEqual(r.code, 0);
  assert.match(r.err, /exists/);
  r = floe('table', 'scan', 'db.missing');
  assert.notEqual(r.code, 0);
  r = floe('table', 'append', 'db.nokey', path.join(WH, 'does-not-exist.jsonl'));
  assert.notEqual(r.code, 0);
  assert.match(r.err, /does-not-exist/);
});

test('--schema takes every type a job file\'s CREATE TABLE takes, BINARY(n) included', () => {
  ok('table', 'create', 'db.types', '--schema',
     'id BIGINT NOT NULL, b BINARY(4), vb VARBINARY(8), c CHAR(2), ltz TIMESTAMP_LTZ(3), ' +
     'd DOUBLE PRECISION, n DEC(5, 1), `from` STRING');
  const columns = describe('db.types').schema.columns;
  assert.deepEqual(columns.map((c) => [c.name, c.type, c['iceberg-type']]), [
    ['id', 'BIGINT', 'long'], ['b', 'BYTES', 'binary'], ['vb', 'BYTES', 'binary'],
    ['c', 'STRING', 'string'], ['ltz', 'TIMESTAMP_LTZ(6)', 'timestamptz'],
    ['d', 'DOUBLE', 'double'], ['n', 'DECIMAL(5, 1)', 'decimal(5, 1)'], ['from', 'STRING', 'string'],
  ]);
  ok('table', 'append', 'db.types', writeLines('types.jsonl', [{ id: 1, b: 'AAECAw==', n: '12.5' }]));
  const [row] = scan('db.types');
  assert.equal(row.b, 'AAECAw==');
  assert.equal(String(row.n), '12.5');
});

test('partitioned table: rows land in partition directories and read back', () => {
  ok('table', 'create', 'db.events', '--schema', 'seq BIGINT NOT NULL, npi STRING NOT NULL, event_time TIMESTAMP(3) NOT NULL',
     '--partition-by', 'day(event_time), bucket(4, npi)');
  const rows = [];
  for (let i = 1; i <= 600; i++) {
    rows.push({ seq: i, npi: String(1000000000 + (i % 37)), event_time: `2024-01-0${1 + (i % 3)} 0${i % 10}:00:00.123` });
  }
  ok('table', 'append', 'db.events', writeLines('events.jsonl', rows));
  const got = scan('db.events').map((r) => r.seq).sort((a, b) => a - b);
  assert.deepEqual(got, rows.map((r) => r.seq));
  const dirs = new Set(dataFiles('db.events').map((f) => path.relative(path.join(WH, 'db', 'events', 'data'), path.dirname(f))));
  assert.ok([...dirs].every((d) => /^event_time_day=2024-01-0[123]\/npi_bucket=[0-3]$/.test(d)), [...dirs].join(','));
  assert.ok(dirs.size >= 9);
});

// Iceberg's metadata tables ($snapshots, $history, $files, $partitions) as commands.
const viewRows = (view, table, floeRun = floe) => {
  const r = floeRun('table', view, table);
  assert.equal(r.code, 0, r.err);
  return r.out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
};

test('files and partitions of a partitioned table add up to its rows and files', () => {
  const files = viewRows('files', 'db.events');
  assert.equal(files.length, dataFiles('db.events').length);
  assert.ok(files.every((f) => f.content === 0 && f.file_format === 'PARQUET' &&
                               /^event_time_day=2024-01-0[123]\/npi_bucket=[0-3]$/.test(f.partition)));
  const parts = viewRows('partitions', 'db.events');
  assert.equal(parts.length, new Set(files.map((f) => f.partition)).size);
  assert.equal(parts.reduce((a, x) => a + x.record_count, 0), 600);
  assert.equal(parts.reduce((a, x) => a + x.file_count, 0), files.length);
  assert.equal(parts.reduce((a, x) => a + x.total_data_file_size_in_bytes, 0),
               files.reduce((a, x) => a + x.file_size_in_bytes, 0));
  const snaps = viewRows('snapshots', 'db.events');
  assert.equal(snaps.length, 1);
  assert.equal(snaps[0].operation, 'append');
  assert.equal(snaps[0].summary['total-records'], '600');
  assert.equal(snaps[0].floe_sink, null, 'a CLI append carries no job marker');
  const bad = floe('table', 'nope', 'db.events');
  assert.notEqual(bad.code, 0);
});

test('snapshots of a job-written table carry the sink, job and checkpoint; history follows the commits', async () => {
  const p = h.sandbox(h.tempRoot('floe-cli-meta-'), 'meta');
  fs.writeFileSync(p.job, `${h.checkpointSets('200 ms')}
CREATE TABLE roster (seq BIGINT NOT NULL, npi STRING NOT NULL)
  WITH ('connector' = 'roster', 'seed' = '1', 'events' = '3000', 'rows-per-second' = '3000');
CREATE TABLE lake (seq BIGINT NOT NULL, npi STRING NOT NULL) WITH (${h.icebergTable('meta')});
INSERT INTO lake SELECT seq, npi FROM roster;
`);
  const r = await h.runJob(p, { CHK: p.chk, WH: p.wh }).done;
  assert.equal(r.code, 0, r.err);
  const run = (...args) => h.floe([...args, '--warehouse', p.wh]);
  const snaps = viewRows('snapshots', p.table, run);
  const commits = snaps.filter((x) => x.operation === 'append');
  assert.ok(commits.length >= 2, JSON.stringify(snaps));
  for (const x of commits) {
    assert.equal(x.floe_sink, x.summary['floe.sink-id']);
    assert.ok(x.floe_sink && x.floe_job, JSON.stringify(x));
    assert.equal(typeof x.floe_checkpoint, 'number');
    assert.ok(!Number.isNaN(Date.parse(x.committed_at)));
  }
  const checkpoints = commits.map((x) => x.floe_checkpoint);
  assert.deepEqual(checkpoints, [...checkpoints].sort((a, b) => a - b), 'checkpoints rise with the commits');
  const history = viewRows('history', p.table, run);
  assert.equal(history.length, snaps.length);
  assert.ok(history.every((x) => x.is_current_ancestor));
  assert.equal(history.at(-1).snapshot_id, JSON.parse(run('table', 'describe', p.table).out)['current-snapshot-id']);
});

test('two processes appending to one table at once: both commits land', async () => {
  ok('table', 'create', 'db.race', '--schema', 'seq BIGINT NOT NULL, who STRING');
  const runs = [];
  for (let w = 0; w < 4; w++) {
    const rows = [];
    for (let i = 0; i < 2000; i++) rows.push({ seq: w * 2000 + i, who: `w${w}` });
    const f = writeLines(`race${w}.jsonl`, rows);
    runs.push(h.start(['table', 'append', 'db.race', f, '--warehouse', WH]).done);
  }
  const results = await Promise.all(runs);
  for (const r of results) assert.equal(r.code, 0, r.err);
  const seqs = scan('db.race').map((r) => r.seq).sort((a, b) => a - b);
  assert.equal(seqs.length, 8000);
  assert.equal(new Set(seqs).size, 8000);
  assert.equal(describe('db.race').snapshots.length, 4);
});

test('progress line on stderr only with FLOE_PROGRESS=always when stderr is not a terminal', () => {
  ok('table', 'create', 'db.progress', '--schema', 'id BIGINT NOT NULL, name STRING');
  const rows = [];
  for (let i = 0; i < 20000; i++) rows.push({ id: i, name: `n${i}` });
  const file = writeLines('progress.jsonl', rows);
  const run = (env, ...args) => {
    const r = h.floe([...args, '--warehouse', WH], env);
    assert.equal(r.code, 0, r.err);
    return r;
  };
  // stderr is a pipe here: silent by default, so logs and other tests never see the line.
  const quiet = run({ FLOE_PROGRESS: undefined }, 'table', 'append', 'db.progress', file);
  assert.ok(!quiet.err.includes('\r'), JSON.stringify(quiet.err));
  const shown = run({ FLOE_PROGRESS: 'always' }, 'table', 'append', 'db.progress', file);
  assert.match(shown.err, /\rappend: \d+ rows, \d+ rows\/s, [\d.]+ [KM]iB\/[\d.]+ [KM]iB, \d+%/);
  assert.ok(shown.err.endsWith('\r'), 'the line is cleared at the end');
  assert.match(shown.out, /append db\.progress: 20000 rows read/);
  // Maintenance reports through the engine's callback: files of the planned total.
  assert.match(run({ FLOE_PROGRESS: 'always' }, 'table', 'compact', 'db.progress', '--rewrite-all').err,
               /\rcompact: 0\/2 files, 0 B\/[\d.]+ KiB, 0%/);
  assert.equal(scan('db.progress').length, 40000);
});

test('expire-snapshots keeps the rows, removes old manifest lists; icebird still reads it', async () => {
  ok('table', 'create', 'db.expire', '--schema', 'id BIGINT NOT NULL, name STRING');
  for (let i = 1; i <= 4; i++) {
    ok('table', 'append', 'db.expire', writeLines(`expire${i}.jsonl`, [{ id: i, name: `n${i}` }]), '--quiet');
  }
  const before = scan('db.expire').sort(byKey('id'));
  assert.equal(before.length, 4);
  const metaDir = path.join(WH, 'db', 'expire', 'metadata');
  const lists = () => fs.readdirSync(metaDir).filter((f) => f.startsWith('snap-'));
  assert.equal(lists().length, 4);

  const out = ok('table', 'expire-snapshots', 'db.expire', '--older-than', '2000-01-01T00:00:00Z');
  assert.match(out, /0 snapshots expired, 4 kept/);
  const out2 = ok('table', 'expire-snapshots', 'db.expire', '--retain-last', '1', '--max-snapshot-age-ms', '0');
  assert.match(out2, /3 snapshots expired, 1 kept; deleted 3 manifest lists, 0 manifests, 0 data files/);
  assert.equal(lists().length, 1);
  assert.deepEqual(scan('db.expire').sort(byKey('id')), before);
  assert.equal(describe('db.expire').snapshots.length, 1);

  const { icebergRead } = await import('icebird');
  const { makeLocalFetch } = await import('../interop/lib/localfetch.mjs');
  const realFetch = globalThis.fetch;
  globalThis.fetch = makeLocalFetch({ log: [] });
  try {
    const rows = await icebergRead({ tableUrl: pathToFileURL(path.join(WH, 'db', 'expire')).href });
    assert.deepEqual(rows.map((r) => Number(r.id)).sort(), [1, 2, 3, 4]);
  } finally {
    globalThis.fetch = realFetch;
  }
});

// The table's current metadata as another engine sees it (snapshot ids, above 2^53, kept as
// strings), and a commit of an edited copy the way a Hadoop-catalog writer makes one: the next
// vN.metadata.json, then version-hint.text.
const SNAPSHOT_IDS = /"((?:current-|parent-)?snapshot-id)":\s*(-?\d+)/g;
function currentMetadata(table) {
  const dir = path.join(WH, ...table.split('.'), 'metadata');
  const version = Number(fs.readFileSync(path.join(dir, 'version-hint.text'), 'utf8').trim());
  const file = path.join(dir, `v${version}.metadata.json`);
  return { dir, version, file, json: JSON.parse(fs.readFileSync(file, 'utf8').replace(SNAPSHOT_IDS, '"$1":"$2"')) };
}
function commitMetadata(table, edit) {
  const { dir, version, file, json } = currentMetadata(table);
  edit(json);
  json['metadata-log'].push({ 'timestamp-ms': Date.now(), 'metadata-file': pathToFileURL(file).href });
  const text = JSON.stringify(json, null, 2).replace(/"((?:current-|parent-)?snapshot-id)":\s*"(-?\d+)"/g, '"$1":$2');
  fs.writeFileSync(path.join(dir, `v${version + 1}.metadata.json`), text);
  fs.writeFileSync(path.join(dir, 'version-hint.text'), String(version + 1));
}

test('a table another engine sorted, tagged and gave statistics keeps all of it through floe\'s append, compaction, expiry and orphan sweep', async () => {
  const T = 'db.foreign';
  ok('table', 'create', T, '--schema', 'id BIGINT NOT NULL, name STRING');
  const rows = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => ({ id: from + i, name: `n${from + i}` }));
  ok('table', 'append', T, writeLines('foreign1.jsonl', rows(1, 50)), '--quiet');
  ok('table', 'append', T, writeLines('foreign2.jsonl', rows(51, 100)), '--quiet');
  // What Spark or Trino would add: a sort order (numbered 1, no unsorted order declared), a
  // puffin statistics file per snapshot, partition statistics, main's own retention, a tag.
  const snaps = currentMetadata(T).json.snapshots.map((x) => x['snapshot-id']);
  const statsPath = (id) => path.join(WH, 'db', 'foreign', 'metadata', `${id}-stats.puffin`);
  for (const id of snaps) fs.writeFileSync(statsPath(id), 'PFA1 not read by floe PFA1');
  const theirs = {
    'sort-orders': [{ 'order-id': 1, fields: [{ transform: 'identity', 'source-id': 1, direction: 'desc', 'null-order': 'nulls-last' }] }],
    'default-sort-order-id': 1,
    statistics: snaps.map((id) => ({ 'snapshot-id': id, 'statistics-path': pathToFileURL(statsPath(id)).href, 'file-size-in-bytes': 26,
      'file-footer-size-in-bytes': 4, 'blob-metadata': [{ type: 'apache-datasketches-theta-v1', 'snapshot-id': id, 'sequence-number': 1, fields: [1], properties: { ndv: '50' } }] })),
    'partition-statistics': [{ 'snapshot-id': snaps[1], 'statistics-path': pathToFileURL(path.join(WH, 'db', 'foreign', 'metadata', 'partition-stats.parquet')).href, 'file-size-in-bytes': 9 }],
  };
  fs.writeFileSync(path.join(WH, 'db', 'foreign', 'metadata', 'partition-stats.parquet'), 'PAR1 PAR1');
  commitMetadata(T, (m) => {
    Object.assign(m, theirs);
    m.refs.main['min-snapshots-to-keep'] = 2;
    m.refs.audit = { 'snapshot-id': snaps[0], type: 'tag', 'max-ref-age-ms': 31536000000 };
  });
  const kept = (what) => {
    const m = currentMetadata(T).json;
    for (const key of ['sort-orders', 'default-sort-order-id']) assert.deepEqual(m[key], theirs[key], `${what}: ${key}`);
    assert.equal(m.refs.main['min-snapshots-to-keep'], 2, `${what}: main's retention`);
    assert.deepEqual(m.refs.audit, { 'snapshot-id': snaps[0], type: 'tag', 'max-ref-age-ms': 31536000000 }, `${what}: the tag`);
    return m;
  };

  ok('table', 'append', T, writeLines('foreign3.jsonl', rows(101, 150)), '--quiet');
  let m = kept('after an append');
  assert.deepEqual(m.statistics, theirs.statistics);
  assert.deepEqual(m['partition-statistics'], theirs['partition-statistics']);
  assert.match(ok('table', 'compact', T, '--rewrite-all'), /rewrote 3 data files/);
  m = kept('after a compaction');
  assert.deepEqual(m.statistics, theirs.statistics);

  // Expiry down to 1 per branch: main's own min-snapshots-to-keep holds 2, the tag its
  // snapshot; the second append's snapshot expires with its statistics and partition statistics.
  const out = ok('table', 'expire-snapshots', T, '--retain-last', '1', '--max-snapshot-age-ms', '0');
  assert.match(out, /1 snapshots expired, 3 kept/);
  assert.match(out, /deleted 2 statistics files of expired snapshots/);
  m = kept('after expiry');
  assert.deepEqual(m.statistics, [theirs.statistics[0]]);
  assert.equal(m['partition-statistics'], undefined);
  assert.ok(!fs.existsSync(statsPath(snaps[1])), 'the expired snapshot\'s statistics file is deleted');
  assert.ok(fs.existsSync(statsPath(snaps[0])), 'the tagged snapshot\'s statistics file stays');

  const sweep = floe('table', 'remove-orphan-files', T, '--older-than', '0s', '--force-unsafe-interval');
  assert.equal(sweep.code, 0, sweep.err);
  assert.ok(fs.existsSync(statsPath(snaps[0])), 'a registered statistics file is no orphan');
  kept('after the orphan sweep');

  const read = await icebirdRows(T);
  assert.deepEqual(read.map((r) => Number(r.id)).sort((a, b) => a - b), rows(1, 150).map((r) => r.id));
});

async function icebirdRows(table) {
  const [ns, t] = table.split('.');
  const { icebergRead } = await import('icebird');
  const { makeLocalFetch } = await import('../interop/lib/localfetch.mjs');
  const realFetch = globalThis.fetch;
  globalThis.fetch = makeLocalFetch({ log: [] });
  try {
    return await icebergRead({ tableUrl: pathToFileURL(path.join(WH, ns, t)).href });
  } finally {
    globalThis.fetch = realFetch;
  }
}

test('compact applies the deletes of an upsert table and bin-packs its files; icebird reads the same rows', async () => {
  ok('table', 'create', 'db.compact', '--schema', 'id BIGINT NOT NULL, name STRING', '--primary-key', 'id');
  for (let v = 1; v <= 6; v++) {
    const rows = [];
    for (let i = 1; i <= 20; i++) rows.push({ id: i, name: `v${v}-${i}` });
    ok('table', 'upsert', 'db.compact', writeLines(`compact${v}.jsonl`, rows), '--quiet');
  }
  const before = scan('db.compact').sort(byKey('id'));
  assert.equal(before.length, 20);
  const out = ok('table', 'compact', 'db.compact');
  assert.match(out, /rewrote 6 data files .* into 1 .*delete files 6 -> 0/);
  assert.deepEqual(scan('db.compact').sort(byKey('id')), before);
  const d = describe('db.compact');
  const current = d.snapshots.find((s) => String(s['snapshot-id']) === String(d['current-snapshot-id']));
  assert.equal(current.summary.operation, 'replace');
  assert.match(ok('table', 'compact', 'db.compact'), /nothing to compact \(1 data files, 0 delete files/);
  const rows = await icebirdRows('db.compact');
  assert.deepEqual(rows.map((r) => [Number(r.id), r.name]).sort((a, b) => a[0] - b[0]),
                   before.map((r) => [r.id, r.name]));

  // Expiry after the compaction deletes the replaced files; the rows stay.
  const filesBefore = dataFiles('db.compact').length;
  assert.match(ok('table', 'expire-snapshots', 'db.compact', '--retain-last', '1', '--max-snapshot-age-ms', '0'),
               /6 data files, 6 delete files/);
  assert.equal(dataFiles('db.compact').length, filesBefore - 12);
  assert.deepEqual(scan('db.compact').sort(byKey('id')), before);
});

test('compact refuses bad sizes with the rule and the numbers', () => {
  ok('table', 'create', 'db.compact_bad', '--schema', 'id BIGINT NOT NULL');
  ok('table', 'append', 'db.compact_bad', writeLines('compact_bad.jsonl', [{ id: 1 }]), '--quiet');
  const r = floe('table', 'compact', 'db.compact_bad', '--target-file-size-bytes', '100', '--max-file-size-bytes', '50');
  assert.notEqual(r.code, 0);
  assert.match(r.err, /min <= target <= max .*max 50/);
  // min-input-files is the size tiers' fan-in (docs/connectors.md, "Compaction tiers")
  const f = floe('table', 'compact', 'db.compact_bad', '--min-input-files', '1');
  assert.notEqual(f.code, 0);
  assert.match(f.err, /--min-input-files must be >= 2, got 1/);
});

test('rewrite-manifests regroups many manifests into one per kind', () => {
  ok('table', 'create', 'db.manifests', '--schema', 'id BIGINT NOT NULL');
  for (let i = 1; i <= 5; i++) ok('table', 'append', 'db.manifests', writeLines(`m${i}.jsonl`, [{ id: i }]), '--quiet');
  assert.match(ok('table', 'rewrite-manifests', 'db.manifests'), /5 -> 1 manifests/);
  assert.match(ok('table', 'rewrite-manifests', 'db.manifests'), /nothing to do \(1 manifests\)/);
  assert.deepEqual(scan('db.manifests').map((r) => r.id).sort(), [1, 2, 3, 4, 5]);
});

test('remove-orphan-files deletes only old files no snapshot references; --dry-run only lists', () => {
  ok('table', 'create', 'db.orphans', '--schema', 'id BIGINT NOT NULL');
  ok('table', 'append', 'db.orphans', writeLines('o1.jsonl', [{ id: 1 }]), '--quiet');
  const dir = path.join(WH, 'db', 'orphans', 'data');
  const old = path.join(dir, 'left-by-a-crash.parquet');
  const fresh = path.join(dir, 'in-flight.parquet');
  fs.writeFileSync(old, 'x');
  fs.writeFileSync(fresh, 'y');
  const fourDaysAgo = new Date(Date.now() - 4 * 24 * 3600 * 1000);
  fs.utimesSync(old, fourDaysAgo, fourDaysAgo);
  const dry = ok('table', 'remove-orphan-files', 'db.orphans', '--dry-run');
  assert.match(dry, /orphan .*left-by-a-crash\.parquet/);
  assert.match(dry, /1 orphan files .* found \(dry run, nothing deleted\); 1 unreferenced files kept/);
  assert.ok(fs.existsSync(old));
  ok('table', 'remove-orphan-files', 'db.orphans');
  assert.ok(!fs.existsSync(old));
  assert.ok(fs.existsSync(fresh));
  assert.deepEqual(scan('db.orphans').map((r) => r.id), [1]);
  // --older-than under 24 h is refused unless forced (Iceberg's rule, with its reason); forced,
  // 0s takes the fresh file too; the table's own files are never touched.
  const refused = floe('table', 'remove-orphan-files', 'db.orphans', '--older-than', '0s');
  assert.notEqual(refused.code, 0);
  assert.match(refused.err, /--older-than '0s' is an interval of 0 s, under the minimum of 24 h/);
  assert.match(refused.err, /Iceberg's remove_orphan_files refuses intervals under 24 hours/);
  assert.match(refused.err, /--force-unsafe-interval/);
  assert.ok(fs.existsSync(fresh));
  ok('table', 'remove-orphan-files', 'db.orphans', '--older-than', '23h', '--dry-run', '--force-unsafe-interval');
  ok('table', 'remove-orphan-files', 'db.orphans', '--older-than', '0s', '--force-unsafe-interval');
  assert.ok(!fs.existsSync(fresh));
  assert.deepEqual(scan('db.orphans').map((r) => r.id), [1]);
});
