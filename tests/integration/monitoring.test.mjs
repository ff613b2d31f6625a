// The stall alarm (docs/monitoring.md): a table whose writers receive rows it does not commit
// for longer than floe.stall-alarm.threshold is STALLED -- a warning on the coordinator's
// stderr naming the table, the floe_jobmanager_job_sinkStalled metric (parsed with an npm
// Prometheus parser), job.json, `floe list` and `floe status`; with action 'fail' the job fails.
// The stall is reproduced with the test-only hold point FLOE_HOLD_AT=iceberg-commit: the
// committer keeps its files pending while checkpoints go on completing, what the study's frozen
// table looked like. A healthy job whose input goes idle raises nothing. Kafka input (dev
// cluster), flowing through a producer loop while a test needs it to.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { WAIT_MS, checkpointSets, floe, icebergTable, jobRecords, produce, runJob, sandbox,
         sleep, startCluster, stopClusters, tempRoot, waitFor, writeJsonl } from './harness.mjs';

const ROOT = tempRoot('floe-monitoring-');
after(stopClusters);

let nextSeq = 1;
// `n` more records {seq, name} into `topic`.
function produceMore(bootstrap, topic, n) {
  const rows = Array.from({ length: n }, () => ({ seq: nextSeq, name: `n${nextSeq++}` }));
  produce(bootstrap, topic, writeJsonl(path.join(ROOT, `batch-${nextSeq}.jsonl`), rows));
}

// Produces 200 records every 300 ms until stop() is called.
function producerLoop(bootstrap, topic) {
  let running = true;
  const done = (async () => {
    while (running) {
      produceMore(bootstrap, topic, 200);
      await sleep(300);
    }
  })();
  return { stop: async () => { running = false; await done; } };
}

function writeJob(p, topic, sets) {
  writeJsonl(p.job, [`${checkpointSets('500 ms')}
${sets}
CREATE TABLE events (seq BIGINT, name STRING)
  WITH ('connector' = 'kafka', 'topic' = '${topic}', 'format' = 'json',
        'properties.bootstrap.servers' = '\${KAFKA}', 'scan.startup.mode' = 'earliest-offset');
CREATE TABLE sink (seq BIGINT, name STRING) WITH (${icebergTable(p.name)});
INSERT INTO sink SELECT * FROM events;`]);
}

const started = (p) => waitFor('the job running with its metrics URL', () => {
  const j = jobRecords(p.home)[0];
  return j && j.state === 'RUNNING' && j.metrics_url ? j : null;
});

// The value of `family` with label table=`table` on the job's /metrics.
async function metric(rec, family, table) {
  const text = await (await fetch(rec.metrics_url)).text();
  const f = parsePrometheusTextFormat(text).find((x) => x.name === family);
  assert.ok(f, `${family} on /metrics`);
  const m = f.metrics.find((x) => x.labels.table === table);
  assert.ok(m, `${family}{table="${table}"} on /metrics`);
  return Number(m.value);
}

async function cancel(p, rec, run) {
  const r = floe(['cancel', rec.job_id], { FLOE_HOME: p.home });
  assert.equal(r.code, 0, r.err);
  await run.exited;
}

test('a table that stops committing while input flows raises the stall alarm, seen everywhere', async () => {
  const cluster = await startCluster(ROOT, 'stall', { topics: ['stall:1'] });
  const p = sandbox(ROOT, 'stall');
  writeJob(p, 'stall', "SET 'floe.stall-alarm.threshold' = '3 s';");
  produceMore(cluster.bootstrap, 'stall', 500);
  // The 6th checkpoint completion and every one after it commit nothing.
  const run = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap },
                     { env: { FLOE_HOLD_AT: 'iceberg-commit:6' } });
  const rec = await started(p);
  const producer = producerLoop(cluster.bootstrap, 'stall');
  try {
    await waitFor(`the stall warning:\n${run.err}`, () => /STALLED/.test(run.err));
    const seenAt = Date.now();
    const line = run.err.split('\n').find((l) => /STALLED/.test(l));
    assert.match(line, /^floe: warning: table demo\.stall STALLED: no commit for \d+\.\d s while its writers received \d+ rows it has not committed \(floe\.stall-alarm\.threshold 3\.0 s/);
    const table = jobRecords(p.home)[0].tables.find((t) => t.table === 'demo.stall');
    assert.ok(table.stalled, 'job.json marks the table stalled');
    assert.ok(table.last_commit_millis > 0, 'it committed before the hold');
    // Never before the threshold; how long after it is a measurement, not an assertion.
    const latency = seenAt - table.last_commit_millis;
    assert.ok(latency >= 3000, `alarm ${latency} ms after the last commit: before the threshold`);
    console.log(`# stall alarm seen ${latency} ms after the last commit (threshold 3000 ms)`);

    assert.equal(await metric(rec, 'floe_jobmanager_job_sinkStalled', 'demo.stall'), 1);
    assert.ok(await metric(rec, 'floe_jobmanager_job_sinkUncommittedRecords', 'demo.stall') > 0);
    assert.ok(await metric(rec,
      'floe_taskmanager_job_task_operator_IcebergFilesCommitter_elapsedSecondsSinceLastSuccessfulCommit',
      'demo.stall') >= 3);
    const list = floe(['list'], { FLOE_HOME: p.home });
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /demo\.stall STALLED \d+\.\d s without a commit/);
    const status = floe(['status', rec.job_id], { FLOE_HOME: p.home });
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, /demo\.stall\s.*STALLED \d+(\.\d)? s without a commit \(threshold 3\.0 s\)/);
    assert.match(status.out, /^job [0-9a-f]{32} \(stall\.sql\) RUNNING/);
    const json = JSON.parse(floe(['status', rec.job_id, '--json'], { FLOE_HOME: p.home }).out);
    assert.deepEqual(json.overview.alarm.stalled, ['demo.stall']);
  } finally {
    await producer.stop();
  }
  await cancel(p, rec, run);
});

