#!/usr/bin/env node
// The study's savepoint experiment (experiments/old-savepoint/README.md, predictions first): a
// Kafka -> Iceberg job takes a savepoint early, runs on and commits much more, is cancelled, a
// fresh batch arrives, and the job is restored from the old savepoint. Sampled while it runs:
// the job's newest checkpoint and the rows icebird sees; at the end, the table counted against
// the feed (duplicates, missing runs).
import fs from 'node:fs'
import path from 'node:path'
import { experiment, rosterLines, seqCounts } from '../lib.mjs'

const X = await experiment('old-savepoint', `
  --quick: 8,000 events (2,000 before the savepoint, 4,000 after it, 2,000 while the job is down),
           checkpoints every 200 ms
  full:    the study's 16,000 (4,000, 8,000, 4,000), checkpoints every 1 s`, {
  quick: { before: 2000, after: 4000, down: 2000, interval: '200 ms' },
  full: { before: 4000, after: 8000, down: 4000, interval: '1 s' },
})
const { startCluster, stopClusters, floe, describeTable, runJob, sandbox, checkpointSets, icebergTable, produce,
        jobRecords, waitFor, sleep, writeJsonl, ROSTER_COLUMNS } = X.harness
const { before: B, after: A, down: D, interval: INTERVAL } = X.knobs
const N = B + A + D
const PARTITIONS = 4
const problems = []

const cluster = await startCluster(X.out, 'study', { topics: ['roster.raw:1', `roster.updates:${PARTITIONS}`] })
const kafka = cluster.bootstrap
const p = sandbox(X.out, 'savepoint')
const group = 'experiment-savepoint'

const produceBatch = (lines, name) =>
  produce(kafka, 'roster.updates', writeJsonl(path.join(X.out, `${name}.jsonl`), lines), ['--partition-by', 'npi'])

fs.writeFileSync(p.job, `${checkpointSets(INTERVAL)}
SET 'execution.checkpointing.externalized-checkpoint-retention' = 'RETAIN_ON_CANCELLATION';
CREATE TABLE feed (${ROSTER_COLUMNS}) WITH ('connector' = 'kafka', 'topic' = 'roster.updates',
  'format' = 'json', 'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = '${group}',
  'scan.startup.mode' = 'earliest-offset');
CREATE TABLE lake (${ROSTER_COLUMNS}) WITH (${icebergTable('savepoint')}, 'sink.parallelism' = '2');
INSERT INTO lake SELECT * FROM feed;
`)
const vars = { CHK: p.chk, WH: p.wh, KAFKA: kafka }
const running = () => jobRecords(p.home).find((j) => j.state === 'RUNNING' && j.worker_pid)
const rowsNow = async () => { try { return (await X.rows(p.wh, 'savepoint')).length } catch { return 0 } }
function newestCommitted() {
  const snaps = describeTable(p).snapshots
  return snaps.length ? Number(snaps[snaps.length - 1].summary['floe.checkpoint-id'] ?? 0) : 0
}
async function cancel(run) {
  const c = floe(['cancel', running().job_id], { FLOE_HOME: p.home })
  if (c.code !== 0) throw new Error(c.err)
  const d = await run.done
  if (d.code !== 0) problems.push(`floe run exited ${d.code}: ${d.err.slice(-2000)}`)
  return d.err
}

const samples = []
let savepointCheckpoint = null
let tableCheckpointAtRestore = null
let restoreLog = ''
try {
  const lines = rosterLines(X, kafka, N)
  produceBatch(lines.slice(0, B), 'before')
  // The first run: the savepoint once the first batch is in the table, then more data, committed.
  const first = runJob(p, vars)
  await waitFor('the first batch in the table', async () => running() && (await rowsNow()) === B, 120_000, 250)
  const sp = floe(['savepoint', running().job_id, path.join(p.dir, 'savepoints')], { FLOE_HOME: p.home })
  if (sp.code !== 0) throw new Error(`savepoint: ${sp.err}`)
  const savepoint = sp.out.trim().split('\n').pop()
  // In four parts, each committed before the next: the table's newest commit runs well ahead of
  // the savepoint (the study's ran from checkpoint 5 to 19).
  for (let k = 0; k < 4; k++) {
    const to = B + (A * (k + 1)) / 4
    produceBatch(lines.slice(B + (A * k) / 4, to), `after-${k}`)
    await waitFor(`part ${k + 1} of the second batch in the table`, async () => (await rowsNow()) === to, 120_000, 250)
  }
  await cancel(first)
  tableCheckpointAtRestore = newestCommitted()
  // While the job is down a fresh batch arrives; then the old savepoint is restored.
  produceBatch(lines.slice(B + A), 'down')
  const t0 = Date.now()
  const restored = runJob(p, vars, { from: savepoint })
  for (;;) {
    const rows = await rowsNow()
    const job = running()
    samples.push({ ms: Date.now() - t0, rows, job_checkpoint: job?.last_checkpoint ?? null, state: job?.state ?? 'starting' })
    if (rows >= N || Date.now() - t0 > 120_000) break
    await sleep(250)
  }
  await sleep(1000)  // a late duplicate commit would show here
  restoreLog = await cancel(restored)
  savepointCheckpoint = Number(/restored from (?:checkpoint|savepoint) (\d+)/.exec(restoreLog)?.[1] ?? NaN)
} finally {
  await stopClusters()
}

const rows = await X.rows(p.wh, 'savepoint')
const counts = seqCounts(rows, N, 'npi')
const firstNew = samples.find((s) => s.rows > B + A)
const figures = {
  events: N, batches: { before_savepoint: B, after_savepoint: A, while_down: D }, partitions: PARTITIONS, interval: INTERVAL,
  savepoint_checkpoint: savepointCheckpoint, table_checkpoint_at_restore: tableCheckpointAtRestore,
  started_from_table_positions: /positions the table holds|table's positions|ahead/.test(restoreLog),
  first_new_rows_visible_ms: firstNew?.ms ?? null, all_rows_visible_ms: samples.find((s) => s.rows >= N)?.ms ?? null,
  samples, final: counts,
}
if (counts.duplicate_rows > 0) problems.push(`${counts.duplicate_rows} duplicate rows`)
if (counts.missing_rows > 0) problems.push(`missing seq ${counts.missing_runs}`)
if (!(savepointCheckpoint < tableCheckpointAtRestore)) {
  problems.push(`the savepoint (checkpoint ${savepointCheckpoint}) was not older than the table (${tableCheckpointAtRestore})`)
}
// floe's predictions (README.md): no duplicate, nothing lost, the new rows visible within a few
// checkpoint intervals of the restored job's start (no freeze).
figures.verdict = counts.rows === N && counts.duplicate_rows === 0 && figures.first_new_rows_visible_ms != null &&
  figures.first_new_rows_visible_ms < 10_000 ? 'held' : 'refuted'
X.log(JSON.stringify({ ...figures, samples: `${samples.length} samples` }))
await X.finish(figures, problems)
