#!/usr/bin/env node
// Scale-out benchmark (issue 23, part 4): N `floe run` instances of one Kafka -> Iceberg job
// (SET 'floe.scale-out' = 'kafka-group') on this machine, against the dev cluster (a topic of
// --partitions partitions) and one Iceberg table in a JDBC catalog on SQLite, measured from
// outside. Every instance is a coordinator and a worker; all of them share this machine's cores.
//
//   node bench/scale_out.mjs [--instances 1,4,8] [--throughput-instances 1,2,4] [--partitions 32]
//                            [--rate 4000] [--window 20] [--records 1500000] [--interval '1 s']
//                            [--session-timeout-ms 6000] [--parts commits,throughput,rebalance]
//                            (normally via bench/scale_out.sh)
//
// commits     per --instances N: a feed of --rate records/s over every partition (one
//             `floe kafka produce` a second), N instances; once each has committed, a --window s
//             window: the table's commits (its snapshots' committed_at) per second, and the
//             conflicts retried per commit (each instance's log lines "checkpoint N committed to T
//             after K retries", the count behind commitConflicts). Then the
//             feed stops and every seq must be in the table exactly once (`floe table verify`).
// throughput  per --throughput-instances N: --records records produced before the instances
//             start, all N started at once; records/s = records / (the first launch to the first
//             snapshot holding every record), startup and the group's first rebalance included.
// rebalance   two instances and the feed; one is SIGKILLed whole (coordinator and worker: its
//             partitions move after the session timeout), and in a second run one is cancelled
//             (`floe cancel`: its worker leaves the group). Per partition the gone instance had
//             committed last: the time from the kill to the survivor's first commit of it
//             (`floe table positions`), against --session-timeout-ms.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pinBinary, sampleLoad, writeResults } from './provenance.mjs'
import { benchArgs, freshJobDir, jobRecord, runAsync } from './roster_job.mjs'
import { jobRunner, maintenanceOff, num, round, sleep, stats } from './window_job.mjs'

const USAGE = `usage: node bench/scale_out.mjs [--instances 1,4,8] [--throughput-instances 1,2,4] [--partitions 32]
         [--rate 4000] [--window 20] [--records 1500000] [--interval '1 s'] [--session-timeout-ms 6000]
         [--parts commits,throughput,rebalance] [--floe PATH] [--out DIR] [--result FILE.json]`

const { opts, die, int } = benchArgs('scale-out', USAGE, {
  instances: { type: 'string', default: '1,4,8' },
  'throughput-instances': { type: 'string', default: '1,2,4' },
  partitions: { type: 'string', default: '32' },
  rate: { type: 'string', default: '4000' },
  window: { type: 'string', default: '20' },
  records: { type: 'string', default: '1500000' },
  interval: { type: 'string', default: '1 s' },
  'session-timeout-ms': { type: 'string', default: '6000' },
  parts: { type: 'string', default: 'commits,throughput,rebalance' },
  floe: { type: 'string', default: process.env.FLOE || 'build/src/floe/cli/floe' },
  out: { type: 'string', default: process.env.OUT || 'bench/out/scale-out' },
  result: { type: 'string', default: process.env.RESULT || '' },
})

const counts = (key) => opts[key].split(',').map((x) => x.trim()).filter(Boolean).map((x) => {
  const v = Number(x)
  if (!Number.isInteger(v) || v < 1 || v > 16) die(`--${key}: '${x}' is not an instance count in 1..16`)
  return v
})
const INSTANCES = counts('instances')
const THROUGHPUT_INSTANCES = counts('throughput-instances')
const PARTITIONS = int('partitions', 1)
const RATE = int('rate', 1)
const WINDOW_S = int('window', 2)
const RECORDS = int('records', 1)
const SESSION_MS = int('session-timeout-ms', 6000)  // the broker's group.min.session.timeout.ms
// The dev cluster keeps about 5 MiB per partition and drops older records; a record here is
// about 32 bytes. Keep the waiting records under 1.5 MiB a partition.
if (RECORDS * 32 > PARTITIONS * 1.5 * 2 ** 20) {
  die(`--records ${RECORDS}: more than the dev cluster keeps in ${PARTITIONS} partitions (about ${Math.floor(PARTITIONS * 1.5 * 2 ** 20 / 32)}); add partitions`)
}
const INTERVAL = opts.interval
if (!/^\s*\d+(\.\d+)?\s*(ms|s)\s*$/.test(INTERVAL)) die(`--interval '${INTERVAL}': expected e.g. '1 s' or '500 ms'`)
const PARTS = opts.parts.split(',').map((x) => x.trim()).filter(Boolean)
if (!PARTS.length || PARTS.some((p) => !['commits', 'throughput', 'rebalance'].includes(p))) {
  die('--parts: commits, throughput and/or rebalance')
}
if (!fs.existsSync(path.resolve(opts.floe))) die(`${path.resolve(opts.floe)} not found (build floe, or --floe PATH / FLOE=...)`)
const OUT = path.resolve(opts.out)
const RESULT = opts.result
const FLOE = pinBinary(path.resolve(opts.floe), OUT)
const { floeRun, floeSync, devCluster, stopLive } = jobRunner({ floe: FLOE })
const log = (line) => console.log(line)
const problems = []
const T0 = Date.now()

