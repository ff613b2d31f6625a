// The coordinator's control endpoint under a hostile local client (issue 9): requests whose
// fields have the wrong JSON types, truncated and binary requests, a request that never ends,
// more idle connections than the endpoint serves. Each must be answered with {"ok":false,...}
// (or, where the request never ended, at least a close), none may kill `floe run` or its worker,
// and afterwards the job still checkpoints and still takes a savepoint. Connects to 127.0.0.1
// only; every exchange has a timeout; loops are bounded.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import * as h from './harness.mjs';

// docs/processes.md, "Control protocol": the endpoint's limits.
const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_CONNECTIONS = 64;
const IDLE_TIMEOUT_MS = 10_000;

const ROOT = h.tempRoot('floe-control-');
const p = h.sandbox(ROOT, 'control');
fs.mkdirSync(p.home, { recursive: true });
fs.writeFileSync(p.job, `-- a long-running job to aim requests at
${h.checkpointSets('200 ms')}
CREATE TABLE roster (seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT)
  WITH ('connector' = 'roster', 'seed' = '7', 'events' = '10000000', 'rows-per-second' = '200');
CREATE TABLE sink (seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT)
  WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT seq, npi, revision FROM roster;
`);
const run = h.runJob(p, { CHK: p.chk });
after(() => {
  if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
});

function alive(pid) {
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}
const job = () => {
  const j = h.jobRecords(p.home)[0];
  return j && j.state === 'RUNNING' && j.worker_pid > 0 ? j : null;
};

// Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed.
let seed = 0x9e3779b9;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
function randomString(max) {
  let s = '';
  const n = Math.floor(rand() * max);
  for (let i = 0; i < n; ++i) s += String.fromCharCode(pick([32 + Math.floor(rand() * 95),
    Math.floor(rand() * 32), 0xe9, 0x4e2d, 0x2028]));
  return s;
}
// A random JSON value (as a JS value) that is not a string.
function randomNonString(depth = 0) {
  const kinds = depth < 3 ? ['int', 'float', 'big', 'null', 'bool', 'array', 'object']
                          : ['int', 'null', 'bool'];
  switch (pick(kinds)) {
    case 'int': return Math.floor(rand() * 2 ** 31) * (rand() < 0.5 ? -1 : 1);
    case 'float': return rand() * 1e300;
    case 'big': return 18446744073709551615;
    case 'null': return null;
    case 'bool': return rand() < 0.5;
    case 'array': return Array.from({ length: Math.floor(rand() * 4) },
                                    () => rand() < 0.5 ? randomString(8) : randomNonString(depth + 1));
    default: return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) },
      (_, i) => [`k${i}`, rand() < 0.5 ? randomString(8) : randomNonString(depth + 1)]));
  }
}

// One connection: writes `chunks`, half-closes if `end`, and collects what comes back until the
// coordinator closes the connection or `timeoutMs` passed. `how`: 'closed' (FIN or reset),
// 'refused' (nothing listens: the coordinator is gone) or 'timeout' (still open).
function exchange(port, chunks, { end = false, timeoutMs = 5000, onConnect } = {}) {
  return new Promise((resolve) => {
    const s = net.createConnection({ host: '127.0.0.1', port });
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (how) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ how, text: data.toString('utf8') });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    s.on('data', (d) => { data = Buffer.concat([data, d]); });
    s.on('error', (e) => finish(e.code === 'ECONNREFUSED' ? 'refused' : 'closed'));
    s.on('close', () => finish('closed'));
    s.on('connect', () => {
      for (const c of chunks) s.write(c);
      if (end) s.end();
      onConnect?.(s);
    });
  });
}

// The reply to a bad request: one {"ok":false,"error":"..."} line, never the token.
function assertRefused(r, what, j, { replyRequired = true, error } = {}) {
  assert.ok(alive(j.pid), `${what}: the coordinator died:\n${run.err}`);
  assert.notEqual(r.how, 'refused', `${what}: the control endpoint is gone:\n${run.err}`);
  assert.notEqual(r.how, 'timeout', `${what}: the connection was neither answered nor closed`);
  if (!replyRequired && r.text === '') return;
  assert.ok(r.text.endsWith('\n'), `${what}: no reply line (got ${JSON.stringify(r.text)})`);
  const reply = JSON.parse(r.text.trim());
  assert.equal(reply.ok, false, `${what}: ${r.text}`);
  assert.equal(typeof reply.error, 'string', `${what}: ${r.text}`);
  if (error) assert.match(reply.error, error, what);
  assert.ok(!r.text.includes(j.token), `${what}: the reply echoes the token`);
}

