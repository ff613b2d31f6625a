#!/usr/bin/env node
// The study's transaction-timeout experiment (experiments/transaction-timeout/README.md,
// predictions first): Kafka in, Kafka out with 'sink.delivery-guarantee' = 'exactly-once',
// 8,000 records, two runs that differ only in 'properties.transaction.timeout.ms' (5,000 ms
// and 300,000 ms) under a 120 s checkpoint interval. Counted: the job's outcome, the records
// written to the output topic, and those in committed transactions (what a read_committed
// reader of real Kafka sees; the mock shows every record, so the view is rebuilt from the
// sink's log of committed transactions, as tests/integration/kafka_sink.test.mjs does).
import fs from 'node:fs'
import path from 'node:path'
import { experiment } from '../lib.mjs'

const X = await experiment('transaction-timeout', `
  --quick and full: the study's 8,000 records, 120 s interval, timeouts 5,000 and 300,000 ms (a
  bounded job ends at its final checkpoint, so the interval costs no waiting)`, {
  quick: { records: 8000 },
  full: { records: 8000 },
})
const { startCluster, stopClusters, runJob, sandbox, produce, consumeTopic, committedView,
        writeJsonl } = X.harness
const { records: N } = X.knobs
const problems = []
const COLUMNS = 'seq BIGINT NOT NULL, npi STRING NOT NULL, revision INT NOT NULL'

const cluster = await startCluster(X.out, 'study', { topics: ['in:4', 'out_short:4', 'out_long:4'] })
const kafka = cluster.bootstrap
const input = []
for (let seq = 1; seq <= N; seq++) input.push({ seq, npi: `N${String(seq % 1999).padStart(9, '0')}`, revision: 1 + Math.floor(seq / 1999) })
produce(kafka, 'in', writeJsonl(path.join(X.out, 'in.jsonl'), input))

async function runWith(timeoutMs, topic) {
  const p = sandbox(X.out, topic)
  const commitLog = path.join(p.dir, 'commits.jsonl')
  fs.writeFileSync(p.job, `SET 'execution.checkpointing.interval' = '120 s';
SET 'execution.checkpointing.timeout' = '2 min';
SET 'execution.checkpointing.dir' = '\${CHK}';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '3';
SET 'restart-strategy.fixed-delay.delay' = '1 s';
CREATE TABLE src (${COLUMNS}) WITH ('connector' = 'kafka', 'topic' = 'in', 'format' = 'json',
  'properties.bootstrap.servers' = '\${KAFKA}', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset');
CREATE TABLE out (${COLUMNS}) WITH ('connector' = 'kafka', 'topic' = '${topic}', 'format' = 'json',
  'properties.bootstrap.servers' = '\${KAFKA}', 'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'experiment-${topic}', 'properties.transaction.timeout.ms' = '${timeoutMs}');
INSERT INTO out SELECT * FROM src;
`)
  const { code, err } = await runJob(p, { CHK: p.chk, KAFKA: kafka }, { env: { FLOE_KAFKA_SINK_COMMIT_LOG: commitLog } }).done
  const written = consumeTopic(kafka, topic)
  const readable = fs.existsSync(commitLog) ? committedView(commitLog, written).records : []
  const seqs = new Set(readable.map((r) => JSON.parse(r.value).seq))
  const refusal = /checkpoint interval \+ checkpoint timeout \+ restart delay < transaction\.timeout\.ms[^\n]*/.exec(err)?.[0] ?? null
  const out = { transaction_timeout_ms: timeoutMs, checkpoint_interval_ms: 120000, checkpoint_timeout_ms: 120000,
                exit_code: code, refused_at_plan_time: refusal != null, workers_started: (err.match(/worker \d+ started/g) ?? []).length,
                refusal: refusal ? err.split('\n').filter((l) => /transaction\.timeout|checkpoint interval/.test(l)).join('\n') : null,
                records_written: written.length, records_readable: readable.length, distinct_readable: seqs.size,
                records_never_visible: N - seqs.size }
  X.log(JSON.stringify(out))
  return out
}

let short, long
try {
  short = await runWith(5000, 'out_short')
  long = await runWith(300000, 'out_long')
} finally {
  await stopClusters()
}
if (long.exit_code !== 0) problems.push(`the 300,000 ms run exited ${long.exit_code}`)
if (long.distinct_readable !== N || long.records_readable !== N) {
  problems.push(`the 300,000 ms run: ${long.records_readable} records readable (${long.distinct_readable} distinct) of ${N}`)
}
if (!short.refused_at_plan_time) problems.push('the 5,000 ms run was not refused at plan time')
// floe's predictions (README.md): the short timeout refused before anything runs, with the rule
// and its numbers; the long one lands every record once, readable.
const verdict = short.refused_at_plan_time && short.exit_code !== 0 && short.workers_started === 0 &&
  short.records_written === 0 && long.exit_code === 0 && long.distinct_readable === N ? 'held' : 'refuted'
X.log(`verdict: ${verdict}`)
await X.finish({ records: N, runs: [short, long], verdict }, problems)
