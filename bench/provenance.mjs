// What a results file must say about where its figures come from (bench/README.md, "Results
// files"): the command, the checkout and the binary, the machine, and how loaded it was.
// A figure without these is a property of one afternoon, not of floe.
//
// Used by the node benches (pinBinary too: table_health, file_size, maintenance_throughput), and
// from bash (append_bench.sh):
//   node bench/provenance.mjs load > start.json     # the load sample, taken before the runs
//   node bench/provenance.mjs record start.json     # the whole record, the end sample included
import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const RESULTS_SCHEMA = 2   // 1: files written before these fields existed (no "schema")

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const round = (x, d = 0) => (x == null || !Number.isFinite(x) ? null : Number(x.toFixed(d)))
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

function git(dir, ...args) {
  try {
    return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch { return null }
}
// HEAD of the work tree holding `dir`, and whether tracked files differ from it.
function tree(dir) {
  const commit = git(dir, 'rev-parse', 'HEAD')
  if (!commit) return null
  return { commit, dirty: git(dir, 'status', '--porcelain', '--untracked-files=no') !== '' }
}

function cpuTicks() {
  // first line of /proc/stat: cpu user nice system idle iowait irq softirq steal ...
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const idle = f[3] + (f[4] || 0)
  return { busy: f.reduce((a, b) => a + b, 0) - idle, total: f.reduce((a, b) => a + b, 0) }
}
function procTicks() {
  const m = new Map()
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'))
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
      m.set(pid, { comm, ticks: Number(f[11]) + Number(f[12]) })
    } catch { /* exited meanwhile */ }
  }
  return m
}

// How busy the machine is over `ms`: load averages, the share of all CPUs in use, and the
// processes using more than 5% of a CPU (by command name, e.g. cc1plus while someone compiles).
// Load averages alone lag by minutes; this says what the run actually competed with.
export async function sampleLoad(ms = 1000) {
  if (!fs.existsSync('/proc/stat')) return { loadavg: os.loadavg().map((x) => round(x, 2)) }
  const c0 = cpuTicks()
  const p0 = procTicks()
  const t0 = Date.now()
  await sleep(ms)
  const c1 = cpuTicks()
  const p1 = procTicks()
  const secs = (Date.now() - t0) / 1000
  const byComm = new Map()
  for (const [pid, b] of p1) {
    const a = p0.get(pid)
    // a process started during the sample used all its ticks in it (USER_HZ = 100)
    const pct = ((b.ticks - (a ? a.ticks : 0)) / 100 / secs) * 100
    if (pct > 0) byComm.set(b.comm, (byComm.get(b.comm) || 0) + pct)
  }
  return {
    loadavg: os.loadavg().map((x) => round(x, 2)),
    cpu_busy_pct: round((100 * (c1.busy - c0.busy)) / Math.max(1, c1.total - c0.total)),
    busy_processes: [...byComm].filter(([, p]) => p >= 5).sort((a, b) => b[1] - a[1]).slice(0, 6)
      .map(([comm, p]) => ({ comm, cpu_pct: round(p) })),
  }
}

export function machine() {
  const cpus = os.cpus()
  return {
    cpu_model: cpus[0] ? cpus[0].model.trim() : null,
    cores: cpus.length,
    mem_gib: round(os.totalmem() / 2 ** 30, 1),
    kernel: `${os.type()} ${os.release()}`,
  }
}

// The binary: its path, a hash (so two results can be told apart as the same build or not),
// and where it came from: FLOE_SOURCE when the caller says (a copied binary cannot tell), else
// the work tree it sits in (its HEAD now, which is the build's source only if it was not
// rebuilt from other sources since).
function binary(floe) {
  const out = { path: floe, sha256: null, source: process.env.FLOE_SOURCE || null }
  try { out.sha256 = crypto.createHash('sha256').update(fs.readFileSync(floe)).digest('hex') } catch { /* missing */ }
  if (!out.source) {
    const t = tree(path.dirname(floe))
    if (t) out.source = `${t.commit}${t.dirty ? ' + uncommitted changes' : ''} (work tree of the binary, at bench time)`
  }
  return out
}

// A bench that runs for minutes must not have its binary rebuilt under it (someone building in
// the same tree): the long benches copy the binary into their scratch folder when they start and
// run the copy. Its source is FLOE_SOURCE when the caller set it, else the HEAD of the binary's
// work tree at that moment (set as FLOE_SOURCE, so record() says it). Returns the copy's path.
export function pinBinary(floe, dir) {
  if (!process.env.FLOE_SOURCE) {
    const t = tree(path.dirname(floe))
    if (t) {
      process.env.FLOE_SOURCE = `${t.commit}${t.dirty ? ' + uncommitted changes' : ''} ` +
        '(work tree of the binary when the bench started; it ran a copy taken then)'
    }
  }
  fs.mkdirSync(dir, { recursive: true })
  const copy = path.join(dir, 'floe')
  if (path.resolve(floe) !== copy) {
    fs.rmSync(copy, { force: true })
    fs.copyFileSync(floe, copy)
    fs.chmodSync(copy, 0o755)
  }
  return copy
}

// Everything a results file needs besides its figures. `start` is sampleLoad() taken before
// the first measurement; the end sample is taken here.
export async function record({ bench, floe, start }) {
  return {
    bench,
    schema: RESULTS_SCHEMA,
    date: new Date().toISOString(),
    command: process.env.BENCH_COMMAND || null,
    git: tree(REPO),
    floe: binary(floe),
    machine: machine(),
    load: { start, end: await sampleLoad() },
  }
}

// The end of a node bench: `figures` gets ok (no problems), the problems and the seconds since
// `t0`; with `result`, the results file (record() and the figures) is written there.
export async function writeResults({ result, bench, floe, start, t0, figures, problems }) {
  figures.ok = problems.length === 0
  figures.problems = problems
  figures.seconds = Number(((Date.now() - t0) / 1000).toFixed(1))
  if (!result) return
  fs.mkdirSync(path.dirname(path.resolve(result)), { recursive: true })
  const full = { ...(await record({ bench, floe, start })), ...figures }
  fs.writeFileSync(result, JSON.stringify(full, null, 2) + '\n')
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [what, arg, floe, bench] = process.argv.slice(2)
  if (what === 'load') {
    console.log(JSON.stringify(await sampleLoad()))
  } else if (what === 'record') {
    console.log(JSON.stringify(await record({ bench, floe, start: JSON.parse(fs.readFileSync(arg, 'utf8')) })))
  } else {
    console.error('usage: provenance.mjs load | provenance.mjs record START.json FLOE BENCH')
    process.exit(2)
  }
}