let j;  // the job's record once it runs
let port;

test('the job runs and checkpoints', async () => {
  j = await h.waitFor(`a running job:\n${run.err}`,
                      () => { const r = job(); return r && r.last_checkpoint >= 1 ? r : null; },
                      60_000);
  port = Number(j.control.split(':')[1]);
  assert.equal(j.control.split(':')[0], '127.0.0.1');
});

test('fields of the wrong JSON type are refused, naming the field', async () => {
  const T = j.token;
  const cases = [];
  const typed = [1, 0, -1, 1.5, 1e308, 18446744073709551615, null, true, false, [], [T], {},
                 { token: T }];
  for (const v of typed) cases.push([{ token: v, cmd: 'status' }, /'token'/]);
  for (const v of typed) cases.push([{ token: T, cmd: v }, /'cmd'/]);
  for (const v of typed) cases.push([{ token: T, cmd: 'savepoint', dir: v }, /'dir'/]);
  for (const v of typed) cases.push([{ token: T, cmd: 'stop', dir: v }, /'dir'/]);
  for (const v of ['', 'relative/dir', '.']) {
    cases.push([{ token: T, cmd: 'savepoint', dir: v }, /'dir'/]);
    cases.push([{ token: T, cmd: 'stop', dir: v }, /'dir'/]);
  }
  cases.push([{ cmd: 'status' }, /'token'/]);
  cases.push([{ token: T }, /'cmd'/]);
  for (const v of ['', 'x', T.slice(1), T + ' ', T.toUpperCase(), 'x'.repeat(60_000)]) {
    cases.push([{ token: v, cmd: 'status' }, /token/]);
  }
  for (const v of ['', 'STATUS', 'savepoint ', 'cancel\u0000', 'stop\n', '\ud83d\ude00',
                   'y'.repeat(50_000)]) {
    cases.push([{ token: T, cmd: v }, /unknown command/]);
  }
  // Random values per field: a non-string token, cmd or dir (with a valid token otherwise).
  for (let i = 0; i < 150; ++i) {
    const which = pick(['token', 'cmd', 'dir']);
    const req = { token: T, cmd: pick(['status', 'savepoint', 'stop', 'cancel']) };
    if (which === 'dir') req.cmd = pick(['savepoint', 'stop']);
    req[which] = randomNonString();
    if (rand() < 0.3) req[`extra${i}`] = randomNonString();
    cases.push([req, new RegExp(`'${which}'`)]);
  }
  for (const [req, error] of cases) {
    const text = JSON.stringify(req);
    const r = await exchange(port, [text + '\n']);
    assertRefused(r, `request ${text.slice(0, 200)}`, j, { error });
  }
});

test('requests that are not one JSON object are refused', async () => {
  const T = j.token;
  const lines = ['', '   ', '[]', '1', '"status"', 'null', 'true', '{', '}', '{"token":',
                 `{"token":"${T}","cmd":"status"`, `{"token":"${T}","cmd":"status"}}`,
                 '['.repeat(30_000) + ']'.repeat(30_000),
                 '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)];
  for (const line of lines) {
    assertRefused(await exchange(port, [line + '\n']), `line ${line.slice(0, 80)}`, j);
  }
  // Invalid UTF-8 inside a string.
  const bad = Buffer.concat([Buffer.from('{"token":"'), Buffer.from([0xff, 0xfe, 0xc3]),
                             Buffer.from(`","cmd":"status"}\n`)]);
  assertRefused(await exchange(port, [bad]), 'invalid UTF-8', j);
  // Every truncation of a valid request, with a newline and without one (then half-closed).
  const valid = JSON.stringify({ cmd: 'status', token: T });
  for (let n = 0; n < valid.length; ++n) {
    const cut = valid.slice(0, n);
    assertRefused(await exchange(port, [cut + '\n']), `truncated ${cut} + newline`, j);
    if (n > 0) {
      assertRefused(await exchange(port, [cut], { end: true }), `truncated ${cut}, no newline`, j);
    }
  }
});

test('binary junk is refused', async () => {
  for (let i = 0; i < 60; ++i) {
    const junk = Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 2048) },
                                        () => Math.floor(rand() * 256)));
    const hasNewline = junk.includes(0x0a);
    if (i % 2 === 0) {
      // Without a newline: the request ends at the half-close and must be answered.
      const clean = Buffer.from(junk.filter((b) => b !== 0x0a));
      assertRefused(await exchange(port, [clean], { end: true }), `junk #${i}`, j);
    } else {
      // With a newline somewhere, and more after it: answered or at least closed.
      assertRefused(await exchange(port, [junk, '\n'], { end: rand() < 0.5 }), `junk #${i}`, j,
                    { replyRequired: !hasNewline });
    }
  }
});