// ---- one scaled-out job: the topic, the table, its instances ---------------------------------

const jobText = (name) => `-- scale-out bench (${name}): Kafka -> Iceberg, every instance one member of group '${name}'
SET 'execution.checkpointing.interval' = '${INTERVAL}';
SET 'execution.checkpointing.dir' = '\${CHK}';
SET 'restart-strategy.type' = 'none';
SET 'floe.scale-out' = 'kafka-group';
CREATE TABLE events (seq BIGINT NOT NULL, name STRING NOT NULL)
  WITH ('connector' = 'kafka', 'topic' = 'events', 'format' = 'json',
        'properties.bootstrap.servers' = '\${KAFKA}', 'properties.group.id' = '${name}',
        'properties.session.timeout.ms' = '${SESSION_MS}',
        'properties.heartbeat.interval.ms' = '${Math.max(100, Math.floor(SESSION_MS / 10))}',
        'properties.fetch.wait.max.ms' = '10', 'scan.startup.mode' = 'earliest-offset');
CREATE TABLE lake (seq BIGINT NOT NULL, name STRING NOT NULL)
  WITH ('connector' = 'iceberg', 'catalog-type' = 'jdbc', 'uri' = '\${CATALOG}', 'warehouse' = '\${WH}',
        'catalog-database' = 'bench', 'catalog-table' = 'scaled',
        ${maintenanceOff});
INSERT INTO lake SELECT * FROM events;
`

async function scaledJob(name) {
  const dir = freshJobDir(OUT, name).dir
  const cluster = await devCluster(dir, [`events:${PARTITIONS}`])
  const wh = path.join(dir, 'wh')
  const catalog = `jdbc:sqlite:${path.join(dir, 'catalog.db')}`
  const text = jobText(name)
  const instances = []
  let seq = 0
  const table = (cmd, ...args) => floeSync(['table', cmd, 'bench.scaled', '--catalog', catalog, '--warehouse', wh, ...args])
  const parseLines = (r) => {
    if (r.code !== 0 && /does not exist/.test(r.err)) return []  // before the first instance created it
    if (r.code !== 0) throw new Error(`floe table failed (exit ${r.code}): ${r.err}`)
    return r.out.split('\n').filter(Boolean).map((l) => JSON.parse(l))
  }
  // Records seq+1..seq+n into the topic, round-robin over its partitions.
  async function produce(n) {
    const file = path.join(dir, `feed-${seq + 1}.jsonl`)
    let text = ''
    for (let i = 1; i <= n; i++) text += `{"seq":${seq + i},"name":"k${(seq + i) % 1000}"}\n`
    fs.writeFileSync(file, text)
    seq += n
    const r = await runAsync(FLOE, ['kafka', 'produce', '--bootstrap', cluster.bootstrap, '--topic', 'events',
                                    '--property', 'linger.ms=20', file])
    fs.rmSync(file, { force: true })
    if (r.code !== 0 || r.out.trim() !== String(n)) throw new Error(`floe kafka produce failed (exit ${r.code}): ${r.out}${r.err}`)
  }
  let feeding = null
  return {
    dir,
    instances,
    produce,
    get produced() { return seq },
    // --rate records a second, in one batch a second, until stopFeed().
    startFeed() {
      let on = true
      const loop = (async () => {
        while (on) {
          const t = Date.now()
          await produce(RATE)
          await sleep(Math.max(0, 1000 - (Date.now() - t)))
        }
      })()
      feeding = { stop: async () => { on = false; await loop } }
    },
    stopFeed: () => feeding?.stop(),
    launch(instance) {
      const p = freshJobDir(dir, instance)
      const run = floeRun(p, text, { CHK: p.chk, WH: wh, KAFKA: cluster.bootstrap, CATALOG: catalog })
      const x = { name: instance, p, run, jobId: () => jobRecord(p.home)?.job_id }
      run.done.then((r) => { x.ended = r })
      instances.push(x)
      return x
    },
    snapshots: () => parseLines(table('snapshots')),
    positions: () => parseLines(table('positions')),
    verify: () => table('verify', '--unique', 'seq', '--expect-range', `seq:1..${seq}`),
    async stop() {
      await feeding?.stop()
      for (const x of instances) {
        const id = x.jobId()
        if (!x.ended && id) floeSync(['cancel', id], { FLOE_HOME: x.p.home })
      }
      await Promise.all(instances.map((x) => x.run.done))
      cluster.child.kill('SIGTERM')
      await cluster.exited
    },
  }
}

