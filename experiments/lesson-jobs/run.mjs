#!/usr/bin/env node
// The Flink lesson's two jobs (experiments/lesson-jobs/README.md, predictions first): the course
// activity tile (TUMBLE 5 min COUNT(*) per course, watermark 10 min) and the learner sessions
// (SESSION 10 min gap COUNT(*) per learner), each read from Kafka into Iceberg with its worker
// SIGKILLed mid-feed; icebird reads the tables back and they are compared row for row with the
// answer computed from the events by this experiment (tests/integration/lesson_events.mjs).
import fs from 'node:fs'
import path from 'node:path'
import { experiment } from '../lib.mjs'

const X = await experiment('lesson-jobs', `
  --quick: 6,000 progress events and 4,000 learner events, one kill each
  full:    the same inputs, three runs of each job with a kill each`, {
  quick: { rounds: 1 },
  full: { rounds: 3 },
})
const { startCluster, stopClusters, runJob, sandbox, checkpointSets, icebergTable, produce,
        killWorkerMidFeed, writeJsonl } = X.harness
const { MINUTE, progressEvents, expectedTiles, sessionEvents, expectedSessions } =
  await import('../../tests/integration/lesson_events.mjs')
const problems = []
const tileEvents = progressEvents(6000, 9 * MINUTE)
const learnerEvents = sessionEvents(4000)

// 20 ms per broker answer and small fetches keep the bounded jobs reading for seconds.
const cluster = await startCluster(X.out, 'lesson', { topics: ['learning.progress:3', 'learner.progress:3'], args: ['--rtt-ms', '20'] })
const slow = ['--property', 'batch.num.messages=10', '--property', 'linger.ms=0']
produce(cluster.bootstrap, 'learning.progress', writeJsonl(path.join(X.out, 'progress.jsonl'), tileEvents), slow)
produce(cluster.bootstrap, 'learner.progress', writeJsonl(path.join(X.out, 'learners.jsonl'), learnerEvents), slow)
const source = (topic) => `'connector' = 'kafka', 'topic' = '${topic}', 'properties.bootstrap.servers' = '\${KAFKA}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'properties.max.partition.fetch.bytes' = '2048', 'format' = 'json', 'json.timestamp-format.standard' = 'ISO-8601'`

const JOBS = {
  tile: {
    sql: (name) => `CREATE TABLE progress (event_id STRING, course_id STRING, lesson_id STRING, event_time TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '10' MINUTE) WITH (${source('learning.progress')});
CREATE TABLE course_activity_tile (course_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
  event_count BIGINT) WITH (${icebergTable(name)});
INSERT INTO course_activity_tile
SELECT course_id, window_start, window_end, COUNT(*) AS event_count
FROM TABLE(TUMBLE(TABLE progress, DESCRIPTOR(event_time), INTERVAL '5' MINUTES))
GROUP BY course_id, window_start, window_end;`,
    expected: expectedTiles(tileEvents, 5 * MINUTE),
    row: (r) => `${r.course_id} ${iso(r.window_start)} ${Number(r.event_count)}`,
  },
  sessions: {
    sql: (name) => `CREATE TABLE progress (learner_id STRING, lesson_id STRING, event_time TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '1' MINUTE) WITH (${source('learner.progress')});
CREATE TABLE learner_sessions (learner_id STRING, session_start TIMESTAMP(3), session_end TIMESTAMP(3),
  events BIGINT) WITH (${icebergTable(name)});
INSERT INTO learner_sessions
SELECT learner_id, window_start, window_end, COUNT(*)
FROM TABLE(SESSION(TABLE progress PARTITION BY learner_id, DESCRIPTOR(event_time), INTERVAL '10' MINUTES))
GROUP BY learner_id, window_start, window_end;`,
    expected: expectedSessions(learnerEvents, 10 * MINUTE),
    row: (r) => `${r.learner_id} ${iso(r.session_start)} ${iso(r.session_end)} ${Number(r.events)}`,
  },
}
// A timestamp as icebird gives it (a Date, or epoch micros/millis) as ISO-8601 UTC.
function iso(v) {
  if (v instanceof Date) return v.toISOString()
  if (typeof v === 'bigint') return new Date(Number(v / 1000n)).toISOString()
  return new Date(Date.parse(String(v).replace(' ', 'T') + 'Z')).toISOString()
}

async function runOnce(kind, round) {
  const name = `${kind}_${round}`
  const p = sandbox(X.out, name)
  fs.writeFileSync(p.job, `${checkpointSets('300 ms')}\n${JOBS[kind].sql(name)}\n`)
  const job = runJob(p, { CHK: p.chk, WH: p.wh, KAFKA: cluster.bootstrap })
  await killWorkerMidFeed(p, 2, 1000)
  const { code, err } = await job.done
  const restarted = /worker exited \(killed by SIGKILL\); restarting/.test(err)
  const got = (await X.rows(p.wh, name)).map(JOBS[kind].row).sort()
  const want = JOBS[kind].expected
  const have = new Map()
  for (const r of got) have.set(r, (have.get(r) ?? 0) + 1)
  const missing = want.filter((r) => !have.has(r))
  const extra = got.length - (want.length - missing.length)
  const out = { job: kind, round, exit_code: code, restarted, expected_rows: want.length, rows: got.length,
                missing_rows: missing.length, extra_rows: extra, equal: missing.length === 0 && extra === 0,
                missing_examples: missing.slice(0, 3) }
  if (code !== 0) problems.push(`${name}: floe run exited ${code}: ${err.slice(-1500)}`)
  if (!restarted) problems.push(`${name}: the worker was not killed mid-feed and restarted`)
  if (!out.equal) problems.push(`${name}: ${missing.length} expected rows missing, ${extra} rows extra`)
  X.log(JSON.stringify(out))
  return out
}

const runs = []
try {
  for (let round = 1; round <= X.knobs.rounds; round++) {
    for (const kind of Object.keys(JOBS)) runs.push(await runOnce(kind, round))
  }
} finally {
  await stopClusters()
}
const verdict = runs.every((r) => r.equal && r.restarted) ? 'held' : 'refuted'
X.log(`verdict: ${verdict}`)
await X.finish({ tile_events: tileEvents.length, learner_events: learnerEvents.length, runs, verdict }, problems)
