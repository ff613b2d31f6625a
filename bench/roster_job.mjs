// What the roster-job benches (soak.mjs, table_health.mjs, file_size.mjs, maintenance_throughput.mjs)
// share: the job file they run, the sink's maintenance options, the floe CLI, and the job record
// of a FLOE_HOME.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'

// The roster feed's columns (the generator's schema, bench/README.md).
export const ROSTER_COLUMNS = `seq BIGINT NOT NULL, npi STRING NOT NULL, source STRING NOT NULL, revision INT NOT NULL,
  event_time TIMESTAMP(3) NOT NULL, first_name STRING, last_name STRING, specialty STRING, state STRING,
  city STRING, zip STRING, phone STRING, active BOOLEAN`

// roster -> iceberg demo.<name> (append, or upsert on npi), EXACTLY_ONCE, checkpoints into ${CHK},
// the table in ${WH}; `events` may be a literal or '\${EVENTS}'; `rps` 0 = unthrottled;
// `sinkOptions` more WITH options of the sink (e.g. maintenanceOptions()).
export function rosterJobText({ comment, name, upsert, interval, attempts, delay, seed, events, rps,
                                sinkParallelism, sinkOptions = {} }) {
  const more = Object.entries(sinkOptions).map(([k, v]) => `,\n        '${k}' = '${v}'`).join('')
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
        'sink.parallelism' = '${sinkParallelism}'${more});
INSERT INTO lake SELECT * FROM roster;
`
}

// ---- in-job table maintenance (the sink's 'flink-maintenance.*' options) -------------------------
//
// The benches' maintenance settings, one set for all of them (bench/README.md, "Table maintenance"):
// `on`: compaction (rewrite_data_files, size tiers) after every `rewriteCommits` commits, or as soon as the
// commits since the last one added a target file's worth of data files (schedule.data-file-size),
// or (`eqDeleteFiles` > 0) as many equality-delete files (schedule.eq-delete-file-count), files rolled at `targetFileSize`; snapshot expiry every `expireCommits` commits of snapshots
// older than `maxSnapshotAgeS`, keeping `retainLast`; orphan removal left at floe's defaults
// (hourly, files older than 3 days). `off`: all three switched off (since 22a24f8 they are on by
// default), so the table gets only the metadata.json cleanup of a sink-created table.
export const MAINTENANCE_DEFAULTS = {
  mode: 'on', targetFileSize: 8 << 20, minFileSize: null, rewriteCommits: 10, eqDeleteFiles: 0, expireCommits: 10, maxSnapshotAgeS: 60, retainLast: 5,
}

// parseArgs options shared by the benches that run maintenance.
export const MAINTENANCE_ARGS = {
  maintenance: { type: 'string', default: MAINTENANCE_DEFAULTS.mode },
  'target-file-size': { type: 'string', default: String(MAINTENANCE_DEFAULTS.targetFileSize) },
  'min-file-size': { type: 'string', default: '' },
  'rewrite-commits': { type: 'string', default: String(MAINTENANCE_DEFAULTS.rewriteCommits) },
  'eq-delete-files': { type: 'string', default: String(MAINTENANCE_DEFAULTS.eqDeleteFiles) },
  'expire-commits': { type: 'string', default: String(MAINTENANCE_DEFAULTS.expireCommits) },
  'max-snapshot-age': { type: 'string', default: String(MAINTENANCE_DEFAULTS.maxSnapshotAgeS) },
  'retain-last': { type: 'string', default: String(MAINTENANCE_DEFAULTS.retainLast) },
}
export const MAINTENANCE_USAGE = `[--maintenance on|off] [--target-file-size BYTES (8 MiB)] [--min-file-size BYTES (75%)] [--rewrite-commits 10]
         [--eq-delete-files N (0: off)] [--expire-commits 10] [--max-snapshot-age SECONDS (60)] [--retain-last 5]`

// The maintenance settings from parsed MAINTENANCE_ARGS; `die(message)` on a bad value.
export function maintenanceFromArgs(opts, die) {
  const int = (name, min) => {
    const v = Number(opts[name])
    if (!Number.isInteger(v) || v < min) die(`--${name} must be an integer >= ${min}`)
    return v
  }
  if (!['on', 'off'].includes(opts.maintenance)) die(`--maintenance must be on or off, not '${opts.maintenance}'`)
  const minFileSize = opts['min-file-size'] === '' || opts['min-file-size'] === undefined ? null : int('min-file-size', 1)
  const targetFileSize = int('target-file-size', 1)
  if (minFileSize != null && minFileSize > targetFileSize) die('--min-file-size must not exceed --target-file-size')
  return {
    mode: opts.maintenance, targetFileSize, minFileSize, rewriteCommits: int('rewrite-commits', 1),
    eqDeleteFiles: int('eq-delete-files', 0),
    expireCommits: int('expire-commits', 1), maxSnapshotAgeS: int('max-snapshot-age', 0), retainLast: int('retain-last', 1),
  }
}

// The min file size compaction leaves alone: --min-file-size, else floe's 75% of the target.
export function minFileSize(m) {
  return m.minFileSize != null ? m.minFileSize : Math.floor(m.targetFileSize * 3 / 4)
}

// The sink's WITH options for settings `m` (maintenanceFromArgs).
export function maintenanceOptions(m) {
  const k = (task, name) => `flink-maintenance.${task}.${name}`
  if (m.mode === 'off') {
    return { [k('rewrite', 'enabled')]: 'false', [k('expire-snapshots', 'enabled')]: 'false',
             [k('delete-orphan-files', 'enabled')]: 'false' }
  }
  return {
    [k('rewrite', 'enabled')]: 'true',
    [k('rewrite', 'schedule.commit-count')]: String(m.rewriteCommits),
    [k('rewrite', 'schedule.data-file-size')]: String(m.targetFileSize),
    ...(m.eqDeleteFiles > 0 ? { [k('rewrite', 'schedule.eq-delete-file-count')]: String(m.eqDeleteFiles) } : {}),
    [k('rewrite', 'target-file-size-bytes')]: String(m.targetFileSize),
    ...(m.minFileSize != null ? { [k('rewrite', 'min-file-size-bytes')]: String(m.minFileSize) } : {}),
    [k('expire-snapshots', 'enabled')]: 'true',
    [k('expire-snapshots', 'schedule.commit-count')]: String(m.expireCommits),
    [k('expire-snapshots', 'max-snapshot-age-seconds')]: String(m.maxSnapshotAgeS),
    [k('expire-snapshots', 'retain-last')]: String(m.retainLast),
  }
}

// What a results file records about maintenance: the settings, the sink's options, the rest.
export function maintenanceRecord(m) {
  return {
    mode: m.mode,
    ...(m.mode === 'on' ? {
      target_file_size_bytes: m.targetFileSize, min_file_size_bytes: minFileSize(m),
      max_file_size_bytes: Math.floor(m.targetFileSize * 9 / 5), rewrite_commits: m.rewriteCommits,
      rewrite_eq_delete_files: m.eqDeleteFiles,
      expire_commits: m.expireCommits, max_snapshot_age_s: m.maxSnapshotAgeS, retain_last: m.retainLast,
    } : {}),
    sink_options: maintenanceOptions(m),
    not_set: m.mode === 'on'
      ? `floe's defaults: rewrite min-input-files 8 (size tiers), ${m.minFileSize != null ? '' : 'min file size 75% of the target, '}max file size 180% of the target, no delete-file-threshold; ` +
        'schedule.interval-second 600 (rewrite, expiry); delete-orphan-files on, hourly, files older than 3 days'
      : 'metadata.json cleanup of a sink-created table only (write.metadata.delete-after-commit.enabled, 20 kept)',
  }
}

