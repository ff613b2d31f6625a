#!/usr/bin/env node
// Soak (issue 9): many random worker SIGKILLs over one long roster job, then verification.
//
//   node bench/soak.mjs [--kills 100] [--events 600000] [--mode append|upsert|both] ...
//   (normally via bench/soak.sh, which records the command and writes the results file)
//
// The job is the one of tests/integration/exactly_once.test.mjs: roster source -> Iceberg table
// (append, or upsert with PRIMARY KEY (npi)), 'sink.parallelism' 2, EXACTLY_ONCE checkpoints,
// run as real processes by `floe run` (coordinator + worker) in a FLOE_HOME sandbox, on
// 127.0.0.1 only. The restart strategy allows --kills + 10 restarts, --delay apart.
//
// Killing. For each table its own loop SIGKILLs the worker (pid from job.json's `worker_pid`,
// checked against /proc/PID/cmdline) --kills times. After each kill a gap is drawn uniformly from
// [--min-gap-ms, --max-gap-ms]; the next kill comes once the gap has passed AND the new worker
// is RUNNING AND has completed at least one checkpoint of its own (counted from `floe run`'s
// "worker P started" / "checkpoint N completed" lines), so the job makes progress between kills.
// With probability --early-pct % (never twice in a row) the next kill instead comes as soon as
// the new worker is RUNNING, before its first checkpoint ("early": right after a restart).
// A kill is printed as one line: table, kill #, worker pid, seconds since the job started, the
// job's last completed checkpoint.
//
// With --mode both the two jobs run at the same time (each with its own kill loop and PRNG
// stream): the same wall clock as one, and each job's restarts meet the other's load.
//
// Verification, after the job ended: append, `floe table verify --unique seq --expect-range
// seq:1..E` (rows, duplicate seqs, missing seqs as runs); upsert, `floe table verify --unique npi
// --expected <floe roster expected --seed S --events E> --key npi` (rows, duplicate keys, missing
// keys, and the diff against the expected latest row per key). Then one summary per table, and a
// final JSON line with every figure. Exit status 0 only if every job FINISHED (exit 0) after all
// --kills kills and every table verified clean; 1 otherwise; 2 on bad arguments.
//
// Sizing: a kill costs the rows since the worker's last checkpoint plus a restart; between kills
// the source (throttled to --rps rows/s, its clock restarting with each worker) moves on by at
// most about --rps x the gap. The job must outlast the kills: --events / --rps well above
// --kills x the mean gap. Without --rps the script picks events / (kills x mean gap x 1.6).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { mulberry32 } from './prng.mjs'
import { jobRecord, rosterJobText, runFloe } from './roster_job.mjs'
import { record, sampleLoad } from './provenance.mjs'

const USAGE = `usage: node bench/soak.mjs [--kills N] [--events E] [--rps R] [--interval '1 s'] [--seed S]
         [--mode append|upsert|both] [--min-gap-ms MS] [--max-gap-ms MS] [--early-pct P]
         [--delay '200 ms'] [--floe PATH] [--out DIR] [--result FILE.json] [--timeout-s SECS]`

let opts
try {
  opts = parseArgs({
    options: {
      kills: { type: 'string', default: '100' },
      events: { type: 'string', default: '600000' },
      rps: { type: 'string' },
      interval: { type: 'string', default: '1 s' },
      seed: { type: 'string', default: '42' },
      mode: { type: 'string', default: 'both' },
      'min-gap-ms': { type: 'string', default: '1000' },
      'max-gap-ms': { type: 'string', default: '5000' },
      'early-pct': { type: 'string', default: '10' },
      delay: { type: 'string', default: '200 ms' },
      floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
      out: { type: 'string', default: process.env.OUT || 'bench/out/soak' },
      result: { type: 'string', default: process.env.RESULT || '' },
      'timeout-s': { type: 'string', default: '1800' },
      help: { type: 'boolean', default: false },
    },
  }).values
} catch (e) {
  console.error(`soak: ${e.message}\n${USAGE}`)
  process.exit(2)
}
if (opts.help) { console.log(USAGE); process.exit(0) }

