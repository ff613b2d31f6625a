// Reads every Iceberg table $FLOE_INTEROP_DIR/warehouse/<ns...>/<table>/ (one that has
// metadata/version-hint.text) with icebird 0.3.1, through a local replacement for
// globalThis.fetch, and compares the rows, as a multiset, with
// $FLOE_INTEROP_DIR/expected/<ns>.<table>.jsonl (the output of `floe table scan`) and/or the row
// count in $FLOE_INTEROP_DIR/expected/<ns>.<table>.count. See README.md for what icebird can and
// cannot check.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { icebergRead } from 'icebird'
import { interopDir, show, walk, floatCanon } from './lib/common.mjs'
import { parseJsonLossless } from './lib/json.mjs'
import { makeLocalFetch } from './lib/localfetch.mjs'
import { lossyFromDefault, lossyFromExact, parseType } from './lib/values.mjs'

let root
try {
  root = interopDir()
} catch (e) {
  test('FLOE_INTEROP_DIR', () => assert.fail(e.message))
}

const realFetch = globalThis.fetch
const fetchLog = []
globalThis.fetch = makeLocalFetch({ log: fetchLog })
after(() => { globalThis.fetch = realFetch })

const warehouse = root && path.join(root, 'warehouse')
const tables = root
  ? walk(warehouse, p => p.endsWith(`${path.sep}metadata${path.sep}version-hint.text`)).map(hint => {
    const dir = path.dirname(path.dirname(hint))
    const parts = path.relative(warehouse, dir).split(path.sep)
    return { dir, ident: parts.join('.'), parts }
  })
  : []

if (root) {
  test('warehouse has Iceberg tables to read', () => {
    assert.ok(tables.length > 0, `no table with metadata/version-hint.text under ${warehouse}: a run that checks nothing must not pass`)
    const withExpected = tables.filter(t => fs.existsSync(expectedPath(t, 'jsonl')) || fs.existsSync(expectedPath(t, 'count')))
    assert.ok(withExpected.length > 0, `none of the tables (${tables.map(t => t.ident).join(', ')}) has ${path.join(root, 'expected')}/<ns>.<table>.jsonl or .count: nothing would be compared`)
  })
}

function expectedPath(t, ext) {
  return path.join(root, 'expected', `${t.ident}.${ext}`)
}

// ---- `floe table scan` JSON -> exact canonical values (see lib/values.mjs) ----
function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}
const DATE_RE = /^(-?\d{4,})-(\d{2})-(\d{2})$/
const TS_RE = /^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z?)$/
const TIME_RE = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/

