#!/usr/bin/env node
// The study's maintenance experiment (experiments/maintenance-live-writer/README.md, predictions
// first): while a Kafka -> Iceberg job writes the roster feed, a loop runs the table's maintenance
// procedures against the live table from outside the job: snapshot expiry down to one snapshot,
// compaction, manifest rewrite, and the zero-retention orphan sweep (first as asked, then with
// the flag floe demands for it); the worker is SIGKILLed after the first expiry. Counted: what
// each procedure did or why it was refused, and the table read back by icebird.
import fs from 'node:fs'
import { experiment, rosterFeeder, seqCounts } from '../lib.mjs'

const X = await experiment('maintenance-live-writer', `
  --quick: 12,000 events over about 6 s, checkpoints every 300 ms
  full:    12,000 events over about 40 s, checkpoints every 1 s`, {
  quick: { feed_s: 6, interval: '300 ms' },
  full: { feed_s: 40, interval: '1 s' },
})
const { startCluster, stopClusters, floe, start, runJob, sandbox, checkpointSets, icebergTable,
        jobRecords, checkpointed, waitFor, sleep, ROSTER_COLUMNS } = X.harness
const { feed_s: FEED_S, interval: INTERVAL } = X.knobs
const N = 12000
const problems = []
const cluster = await startCluster(X.out, 'study', { topics: ['roster.updates:4'] })
const kafka = cluster.bootstrap
const p = sandbox(X.out, 'maintained')
const feeder = rosterFeeder(X, 'feeder', 'roster.updates', N, N / FEED_S)
// The job under maintenance: in-job maintenance off, as Iceberg's Flink sink has none (the
// study ran the procedures from Trino).
fs.writeFileSync(p.job, `${checkpointSets(INTERVAL)}
CREATE TABLE feed (${ROSTER_COLUMNS}) WITH ('connector' = 'kafka', 'topic' = 'roster.updates', 'format' = 'json',
  'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = 'experiment-maintenance',
  'scan.startup.mode' = 'earliest-offset');
CREATE TABLE lake (${ROSTER_COLUMNS}) WITH (${icebergTable('maintained')}, 'sink.parallelism' = '2',
  'flink-maintenance.rewrite.enabled' = 'false', 'flink-maintenance.expire-snapshots.enabled' = 'false',
  'flink-maintenance.delete-orphan-files.enabled' = 'false');
INSERT INTO lake SELECT * FROM feed;
`)

// `floe table COMMAND NS.TABLE OPTIONS...` in the background (the loop must not block the kill).
const cli = ([command, ...options]) =>
  start(['table', command, p.table, '--warehouse', p.wh, ...options], { stdout: 'pipe' }).done
const procedures = {
  expire: { args: ['expire-snapshots', '--max-snapshot-age-ms', '0', '--retain-last', '1'], runs: 0, refused: [], expired: 0, max_before: 0 },
  compact: { args: ['compact', '--min-input-files', '2'], runs: 0, refused: [], rewrote: 0 },
  rewrite_manifests: { args: ['rewrite-manifests'], runs: 0, refused: [], rewrote: 0 },
  orphans_as_asked: { args: ['remove-orphan-files', '--older-than', '0s'], runs: 0, refused: [] },
  orphans_forced: { args: ['remove-orphan-files', '--older-than', '0s', '--force-unsafe-interval'], runs: 0, refused: [], deleted: 0, in_progress_kept_max: 0 },
}
async function maintain(stop) {
  while (!stop.done) {
    for (const [name, proc] of Object.entries(procedures)) {
      const r = await cli(proc.args)
      proc.runs++
      if (r.code !== 0) {
        const why = r.err.trim().split('\n').pop()
        if (!proc.refused.includes(why) && proc.refused.length < 5) proc.refused.push(why)
        continue
      }
      let m
      if (name === 'expire' && (m = /(\d+) snapshots expired, (\d+) kept/.exec(r.out))) {
        proc.expired += Number(m[1])
        proc.max_before = Math.max(proc.max_before, Number(m[1]) + Number(m[2]))
        if (Number(m[1]) > 0) stop.expiredOnce = true
      }
      if (name === 'compact' && (m = /rewrote (\d+) data files/.exec(r.out))) proc.rewrote += Number(m[1])
      if (name === 'rewrite_manifests' && (m = /(\d+) -> (\d+) manifests/.exec(r.out))) proc.rewrote += Number(m[1])
      if (name === 'orphans_forced' && (m = /(\d+) orphan files .* deleted; \d+ unreferenced files kept as newer than --older-than, (\d+) as work in progress/.exec(r.out))) {
        proc.deleted += Number(m[1])
        proc.in_progress_kept_max = Math.max(proc.in_progress_kept_max, Number(m[2]))
      }
    }
  }
}