const int = (name, min = 0) => {
  const v = Number(opts[name])
  if (!Number.isInteger(v) || v < min) { console.error(`soak: --${name} must be an integer >= ${min}\n${USAGE}`); process.exit(2) }
  return v
}
const KILLS = int('kills')
const EVENTS = int('events', 1)
const SEED = int('seed')
const MIN_GAP = int('min-gap-ms')
const MAX_GAP = int('max-gap-ms')
const EARLY_PCT = int('early-pct')
const TIMEOUT_S = int('timeout-s', 1)
const MODES = { append: ['append'], upsert: ['upsert'], both: ['append', 'upsert'] }[opts.mode]
if (!MODES) { console.error(`soak: --mode must be append, upsert or both\n${USAGE}`); process.exit(2) }
if (MAX_GAP < MIN_GAP) { console.error('soak: --max-gap-ms must be >= --min-gap-ms'); process.exit(2) }
const MEAN_GAP_S = (MIN_GAP + MAX_GAP) / 2000
const RPS = opts.rps !== undefined ? int('rps', 1)
  : Math.max(1, Math.floor(EVENTS / Math.max(1, KILLS * MEAN_GAP_S * 1.6)))
const FLOE = path.resolve(opts.floe)
const OUT = path.resolve(opts.out)
const RESULT = opts.result
if (!fs.existsSync(FLOE)) { console.error(`soak: ${FLOE} not found (build floe, or --floe PATH / FLOE=...)`); process.exit(2) }

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const round = (x, d = 1) => Number(x.toFixed(d))
const num = (x) => (x == null ? '?' : x.toLocaleString('en-US'))
const log = (line) => console.log(line)


// The roster schema and job of tests/integration/exactly_once.test.mjs (its `pipeline`).
function jobText(name, upsert) {
  return rosterJobText({
    comment: `soak ${name}: roster -> iceberg ${upsert ? 'upsert' : 'append'}, EXACTLY_ONCE, ${KILLS} worker kills`,
    name, upsert, interval: opts.interval, attempts: KILLS + 10, delay: opts.delay, seed: SEED,
    events: '${EVENTS}', rps: RPS, sinkParallelism: 2,
  })
}
const floe = (args, env = {}) => runFloe(FLOE, args, env)

// Is `pid` this job's worker? (A pid is only trusted while /proc says so: never kill a reused one.)
function isWorker(pid, jobId) {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    return cmd.includes('worker') && cmd.includes(jobId)
  } catch { return false }
}

const T0 = Date.now()
const DEADLINE = T0 + TIMEOUT_S * 1000
let timedOut = false

