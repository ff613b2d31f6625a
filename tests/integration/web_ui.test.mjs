// The coordinator's web UI and Prometheus endpoint, checked against each other in a real browser.
// A Kafka -> Iceberg job (dev cluster, 3,000 JSON records over 2 partitions, unbounded source)
// runs until the table committed every record; then /metrics must parse as Prometheus text with
// the Flink-named families, and the UI (headless Chromium through playwright-core, polling
// api/job every second) must show the same counters the metrics show: the page's convention is
// that every number sits in an element with data-field="<section>.<field>" (data-key="<row
// key>" in tables) holding the raw integer. Last, hostile HTTP on both ports must not kill the
// coordinator, and the job is cancelled. FLOE_BIN points at the floe binary; Chromium is
// /usr/bin/chromium unless FLOE_CHROMIUM says otherwise. The screenshot is left in
// $FLOE_TEST_ARTIFACTS (default: <tmp>/floe-test-artifacts) as web-ui.png.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { WAIT_MS, checkpointSets, floe, icebergTable, jobRecords, produce, runJob, sandbox, sleep,
         startCluster, stopClusters, tempRoot, waitFor, writeJsonl } from './harness.mjs';

const N = 3000;
const ROOT = tempRoot('floe-web-ui-');
const CHROMIUM = process.env.FLOE_CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = process.env.FLOE_TEST_ARTIFACTS || path.join(os.tmpdir(), 'floe-test-artifacts');

const p = sandbox(ROOT, 'web_ui');
let run;  // the `floe run` in the background
let rec;  // its job record once it serves its URLs
// The tests after the first share its job: without it they fail at once, saying why.
const needJob = () => assert.ok(rec && run, 'the job of the first test is not running');

after(async () => {
  if (run && run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  await stopClusters();
});

// ---- HTTP, each exchange bounded in time --------------------------------------------------

// One request with node's http (no keep-alive): {status, headers, body}.
function request(url, { method = 'GET', timeoutMs = 10_000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

// Raw bytes over TCP: resolves once a status line came back ('answered', with `status`), the
// server closed or reset the connection ('closed'), or `timeoutMs` passed ('timeout').
function rawExchange(url, bytes, timeoutMs = 15_000) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = net.createConnection({ host: hostname, port: Number(port) });
    let text = '';
    let done = false;
    const finish = (how) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ how: m ? 'answered' : how, status: m ? Number(m[1]) : null, text: text.slice(0, 200) });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (/^HTTP\/1\.[01] \d{3}[^\r\n]*\r\n/.test(text)) finish('answered');
    });
    // A server that closes while we still write (the long line) shows as EPIPE/ECONNRESET.
    s.on('error', () => finish('closed'));
    s.on('close', () => finish('closed'));
    s.on('connect', () => s.write(bytes));
  });
}

// ---- Prometheus -----------------------------------------------------------------------------

const scrapeText = async () => {
  const r = await request(rec.metrics_url);
  assert.equal(r.status, 200, `GET ${rec.metrics_url}: ${r.status} ${r.body.slice(0, 200)}`);
  return r;
};
// The families by name; series values as numbers.
async function scrape() {
  const families = parsePrometheusTextFormat((await scrapeText()).body);
  return new Map(families.map((f) => [f.name, f]));
}
// The series of `family` whose labels include `labels` (values compared as strings).
function series(m, family, labels = {}) {
  const f = m.get(family);
  if (!f) return [];
  return f.metrics.filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === String(v)));
}
const sum = (xs) => xs.reduce((a, s) => a + Number(s.value), 0);

const T = 'floe_taskmanager_job_task_';
const COMMITTER = `${T}operator_IcebergFilesCommitter_`;
const LAG = `${T}operator_KafkaSourceReader_records_lag`;
const REQUIRED_FAMILIES = [
  'floe_jobmanager_job_uptime', 'floe_jobmanager_job_numRestarts',
  'floe_jobmanager_job_numberOfCompletedCheckpoints', 'floe_jobmanager_job_lastCheckpointDuration',
  'floe_jobmanager_job_lastCheckpointSize', 'floe_jobmanager_job_lastCheckpointSyncDuration',
  'floe_jobmanager_job_lastCheckpointAsyncDuration', `${T}numRecordsIn`, `${T}numRecordsOut`,
  `${T}backPressuredTimeMsPerSecond`, LAG, `${COMMITTER}elapsedSecondsSinceLastSuccessfulCommit`,
];

// ---- the page ----------------------------------------------------------------------------

