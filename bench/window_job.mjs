// What the window benches (windows.mjs, state.mjs) share: running a job file as real processes
// (`floe run` + worker, pinned, timed), the Kafka dev cluster, the job's SQL pieces, the
// generated inputs, and reading a job's checkpoint directory from outside.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { mulberry32 } from './prng.mjs'
import { eachLine, jobRecord, logProblems, readTimeFile, startDevCluster, timedCommand } from './roster_job.mjs'

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
export const round = (x, d = 1) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))
export const num = (x) => (x == null ? '?' : x.toLocaleString('en-US'))
export const median = (xs) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b)
  if (!s.length) return null
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
export const quantile = (xs, q) => {
  const s = xs.filter((x) => x != null).sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : null
}
export const stats = (xs) => ({ n: xs.length, min: xs.length ? Math.min(...xs) : null, median: median(xs), p90: quantile(xs, 0.9),
                                max: xs.length ? Math.max(...xs) : null })
// 'YYYY-MM-DD HH:MM:SS.mmm' (UTC): the filesystem source's SQL timestamp format
export const tsText = (ms) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ')
// a TIMESTAMP as floe writes it (SQL or ISO format, any number of fractional digits) -> epoch ms
export function parseTs(s) {
  const m = /^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d+))?/.exec(s)
  if (!m) throw new Error(`not a timestamp: ${s}`)
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) + (m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0)
}

// ---- the job's SQL --------------------------------------------------------------------------

export const maintenanceOff = `'flink-maintenance.rewrite.enabled' = 'false',
        'flink-maintenance.expire-snapshots.enabled' = 'false', 'flink-maintenance.delete-orphan-files.enabled' = 'false'`
export const sinkColumns = 'user_id STRING, window_start TIMESTAMP(3), window_end TIMESTAMP(3), n BIGINT'
export const icebergSink = (name, table) => `CREATE TABLE ${name} (${sinkColumns})
  WITH ('connector' = 'iceberg', 'catalog-type' = 'hadoop', 'warehouse' = '\${WH}',
        'catalog-database' = 'bench', 'catalog-table' = '${table}', 'sink.parallelism' = '1',
        ${maintenanceOff});`
export const windowQuery = (sink, tvf) => `INSERT INTO ${sink}
SELECT user_id, window_start, window_end, COUNT(*) AS n
FROM TABLE(${tvf})
GROUP BY user_id, window_start, window_end;`
export const tvfText = (kind, table, size) => (kind === 'session'
  ? `SESSION(TABLE ${table} PARTITION BY user_id, DESCRIPTOR(ts), ${size})`
  : `TUMBLE(TABLE ${table}, DESCRIPTOR(ts), ${size})`)
export const jobHead = (interval, parallelism = 1) => `SET 'parallelism.default' = '${parallelism}';
SET 'execution.checkpointing.interval' = '${interval}';
SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'execution.checkpointing.dir' = '\${CHK}';
SET 'restart-strategy.type' = 'none';`
export const fileSource = (input, delayS) => `CREATE TABLE events (user_id STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '${delayS}' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '${input}', 'format' = 'json');`


// ---- processes ------------------------------------------------------------------------------