function exactFromScan(type, v, where) {
  if (v === null || v === undefined) return null
  const fail = msg => { throw new Error(`${where}: ${msg}: ${show(v)}`) }
  switch (type.kind) {
    case 'boolean': return typeof v === 'boolean' ? v : fail('BOOLEAN must be true/false')
    case 'int': return typeof v === 'number' && Number.isInteger(v) ? v : fail('INT must be an integer number')
    case 'long':
      if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) return String(v)
      return typeof v === 'string' && /^-?\d+$/.test(v) ? v : fail('BIGINT must be an integer')
    case 'float': case 'double':
      if (typeof v === 'bigint') return Number(v)
      if (typeof v === 'number' || ['NaN', 'Infinity', '-Infinity'].includes(v)) return floatCanon(v)
      return fail('FLOAT/DOUBLE must be a number or "NaN"/"Infinity"/"-Infinity"')
    case 'string': return typeof v === 'string' ? v : fail('STRING must be a string')
    case 'binary':
      if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) fail('BYTES must be base64')
      return Buffer.from(v, 'base64').toString('hex')
    case 'date': {
      const m = typeof v === 'string' && DATE_RE.exec(v)
      return m ? daysFromCivil(+m[1], +m[2], +m[3]) : fail('DATE must be YYYY-MM-DD')
    }
    case 'time': {
      const m = typeof v === 'string' && TIME_RE.exec(v)
      if (!m) fail('TIME must be HH:MM:SS[.ffffff]')
      return String(BigInt(+m[1] * 3600 + +m[2] * 60 + +m[3]) * 1_000_000n + BigInt((m[4] ?? '').padEnd(6, '0')))
    }
    case 'timestamp': case 'timestamptz': {
      const m = typeof v === 'string' && TS_RE.exec(v)
      if (!m) fail('TIMESTAMP must be YYYY-MM-DDTHH:MM:SS.ffffff')
      if ((m[8] === 'Z') !== (type.kind === 'timestamptz')) fail(type.kind === 'timestamptz' ? 'TIMESTAMP_LTZ must end in Z' : 'TIMESTAMP must not end in Z')
      const days = BigInt(daysFromCivil(+m[1], +m[2], +m[3]))
      if (m[7] !== undefined && m[7].length > 6 && !/^0*$/.test(m[7].slice(6))) fail('sub-microsecond digits')
      const frac = BigInt((m[7] ?? '').padEnd(6, '0').slice(0, 6))
      const secs = BigInt(+m[4] * 3600 + +m[5] * 60 + +m[6])
      return String(days * 86_400_000_000n + secs * 1_000_000n + frac)
    }
    case 'decimal': {
      if (typeof v !== 'string') fail('DECIMAL must be a string')
      const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(v)
      if (!m) fail('DECIMAL must look like -123.45')
      const fracDigits = m[3] ?? ''
      if (fracDigits.length !== type.scale) fail(`DECIMAL must have exactly ${type.scale} fractional digits`)
      return String(BigInt(m[1] + m[2] + fracDigits))
    }
  }
}

/** Stable string for a lossy canonical row (for multiset comparison). */
function rowKey(values) {
  return JSON.stringify(values, (k, x) => (Object.is(x, -0) ? '-0.0' : x))
}