// Every data-field element of the current render, read in one evaluation (so from one poll):
// {updated, fields: Map "<field>" -> text (unkeyed), keyed: Map "<field>" -> Map key -> text}.
async function readUi(page) {
  const { updated, items } = await page.evaluate(() => ({
    updated: document.body.dataset.updated,
    items: [...document.querySelectorAll('[data-field]')].map((e) =>
      [e.getAttribute('data-field'), e.getAttribute('data-key'), e.textContent]),
  }));
  const fields = new Map();
  const keyed = new Map();
  for (const [field, key, text] of items) {
    if (key === null) fields.set(field, text);
    else {
      if (!keyed.has(field)) keyed.set(field, new Map());
      keyed.get(field).set(key, text);
    }
  }
  return { updated, fields, keyed };
}
// The page's raw integers: digits only, no separators.
function int(text, what) {
  assert.match(text ?? '', /^-?\d+$/, `${what}: not a plain integer: ${JSON.stringify(text)}`);
  return Number(text);
}
// Resolves once body[data-updated] differs from `seen` (a poll re-rendered the page).
const nextRender = (page, seen) =>
  page.waitForFunction((u) => document.body.dataset.updated !== u, seen, { timeout: WAIT_MS });

// A counter the page shows must lie between two scrapes taken before and after the poll it
// came from (`slack` for the ones counted on another clock, such as completed checkpoints).
// Quiescent counters make that an equality.
function between(what, value, before, after, slack = 0) {
  assert.ok(before - slack <= value && value <= after + slack,
            `${what}: the UI shows ${value}, the metrics ${before}..${after}${slack ? ` (+-${slack})` : ''}`);
}

// ---- the tests ---------------------------------------------------------------------------

