// The Flink lesson's two jobs' inputs and their answers, computed here from the events,
// independently of floe: the course tile (TUMBLE + COUNT(*) per course) and the learner sessions
// (SESSION + COUNT(*) per learner). Shared by windows.test.mjs and experiments/lesson-jobs.

export const MINUTE = 60_000;
export const BASE = Date.parse('2026-01-01T00:00:00Z');

// learning.progress events: one hot course, event time out of order by up to `disorderMs`
// (within the 10-minute watermark delay, so no row is late).
export function progressEvents(n, disorderMs) {
  const events = [];
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < n; i++) {
    const course = rand() < 0.5 ? 'hot' : `c${Math.floor(rand() * 5)}`;
    const t = BASE + i * 700 - Math.floor(rand() * disorderMs);
    events.push({ event_id: `e${i}`, course_id: course, lesson_id: `l${i % 40}`,
                  event_time: new Date(t).toISOString().replace('Z', '') });
  }
  return events;
}

// What TUMBLE(5 min) + COUNT(*) per course gives: one row per course and window.
export function expectedTiles(events, sizeMs) {
  const counts = new Map();
  for (const e of events) {
    const t = Date.parse(e.event_time + 'Z');
    const start = t - (((t % sizeMs) + sizeMs) % sizeMs);
    const key = `${e.course_id}|${start}`;
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  return [...counts].map(([k, n]) => {
    const [course, start] = k.split('|');
    return `${course} ${new Date(Number(start)).toISOString()} ${n}`;
  }).sort();
}

// Learner events in event-time order, gaps up to 40 s overall with 25 learners (so a learner's
// own gaps often exceed ten minutes), proportionally shorter with more learners.
export function sessionEvents(n, learners = 25) {
  let seed = 11;
  // The small generator repeats too soon for many learners; mulberry32 then.
  const rand = learners <= 25 ? () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    : () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
    };
  const events = [];
  let t = BASE;
  const step = 40_000 * 25 / learners;
  for (let i = 0; i < n; i++) {
    t += Math.floor(rand() * step);
    events.push({ learner_id: `u${Math.floor(rand() * learners)}`, lesson_id: `l${i % 9}`,
                  event_time: new Date(t).toISOString().replace('Z', '') });
  }
  return events;
}

// The sessions (gap `gapMs`) cut here from the events: "<learner> <start> <end> <count>", sorted.
export function expectedSessions(events, gapMs) {
  const perLearner = new Map();
  for (const e of [...events].sort((x, y) => Date.parse(x.event_time + 'Z') - Date.parse(y.event_time + 'Z'))) {
    const ts = Date.parse(e.event_time + 'Z');
    const list = perLearner.get(e.learner_id) || [];
    const last = list[list.length - 1];
    if (last && ts <= last.end) {
      last.end = Math.max(last.end, ts + gapMs);
      last.n++;
    } else {
      list.push({ start: ts, end: ts + gapMs, n: 1 });
    }
    perLearner.set(e.learner_id, list);
  }
  const rows = [];
  for (const [learner, list] of perLearner) {
    for (const x of list) rows.push(`${learner} ${new Date(x.start).toISOString()} ${new Date(x.end).toISOString()} ${x.n}`);
  }
  return rows.sort();
}