for (const t of tables) {
  test(`icebird ${t.ident}`, async ctx => {
    const metaDir = path.join(t.dir, 'metadata')
    // Same lookup as icebird (metadata.js: parseInt(version-hint) -> v<N>.metadata.json).
    const hint = fs.readFileSync(path.join(metaDir, 'version-hint.text'), 'utf8')
    const version = parseInt(hint)
    assert.ok(!Number.isNaN(version), `${t.ident}: version-hint.text does not start with an integer: ${show(hint)}`)
    const metaFile = path.join(metaDir, `v${version}.metadata.json`)
    assert.ok(fs.existsSync(metaFile), `${t.ident}: version-hint says ${version} but ${metaFile} does not exist (icebird only looks for v<N>.metadata.json)`)
    const meta = parseJsonLossless(fs.readFileSync(metaFile, 'utf8'))
    assert.equal(meta['format-version'], 2, `${t.ident}: format-version ${meta['format-version']}`)
    const schema = meta.schemas.find(s => s['schema-id'] === meta['current-schema-id'])
    assert.ok(schema, `${t.ident}: current schema ${meta['current-schema-id']} not in schemas`)
    const fields = schema.fields.map(f => ({ name: f.name, t: parseType(f.type) }))

    // icebird parses metadata with res.json(): ids become doubles. It finds the current snapshot
    // with `===` on those doubles (manifest.js:13-17), so two ids that round to the same double
    // could make it read the wrong snapshot; and it refuses ids <= 0.
    const cur = meta['current-snapshot-id']
    const hasSnapshot = cur !== undefined && cur !== null && BigInt(cur) !== -1n
    if (hasSnapshot) {
      assert.ok(BigInt(cur) > 0n, `${t.ident}: current-snapshot-id ${cur} must be > 0 (icebird manifest.js:14 rejects it otherwise)`)
      const collide = (meta.snapshots ?? []).filter(s => BigInt(s['snapshot-id']) !== BigInt(cur) && Number(s['snapshot-id']) === Number(cur))
      assert.deepEqual(collide.map(s => String(s['snapshot-id'])), [], `${t.ident}: snapshot ids equal to the current one as doubles: icebird could pick the wrong snapshot`)
    }

    const jsonlFile = expectedPath(t, 'jsonl')
    const countFile = expectedPath(t, 'count')
    const haveJsonl = fs.existsSync(jsonlFile)
    const haveCount = fs.existsSync(countFile)

    const before = fetchLog.length
    let rows
    try {
      rows = await icebergRead({ tableUrl: pathToFileURL(t.dir).href })
    } catch (e) {
      const known = /No current snapshot id|No data manifest files found/.test(e.message)
      if (!haveJsonl && !haveCount && known) {
        ctx.skip(`${t.ident}: icebird cannot read this table (${e.message}); it has no expected rows`)
        return
      }
      const fetched = fetchLog.slice(before).map(l => `${l.method} ${l.status} ${l.path}${l.range ? ` [${l.range}]` : ''}`)
      assert.fail(`${t.ident}: icebird failed: ${e.message}\nfetches:\n  ${fetched.slice(-15).join('\n  ')}`)
    }
    const reqs = fetchLog.slice(before)
    ctx.diagnostic(`${t.ident}: icebird read ${rows.length} rows with ${reqs.length} fetches (${reqs.filter(r => r.range).length} ranged, ${reqs.filter(r => r.method === 'HEAD').length} HEAD)`)

    if (haveCount) {
      const want = Number(fs.readFileSync(countFile, 'utf8').trim())
      assert.ok(Number.isInteger(want), `${countFile}: not an integer`)
      assert.equal(rows.length, want, `${t.ident}: icebird read ${rows.length} rows, ${path.basename(countFile)} says ${want}`)
    }
    if (!haveJsonl) {
      if (!haveCount) ctx.diagnostic(`${t.ident}: no expected rows or count; only checked that icebird reads it`)
      return
    }

    const expected = fs.readFileSync(jsonlFile, 'utf8').split('\n').filter(l => l.trim()).map((l, k) => {
      const o = parseJsonLossless(l)
      const keys = Object.keys(o).sort()
      assert.deepEqual(keys, fields.map(f => f.name).sort(), `${jsonlFile}:${k + 1}: columns ${keys.join(',')} differ from the table schema`)
      return o
    })
    const expKeys = expected.map((o, k) => rowKey(fields.map(f =>
      lossyFromExact(f.t, exactFromScan(f.t, o[f.name], `${jsonlFile}:${k + 1} column ${f.name}`), { decimalByDivision: false }))))
    const gotKeys = rows.map((r, k) => rowKey(fields.map(f => {
      try {
        return lossyFromDefault(f.t, r[f.name])
      } catch (e) {
        throw new Error(`${t.ident}: icebird row ${k}, column ${f.name} (${f.t.kind}): ${e.message}`)
      }
    })))
    const count = keys => keys.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map())
    const e = count(expKeys)
    const g = count(gotKeys)
    const missing = []
    const extra = []
    for (const [k, n] of e) if ((g.get(k) ?? 0) < n) missing.push(`${n - (g.get(k) ?? 0)}x ${k}`)
    for (const [k, n] of g) if ((e.get(k) ?? 0) < n) extra.push(`${n - (e.get(k) ?? 0)}x ${k}`)
    if (missing.length || extra.length) {
      const cols = fields.map(f => f.name).join(', ')
      assert.fail(`${t.ident}: icebird rows differ from ${path.basename(jsonlFile)} (${rows.length} read, ${expected.length} expected; columns ${cols}; ` +
        'timestamps compared in ms, decimals as Number, binary as UTF-8 text, as icebird returns them)\n' +
        `expected but not read (${missing.length} distinct):\n  ${missing.slice(0, 5).join('\n  ')}\n` +
        `read but not expected (${extra.length} distinct):\n  ${extra.slice(0, 5).join('\n  ')}`)
    }
  })
}