test('a Kafka -> Iceberg job commits every record and serves its web UI and metrics', async () => {
  fs.mkdirSync(p.home, { recursive: true });
  const cluster = await startCluster(p.dir, 'web', { topics: ['events:2'] });
  const rows = Array.from({ length: N }, (_, i) => ({ seq: i + 1, name: `n${i + 1}` }));
  produce(cluster.bootstrap, 'events', writeJsonl(path.join(p.dir, 'events.jsonl'), rows));
  fs.writeFileSync(p.job, `-- web_ui: kafka -> iceberg, unbounded, so it stays up for the UI
${checkpointSets('500 ms')}
CREATE TABLE events (seq BIGINT, name STRING)
  WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json',
        'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = 'floe-web-ui',
        'scan.startup.mode' = 'earliest-offset');
CREATE TABLE sink (seq BIGINT, name STRING)
  WITH (${icebergTable(p.name)});
INSERT INTO sink SELECT * FROM events;
`);
  run = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap });

  rec = await waitFor(`the job record with its URLs:\n${run.err}`, () => {
    const j = jobRecords(p.home)[0];
    return j && j.web_url && j.metrics_url ? j : null;
  }, WAIT_MS, 100);
  assert.match(rec.web_url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  assert.match(rec.metrics_url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  await waitFor('the URLs on stderr', () => /floe: metrics: /.test(run.err), 30_000, 100);
  assert.equal(/floe: web UI: (\S+)/.exec(run.err)?.[1], rec.web_url, run.err);
  assert.equal(/floe: metrics: (\S+)/.exec(run.err)?.[1], rec.metrics_url, run.err);

  // Every record committed and read to the end of both partitions: from here the record
  // counters stand still while checkpoints go on completing.
  let last = '';
  for (const deadline = Date.now() + WAIT_MS; ; await sleep(250)) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${N} committed records: ${last}\n${run.err}`);
    assert.equal(run.child.exitCode, null, `floe run exited:\n${run.err}`);
    let m;
    try {
      m = await scrape();
    } catch (e) {
      last = String(e);
      continue;
    }
    const committed = sum(series(m, `${COMMITTER}committedDataFilesRecordCount`, { table: p.table }));
    const lags = series(m, LAG, { topic: 'events' });
    last = `committed ${committed}, lags ${lags.map((s) => s.value).join(',')}`;
    assert.ok(committed <= N, `more records committed than produced: ${last}`);
    if (committed === N && lags.length === 2 && lags.every((s) => Number(s.value) === 0)) break;
  }
});

test('/metrics is Prometheus text with the Flink-named families and task labels', async () => {
  needJob();
  const r = await scrapeText();
  assert.match(String(r.headers['content-type']), /^text\/plain/);
  const families = parsePrometheusTextFormat(r.body);
  assert.ok(families.length > 0, 'no metric family');
  const names = families.map((f) => f.name);
  assert.equal(new Set(names).size, names.length, 'a family split in two (its lines not together)');
  for (const f of families) assert.notEqual(f.type, 'UNTYPED', `family ${f.name} has no TYPE`);
  const m = new Map(families.map((f) => [f.name, f]));
  for (const name of REQUIRED_FAMILIES) assert.ok(m.has(name), `family ${name} missing`);

  for (const f of families.filter((f) => f.name.startsWith(T))) {
    for (const s of f.metrics) {
      assert.equal(s.labels?.job_id, rec.job_id, `${f.name}: job_id`);
      assert.ok(s.labels?.task_name, `${f.name}: task_name`);
      assert.match(s.labels?.subtask_index ?? '', /^\d+$/, `${f.name}: subtask_index`);
    }
  }
  const lags = series(m, LAG);
  assert.deepEqual(lags.map((s) => `${s.labels.topic}/${s.labels.partition}`).sort(),
                   ['events/0', 'events/1']);
  for (const s of lags) assert.match(s.labels.task_name, /^source-/);
  assert.ok(series(m, `${T}numRecordsOut`).some((s) => s.labels.task_name.startsWith('source-')),
            'no source task');
  assert.ok(series(m, `${COMMITTER}elapsedSecondsSinceLastSuccessfulCommit`, { table: p.table }).length > 0,
            `no elapsedSecondsSinceLastSuccessfulCommit for ${p.table}`);
  // Every record's bytes read once (the JSON lines produced: {"seq":N,"name":"nN"}).
  const produced = Array.from({ length: N }, (_, i) => JSON.stringify({ seq: i + 1, name: `n${i + 1}` }))
    .reduce((a, l) => a + Buffer.byteLength(l), 0);
  assert.equal(sum(series(m, `${T}operator_numBytesIn`)), produced, 'Kafka source numBytesIn');
  assert.equal(sum(series(m, `${COMMITTER}commits`, { table: p.table })) > 0, true);
});

test('the web UI updates live and shows the numbers /metrics shows', async () => {
  needJob();
  const root = await request(rec.web_url);
  assert.equal(root.status, 200);
  assert.match(String(root.headers['content-type']), /^text\/html/);
  const api = await request(new URL('api/job', rec.web_url).href);
  assert.equal(api.status, 200);
  assert.match(String(api.headers['content-type']), /^application\/json/);
  const job = JSON.parse(api.body);
  assert.equal(job.job.id, rec.job_id);
  // Each checkpoint names the task the stream waited for (its synchronous part was the longest).
  const vertices = new Set(job.graph.vertices.map((v) => v.name));
  assert.ok(job.checkpoints.history.length > 0, 'no checkpoint in the history');
  for (const c of job.checkpoints.history) {
    const task = /^(.+)\/(\d+)$/.exec(c.sync_task ?? '');
    assert.ok(task && vertices.has(task[1]),
              `checkpoint ${c.id}: sync_task ${c.sync_task} is none of ${[...vertices]}`);
  }

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`); });
    await page.goto(rec.web_url);

    // Live: data-updated changes with the page never reloaded (the marker survives).
    await page.waitForSelector('body[data-updated]', { timeout: WAIT_MS });
    await page.evaluate(() => { window.__floeNoReload = true; });
    const first = await page.getAttribute('body', 'data-updated');
    await nextRender(page, first);
    assert.equal(await page.evaluate(() => window.__floeNoReload), true, 'the page reloaded');

    // Scrape, then two more renders (the second poll surely started after the scrape), read
    // the page, scrape again.
    const before = await scrape();
    await nextRender(page, await page.getAttribute('body', 'data-updated'));
    await nextRender(page, await page.getAttribute('body', 'data-updated'));
    const ui = await readUi(page);
    const afterward = await scrape();
    assert.ok(Number(ui.updated) > Number(first), `data-updated went ${first} -> ${ui.updated}`);
    assert.equal(ui.fields.get('job.id'), rec.job_id);

    // Tasks: one row per (vertex, subtask) the metrics know, numRecordsIn/Out equal.
    const outs = ui.keyed.get('tasks.records_out') ?? new Map();
    const ins = ui.keyed.get('tasks.records_in') ?? new Map();
    const metricTasks = series(afterward, `${T}numRecordsOut`)
      .map((s) => `${s.labels.task_name}/${s.labels.subtask_index}`).sort();
    assert.deepEqual([...outs.keys()].sort(), metricTasks);
    let sourceOut = 0;
    for (const [key, text] of outs) {
      const slash = key.lastIndexOf('/');
      const labels = { task_name: key.slice(0, slash), subtask_index: key.slice(slash + 1) };
      for (const [family, shown] of [['numRecordsOut', text], ['numRecordsIn', ins.get(key)]]) {
        const what = `${key} ${family}`;
        between(what, int(shown, what), sum(series(before, `${T}${family}`, labels)),
                sum(series(afterward, `${T}${family}`, labels)));
      }
      if (labels.task_name.startsWith('source-')) sourceOut += int(text, key);
    }

    // Sinks: committed records and commits of the table.
    const sink = (f) => ui.keyed.get(`sinks.${f}`)?.get(p.table);
    for (const [field, family] of [['records_added', 'committedDataFilesRecordCount'], ['commits', 'commits']]) {
      between(`sinks.${field}`, int(sink(field), `sinks.${field}`),
              sum(series(before, `${COMMITTER}${family}`, { table: p.table })),
              sum(series(afterward, `${COMMITTER}${family}`, { table: p.table })));
    }
    assert.equal(int(sink('records_added'), 'sinks.records_added'), N);

    // Sources: the lag of each partition (0 by now).
    const lagShown = ui.keyed.get('sources.lag') ?? new Map();
    const partitions = [...lagShown.keys()].filter((k) => k.split('/').at(-2) === 'events');
    assert.equal(partitions.length, 2, `source rows: ${[...lagShown.keys()]}`);
    for (const key of partitions) {
      const partition = key.split('/').at(-1);
      const shown = int(lagShown.get(key), `sources.lag ${key}`);
      const metric = series(afterward, LAG, { topic: 'events', partition });
      assert.equal(metric.length, 1, `records_lag of events/${partition}`);
      assert.equal(shown, Number(metric[0].value), `sources.lag ${key}`);
      assert.equal(shown, 0, `sources.lag ${key}`);
    }

    // Job: restarts, and completed checkpoints (counted while idle; another clock: +-2).
    const restarts = int(ui.fields.get('job.restarts'), 'job.restarts');
    between('job.restarts', restarts, sum(series(before, 'floe_jobmanager_job_numRestarts')),
            sum(series(afterward, 'floe_jobmanager_job_numRestarts')));
    between('checkpoints.completed', int(ui.fields.get('checkpoints.completed'), 'checkpoints.completed'),
            sum(series(before, 'floe_jobmanager_job_numberOfCompletedCheckpoints')),
            sum(series(afterward, 'floe_jobmanager_job_numberOfCompletedCheckpoints')), 2);
    // Without a restart the sources read each record once.
    if (restarts === 0) assert.equal(sourceOut, N, 'records out of the source tasks');

    assert.equal(await page.getAttribute('#conn', 'data-state'), 'live');
    assert.deepEqual(problems, []);

    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const shot = path.join(ARTIFACTS, 'web-ui.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`web UI screenshot: ${shot}`);
  } finally {
    await browser.close();
  }
});