// One table's soak: run the job, kill its worker KILLS times, wait for the end.
async function soak(kind, index) {
  const name = `soak_${kind}`
  const dir = path.join(OUT, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const p = { dir, home: path.join(dir, 'home'), wh: path.join(dir, 'wh'), chk: path.join(dir, 'chk'),
              job: path.join(dir, `${name}.sql`), table: `demo.${name}`, upsert: kind === 'upsert' }
  fs.writeFileSync(p.job, jobText(name, p.upsert))
  const logFile = fs.openSync(path.join(dir, 'floe-run.log'), 'w')
  const args = ['run', p.job, '--var', `CHK=${p.chk}`, '--var', `WH=${p.wh}`, '--var', `EVENTS=${EVENTS}`]
  const started = Date.now()
  const child = spawn(FLOE, args, { env: { ...process.env, FLOE_HOME: p.home }, stdio: ['ignore', 'ignore', 'pipe'] })
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  let done = null
  exited.then((r) => { done = r })

  // What `floe run` says on stderr: which worker runs, and how many checkpoints it completed.
  const cps = new Map()   // worker pid -> checkpoints completed by it
  let current = 0         // pid of the latest worker started
  let tail = ''
  child.stderr.on('data', (d) => {
    fs.writeSync(logFile, d)
    tail += d
    const lines = tail.split('\n')
    tail = lines.pop()
    for (const line of lines) {
      let m
      if ((m = /worker (\d+) started/.exec(line))) { current = Number(m[1]); cps.set(current, 0) } else if (/checkpoint \d+ completed/.test(line) && current) cps.set(current, cps.get(current) + 1)
    }
  })

  const rand = mulberry32(SEED * 1000003 + index * 7919 + 1)
  const kills = []
  let lastKilled = 0
  let lastKillAt = started
  let gap = MIN_GAP + rand() * (MAX_GAP - MIN_GAP)
  let early = false
  while (!done && kills.length < KILLS) {
    if (Date.now() > DEADLINE) { timedOut = true; break }
    await sleep(20)
    const rec = jobRecord(p.home)
    if (!rec || rec.state !== 'RUNNING' || !rec.worker_pid) continue
    const pid = rec.worker_pid
    if (pid === lastKilled || pid !== current) continue          // the successor is not up yet
    const ready = early || ((cps.get(pid) || 0) >= 1 && Date.now() - lastKillAt >= gap)
    if (!ready || !isWorker(pid, rec.job_id)) continue
    try {
      process.kill(pid, 'SIGKILL')
    } catch { continue }   // gone meanwhile (e.g. the job just finished)
    const now = Date.now()
    const k = { n: kills.length + 1, pid, t_s: round((now - started) / 1000), last_checkpoint: rec.last_checkpoint || 0,
                worker_checkpoints: cps.get(pid) || 0, early, gap_ms: Math.round(now - lastKillAt) }
    kills.push(k)
    log(`${kind}: kill ${k.n}/${KILLS}: worker ${pid} at ${k.t_s.toFixed(1)} s, last checkpoint ${k.last_checkpoint}` +
        (early ? ' (right after a restart, before its first checkpoint)' : ` (${k.worker_checkpoints} checkpoint(s) of this worker)`))
    lastKilled = pid
    lastKillAt = now
    early = !early && kills.length < KILLS && rand() * 100 < EARLY_PCT
    gap = MIN_GAP + rand() * (MAX_GAP - MIN_GAP)
  }
  if (!done && kills.length >= KILLS) log(`${kind}: all ${KILLS} kills done at ${((Date.now() - started) / 1000).toFixed(1)} s; waiting for the job to finish`)
  while (!done && Date.now() <= DEADLINE) await sleep(100)
  if (!done) {
    timedOut = true
    log(`${kind}: --timeout-s ${TIMEOUT_S} reached: cancelling the job`)
    child.kill('SIGTERM')
    const t = Date.now()
    while (!done && Date.now() - t < 15000) await sleep(100)
    if (!done) {
      const rec = jobRecord(p.home)
      if (rec && rec.worker_pid && isWorker(rec.worker_pid, rec.job_id)) try { process.kill(rec.worker_pid, 'SIGKILL') } catch { /* gone */ }
      child.kill('SIGKILL')
      await exited
    }
  }
  const seconds = (Date.now() - started) / 1000
  await new Promise((r) => (child.stderr.readableEnded ? r() : child.stderr.on('end', r)))
  fs.closeSync(logFile)
  const rec = jobRecord(p.home) || {}
  return { kind, p, kills, exit: done, seconds, job: rec }
}

// `floe table verify` and what its report says.
function verify(s) {
  const { p } = s
  const base = ['table', 'verify', p.table, '--warehouse', p.wh]
  let r
  let expectedRows = null
  if (!p.upsert) {
    r = floe([...base, '--unique', 'seq', '--expect-range', `seq:1..${EVENTS}`])
  } else {
    const e = floe(['roster', 'expected', '--seed', String(SEED), '--events', String(EVENTS)])
    if (e.code !== 0) return { ok: false, error: `floe roster expected failed: ${e.err.trim()}` }
    const file = path.join(p.dir, 'expected.jsonl')
    fs.writeFileSync(file, e.out)
    expectedRows = e.out.split('\n').filter(Boolean).length
    r = floe([...base, '--unique', 'npi', '--expected', file, '--key', 'npi'])
  }
  const text = r.out
  fs.writeFileSync(path.join(p.dir, 'verify.txt'), text + r.err)
  const get = (re) => { const m = re.exec(text); return m ? m : null }
  const head = get(/: (\d+) rows; (\d+) snapshots; (\d+) data files, (\d+) delete files/)
  const dup = get(/^unique \w+: (?:no duplicates|(\d+) values occur more than once \((\d+) extra rows\))/m)
  const out = {
    verify_exit: r.code,
    result: (get(/^result: (.*)$/m) || [])[1] || `verify failed: ${r.err.trim()}`,
    rows: head ? Number(head[1]) : null,
    snapshots: head ? Number(head[2]) : null,
    data_files: head ? Number(head[3]) : null,
    delete_files: head ? Number(head[4]) : null,
    duplicates: dup ? Number(dup[2] || 0) : null,
  }
  if (!p.upsert) {
    const range = get(/^range seq \S+: (complete|missing (\d+) in \d+ runs?: ([^;\n]*))/m)
    out.missing = range ? Number(range[2] || 0) : null
    out.missing_runs = range ? (range[1] === 'complete' ? 'none' : range[3]) : null
    out.expected_rows = EVENTS
  } else {
    const exp = get(/^expected .* rows\): (.*)$/m)
    const miss = exp && /(\d+) keys missing from the table/.exec(exp[1])
    out.expected_rows = expectedRows
    out.missing = exp ? Number(miss ? miss[1] : 0) : null
    out.missing_runs = out.missing === 0 ? 'none' : (miss ? `${miss[1]} keys` : null)
    out.diff = exp ? exp[1] : null
  }
  out.ok = r.code === 0 && out.result === 'OK' && out.duplicates === 0 && out.missing === 0 &&
    out.rows === out.expected_rows && (!p.upsert || out.diff === 'matches')
  return out
}

