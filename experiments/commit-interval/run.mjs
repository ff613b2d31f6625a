#!/usr/bin/env node
// The study's commit-interval experiment (experiments/commit-interval/README.md, predictions
// first): the same sustained feed of 60,000 roster events through Kafka into an Iceberg append
// table (2 writers) at three checkpoint intervals, plus the shortest interval again with a 1 GiB
// target file size, once more unchanged, and once with floe's in-job compaction on. The study's
// intervals (120, 30, 5 s) and feed (about 200 s) are scaled by one factor (README.md).
import fs from 'node:fs'
import path from 'node:path'
import { experiment, rosterFeeder, seqCounts } from '../lib.mjs'

const X = await experiment('commit-interval', `
  --quick: the study's times x 1/40 (intervals 3 s, 750 ms, 125 ms; a 5 s feed)
  full:    the study's times x 1/4 (intervals 30 s, 7.5 s, 1.25 s; a 50 s feed)`, {
  quick: { scale: 1 / 40 },
  full: { scale: 1 / 4 },
})
const { startCluster, stopClusters, floe, describeTable, runJob, sandbox, checkpointSets, icebergTable, jobRecords,
        waitFor, sleep, ROSTER_COLUMNS } = X.harness
const { scale: K } = X.knobs
const N = 60000
const FEED_S = 200 * K
const ms = (s) => `${Math.round(s * K * 1000)} ms`
const problems = []
const cluster = await startCluster(X.out, 'study', { topics: ['feed-1:4', 'feed-2:4', 'feed-3:4', 'feed-4:4', 'feed-5:4', 'feed-6:4'] })
const kafka = cluster.bootstrap

const MAINTENANCE_OFF = `, 'flink-maintenance.rewrite.enabled' = 'false',
        'flink-maintenance.expire-snapshots.enabled' = 'false', 'flink-maintenance.delete-orphan-files.enabled' = 'false'`
const RUNS = [
  { name: '120s', interval: 120, options: MAINTENANCE_OFF },
  { name: '30s', interval: 30, options: MAINTENANCE_OFF },
  { name: '5s', interval: 5, options: MAINTENANCE_OFF },
  { name: '5s, run again', interval: 5, options: MAINTENANCE_OFF },
  { name: '5s, 1 GiB target', interval: 5, options: `${MAINTENANCE_OFF}, 'write.target-file-size-bytes' = '1073741824'` },
  { name: '5s, in-job compaction', interval: 5, options: '' },  // floe's default maintenance
]

const snapshots = (p) => describeTable(p).snapshots
const records = (snaps) => Number(snaps.at(-1)?.summary['total-records'] ?? 0)

async function runOnce(run, k) {
  const topic = `feed-${k + 1}`
  const p = sandbox(X.out, `interval_${k + 1}`)
  const feeder = rosterFeeder(X, `feeder_${k + 1}`, topic, N, N / FEED_S)
  fs.writeFileSync(p.job, `${checkpointSets(ms(run.interval))}
CREATE TABLE feed (${ROSTER_COLUMNS}) WITH ('connector' = 'kafka', 'topic' = '${topic}', 'format' = 'json',
  'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = 'experiment-${k}',
  'scan.startup.mode' = 'earliest-offset');
CREATE TABLE lake (${ROSTER_COLUMNS}) WITH (${icebergTable(`interval_${k + 1}`)}, 'sink.parallelism' = '2'${run.options});
INSERT INTO lake SELECT * FROM feed;
`)
  const job = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: kafka })
  await waitFor('the job running', () => jobRecords(p.home).find((j) => j.state === 'RUNNING' && j.worker_pid))
  const t0 = Date.now()
  const fed = await runJob(feeder, { CHK: feeder.chk, KAFKA: kafka }).done
  const feedEnd = Date.now()
  if (fed.code !== 0) throw new Error(`the feeder exited ${fed.code}: ${fed.err.slice(-1000)}`)
  // Freshness: from the feed's last record to a committed table holding all of it.
  await waitFor('every record committed', () => records(snapshots(p)) >= N, 600_000, 50)
  const visible = Date.now()
  await sleep(Math.max(500, run.interval * K * 1000 * 2))  // a compaction after the last commit shows here
  const rec = jobRecords(p.home).find((j) => j.state === 'RUNNING')
  floe(['cancel', rec.job_id], { FLOE_HOME: p.home })
  const d = await job.done
  if (d.code !== 0) problems.push(`${run.name}: floe run exited ${d.code}: ${d.err.slice(-1000)}`)
  const snaps = snapshots(p)
  const appends = snaps.filter((s) => s.summary.operation === 'append')
  const written = appends.reduce((a, s) => a + Number(s.summary['added-data-files'] ?? 0), 0)
  const bytes = appends.reduce((a, s) => a + Number(s.summary['added-files-size'] ?? 0), 0)
  const last = snaps.at(-1).summary
  const counts = seqCounts(await X.rows(p.wh, `interval_${k + 1}`), N, 'npi')
  if (counts.duplicate_rows > 0 || counts.missing_rows > 0) problems.push(`${run.name}: ${JSON.stringify(counts)}`)
  const out = {
    run: run.name, interval_s: run.interval * K, study_interval_s: run.interval, feed_s: (feedEnd - t0) / 1000,
    commits: appends.length, data_files_written: written, files_per_commit: written / appends.length,
    avg_data_file_bytes: Math.round(bytes / written),
    live_data_files: Number(last['total-data-files']), avg_live_file_bytes: Math.round(Number(last['total-files-size']) / Number(last['total-data-files'])),
    compactions: snaps.filter((s) => s.summary.operation === 'replace').length,
    last_record_to_visible_s: (visible - feedEnd) / 1000, rows: counts.rows, duplicate_rows: counts.duplicate_rows, missing_rows: counts.missing_rows,
  }
  X.log(JSON.stringify(out))
  return out
}

const results = []
try {
  for (let k = 0; k < RUNS.length; k++) results.push(await runOnce(RUNS[k], k))
} finally {
  await stopClusters()
}
// floe's predictions (README.md).
const by = (name) => results.find((r) => r.run === name)
const [r120, r30, r5, again, big, compacted] = RUNS.map((r) => by(r.name))
const predictions = {
  longer_interval_larger_files: r120.avg_data_file_bytes > r30.avg_data_file_bytes && r30.avg_data_file_bytes > r5.avg_data_file_bytes,
  one_file_per_writer_per_commit: [r120, r30, r5, again, big].every((r) => r.files_per_commit <= 2),
  target_size_changes_little: Math.abs(big.avg_data_file_bytes - r5.avg_data_file_bytes) / r5.avg_data_file_bytes < 0.1,
  compaction_leaves_larger_live_files: compacted.compactions > 0 && compacted.avg_live_file_bytes > 2 * r5.avg_live_file_bytes,
  freshness_is_the_price: r120.last_record_to_visible_s > r5.last_record_to_visible_s,
}
const verdict = Object.values(predictions).every(Boolean) ? 'held' : 'refuted'
X.log(`predictions: ${JSON.stringify(predictions)}; verdict ${verdict}`)
await X.finish({ events: N, scale: K, runs: results, predictions, verdict }, problems)