test('hostile HTTP on both ports: refused, and the coordinator keeps serving', async () => {
  needJob();
  const web = rec.web_url;
  const metrics = rec.metrics_url;
  const stillServing = async (what) => {
    for (const url of [metrics, new URL('api/job', web).href]) {
      let status;
      try {
        status = (await request(url)).status;
      } catch (e) {
        assert.fail(`${what}: GET ${url}: ${e.message}\n${run.err}`);
      }
      assert.equal(status, 200, `${what}: GET ${url}`);
    }
    assert.equal(run.child.exitCode, null, `${what}: floe run exited:\n${run.err}`);
  };
  const is4xx = (status, what) => assert.ok(status >= 400 && status < 500, `${what}: ${status}`);

  for (const base of [web, metrics]) {
    assert.equal((await request(new URL('/nope', base).href)).status, 404, `GET /nope on ${base}`);
  }
  is4xx((await request(metrics, { method: 'POST' })).status, 'POST /metrics');
  is4xx((await request(new URL('api/job', web).href, { method: 'POST' })).status, 'POST api/job');

  for (const base of [web, metrics]) {
    // A 100 KB request line: refused or cut off, never served.
    const long = await rawExchange(base, `GET /${'a'.repeat(100 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.notEqual(long.how, 'timeout', `100 KB request line on ${base}: neither answered nor closed`);
    if (long.how === 'answered') is4xx(long.status, `100 KB request line on ${base}`);
    await stillServing(`after a 100 KB request line on ${base}`);

    // Not HTTP at all: anything but a success, and no crash.
    const garbage = await rawExchange(base, 'GARBAGE\r\n\r\n');
    if (garbage.how === 'answered') is4xx(garbage.status, `GARBAGE on ${base}`);
    await stillServing(`after GARBAGE on ${base}`);
  }
});

test('the job is cancelled cleanly', async () => {
  needJob();
  const c = floe(['cancel', rec.job_id], { FLOE_HOME: p.home });
  assert.equal(c.code, 0, c.err);
  assert.match(c.out, new RegExp(`job ${rec.job_id} cancelled`));
  let timer;
  const exited = await Promise.race([
    run.exited, new Promise((resolve) => { timer = setTimeout(() => resolve(null), WAIT_MS); })]);
  clearTimeout(timer);
  assert.ok(exited, `floe run did not end after the cancel:\n${run.err}`);
  assert.equal(exited.code, 0, run.err);
  assert.equal(jobRecords(p.home)[0].state, 'CANCELED');
});