// The process handling of a bench running `floe` (binary `floe`) pinned to CPU `cpu` (null: not
// pinned), under `nice -n <nice>` when set: {floeRun, floeSync, devCluster, stopLive}. Jobs and
// dev clusters still running are stopped by stopLive() if the bench fails half way (a job by
// `floe cancel`, so its worker goes too).
export function jobRunner({ floe, cpu = null, nice = null }) {
  const FLOE = floe
  const CPU = cpu
  const live = new Set()
  function stopLive() {
    for (const x of live) {
      try {
        const rec = x.home ? jobRecord(x.home) : null
        if (rec) floeSync(['cancel', rec.job_id], { FLOE_HOME: x.home })
        else x.child.kill('SIGTERM')
      } catch { /* gone */ }
    }
  }

  function floeSync(args, env = {}) {
    const e = { ...process.env, ...env }
    delete e.FLOE_CRASH_AT
    const r = spawnSync(FLOE, args, { encoding: 'utf8', maxBuffer: 1 << 30, env: e })
    if (r.error) throw r.error
    return { code: r.status, out: r.stdout || '', err: r.stderr || '' }
  }

  // `floe run` of a job file, under `taskset -c CPU` when pinned and /usr/bin/time (CPU time of
  // coordinator and worker, peak RSS) when it exists. Each stderr line goes to floe-run.log with the
  // ms since spawn, and to onLine(t, line). Returns {child, done}: done resolves with the exit
  // code, spawn-to-exit seconds (hrtime), CPU, RSS, the completed checkpoints and the worker's
  // allowed CPUs as /proc showed them. `args`: more arguments of `floe run` (e.g. --from latest);
  // `log`: the log file's name in p.dir.
  function floeRun(p, jobText, vars, { pin = true, env = {}, onLine, args = [], log = 'floe-run.log' } = {}) {
    const jobFile = path.join(p.dir, 'job.sql')
    fs.writeFileSync(jobFile, jobText)
    let cmd = FLOE
    let argv = ['run', jobFile, ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}=${v}`]), ...args]
    if (pin && CPU != null) { argv = ['-c', String(CPU), cmd, ...argv]; cmd = 'taskset' }
    if (nice != null) { argv = ['-n', String(nice), cmd, ...argv]; cmd = 'nice' }
    const cpuFile = path.join(p.dir, 'cpu')
    ;[cmd, argv] = timedCommand(cmd, argv, cpuFile)
    const e = { ...process.env, FLOE_HOME: p.home, ...env }
    delete e.FLOE_CRASH_AT
    const logFd = fs.openSync(path.join(p.dir, log), 'w')
    const t0 = process.hrtime.bigint()
    const start = Date.now()
    const child = spawn(cmd, argv, { env: e, stdio: ['ignore', 'ignore', 'pipe'] })
    const lines = []
    eachLine(child.stderr, (t, line) => {
      lines.push(line)
      fs.writeSync(logFd, `${t - start} ${line}\n`)
      if (onLine) onLine(t, line)
    })
    let exited = false
    const entry = { child, home: p.home }
    live.add(entry)
    const closed = new Promise((resolve) => child.on('close', (code) => { exited = true; live.delete(entry); resolve(code) }))
    // the worker's affinity, once it runs (the coordinator's is taskset's by construction)
    const affinity = (async () => {
      while (!exited) {
        const rec = jobRecord(p.home)
        if (rec && rec.worker_pid) {
          try {
            const m = /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync(`/proc/${rec.worker_pid}/status`, 'utf8'))
            if (m) return m[1]
          } catch { /* exited meanwhile */ }
        }
        await sleep(50)
      }
      return null
    })()
    const done = (async () => {
      const code = await closed
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9
      fs.closeSync(logFd)
      const { cpu_s: cpuS, max_rss_mib: rssMib } = readTimeFile(cpuFile)
      const text = lines.join('\n')
      return {
        code, start, end: Date.now(), seconds, cpu_s: cpuS, max_rss_mib: rssMib, worker_cpus: await affinity,
        checkpoints: Math.max(0, ...[...text.matchAll(/checkpoint (\d+) completed/g)].map((x) => Number(x[1]))),
        log: text, log_problems: logProblems(text),
      }
    })()
    return { child, done }
  }

  const devCluster = (dir, topics) => startDevCluster(FLOE, dir, topics, { live })
  return { floeRun, floeSync, devCluster, stopLive }
}

// ---- inputs ---------------------------------------------------------------------------------

export function writeLines(file, n, line) {
  const tmp = `${file}.tmp`
  const fd = fs.openSync(tmp, 'w')
  let buf = ''
  for (let i = 0; i < n; i++) {
    buf += line(i)
    if (buf.length >= 1 << 20) { fs.writeSync(fd, buf); buf = '' }
  }
  fs.writeSync(fd, buf)
  fs.closeSync(fd)
  fs.renameSync(tmp, file)
}

// The throughput input for `keys` keys (cached in OUT/input); {file, bytes, distinct_keys, ...}.
// Event i: true time BASE + i * 1000 / RATE ms, minus a uniform jitter below DISORDER_S - 1 s;

// The window benches' events (cached in `dir`): `events` JSON lines {"user_id":"u<k>","ts":...};
// event i has the true time base + i * 1000 / rate ms, minus a uniform jitter below
// disorderS - 1 s; the key uniform over u0..u<keys-1>. Returns {file, bytes, keys, distinct_keys,
// event_time_span_s, max_out_of_order_ms}. The distinct keys and the event-time span are
// recomputed from the same PRNG stream (cheap), so a cached file needs no scan.
export function eventsInput(dir, { events, keys, rate, disorderS, seed, base }, log = () => {}) {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, `events-${events}-k${keys}-r${rate}-d${disorderS}-s${seed}.jsonl`)
  const jitter = (disorderS - 1) * 1000
  const rand = mulberry32(seed * 1_000_003 + keys)
  const seen = new Uint8Array(keys)
  let distinct = 0
  let minTs = Infinity
  let maxTs = -Infinity
  const event = (i) => {
    const t = base + Math.floor((i * 1000) / rate) - Math.floor(rand() * jitter)
    const k = Math.floor(rand() * keys)
    if (!seen[k]) { seen[k] = 1; distinct++ }
    if (t < minTs) minTs = t
    if (t > maxTs) maxTs = t
    return [t, k]
  }
  if (!fs.existsSync(file)) {
    log(`generating ${file} (${num(events)} events, ${num(keys)} keys)`)
    writeLines(file, events, (i) => {
      const [t, k] = event(i)
      return `{"user_id":"u${k}","ts":"${tsText(t)}"}\n`
    })
  } else {
    for (let i = 0; i < events; i++) event(i)
  }
  return { file, bytes: fs.statSync(file).size, keys, distinct_keys: distinct, event_time_span_s: round((maxTs - minTs) / 1000, 0),
           max_out_of_order_ms: jitter }
}

// A keyed input (cached: written once per file name): `events` JSON lines
// {"user_id":"u<k>","ts":...}, the first `keys` of them each key once (a shuffled order), the
// rest random keys; event time rising from `base` through `spanMs`. Returns {file, bytes}.
export function keysOnceInput(file, { events, keys, seed, base, spanMs }) {
  if (!fs.existsSync(file)) {
    console.log(`generating ${file} (${num(events)} events, the first ${num(keys)} one per key)`)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const rand = mulberry32(seed * 7919 + keys)
    const perm = new Uint32Array(keys)
    for (let i = 0; i < keys; i++) perm[i] = i
    for (let i = keys - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1))
      const t = perm[i]; perm[i] = perm[j]; perm[j] = t
    }
    const step = spanMs / events
    writeLines(file, events, (i) => {
      const k = i < keys ? perm[i] : Math.floor(rand() * keys)
      return `{"user_id":"u${k}","ts":"${tsText(base + Math.floor(i * step))}"}\n`
    })
  }
  return { file, bytes: fs.statSync(file).size }
}

// ---- checkpoint directories -----------------------------------------------------------------

// `_metadata` (runtime/README.md, versions 1 and 2): {id, timestamp_millis, tasks: [{task, file,
// size, shared: [{name, size}]}]}
export function readMetadata(file) {
  const b = fs.readFileSync(file)
  if (b.subarray(0, 8).toString('latin1') !== 'FLOECKPT') throw new Error(`${file}: not a floe _metadata file`)
  let o = 8
  const u32 = () => { const v = b.readUInt32LE(o); o += 4; return v }
  const u64 = () => { const v = b.readBigUInt64LE(o); o += 8; return Number(v) }
  const str = () => { const n = u32(); const s = b.subarray(o, o + n).toString('utf8'); o += n; return s }
  const version = u32()
  if (version !== 1 && version !== 2) throw new Error(`${file}: _metadata version ${version}, the bench reads 1 and 2`)
  const id = u64()
  o += 1   // is_savepoint
  str()    // job id
  const ts = Number(b.readBigInt64LE(o)); o += 8
  const tasks = []
  for (let n = u32(); n > 0; n--) {
    const task = str()
    const f = str()
    const size = u64()
    u32()   // crc
    const shared = []
    for (let k = version === 2 ? u32() : 0; k > 0; k--) {
      const name = str()
      shared.push({ name, size: u64() })
      u32()   // crc
    }
    tasks.push({ task, file: f, size, shared })
  }
  return { id, timestamp_millis: ts, tasks }
}
// The lines of `file` that start before byte `at` is passed to a line start: what a reader
// that has read up to `at` (the first byte of a split it has not started, or where it stopped)
// handed out. Newline positions are indexed once per file.
const newlines = new Map()
function linesRead(file, at) {
  let nl = newlines.get(file)
  if (!nl) {
    const b = fs.readFileSync(file)
    nl = []
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) nl.push(i)
    newlines.set(file, nl)
  }
  if (at <= 0) return 0
  let lo = 0
  let hi = nl.length
  while (lo < hi) {   // the newline that ends the line holding byte at - 1
    const mid = (lo + hi) >> 1
    if (nl[mid] < at - 1) lo = mid + 1
    else hi = mid
  }
  return Math.min(lo + 1, nl.length)
}

// Events a source had read at a checkpoint, from its state file (connectors/README.md):
// filesystem (version 2): u32 version, u64 split bytes, u32 stripes, u32 n, n x (u32 stripe,
// string file, u64 split, u64 offset); one subtask reads its splits in order, so it is at the
// lowest of its cursors (a split not started: its first byte);
// kafka (version 2): u32 version, u32 parallelism, u32 topics, per topic string name, u32 n,
// n x (u32 partition, i64 next, i64 bounded end); a fresh topic starts at offset 0.
export function sourceEventsRead(file, kind) {
  const b = fs.readFileSync(file)
  if (kind === 'filesystem') {
    if (b.readUInt32LE(0) !== 2) throw new Error(`${file}: filesystem source state version ${b.readUInt32LE(0)}, the bench reads 2`)
    const splitBytes = Number(b.readBigUInt64LE(4))
    let at = Infinity
    let input = null
    for (let n = b.readUInt32LE(16), o = 20; n > 0; n--) {
      const len = b.readUInt32LE(o + 4)
      const name = b.toString('utf8', o + 8, o + 8 + len)
      o += 8 + len
      const byte = Math.max(Number(b.readBigUInt64LE(o)) * splitBytes, Number(b.readBigUInt64LE(o + 8)))
      o += 16
      if (byte < at) [at, input] = [byte, name]
    }
    return input === null ? 0 : linesRead(input, Math.min(at, fs.statSync(input).size))
  }
  if (b.readUInt32LE(0) !== 2) throw new Error(`${file}: kafka source state version ${b.readUInt32LE(0)}, the bench reads 2`)
  let read = 0
  let o = 12
  for (let t = b.readUInt32LE(8); t > 0; t--) {
    o += 4 + b.readUInt32LE(o)   // the topic's name
    const n = b.readUInt32LE(o)
    o += 4
    for (let i = 0; i < n; i++, o += 20) read += Number(b.readBigInt64LE(o + 4))
  }
  return read
}

// Polls a job's checkpoint directory (<execution.checkpointing.dir>/<job id>, the only job
// there) every 20 ms (retention deletes chk-N once chk-N+1 completed): for each chk-N the birth
// time of its directory (the trigger) and, once its _metadata exists, the metadata, every state
// file's size and mtime, the events its source had read, the bytes of every file in chk-N
// (`dir_bytes`), and the files under the job's shared/ directory (incremental checkpoints) that
// appeared since the previous checkpoint read (`new_shared_files`, `new_shared_bytes`), and the
// bytes of every shared file its `_metadata` lists (`listed_shared_bytes`: with `dir_bytes`,
// what a restore reads).
export function watchCheckpoints(rootDir, sourceKind) {
  const seen = new Map()
  const sharedSeen = new Set()
  let polling = true
  const loop = (async () => {
    while (polling) {
      let names = []
      let chkDir = rootDir
      try {
        chkDir = path.join(rootDir, fs.readdirSync(rootDir).find((n) => n !== 'savepoints'))
        names = fs.readdirSync(chkDir)
      } catch { /* not yet */ }
      for (const name of names) {
        const m = /^chk-(\d+)$/.exec(name)
        if (!m) continue
        const id = Number(m[1])
        const dir = path.join(chkDir, name)
        let c = seen.get(id)
        if (!c) {
          c = { id, first_seen: Date.now(), btime: null }
          try { const st = fs.statSync(dir); if (st.birthtimeMs > 0) c.btime = st.birthtimeMs } catch { /* gone */ }
          seen.set(id, c)
        }
        if (c.meta || !fs.existsSync(path.join(dir, '_metadata'))) continue
        try {
          const meta = readMetadata(path.join(dir, '_metadata'))
          const files = meta.tasks.map((t) => ({ ...t, mtime: fs.statSync(path.join(dir, t.file)).mtimeMs }))
          const src = files.filter((t) => t.task.startsWith('source-'))
          c.read = src.length ? src.reduce((a, t) => a + sourceEventsRead(path.join(dir, t.file), sourceKind), 0) : null
          c.dir_bytes = fs.readdirSync(dir).reduce((a, n) => a + fs.statSync(path.join(dir, n)).size, 0)
          c.listed_shared_bytes = meta.tasks.reduce((a, t) => a + t.shared.reduce((b, f) => b + f.size, 0), 0)
          const shared = sharedFiles(path.join(chkDir, 'shared')).filter((f) => !sharedSeen.has(f.path))
          for (const f of shared) sharedSeen.add(f.path)
          c.new_shared_files = shared.length
          c.new_shared_bytes = shared.reduce((a, f) => a + f.size, 0)
          c.meta = { ...meta, tasks: files }
        } catch { /* deleted by retention meanwhile: counted as missed */ }
      }
      await sleep(20)
    }
  })()
  return { seen, stop: async () => { polling = false; await loop } }
}

// Every file under `dir` (recursively): [{path, size}]; [] when it does not exist.
function sharedFiles(dir) {
  let out = []
  let entries = []
  try { entries = fs.readdirSync(dir, { withFileTypes: true }) } catch { return out }
  for (const e of entries) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out = out.concat(sharedFiles(p))
    else try { out.push({ path: p, size: fs.statSync(p).size }) } catch { /* deleted meanwhile */ }
  }
  return out
}
