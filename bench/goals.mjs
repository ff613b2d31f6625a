#!/usr/bin/env node
// The speed goals of issue 25 against the results files (bench/results/INDEX.json): each path's
// figure, its goal, and pass or the gap. Run by hand before closing speed work; never a test
// (figures belong to a machine and a load, the ratios less so). Exit 0 whatever the verdicts.
//
//   node bench/goals.mjs
//
// Figures: the current windows, append and kafka files (the ratios README.md quotes) and, for
// both cores, the newest windows experiments run unpinned with parallelism 2 and 1
// (bench/windows.sh --cpu none --parallelism N) and pinned with parallelism 1 (--cpu 1).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results')
const index = JSON.parse(fs.readFileSync(path.join(RESULTS, 'INDEX.json'), 'utf8')).files
const read = (name) => JSON.parse(fs.readFileSync(path.join(RESULTS, name), 'utf8'))
const current = (bench) => {
  const name = Object.keys(index).find((n) => index[n].bench === bench && index[n].status === 'current')
  return name ? { name, j: read(name) } : null
}

const rows = []
const goal = (what, value, target, unit, file) =>
  rows.push({ what, value, target, unit, file, pass: value != null && value >= target })

const w = current('windows')
for (const [kind, keys, target] of [['tumble', 10000, 1], ['tumble', 1000000, 0.5], ['session', 10000, 1], ['session', 1000000, 0.5]]) {
  const s = w?.j.throughput?.summary?.find((x) => x.kind === kind && x.keys === keys)
  goal(`${kind.toUpperCase()} ${keys.toLocaleString('en-US')} keys / DuckDB, one core`, s?.ratio_median ?? null, target, 'x', w?.name)
}
const a = current('append')
goal('append / DuckDB 1 thread', a?.j.ratio ?? null, 2, 'x', a?.name)
const k = current('kafka')
const perCpu = k && k.j.median?.kafka_cpu_s ? k.j.value_bytes / 1048576 / k.j.median.kafka_cpu_s : null
goal('Kafka -> Iceberg, MiB of JSON per floe CPU second', perCpu, 200, ' MiB', k?.name)
// Both cores: the newest windows runs at parallelism 2 (unpinned) and 1, read two ways: parallelism
// 1 unpinned (its tasks are threads of their own, so it uses both cores too) and pinned to one core.
const newest = (p, pinned) => Object.keys(index).filter((n) => index[n].bench === 'windows')
  .map((n) => ({ name: n, j: read(n) }))
  .filter((x) => (x.j.windows?.cpu != null) === pinned && x.j.windows?.parallelism === p && x.j.throughput)
  .sort((x, y) => (x.j.date < y.j.date ? 1 : -1))[0]
const p2 = newest(2, false)
for (const [p1, how] of [[newest(1, false), '1'], [newest(1, true), '1 on one core']]) {
  for (const kind of ['tumble', 'session']) {
    const f = (x) => x?.j.throughput.summary.find((s) => s.kind === kind && s.keys === 10000)?.floe_events_per_s_median
    const v = f(p2) && f(p1) ? f(p2) / f(p1) : null
    goal(`${kind.toUpperCase()} 10,000 keys, parallelism 2 / ${how}`, v, 1.8, 'x', p2 && p1 ? `${p2.name} / ${p1.name}` : null)
  }
}

const fmt = (v, unit) => (v == null ? 'not measured' : `${v.toFixed(unit === 'x' ? 2 : 0)}${unit}`)
console.log('| path | figure | goal | verdict | from |\n| --- | --- | --- | --- | --- |')
for (const r of rows) {
  const verdict = r.value == null ? 'no figure' : r.pass ? 'pass' : `gap: ${fmt(r.target - r.value, r.unit)}`
  console.log(`| ${r.what} | ${fmt(r.value, r.unit)} | ${fmt(r.target, r.unit)} | ${verdict} | ${r.file ?? '-'} |`)
}