// Lines "iceberg table T: compacted A -> B data files, C -> D delete files (R rows kept) ..." of a
// floe-run.log: [{files_in, files_out, deletes_in, deletes_out, rows, ms, timed}]. Builds up to
// 22a24f8 compacted inline and logged "... in M ms" (timed 'whole': read, write and commit);
// since 04cdc96 the files are written in the background and the log says "...; commit M ms"
// (timed 'commit': the commit on the committer's thread only).
export function compactionLogLines(text) {
  const out = []
  const re = /compacted (\d+) -> (\d+) data files, (\d+) -> (\d+) delete files \((\d+) rows kept\)(?: in (\d+) ms|; commit (\d+) ms)?/g
  let m
  while ((m = re.exec(text))) {
    out.push({ files_in: +m[1], files_out: +m[2], deletes_in: +m[3], deletes_out: +m[4], rows: +m[5],
               ms: m[6] != null ? +m[6] : m[7] != null ? +m[7] : null, timed: m[6] != null ? 'whole' : m[7] != null ? 'commit' : null })
  }
  return out
}

// The committer's maintenance summary at close (since 2738eef): "maintenance: N compactions (F data
// files rewritten, D delete files removed), E expirations (S snapshots), O orphan runs (R files),
// X failures; T ms in total after commits, longest L ms"; null when the log has none.
export function maintenanceSummaryLine(text) {
  const re = /maintenance: (\d+) compactions \((\d+) data files rewritten, (\d+) delete files removed\), (\d+) expirations \((\d+) snapshots\), (\d+) orphan runs \((\d+) files\), (\d+) failures; (\d+) ms in total after commits, longest (\d+) ms/g
  let m
  let last = null
  while ((m = re.exec(text))) last = m
  if (!last) return null
  const [compactions, rewritten, deletes, expirations, expired, orphanRuns, orphans, failures, totalMs, longestMs] = last.slice(1).map(Number)
  return { compactions, data_files_rewritten: rewritten, delete_files_removed: deletes, expirations, snapshots_expired: expired,
           orphan_runs: orphanRuns, orphans_removed: orphans, failures, ms_after_commits: totalMs, longest_ms: longestMs }
}

