// bench/catalog_commits.sh's body: runs catalog_commit_bench (bench/catalog_commits.cc) per
// catalog and writes the results file. The filesystem catalog is the peer: each JDBC figure is
// also given as a ratio to it, measured in the same run.
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { record, sampleLoad } from './provenance.mjs'

const { values: opts } = parseArgs({
  options: {
    commits: { type: 'string', default: '1000' },
    'concurrent-commits': { type: 'string', default: '500' },
  },
})
const BIN = path.resolve(process.env.FLOE)
const OUT = path.resolve(process.env.OUT)
const RESULT = process.env.RESULT
const PG = path.join('/tmp', `floe-bench-pg-${process.pid}`)
const FLOE_CLI = path.resolve(process.env.FLOE_CLI || 'build/src/floe/cli/floe')
const servers = []
const log = (m) => console.error(`catalog-commits: ${m}`)

fs.rmSync(OUT, { recursive: true, force: true })
fs.mkdirSync(OUT, { recursive: true })
const pgUri = execFileSync('bash', ['tests/postgres/test_postgres.sh', 'start', PG], { encoding: 'utf8', env: { ...process.env, FLOE_PG_FSYNC: 'on' } }).trim()
const pgPassword = fs.readFileSync(path.join(PG, 'password'), 'utf8').trim()
// The S3 cases: s3rver behind the signature-checking front (tests/s3/), on loopback.
const S3 = path.join('/tmp', `floe-bench-s3-${process.pid}`)
const s3Endpoint = execFileSync('bash', ['tests/s3/test_s3rver.sh', 'start', S3, 'bench'], { encoding: 'utf8' }).trim()
const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_ENDPOINT_URL: s3Endpoint }

// `floe catalog serve` over the PostgreSQL server, catalog `name`; resolves with its URI.
async function serve(name) {
  const child = spawn(FLOE_CLI, ['catalog', 'serve', '--catalog', pgUri, '--catalog-name', name, '--jdbc-user', 'floe',
                                 '--warehouse', path.join(OUT, name), '--listen', '127.0.0.1:0'],
                      { env: { ...process.env, PGPASSWORD: pgPassword }, stdio: ['ignore', 'pipe', 'inherit'] })
  servers.push(child)
  let out = ''
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d
      const m = out.match(/at (http:\/\/127\.0\.0\.1:\d+)/)
      if (m) resolve(m[1])
    })
    child.on('exit', (code) => reject(new Error(`floe catalog serve exited with ${code}`)))
  })
}

function bench(name, commits, processes, uri, warehouse) {
  const wh = warehouse ?? path.join(OUT, name)
  const cwd = path.join(OUT, name)
  fs.mkdirSync(cwd, { recursive: true })
  const args = [wh, String(commits), String(processes)]
  if (uri) args.push(uri, name, ...(uri.startsWith('jdbc:postgresql') ? ['floe'] : []))
  log(`${name}: ${processes} x ${commits} commits`)
  const out = execFileSync(BIN, args, { encoding: 'utf8', cwd, env: { ...process.env, ...S3_ENV, PGPASSWORD: pgPassword } })
  const r = JSON.parse(out)
  if (r.failed_processes || r.commits !== commits * processes || r.snapshots !== r.commits) {
    throw new Error(`${name}: commits lost or failed: ${out}`)
  }
  log(`${name}: p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms, ${r.commits_per_second}/s, ${r.conflicts_retried} conflicts retried` +
      (r.s3_per_commit.requests ? `, S3 per commit: ${r.s3_per_commit.requests} requests, ${r.s3_per_commit.bytes_sent} B sent, ${r.s3_per_commit.bytes_received} B received` : ''))
  return { processes, ...r }
}

let figures
const load0 = await sampleLoad()
try {
  const commits = Number(opts.commits)
  const concurrent = Number(opts['concurrent-commits'])
  const sqlite = (name) => `jdbc:sqlite:${path.join(OUT, name, 'catalog.db')}`
  const single = {
    filesystem: bench('filesystem', commits, 1),
    sqlite: bench('sqlite', commits, 1, sqlite('sqlite')),
    postgres: bench('postgres', commits, 1, pgUri),
    rest_postgres: bench('rest_postgres', commits, 1, await serve('rest_postgres')),
    s3_postgres: bench('s3_postgres', commits, 1, pgUri, 's3://bench/s3_postgres'),
  }
  const ratio = (k) => Number((single[k].latency_ms.p50 / single.filesystem.latency_ms.p50).toFixed(2))
  figures = {
    what: 'one Iceberg commit (load, manifest list, metadata file, catalog swap; through REST: the same behind floe catalog serve, plus two HTTP round trips on loopback) adding one data file to a table with delete-after-commit and 20 previous versions; PostgreSQL 15 (fsync on) on a Unix socket on the same machine; every metadata file fsynced; the S3 case keeps the table (metadata, manifests) on s3rver on loopback behind the signature-checking front of tests/s3 (a node process)',
    single,
    p50_ratio_to_filesystem: { sqlite: ratio('sqlite'), postgres: ratio('postgres'), rest_postgres: ratio('rest_postgres'), s3_postgres: ratio('s3_postgres') },
    concurrent: {
      postgres: bench('postgres_2', concurrent, 2, pgUri),
      rest_postgres: bench('rest_postgres_2', concurrent, 2, await serve('rest_postgres_2')),
      sqlite: bench('sqlite_2', concurrent, 2, sqlite('sqlite_2')),
      filesystem: bench('filesystem_2', concurrent, 2),
    },
  }
} finally {
  for (const s of servers) s.kill('SIGKILL')
  execFileSync('bash', ['tests/s3/test_s3rver.sh', 'stop', S3])
  execFileSync('bash', ['tests/postgres/test_postgres.sh', 'stop', PG])
}
if (RESULT) {
  fs.mkdirSync(path.dirname(path.resolve(RESULT)), { recursive: true })
  const full = { ...(await record({ bench: 'catalog-commits', floe: BIN, start: load0 })), ...figures }
  fs.writeFileSync(RESULT, JSON.stringify(full, null, 2) + '\n')
  log(`results: ${RESULT}`)
}
