#!/usr/bin/env node
// learning.progress events for the examples (the Flink lesson's course tile and session job):
// one hot course, learners with sessions (bursts, then pauses longer than 10 minutes), lessons,
// event time out of order by up to --disorder-ms, ISO-8601 timestamps (as the lesson's
// 'json.timestamp-format.standard' = 'ISO-8601' reads them). Deterministic for a --seed.
//
//   node examples/generate_progress.mjs [--events 20000] [--learners 200] [--seed 7]
//        [--disorder-ms 300000] > events.jsonl
import process from 'node:process';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const events = arg('events', 20000);
const learners = arg('learners', 200);
const disorder = arg('disorder-ms', 5 * 60_000);
let seed = arg('seed', 7);
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

const start = Date.parse('2026-01-05T08:00:00Z');
const courses = ['hot-sql-101', 'streams-201', 'iceberg-301', 'kafka-102', 'flink-401'];
// Each learner alternates bursts of activity and pauses, so sessions with a 10-minute gap form.
const next = Array.from({ length: learners }, () => start + Math.floor(rand() * 3_600_000));
const out = [];
for (let i = 0; i < events; i++) {
  const learner = Math.floor(rand() * learners);
  next[learner] += rand() < 0.1 ? 15 * 60_000 + Math.floor(rand() * 3_600_000)
                                : Math.floor(rand() * 120_000);
  const t = next[learner] - Math.floor(rand() * disorder);
  const course = rand() < 0.4 ? courses[0] : courses[1 + Math.floor(rand() * (courses.length - 1))];
  out.push(JSON.stringify({
    event_id: `e${i}`, learner_id: `learner-${learner}`, course_id: course,
    lesson_id: `${course}-l${Math.floor(rand() * 12)}`,
    event_time: new Date(t).toISOString().replace('Z', ''),
  }));
}
process.stdout.write(out.join('\n') + '\n');