const stop = { done: false, expiredOnce: false }
let kill = null
let runLog = ''
try {
  const job = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: kafka })
  await waitFor('a first commit', () => checkpointed(p.home, 1))
  const feeding = runJob(feeder, { CHK: feeder.chk, KAFKA: kafka }).done
  const loop = maintain(stop)
  // The study's restart after the expiry: the worker SIGKILLed once an expiry removed snapshots.
  await waitFor('an expiry that removed snapshots', () => stop.expiredOnce, 120_000, 50)
  const rec = jobRecords(p.home).find((j) => j.state === 'RUNNING' && j.worker_pid)
  kill = { after_checkpoint: rec.last_checkpoint }
  try { process.kill(rec.worker_pid, 'SIGKILL') } catch { /* gone */ }
  const fed = await feeding
  if (fed.code !== 0) throw new Error(`the feeder exited ${fed.code}: ${fed.err.slice(-1000)}`)
  await waitFor('every record committed', async () => (await X.rows(p.wh, 'maintained').catch(() => [])).length >= N, 300_000, 500)
  await sleep(2000)  // a few more rounds of maintenance on the complete table
  stop.done = true
  await loop
  const c = floe(['cancel', jobRecords(p.home).find((j) => j.state === 'RUNNING').job_id], { FLOE_HOME: p.home })
  if (c.code !== 0) problems.push(`cancel: ${c.err}`)
  const d = await job.done
  runLog = d.err
  if (d.code !== 0) problems.push(`floe run exited ${d.code}: ${d.err.slice(-1000)}`)
} finally {
  stop.done = true
  await stopClusters()
}
const counts = seqCounts(await X.rows(p.wh, 'maintained'), N, 'npi')
if (counts.duplicate_rows > 0) problems.push(`${counts.duplicate_rows} duplicate rows`)
if (counts.missing_rows > 0) problems.push(`missing seq ${counts.missing_runs}`)
const restarted = /worker exited \(killed by SIGKILL\); restarting/.test(runLog)
if (!restarted) problems.push('the worker was not restarted after the kill')
for (const proc of Object.values(procedures)) delete proc.args
// floe's predictions (README.md).
const predictions = {
  every_row_once: counts.rows === N && counts.duplicate_rows === 0 && counts.missing_rows === 0,
  expiry_removed_snapshots: procedures.expire.expired > 0,
  restart_after_expiry_lost_nothing: restarted && counts.missing_rows === 0,
  compaction_and_manifest_rewrite_landed: procedures.compact.rewrote > 0 && procedures.rewrite_manifests.rewrote > 0,
  zero_retention_sweep_refused_as_asked: procedures.orphans_as_asked.runs > 0 &&
    procedures.orphans_as_asked.refused.length > 0 && procedures.orphans_as_asked.refused.every((w) => /force-unsafe-interval/.test(w)),
  forced_sweep_kept_work_in_progress: procedures.orphans_forced.in_progress_kept_max > 0,
}
const verdict = Object.values(predictions).every(Boolean) ? 'held' : 'refuted'
X.log(JSON.stringify({ procedures, counts, predictions, verdict }))
await X.finish({ events: N, interval: INTERVAL, feed_s: FEED_S, kill, restarted, procedures, final: counts, predictions, verdict }, problems)