async function until(what, cond, ms, job) {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await cond()
    if (v) return v
    const dead = job?.instances.find((x) => x.ended && !x.killed)
    if (dead) throw new Error(`${what}: instance ${dead.name} exited (${dead.ended.code}):\n${dead.ended.log.slice(-3000)}`)
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`)
    await sleep(250)
  }
}

const committers = (snaps) => new Set(snaps.map((s) => s.floe_job).filter(Boolean))
const workersUp = (job) => until('every instance has a worker', () => job.instances.every((x) => jobRecord(x.p.home)?.worker_pid),
                                 60_000, job)

// Waits until the table holds every record produced, then checks each seq is there once.
async function verifyAll(job, what) {
  const total = job.produced
  await until(`${what}: ${num(total)} records committed`, () => {
    const s = job.snapshots().at(-1)
    return s && Number(s.summary['total-records']) >= total
  }, 180_000, job)
  const v = job.verify()
  if (v.code !== 0 || !/result: OK/.test(v.out)) problems.push(`${what}: floe table verify failed:\n${v.out}${v.err}`)
  return v.code === 0
}

// ---- commits ---------------------------------------------------------------------------------

// IcebergCommitterOperator::ReportRetries: one line per commit that retried, with the count.
const RETRY_LINE = /checkpoint \d+ committed to \S+ after (\d+) /

async function commitsPart(n) {
  const job = await scaledJob(`commits-${n}`)
  try {
    log(`commits: ${n} instance(s), ${PARTITIONS} partitions, ${num(RATE)} records/s, checkpoints every ${INTERVAL}`)
    job.startFeed()
    job.launch('i1')
    await until('the first instance commits', () => job.snapshots().length > 0, 120_000, job)  // it creates the table
    for (let i = 2; i <= n; i++) job.launch(`i${i}`)
    await workersUp(job)
    await until(`commits by all ${n} instances`, () => committers(job.snapshots()).size === n, 120_000, job)
    const retriesBefore = retriesSoFar(job)
    const from = Date.now()
    await sleep(WINDOW_S * 1000)
    const to = Date.now()
    const retries = retriesSoFar(job) - retriesBefore
    const inWindow = job.snapshots().filter((s) => { const t = Date.parse(s.committed_at); return t >= from && t < to })
    await job.stopFeed()
    const ok = await verifyAll(job, `commits with ${n} instance(s)`)
    const commits = inWindow.length
    const x = {
      instances: n, window_s: round((to - from) / 1000, 2), commits, commits_per_s: round(commits / ((to - from) / 1000), 2),
      instances_committing: committers(inWindow).size, conflicts_retried: retries,
      retries_per_commit: commits ? round(retries / commits, 3) : null, records: job.produced, exactly_once: ok,
    }
    log(`  ${x.commits_per_s} commits/s (${commits} in ${x.window_s} s by ${x.instances_committing} instance(s)), ` +
        `${retries} conflicts retried (${x.retries_per_commit} per commit); every seq once: ${ok}`)
    return x
  } finally {
    await job.stop()
  }
}

// Conflicts retried so far by every instance, from their logs.
const retriesSoFar = (job) => job.instances.reduce((a, x) => a + readLog(x).split('\n')
  .reduce((b, line) => b + Number(RETRY_LINE.exec(line)?.[1] || 0), 0), 0)
const readLog = (x) => { try { return fs.readFileSync(path.join(x.p.dir, 'floe-run.log'), 'utf8') } catch { return '' } }

// ---- throughput ------------------------------------------------------------------------------

async function throughputPart(n) {
  const job = await scaledJob(`throughput-${n}`)
  try {
    log(`throughput: ${n} instance(s), ${num(RECORDS)} records waiting in ${PARTITIONS} partitions`)
    for (let left = RECORDS; left > 0; left -= Math.min(left, 500_000)) await job.produce(Math.min(left, 500_000))
    const t0 = Date.now()
    for (let i = 1; i <= n; i++) job.launch(`i${i}`)
    // Until a snapshot holds every record: its committed_at ends the run.
    const last = await until(`${num(RECORDS)} records committed`, () => {
      const s = job.snapshots().find((x) => Number(x.summary['total-records']) >= RECORDS)
      return s || null
    }, 900_000, job)
    const seconds = (Date.parse(last.committed_at) - t0) / 1000
    const v = job.verify()
    const ok = v.code === 0 && /result: OK/.test(v.out)
    if (!ok) problems.push(`throughput with ${n} instance(s): floe table verify failed:\n${v.out}${v.err}`)
    const x = { instances: n, records: RECORDS, seconds: round(seconds, 2), records_per_s: Math.round(RECORDS / seconds),
                instances_committing: committers(job.snapshots()).size, exactly_once: ok }
    log(`  ${num(x.records_per_s)} records/s (${x.seconds} s from the first launch to the last record committed, ` +
        `commits by ${x.instances_committing} instance(s)); every seq once: ${ok}`)
    return x
  } finally {
    await job.stop()
  }
}

// ---- rebalance -------------------------------------------------------------------------------

async function rebalancePart(how) {
  const job = await scaledJob(`rebalance-${how}`)
  try {
    log(`rebalance: two instances, one ${how === 'kill' ? 'SIGKILLed whole' : 'cancelled (floe cancel)'}; session timeout ${SESSION_MS} ms`)
    job.startFeed()
    const a = job.launch('a')
    await until('the first instance commits', () => job.snapshots().length > 0, 120_000, job)
    const b = job.launch('b')
    await workersUp(job)
    await until('commits by both instances', () => committers(job.snapshots()).size === 2, 120_000, job)
    await sleep(3000)
    const bId = b.jobId()
    const held = job.positions().filter((r) => r.committed_by_job === bId).map((r) => r.partition)
    b.killed = true
    const t0 = Date.now()
    if (how === 'kill') process.kill(jobRecord(b.p.home).pid, 'SIGKILL')  // floe run itself, not /usr/bin/time
    else floeSync(['cancel', bId], { FLOE_HOME: b.p.home })
    const aId = a.jobId()
    const moved = await until(`instance a commits the ${held.length} partition(s) b held`, () => {
      const rows = job.positions().filter((r) => held.includes(r.partition) && r.committed_by_job === aId &&
                                                Date.parse(r.committed_at) > t0)
      return rows.length === held.length ? rows : null
    }, 120_000 + SESSION_MS, job)
    const ms = moved.map((r) => Date.parse(r.committed_at) - t0)
    await job.stopFeed()
    const ok = await verifyAll(job, `rebalance (${how})`)
    const x = { how, session_timeout_ms: SESSION_MS, partitions_moved: held.length, ms_to_committed: stats(ms),
                max_ms_to_committed: Math.max(...ms), max_to_session_timeout: round(Math.max(...ms) / SESSION_MS, 2),
                exactly_once: ok }
    log(`  ${held.length} partition(s) moved; from the ${how} to the survivor's first commit of each: max ${num(x.max_ms_to_committed)} ms, ` +
        `median ${num(x.ms_to_committed.median)} ms (${x.max_to_session_timeout} x the session timeout); every seq once: ${ok}`)
    return x
  } finally {
    await job.stop()
  }
}

