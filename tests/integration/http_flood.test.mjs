// Hostile HTTP against every HTTP server floe runs (issue 21): the coordinator's /metrics and
// web UI (`floe run`) and the REST catalog server (`floe catalog serve`, over SQLite). Per
// server: a client streaming header lines forever, a chunked body far over the body limit, and
// many slowloris connections (a header line every second, reconnecting when closed) while a real
// request must still be answered -- /metrics for the coordinator; a token, a commit and a
// load-table for the catalog server. The process's RSS (/proc/<pid>/status VmRSS) must stay
// within a stated bound over its RSS before. Limits: src/floe/io/http_server.h, docs/monitoring.md
// and docs/catalogs.md. Only deadlines that prove no starvation are asserted, never timings.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as h from './harness.mjs';

const ROOT = h.tempRoot('floe-http-flood-');
// What a flood may add to a server's RSS: the servers buffer at most 4 MiB (coordinator) and
// 64 MiB (catalog) of unfinished requests; the rest is slack for allocator noise.
const RSS_GROWTH_BOUND_KB = 96 * 1024;
const HEADER_FLOOD_BYTES = 48 << 20;
const CHUNKED_FLOOD_BYTES = 256 << 20;
// The count for the coordinator (8 were enough for the catalog server), within both
// servers' per-client limits (128, 256): every one stays connected, trickling.
const SLOW_CONNECTIONS = 100;
// A real request among the slow clients must be answered within this (the request deadline of
// both servers is 10 / 30 s; without the fix it is never answered).
const ANSWER_DEADLINE_MS = 60_000;

const cleanup = [];
after(() => { for (const f of cleanup.reverse()) f(); });

function rssKb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

// Samples a process's RSS every 50 ms until stop(); stop() returns the peak (kB).
function watchRss(pid) {
  let peak = rssKb(pid);
  const timer = setInterval(() => { try { peak = Math.max(peak, rssKb(pid)); } catch { /* gone */ } }, 50);
  timer.unref();  // a failed assertion must not keep the test process alive
  return () => { clearInterval(timer); try { peak = Math.max(peak, rssKb(pid)); } catch { /* gone */ } return peak; };
}

// Writes `head`, then `block` again and again (up to `limit` bytes) until the server answers or
// closes. Resolves {sent, status (of the answer, if any), how: 'answered' | 'closed' | 'limit'}.
function flood(port, head, block, limit) {
  return new Promise((resolve) => {
    const s = net.createConnection({ host: '127.0.0.1', port });
    let sent = 0;
    let text = '';
    let done = false;
    const finish = (how) => {
      if (done) return;
      done = true;
      s.destroy();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ sent, how: m ? 'answered' : how, status: m ? Number(m[1]) : null, text: text.slice(0, 400) });
    };
    const pump = () => {
      while (!done && sent < limit) {
        sent += block.length;
        if (!s.write(block)) return s.once('drain', pump);
      }
      if (!done) setTimeout(() => finish('limit'), 5_000);  // give the answer time to come
    };
    s.on('data', (d) => {
      text += d.toString('latin1');
      if (/\r\n\r\n/.test(text)) finish('answered');
    });
    s.on('error', () => finish('closed'));
    s.on('close', () => finish('closed'));
    s.on('connect', () => { s.write(head); pump(); });
  });
}

const headerLines = Buffer.from('X:y\r\n'.repeat(64 * 1024 / 5));
const chunk = (() => {
  const data = Buffer.alloc(1 << 20, 'x');
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
})();

// `n` connections that send a request head one header line a second, never finishing it; each
// one the server closes is opened again. close() ends them all.
function slowloris(port, n, requestLine) {
  let open = true;
  const sockets = new Set();
  let closedByServer = 0;
  const one = () => {
    if (!open) return;
    const s = net.createConnection({ host: '127.0.0.1', port });
    sockets.add(s);
    let timer;
    s.on('connect', () => {
      s.write(`${requestLine}\r\nHost: x\r\n`);
      timer = setInterval(() => s.write('X-Slow: 1\r\n'), 1000);
    });
    s.on('data', () => {});
    s.on('error', () => {});
    s.on('close', () => {
      clearInterval(timer);
      sockets.delete(s);
      if (open) { closedByServer++; setTimeout(one, 100); }
    });
  };
  for (let i = 0; i < n; i++) one();
  return {
    get closedByServer() { return closedByServer; },
    close() { open = false; for (const s of sockets) s.destroy(); },
  };
}

// fetch with a deadline: rejects when no answer came within `ms`.
async function fetchWithin(url, init = {}, ms = ANSWER_DEADLINE_MS) {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(ms) });
  return { status: r.status, body: await r.text() };
}

