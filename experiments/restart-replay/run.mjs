#!/usr/bin/env node
// The study's first experiment (experiments/restart-replay/README.md, predictions first): the
// roster feed in Kafka (4 partitions), read by a Kafka -> Iceberg job in each of four
// configurations, {AT_LEAST_ONCE, EXACTLY_ONCE} x {append, upsert on npi}, whose worker is
// SIGKILLed mid-feed; the table is then read back by icebird and counted against the feed.
import fs from 'node:fs'
import path from 'node:path'
import { committedOffsets, experiment, rosterLines, seqCounts } from '../lib.mjs'

const X = await experiment('restart-replay', `
  --quick: 1 round per configuration, checkpoints every 200 ms (about a minute)
  full:    5 rounds per configuration, checkpoints every 1 s (a few minutes)`, {
  quick: { events: 12000, rounds: 1, interval: '200 ms' },
  full: { events: 12000, rounds: 5, interval: '1 s' },
})
const { startCluster, stopClusters, describeTable, runJob, sandbox, checkpointSets, icebergTable, produce,
        checkpointed, waitFor, sleep, writeJsonl, ROSTER_COLUMNS } = X.harness
const { events: N, rounds: ROUNDS, interval: INTERVAL } = X.knobs
const problems = []

// The feed: the roster's events in generator order, through a one-partition topic (the roster
// connector is the study's workload as a pure function of its seed), then into the study's
// four-partition topic keyed by npi, so every provider's records keep their order.
const cluster = await startCluster(X.out, 'study', {
  topics: ['roster.raw:1', 'roster.updates:4'],
  args: ['--rtt-ms', '20'],  // with small fetches below, a job reads for seconds: the kill lands mid-feed
})
function feedRecords() {
  const lines = rosterLines(X, cluster.bootstrap, N)
  const file = writeJsonl(path.join(X.out, 'feed.jsonl'), lines)
  produce(cluster.bootstrap, 'roster.updates', file,
          ['--partition-by', 'npi', '--property', 'batch.num.messages=10', '--property', 'linger.ms=0'])
  return lines.map((l) => JSON.parse(l))
}
const feed = feedRecords()
// Upsert's answer, from the feed itself: each provider's last record (its records share one
// partition, in feed order).
const latest = new Map()
for (const r of feed) latest.set(r.npi, r)
X.log(`feed: ${N} events about ${latest.size} providers in roster.updates (4 partitions)`)

// What the snapshots of demo.<name> added in delete files (equality deletes of upserts).
function deleteFilesWritten(p) {
  return describeTable(p).snapshots.reduce((a, s) => a + Number(s.summary['added-delete-files'] || 0), 0)
}