// ---- main ------------------------------------------------------------------------------------

const load0 = await sampleLoad()
log(`scale-out: parts ${PARTS.join(', ')}; ${os.cpus().length} cores, every instance unpinned; floe ${FLOE}; scratch ${OUT}`)
const figures = {
  scale_out: {
    parts: PARTS, partitions: PARTITIONS, rate: RATE, window_s: WINDOW_S, records: RECORDS, interval: INTERVAL,
    session_timeout_ms: SESSION_MS, catalog: 'JDBC on SQLite', cores: os.cpus().length,
    job: "one INSERT from a Kafka topic (JSON: seq, name) into an Iceberg append table, SET 'floe.scale-out' = 'kafka-group'",
    definition: 'commits/s: the table\'s snapshots committed in the window; conflicts retried: the instances\' ' +
      '"checkpoint N committed to T after K" log lines in the window; records/s: records / (first launch to the snapshot ' +
      'holding every record); rebalance: from the kill (or cancel) to the survivor\'s first commit of each partition the ' +
      'gone instance had committed last (floe table positions).',
  },
}
try {
  if (PARTS.includes('commits')) {
    figures.commits = []
    for (const n of INSTANCES) figures.commits.push(await commitsPart(n))
  }
  if (PARTS.includes('throughput')) {
    figures.throughput = []
    for (const n of THROUGHPUT_INSTANCES) figures.throughput.push(await throughputPart(n))
    const one = figures.throughput.find((x) => x.instances === 1)
    for (const x of figures.throughput) x.ratio_to_one = one ? round(x.records_per_s / one.records_per_s, 2) : null
  }
  if (PARTS.includes('rebalance')) figures.rebalance = [await rebalancePart('kill'), await rebalancePart('cancel')]
} catch (e) {
  stopLive()
  throw e
}
await writeResults({ result: RESULT, bench: 'scale-out', floe: FLOE, start: load0, t0: T0, figures, problems })
log(JSON.stringify({ ok: figures.ok, problems }))
if (RESULT) log(`results: ${RESULT}`)
process.exitCode = figures.ok ? 0 : 1