// Warnings and errors of a floe-run.log (maintenance failures are logged as warnings, never
// fatal): {count, first: up to 20 lines}.
export function logProblems(text) {
  const lines = text.split('\n').filter((l) => /^floe: (warning|error): /.test(l))
  return { count: lines.length, first: lines.slice(0, 20) }
}

// Runs `floe ARGS` to completion: {code, out, err}.
// Calls onLine(t, line) for every complete line `stream` gives (t: Date.now() when it came);
// returns a function that gives the unterminated rest.
export function eachLine(stream, onLine) {
  let tail = ''
  stream.on('data', (d) => {
    const t = Date.now()
    tail += d
    const parts = tail.split('\n')
    tail = parts.pop()
    for (const line of parts) onLine(t, line)
  })
  return () => tail
}

// `floe kafka dev` (3 brokers) as its own process, with `topics` ('name:partitions'), once it
// wrote its bootstrap address (30 s at most). `live`: the set of processes the caller stops on
// exit; the cluster is in it while it runs.
export async function startDevCluster(floe, dir, topics, { env = process.env, live } = {}) {
  const file = path.join(dir, 'bootstrap')
  const child = spawn(floe, ['kafka', 'dev', '--brokers', '3', ...topics.flatMap((t) => ['--topic', t]), '--bootstrap-file', file],
    { env, stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const entry = { child }
  live?.add(entry)
  const exited = new Promise((resolve) => child.on('close', (code) => { live?.delete(entry); resolve(code) }))
  const deadline = Date.now() + 30_000
  while (!fs.existsSync(file) || !fs.readFileSync(file, 'utf8').trim()) {
    if (Date.now() > deadline) throw new Error(`floe kafka dev did not start: ${err}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { bootstrap: fs.readFileSync(file, 'utf8').trim(), child, exited }
}

export function runFloe(floe, args, env = {}) {
  const r = spawnSync(floe, args, { encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, ...env } })
  return { code: r.status, out: r.stdout || '', err: r.stderr || '' }
}

// Runs a command to its exit without blocking the event loop (timers keep firing meanwhile):
// {code, out, err}.
export function runAsync(cmd, args, env = process.env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

// `cmd args` under /usr/bin/time (when the machine has it) writing user, system CPU seconds
// and max RSS (KiB) to `cpuFile`: [cmd, args] to spawn.
const TIME_BIN = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null
export function timedCommand(cmd, args, cpuFile) {
  return TIME_BIN ? [TIME_BIN, ['-f', '%U %S %M', '-o', cpuFile, cmd, ...args]] : [cmd, args]
}
// What timedCommand measured: {cpu_s, max_rss_mib}, nulls without /usr/bin/time.
export function readTimeFile(cpuFile) {
  try {
    const [u, sys, m] = fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number)
    return { cpu_s: Math.round((u + sys) * 100) / 100, max_rss_mib: Math.round(m / 1024) }
  } catch {
    return { cpu_s: null, max_rss_mib: null }
  }
}

// An empty folder `name` under `out` for one job: its FLOE_HOME, warehouse and checkpoints.
export function freshJobDir(out, name) {
  const dir = path.join(out, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  return { dir, home: path.join(dir, 'home'), wh: path.join(dir, 'wh'), chk: path.join(dir, 'chk') }
}

// The job record (job.json) under a FLOE_HOME; null while absent or being rewritten.
export function jobRecord(home) {
  const dir = path.join(home, 'jobs')
  try {
    const [id] = fs.readdirSync(dir)
    return id ? JSON.parse(fs.readFileSync(path.join(dir, id, 'job.json'), 'utf8')) : null
  } catch { return null }
}

// Parses a bench script's options (node:util parseArgs, plus --help). Returns the values, `die`
// (usage error: message and usage on stderr, exit 2) and `int` (an integer option >= min).
export function benchArgs(name, usage, options) {
  let opts
  try {
    opts = parseArgs({ options: { ...options, help: { type: 'boolean', default: false } } }).values
  } catch (e) {
    console.error(`${name}: ${e.message}\n${usage}`)
    process.exit(2)
  }
  if (opts.help) { console.log(usage); process.exit(0) }
  const die = (msg) => { console.error(`${name}: ${msg}\n${usage}`); process.exit(2) }
  const int = (key, min = 0) => {
    const v = Number(opts[key])
    if (!Number.isInteger(v) || v < min) die(`--${key} must be an integer >= ${min}`)
    return v
  }
  return { opts, die, int }
}