test('a request longer than the limit is refused, with or without a newline', async () => {
  const big = 'z'.repeat(MAX_REQUEST_BYTES + 10);
  assertRefused(await exchange(port, [`{"token":"${big}"}\n`]), 'an over-long line', j,
                { replyRequired: false });
  // A stream without a newline, far beyond the limit: answered or closed long before its end.
  let written = 0;
  const chunk = Buffer.alloc(16 * 1024, 'a');
  const r = await exchange(port, [], {
    timeoutMs: 20_000,
    onConnect: (s) => {
      const pump = () => {
        while (written < 32 * 1024 * 1024 && !s.destroyed) {
          written += chunk.length;
          if (!s.write(chunk)) { s.once('drain', pump); return; }
        }
      };
      pump();
    },
  });
  assertRefused(r, 'a 32 MiB request without a newline', j, { replyRequired: false });
  assert.ok(written < 32 * 1024 * 1024, `all ${written} bytes were taken without complaint`);
});

test('idle connections beyond the limit make room for a real request, the rest time out', async () => {
  // A slow client first: one byte a second, never a whole request. The timeout counts from the
  // connect, not from the last byte.
  let slowTimer;
  let connected;
  const slowConnected = new Promise((resolve) => { connected = resolve; });
  const slow = exchange(port, [], {
    timeoutMs: IDLE_TIMEOUT_MS * 3,
    onConnect: (s) => {
      slowTimer = setInterval(() => { if (!s.destroyed) s.write('{'); }, 1000);
      connected();
    },
  });
  await Promise.race([slowConnected, slow]);
  const n = MAX_CONNECTIONS + 36;
  const opened = [];
  for (let i = 0; i < n; ++i) opened.push(exchange(port, [], { timeoutMs: IDLE_TIMEOUT_MS * 3 }));
  // With every connection taken by idle ones, a whole request still gets in (the oldest idle
  // one makes room) and is answered (issue 21: slow clients must not starve the endpoint).
  await h.sleep(1000);
  const real = await exchange(port, [`${JSON.stringify({ token: j.token, cmd: 'status' })}\n`],
                              { timeoutMs: IDLE_TIMEOUT_MS });
  assert.equal(real.how, 'closed', `the real request among idle ones: ${JSON.stringify(real)}`);
  assert.equal(JSON.parse(real.text.trim()).ok, true, real.text);
  const results = await Promise.all(opened);
  const slowResult = await slow;
  clearInterval(slowTimer);
  for (const [i, r] of results.entries()) assertRefused(r, `idle connection #${i}`, j);
  assertRefused(slowResult, 'a one-byte-a-second client', j, { replyRequired: false });
  // The slow client (the oldest) and the oldest idle ones made room for the newer ones and the
  // real request.
  const madeRoom = results.filter((r) => /connections/.test(r.text)).length;
  assert.ok(madeRoom >= n - MAX_CONNECTIONS, `${madeRoom} closed to make room`);
  const timedOut = results.filter((r) => /within/.test(r.text)).length;
  assert.equal(madeRoom + timedOut, n, 'each closed to make room or timed out');
});

test('afterwards the job still checkpoints, takes a savepoint and cancels', async () => {
  assert.ok(alive(j.pid), run.err);
  const before = h.jobRecords(p.home)[0];
  assert.equal(before.state, 'RUNNING');
  assert.equal(before.worker_pid, j.worker_pid, 'the worker was not restarted');
  assert.equal(before.restarts, 0);
  await h.waitFor('a later checkpoint', () => {
    const now = job();
    return now && now.last_checkpoint > before.last_checkpoint;
  }, 60_000);
  const env = { FLOE_HOME: p.home };
  const sp = h.floe(['savepoint', j.job_id, '--timeout', '60'], env);
  assert.equal(sp.code, 0, sp.err);
  assert.ok(fs.existsSync(path.join(sp.out.trim(), '_metadata')), sp.out);
  const c = h.floe(['cancel', j.job_id, '--timeout', '60'], env);
  assert.equal(c.code, 0, c.err);
  const e = await run.exited;
  assert.equal(e.code, 0, run.err);
  assert.equal(h.jobRecords(p.home)[0].state, 'CANCELED');
});