// The three floods against one server; `real()` is the request that must be answered among the
// slow clients.
async function floodServer({ name, pid, port, path: target, bodyPath, headers = '', real, alive }) {
  const before = rssKb(pid);
  const stop = watchRss(pid);
  const headerFlood = await flood(port, `GET ${target} HTTP/1.1\r\nHost: x\r\n`, headerLines, HEADER_FLOOD_BYTES);
  assert.ok(alive(), `${name}: died in the header flood`);
  assert.equal(headerFlood.status, 431, `${name}: header flood: ${JSON.stringify(headerFlood)}`);

  const chunked = await flood(port, `POST ${bodyPath} HTTP/1.1\r\nHost: x\r\n${headers}` +
                              'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
                              chunk, CHUNKED_FLOOD_BYTES);
  assert.ok(alive(), `${name}: died in the chunked flood`);
  assert.equal(chunked.status, 413, `${name}: chunked body: ${JSON.stringify(chunked)}`);

  const slow = slowloris(port, SLOW_CONNECTIONS, `GET ${target} HTTP/1.1`);
  try {
    await h.sleep(3000);  // every slow connection is in, sending
    await real();
    await h.sleep(1000);
    await real();  // and again, while the slow ones keep coming back
  } finally {
    slow.close();
  }
  assert.ok(alive(), `${name}: died among slow clients`);
  const peak = stop();
  console.log(`${name}: RSS ${before} kB before, peak ${peak} kB; header flood cut after ` +
              `${headerFlood.sent} bytes, chunked after ${chunked.sent}; ${slow.closedByServer} slow connections closed`);
  assert.ok(peak - before <= RSS_GROWTH_BOUND_KB,
            `${name}: RSS grew from ${before} kB to ${peak} kB (bound: +${RSS_GROWTH_BOUND_KB} kB)`);
}

test('the coordinator\'s /metrics and web UI survive floods and slow clients and keep answering', async () => {
  const p = h.sandbox(ROOT, 'flood');
  fs.mkdirSync(p.home, { recursive: true });
  fs.writeFileSync(p.job, `-- a long-running job whose coordinator serves /metrics
${h.checkpointSets('500 ms')}
CREATE TABLE roster (seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT)
  WITH ('connector' = 'roster', 'seed' = '7', 'events' = '10000000', 'rows-per-second' = '200');
CREATE TABLE sink (seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT)
  WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT seq, npi, revision FROM roster;
`);
  const run = h.runJob(p, { CHK: p.chk });
  cleanup.push(() => { if (run.child.exitCode === null) run.child.kill('SIGKILL'); });
  const rec = await h.waitFor(`the job's metrics URL:\n${run.err}`, () => {
    const j = h.jobRecords(p.home)[0];
    return j && j.metrics_url && j.state === 'RUNNING' ? j : null;
  });
  const metrics = new URL(rec.metrics_url);
  const alive = () => run.child.exitCode === null && run.child.signalCode === null;
  await floodServer({
    name: 'coordinator', pid: run.child.pid, port: Number(metrics.port), path: '/metrics',
    bodyPath: '/metrics', alive,
    real: async () => {
      const r = await fetchWithin(rec.metrics_url);
      assert.equal(r.status, 200, r.body);
      assert.match(r.body, /floe_jobmanager_job_uptime/);
    },
  });
  const c = h.floe(['cancel', rec.job_id], { FLOE_HOME: p.home });
  assert.equal(c.code, 0, c.err);
});

test('floe catalog serve survives floods and slow clients and keeps committing', async () => {
  const dir = fs.mkdtempSync(path.join(ROOT, 'catalog-'));
  const credential = 'flood:s3cret';
  const s = h.start(['catalog', 'serve', '--catalog', `jdbc:sqlite:${path.join(dir, 'catalog.db')}`,
                     '--warehouse', path.join(dir, 'wh'), '--listen', '127.0.0.1:0'],
                    { env: { FLOE_CATALOG_CREDENTIAL: credential }, stdout: 'pipe' });
  cleanup.push(() => s.child.kill('SIGKILL'));
  const m = await h.waitFor('the catalog server to listen', () => s.out.match(/at http:\/\/127\.0\.0\.1:(\d+)/) ||
                            (s.child.exitCode !== null && assert.fail(`catalog serve exited: ${s.err}`)), 30_000);
  const uri = `http://127.0.0.1:${m[1]}`;
  const token = async () => {
    const r = await fetchWithin(`${uri}/v1/oauth/tokens`, {
      method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'flood', client_secret: 's3cret' }),
    });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body).access_token;
  };
  const bearer = await token();
  const json = (method, body) => ({
    method, headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.equal((await fetchWithin(`${uri}/v1/namespaces`, json('POST', { namespace: ['db'] }))).status, 200);
  const created = await fetchWithin(`${uri}/v1/namespaces/db/tables`, json('POST', {
    name: 't', schema: { type: 'struct', fields: [{ id: 1, name: 'a', required: false, type: 'long' }] },
  }));
  assert.equal(created.status, 200, created.body);
  const uuid = JSON.parse(created.body).metadata['table-uuid'];
  let commits = 0;
  await floodServer({
    name: 'catalog server', pid: s.child.pid, port: Number(m[1]), path: '/v1/config',
    bodyPath: '/v1/namespaces/db/tables/t', headers: `Authorization: Bearer ${bearer}\r\n`,
    alive: () => s.child.exitCode === null && s.child.signalCode === null,
    real: async () => {
      await token();
      commits++;
      const commit = await fetchWithin(`${uri}/v1/namespaces/db/tables/t`, json('POST', {
        requirements: [{ type: 'assert-table-uuid', uuid }],
        updates: [{ action: 'set-properties', updates: { 'flood.commit': String(commits) } }],
      }));
      assert.equal(commit.status, 200, commit.body);
      const loaded = await fetchWithin(`${uri}/v1/namespaces/db/tables/t`, json('GET'));
      assert.equal(loaded.status, 200, loaded.body);
      assert.equal(JSON.parse(loaded.body).metadata.properties['flood.commit'], String(commits));
    },
  });
});