async function runOnce(mode, upsert, round) {
  const name = `${mode === 'EXACTLY_ONCE' ? 'eo' : 'alo'}_${upsert ? 'upsert' : 'append'}_${round}`
  const p = sandbox(X.out, name)
  const group = `experiment-${name}`
  fs.writeFileSync(p.job, `${checkpointSets(INTERVAL)}
SET 'execution.checkpointing.mode' = '${mode}';
CREATE TABLE feed (${ROSTER_COLUMNS}) WITH ('connector' = 'kafka', 'topic' = 'roster.updates',
  'format' = 'json', 'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = '${group}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'properties.max.partition.fetch.bytes' = '1024');
CREATE TABLE lake (${ROSTER_COLUMNS}${upsert ? ', PRIMARY KEY (npi) NOT ENFORCED' : ''})
  WITH (${icebergTable(name)}, 'sink.parallelism' = '2'${upsert ? ", 'write.upsert.enabled' = 'true'" : ''});
INSERT INTO lake SELECT * FROM feed;
`)
  const job = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap })
  const rec = await waitFor('the job\'s second checkpoint', () => checkpointed(p.home, 2))
  await sleep(Math.floor(Math.random() * 300))
  const committedAtKill = committedOffsets(X, cluster.bootstrap, group, 'roster.updates')
  const killedAfter = checkpointed(p.home, 0)?.last_checkpoint ?? null
  try { process.kill(rec.worker_pid, 'SIGKILL') } catch { /* gone: the run still must be right */ }
  const { code, err } = await job.done
  const restarts = (err.match(/worker exited \(killed by SIGKILL\); restarting/g) ?? []).length
  const rows = await X.rows(p.wh, name)
  const counts = seqCounts(rows, N, 'npi')
  if (upsert) {  // a provider's older records are meant to go: no seq is missing
    delete counts.missing_runs
    delete counts.missing_rows
  }
  const out = { config: name.replace(/_\d+$/, ''), round, exit_code: code, restarts,
                kill_after_checkpoint: killedAfter, committed_offsets_at_kill: committedAtKill,
                ...counts, delete_files_written: deleteFilesWritten(p) }
  if (upsert) {
    // One row per provider, each the provider's last record: missing and extra rows are counts
    // of providers, stale ones carry an older record.
    const byNpi = new Map(rows.map((r) => [String(r.npi), r]))
    out.providers_expected = latest.size
    out.providers_missing = [...latest.keys()].filter((k) => !byNpi.has(k)).length
    out.providers_extra = [...byNpi.keys()].filter((k) => !latest.has(k)).length
    out.providers_stale = [...latest].filter(([k, r]) => byNpi.has(k) && Number(byNpi.get(k).seq) !== r.seq).length
  }
  // floe's guarantee, whatever the prediction says: a duplicate or a lost event is a defect.
  if (counts.duplicate_rows > 0) problems.push(`${name}: ${counts.duplicate_rows} duplicate rows`)
  if (!upsert && counts.missing_rows > 0) problems.push(`${name}: missing seq ${counts.missing_runs}`)
  if (code !== 0) problems.push(`${name}: floe run exited ${code}: ${err.slice(-2000)}`)
  if (restarts === 0) problems.push(`${name}: the worker was never restarted (the kill did not land)`)
  return out
}

const configs = []
for (const mode of ['AT_LEAST_ONCE', 'EXACTLY_ONCE']) {
  for (const upsert of [false, true]) configs.push({ mode, upsert })
}
const runs = []
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const { mode, upsert } of configs) {
      const r = await runOnce(mode, upsert, round)
      X.log(JSON.stringify(r))
      runs.push(r)
    }
  }
} finally {
  await stopClusters()
}

// Per configuration, over its rounds: the worst of each count, and the prediction's verdict
// (README.md: every configuration lands every event once; upsert one row per provider, its
// last record, with delete files; append none).
const summary = configs.map(({ mode, upsert }) => {
  const config = `${mode === 'EXACTLY_ONCE' ? 'eo' : 'alo'}_${upsert ? 'upsert' : 'append'}`
  const rs = runs.filter((r) => r.config === config)
  const max = (k) => Math.max(...rs.map((r) => r[k] ?? 0))
  const s = { config, mode, upsert, rounds: rs.length, kills: rs.reduce((a, r) => a + r.restarts, 0),
              rows: [...new Set(rs.map((r) => r.rows))], duplicate_rows_max: max('duplicate_rows'),
              rows_sharing_npi: [...new Set(rs.map((r) => r.rows_sharing_npi))],
              delete_files_written_min: Math.min(...rs.map((r) => r.delete_files_written)),
              delete_files_written_max: max('delete_files_written'),
              kill_before_end: rs.every((r) => r.committed_offsets_at_kill != null && r.committed_offsets_at_kill < N) }
  const held = upsert
    ? rs.every((r) => r.rows === latest.size && r.duplicate_rows === 0 && r.providers_missing === 0 &&
                      r.providers_extra === 0 && r.providers_stale === 0 && r.delete_files_written > 0)
    : rs.every((r) => r.rows === N && r.duplicate_rows === 0 && r.missing_rows === 0 && r.delete_files_written === 0)
  s.prediction = upsert ? 'one row per provider, its last record; delete files written' : 'every event once; no delete file'
  s.verdict = held ? 'held' : 'refuted'
  return s
})
for (const s of summary) X.log(`${s.config}: ${s.verdict} (${JSON.stringify(s)})`)
await X.finish({ events: N, providers: latest.size, partitions: 4, interval: INTERVAL, runs, summary }, problems)