test('a healthy job whose input goes idle raises no alarm', async () => {
  const cluster = await startCluster(ROOT, 'idle', { topics: ['idle:2'] });
  const p = sandbox(ROOT, 'idle');
  writeJob(p, 'idle', "SET 'floe.stall-alarm.threshold' = '2 s';");
  const first = nextSeq;
  const producer = producerLoop(cluster.bootstrap, 'idle');
  const run = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap });
  const rec = await started(p);
  await sleep(4000);  // input flowing, commits every checkpoint
  await producer.stop();
  const total = nextSeq - first;
  const deadline = Date.now() + WAIT_MS;
  while (await metric(rec,
    'floe_taskmanager_job_task_operator_IcebergFilesCommitter_committedDataFilesRecordCount',
    'demo.idle') !== total) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${total} committed records`);
    await sleep(200);
  }
  await sleep(6000);  // idle for three thresholds
  assert.doesNotMatch(run.err, /STALLED/);
  assert.equal(await metric(rec, 'floe_jobmanager_job_sinkStalled', 'demo.idle'), 0);
  assert.equal(await metric(rec, 'floe_jobmanager_job_sinkUncommittedRecords', 'demo.idle'), 0);
  // How long the writer's last flush (closing its files before a barrier) took, in ms.
  const flush = await metric(rec, 'floe_taskmanager_job_task_operator_IcebergStreamWriter_lastFlushDurationMs', 'demo.idle');
  assert.ok(Number.isInteger(flush) && flush >= 0 && flush < 60_000, `lastFlushDurationMs ${flush}`);
  assert.ok(!jobRecords(p.home)[0].tables.find((t) => t.table === 'demo.idle').stalled);
  await cancel(p, rec, run);
});

test("floe.stall-alarm.action 'fail' fails the job with the alarm's reason", async () => {
  const cluster = await startCluster(ROOT, 'fail', { topics: ['fail:1'] });
  const p = sandbox(ROOT, 'fail');
  writeJob(p, 'fail', "SET 'floe.stall-alarm.threshold' = '2 s';\nSET 'floe.stall-alarm.action' = 'fail';");
  produceMore(cluster.bootstrap, 'fail', 500);
  const run = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap },
                     { env: { FLOE_HOLD_AT: 'iceberg-commit:3' } });
  await started(p);
  const producer = producerLoop(cluster.bootstrap, 'fail');
  let exit;
  try {
    exit = await run.exited;
  } finally {
    await producer.stop();
  }
  assert.equal(exit.code, 1, run.err);
  const rec = jobRecords(p.home)[0];
  assert.equal(rec.state, 'FAILED');
  assert.match(rec.message, /table demo\.fail STALLED: .*floe\.stall-alarm\.action 'fail'/);
  assert.match(run.err, /job [0-9a-f]{32} failed: table demo\.fail STALLED/);
});

test('monitoring options are checked before anything starts, with the rule', () => {
  const p = sandbox(ROOT, 'badopts');
  const cases = [
    ["SET 'floe.stall-alarm.threshold' = '100 ms';", /'floe\.stall-alarm\.threshold' must be a duration of at least the checkpoint interval \(500 ms/],
    ["SET 'floe.stall-alarm.action' = 'page';", /'floe\.stall-alarm\.action' must be 'warn' or 'fail', got 'page'/],
    ["SET 'rest.port' = '80000';", /'rest\.port' must be a port \(1\.\.65535\) or a range/],
    ["SET 'metrics.reporter.prom.port' = '9300-9200';", /'metrics\.reporter\.prom\.port' must be a port/],
    ["SET 'rest.bind-address' = 'everywhere';", /'rest\.bind-address' must be an IPv4 address/],
  ];
  for (const [set, message] of cases) {
    writeJob(p, 'unused', set);
    const r = floe(['run', p.job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`, '--var',
                    'KAFKA=127.0.0.1:1'], { FLOE_HOME: p.home });
    assert.equal(r.code, 1, `${set}: ${r.err}`);
    assert.match(r.err, message);
    assert.match(r.err, /line 6, column 1/);
  }
});

test("floe.monitoring.enabled 'false': no endpoints, the job runs as before", async () => {
  const cluster = await startCluster(ROOT, 'off', { topics: ['off:1'] });
  const p = sandbox(ROOT, 'off');
  writeJob(p, 'off', "SET 'floe.monitoring.enabled' = 'false';");
  // Bounded: the job ends once it read what is there now.
  const sql = fs.readFileSync(p.job, 'utf8')
    .replace("'scan.startup.mode' = 'earliest-offset'",
             "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'");
  writeJsonl(p.job, [sql.trimEnd()]);
  const first = nextSeq;
  produceMore(cluster.bootstrap, 'off', 300);
  const run = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap });
  const { code } = await run.exited;
  assert.equal(code, 0, run.err);
  assert.doesNotMatch(run.err, /web UI|metrics: http/);
  const rec = jobRecords(p.home)[0];
  assert.equal(rec.state, 'FINISHED');
  assert.equal(rec.web_url, '');
  assert.equal(rec.metrics_url, '');
  const r = floe(['table', 'verify', p.table, '--warehouse', p.wh, '--unique', 'seq',
                  '--expect-range', `seq:${first}..${nextSeq - 1}`]);
  assert.equal(r.code, 0, r.out + r.err);
});