log(`soak: ${MODES.join(' + ')}${MODES.length > 1 ? ' (concurrently)' : ''}, ${KILLS} kills each, ${num(EVENTS)} events at ${num(RPS)} rows/s, ` +
    `checkpoints every ${opts.interval}, gap ${MIN_GAP}..${MAX_GAP} ms, early ${EARLY_PCT}%, restart delay ${opts.delay}, ` +
    `seed ${SEED}, timeout ${TIMEOUT_S} s; floe ${FLOE}; scratch ${OUT}`)
if (EVENTS / RPS < KILLS * MEAN_GAP_S) {
  log(`soak: warning: ${num(EVENTS)} events at ${num(RPS)} rows/s last ${Math.round(EVENTS / RPS)} s without kills, ` +
      `less than ${KILLS} kills x ${MEAN_GAP_S} s: the job may finish before the last kill`)
}
fs.mkdirSync(OUT, { recursive: true })
const load0 = await sampleLoad()
const runs = await Promise.all(MODES.map((kind, i) => soak(kind, i)))
const totalSeconds = (Date.now() - T0) / 1000

const tables = {}
for (const s of runs) {
  const v = verify(s)
  const finished = s.exit && s.exit.code === 0 && s.job.state === 'FINISHED'
  const t = {
    table: s.p.table,
    kills: s.kills.length,
    kills_early: s.kills.filter((k) => k.early).length,
    restarts: s.job.restarts ?? null,
    job_state: s.job.state ?? null,
    job_exit: s.exit ? (s.exit.signal ? `signal ${s.exit.signal}` : s.exit.code) : null,
    job_message: s.job.message || '',
    last_checkpoint: s.job.last_checkpoint ?? null,
    seconds: round(s.seconds),
    ...v,
    kill_log: s.kills,
  }
  const problems = []
  if (!finished) problems.push(`job did not finish (state ${t.job_state}, exit ${t.job_exit}${t.job_message ? `: ${t.job_message}` : ''})`)
  if (t.kills < KILLS) {
    problems.push(`only ${t.kills} of ${KILLS} kills (${timedOut ? `--timeout-s ${TIMEOUT_S} reached` : 'the job ended first: raise --events or lower --rps'})`)
  }
  if (!v.ok) problems.push(v.error || `verify: ${v.result}`)
  t.ok = problems.length === 0
  t.problems = problems
  tables[s.kind] = t
  const head = `${s.kind} (${t.table}): kills ${t.kills} (${t.kills_early} right after a restart), restarts ${t.restarts}, ` +
    `job ${t.job_state} exit ${t.job_exit} after ${t.seconds.toFixed(1)} s, last checkpoint ${t.last_checkpoint}`
  const body = s.p.upsert
    ? `rows ${num(t.rows)} (expected ${num(t.expected_rows)} keys), duplicate keys ${t.duplicates}, missing keys ${t.missing}, ` +
      `diff vs floe roster expected: ${t.diff}`
    : `rows ${num(t.rows)} of ${num(EVENTS)}, duplicates ${t.duplicates}, missing runs ${t.missing_runs}`
  log(`${head}\n  ${body}; ${t.snapshots} snapshots, ${t.data_files} data files, ${t.delete_files} delete files -> ` +
      `${t.ok ? 'OK' : `FAILED: ${problems.join('; ')}`}`)
}

const ok = !timedOut && Object.values(tables).every((t) => t.ok)
const figures = {
  soak: { kills: KILLS, events: EVENTS, rps: RPS, interval: opts.interval, seed: SEED, mode: opts.mode,
          min_gap_ms: MIN_GAP, max_gap_ms: MAX_GAP, early_pct: EARLY_PCT, restart_delay: opts.delay,
          restart_attempts: KILLS + 10, sink_parallelism: 2, timeout_s: TIMEOUT_S, concurrent: MODES.length > 1 },
  ok,
  timed_out: timedOut,
  seconds: round(totalSeconds),
  kills_total: Object.values(tables).reduce((a, t) => a + t.kills, 0),
  restarts_total: Object.values(tables).reduce((a, t) => a + (t.restarts || 0), 0),
  tables,
}
if (RESULT) {
  fs.mkdirSync(path.dirname(path.resolve(RESULT)), { recursive: true })
  const full = { ...(await record({ bench: 'soak', floe: FLOE, start: load0 })), ...figures }
  fs.writeFileSync(RESULT, JSON.stringify(full, null, 2) + '\n')
}
const brief = JSON.parse(JSON.stringify(figures))
for (const t of Object.values(brief.tables)) delete t.kill_log
log(JSON.stringify(brief))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = ok ? 0 : 1
