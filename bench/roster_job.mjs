// What the roster-job benches (soak.mjs, table_health.mjs) share: the job file they run, the
// floe CLI, and the job record of a FLOE_HOME.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

// The roster feed's columns (the generator's schema, bench/README.md).
export const ROSTER_COLUMNS = `seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,
  event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING,
  city STRING, zip STRING, phone STRING, active BOOLEAN`

// roster -> iceberg demo.<name> (append, or upsert on npi), EXACTLY_ONCE, checkpoints into ${CHK},
// the table in ${WH}; `events` may be a literal or '\${EVENTS}'.
export function rosterJobText({ comment, name, upsert, interval, attempts, delay, seed, events, rps,
                                sinkParallelism }) {
  return `-- ${comment}
SET 'execution.checkpointing.interval' = '${interval}';
SET 'execution.checkpointing.dir' = '\${CHK}';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '${attempts}';
SET 'restart-strategy.fixed-delay.delay' = '${delay}';
CREATE TABLE roster (${ROSTER_COLUMNS})
  WITH ('connector' = 'roster', 'seed' = '${seed}', 'events' = '${events}', 'rows-per-second' = '${rps}');
CREATE TABLE lake (${ROSTER_COLUMNS}${upsert ? ', PRIMARY KEY (npi) NOT ENFORCED' : ''})
  WITH ('connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '\${WH}',
        'catalog-database' = 'demo', 'catalog-table' = '${name}', 'write.upsert.enabled' = '${upsert}',
        'sink.parallelism' = '${sinkParallelism}');
INSERT INTO lake SELECT * FROM roster;
`
}

// Runs `floe ARGS` to completion: {code, out, err}.
export function runFloe(floe, args, env = {}) {
  const r = spawnSync(floe, args, { encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, ...env } })
  return { code: r.status, out: r.stdout || '', err: r.stderr || '' }
}

// The job record (job.json) under a FLOE_HOME; null while absent or being rewritten.
export function jobRecord(home) {
  const dir = path.join(home, 'jobs')
  try {
    const [id] = fs.readdirSync(dir)
    return id ? JSON.parse(fs.readFileSync(path.join(dir, id, 'job.json'), 'utf8')) : null
  } catch { return null }
}
