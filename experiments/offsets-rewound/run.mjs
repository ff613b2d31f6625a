#!/usr/bin/env node
// The study's offsets experiment (experiments/offsets-rewound/README.md, predictions first): a
// Kafka -> Iceberg job lands the roster feed, the consumer group's committed offsets are rewound
// to the start of the log behind its back, the job is restored from its retained checkpoint,
// the offsets are rewound again and a fresh job is submitted with 'group-offsets'. After each
// step: the committed offsets summed, and the table's rows and duplicate rows (icebird).
import fs from 'node:fs'
import path from 'node:path'
import { committedOffsets, experiment, rosterLines, seqCounts } from '../lib.mjs'

const X = await experiment('offsets-rewound', `
  --quick: the study's 6,000 events, checkpoints every 200 ms
  full:    the same, checkpoints every 1 s`, {
  quick: { events: 6000, interval: '200 ms' },
  full: { events: 6000, interval: '1 s' },
})
const { startCluster, stopClusters, floe, runJob, sandbox, checkpointSets, icebergTable, produce,
        jobRecords, waitFor, writeJsonl, ROSTER_COLUMNS } = X.harness
const { events: N, interval: INTERVAL } = X.knobs
const PARTITIONS = 4
const problems = []

const cluster = await startCluster(X.out, 'study', { topics: ['roster.raw:1', `roster.updates:${PARTITIONS}`] })
const kafka = cluster.bootstrap
const p = sandbox(X.out, 'offsets')
const group = 'experiment-offsets'

// The feed: the roster connector's first N events (the study's workload) into the study's topic
// of 4 partitions.
function loadFeed() {
  const lines = rosterLines(X, kafka, N)
  produce(kafka, 'roster.updates', writeJsonl(path.join(X.out, 'feed.jsonl'), lines), ['--partition-by', 'npi'])
}

// The job: unbounded from `mode`, checkpoints retained on cancel; `bounded`: up to the offsets
// seen at start (the resubmitted job, which must end by itself).
function writeJob(file, mode, bounded) {
  fs.writeFileSync(file, `${checkpointSets(INTERVAL)}
SET 'execution.checkpointing.externalized-checkpoint-retention' = 'RETAIN_ON_CANCELLATION';
SET 'execution.checkpointing.num-retained' = '2';
CREATE TABLE feed (${ROSTER_COLUMNS}) WITH ('connector' = 'kafka', 'topic' = 'roster.updates',
  'format' = 'json', 'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = '${group}',
  'scan.startup.mode' = '${mode}', 'scan.bounded.mode' = '${bounded ? 'latest-offset' : 'unbounded'}');
CREATE TABLE lake (${ROSTER_COLUMNS}) WITH (${icebergTable('offsets')}, 'sink.parallelism' = '2');
INSERT INTO lake SELECT * FROM feed;
`)
}

const committed = () => committedOffsets(X, kafka, group, 'roster.updates')
function rewind() {
  const to = Array.from({ length: PARTITIONS }, (_, i) => `${i}:0`).join(',')
  const r = floe(['kafka', 'offsets', '--bootstrap', kafka, '--group', group, '--topic', 'roster.updates', '--set', to])
  if (r.code !== 0) throw new Error(r.err)
}
async function cancelWhenAt(run, offsets) {
  await waitFor(`the group's committed offsets at ${offsets}`, () => committed() === offsets)
  const rec = jobRecords(p.home).find((j) => j.state === 'RUNNING')
  const c = floe(['cancel', rec.job_id], { FLOE_HOME: p.home })
  if (c.code !== 0) throw new Error(c.err)
  const d = await run.done
  if (d.code !== 0) problems.push(`floe run exited ${d.code}: ${d.err.slice(-2000)}`)
  return d.err
}

const steps = []
async function step(what, log = '') {
  const rows = await X.rows(p.wh, 'offsets')
  const s = { step: what, committed_offsets: committed(), ...seqCounts(rows, N, 'npi') }
  if (/restored from checkpoint (\d+)/.test(log)) s.restored_from_checkpoint = Number(/restored from checkpoint (\d+)/.exec(log)[1])
  steps.push(s)
  X.log(JSON.stringify(s))
  if (s.duplicate_rows > 0) problems.push(`${what}: ${s.duplicate_rows} duplicate rows`)
  if (s.missing_rows > 0) problems.push(`${what}: missing seq ${s.missing_runs}`)
}

try {
  loadFeed()
  writeJob(p.job, 'earliest-offset', false)
  const vars = { CHK: p.chk, WH: p.wh, KAFKA: kafka }
  await cancelWhenAt(runJob(p, vars), N)
  await step('the first job, all events landed')
  rewind()
  await step('committed offsets rewound to the start of the log')
  // Restored from the retained checkpoint: its positions, not the group's, say where to start;
  // its first checkpoint writes them back over the rewound offsets.
  const restoredLog = await cancelWhenAt(runJob(p, vars, { from: 'latest' }), N)
  await step('restored from the retained checkpoint', restoredLog)
  rewind()
  // The operator's resubmit: a fresh job (no checkpoint) told to trust the group's offsets.
  const fresh = path.join(p.dir, 'resubmit.sql')
  writeJob(fresh, 'group-offsets', true)
  const d = await runJob(p, { ...vars, CHK: path.join(p.dir, 'chk-fresh') }, { sql: fresh }).done
  if (d.code !== 0) problems.push(`the resubmitted job exited ${d.code}: ${d.err.slice(-2000)}`)
  const fromTable = /sources start from the positions the table holds/.test(d.err)
  await step('rewound again, a fresh job from group-offsets')
  steps[steps.length - 1].started_from_table_positions = fromTable
} finally {
  await stopClusters()
}

// floe's predictions (README.md): no step replays; the resubmitted job starts from the table.
const last = steps[steps.length - 1]
const prediction = { replay_after_restore: 0, replay_after_resubmit: 0 }
const verdict = steps.every((s) => s.rows === N && s.duplicate_rows === 0) && last.started_from_table_positions ? 'held' : 'refuted'
X.log(`verdict: ${verdict}`)
await X.finish({ events: N, partitions: PARTITIONS, interval: INTERVAL, steps, prediction, verdict }, problems)
