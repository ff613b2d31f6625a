#!/usr/bin/env node
// Builds a small FLOE_INTEROP_DIR with files written by OTHER writers (DuckDB for Parquet, avsc for
// Avro and Iceberg manifests) in the same layout and expected-value conventions that floe's C++
// tests use. It exists to self-test the interop readers (`tests/interop/run.sh --self-test`);
// nothing it writes is committed.
//
//   node tests/interop/make_fixtures.mjs OUT_DIR
//
// Layout written:
//   OUT/parquet/<name>.parquet + <name>.expected.jsonl + <name>.schema.json
//   OUT/avro/<name>.avro + <name>.expected.json
//   OUT/warehouse/db/events/{metadata,data}/...   (Iceberg v2 table: 3 snapshots, position and
//   OUT/expected/db.events.jsonl + .count          equality deletes, snapshot ids > 2^53)

import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import crypto from 'node:crypto'
import avro from 'avsc'
import { DuckDBInstance } from '@duckdb/node-api'
import { bigLongType } from './lib/avro.mjs'

const out = process.argv[2]
if (!out) {
  console.error('usage: make_fixtures.mjs OUT_DIR')
  process.exit(2)
}
fs.mkdirSync(path.join(out, 'parquet'), { recursive: true })
fs.mkdirSync(path.join(out, 'avro'), { recursive: true })
fs.mkdirSync(path.join(out, 'expected'), { recursive: true })

const db = await DuckDBInstance.create(':memory:')
const conn = await db.connect()
await conn.run("SET TimeZone='UTC'")
await conn.run('SET threads=1')

const sqlStr = s => `'${String(s).replaceAll("'", "''")}'`

// ---------------------------------------------------------------------------------------------
// Parquet: every Iceberg primitive the C++ side writes, in the expected.jsonl conventions of
// tests/interop/README.md (int64/timestamps as decimal strings, binary as hex, decimals unscaled).
// ---------------------------------------------------------------------------------------------
const columns = [
  { name: 'b', type: 'boolean', sql: 'BOOLEAN' },
  { name: 'i', type: 'int', sql: 'INTEGER' },
  { name: 'l', type: 'long', sql: 'BIGINT' },
  { name: 'f', type: 'float', sql: 'REAL' },
  { name: 'd', type: 'double', sql: 'DOUBLE' },
  { name: 's', type: 'string', sql: 'VARCHAR' },
  { name: 'bin', type: 'binary', sql: 'BLOB' },
  { name: 'dt', type: 'date', sql: 'DATE' },
  { name: 'ts', type: 'timestamp', sql: 'TIMESTAMP' },
  { name: 'tstz', type: 'timestamptz', sql: 'TIMESTAMPTZ' },
  { name: 'dec9', type: 'decimal(9, 2)', sql: 'DECIMAL(9,2)', scale: 2 },
  { name: 'dec18', type: 'decimal(18, 4)', sql: 'DECIMAL(18,4)', scale: 4 },
  { name: 'dec38', type: 'decimal(38, 10)', sql: 'DECIMAL(38,10)', scale: 10 },
]
// Values in "expected" form (see README). Floats are given as JS numbers.
const rows = [
  { b: true, i: 1, l: '1', f: 1.5, d: 0.1, s: 'hello', bin: '00ff10', dt: 0, ts: '0', tstz: '1700000000123456', dec9: '12345', dec18: '-1', dec38: '-99999999999999999999999999999999999999' },
  Object.fromEntries(columns.map(c => [c.name, null])),
  { b: false, i: -2147483648, l: '-9223372036854775808', f: -0, d: -0, s: '', bin: '', dt: -719162, ts: '-1', tstz: '253402300799999999', dec9: '-999999999', dec18: '999999999999999999', dec38: '1' },
  { b: true, i: 2147483647, l: '9223372036854775807', f: NaN, d: Infinity, s: 'ünïcödé 🙂 "quoted"\n', bin: 'c3', dt: 2932896, ts: '1234567', tstz: '-62135596800000000', dec9: '0', dec18: '0', dec38: '0' },
  { b: null, i: 0, l: '9007199254740993', f: -Infinity, d: -Infinity, s: 'x', bin: 'deadbeef', dt: 19000, ts: '-62135596800000000', tstz: '0', dec9: '-5', dec18: '12345678901234', dec38: '12345678901234567890123456789' },
  { b: false, i: -1, l: '-9007199254740993', f: 3.4028234663852886e38, d: 5e-324, s: 'y', bin: null, dt: null, ts: null, tstz: null, dec9: null, dec18: null, dec38: null },
  { b: true, i: 42, l: '0', f: Math.fround(0.1), d: 1.7976931348623157e308, s: null, bin: '', dt: 1, ts: '86400000000', tstz: '1', dec9: '1', dec18: '1', dec38: '-1' },
]

function decimalLiteral(unscaled, scale) {
  const neg = unscaled.startsWith('-')
  let digits = neg ? unscaled.slice(1) : unscaled
  digits = digits.padStart(scale + 1, '0')
  const s = scale ? `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}` : digits
  return (neg ? '-' : '') + s
}
function sqlValue(col, v) {
  if (v === null) return `NULL::${col.sql}`
  switch (col.type) {
    case 'boolean': return v ? 'TRUE' : 'FALSE'
    case 'int': return `'${v}'::INTEGER`
    case 'long': return `'${v}'::BIGINT`
    case 'float': case 'double': {
      const t = col.sql
      if (Number.isNaN(v)) return `'NaN'::${t}`
      if (v === Infinity) return `'Infinity'::${t}`
      if (v === -Infinity) return `'-Infinity'::${t}`
      if (Object.is(v, -0)) return `'-0.0'::${t}`
      return `'${v.toPrecision(17)}'::${t}`
    }
    case 'string': return sqlStr(v)
    case 'binary': return `from_hex('${v}')`
    case 'date': return `(DATE '1970-01-01' + ${v})`
    case 'timestamp': return `make_timestamp('${v}'::BIGINT)`
    case 'timestamptz': return `make_timestamp('${v}'::BIGINT)::TIMESTAMPTZ`
    default: return `${sqlStr(decimalLiteral(v, col.scale))}::${col.sql}`
  }
}
// %.17g of the value as a double, as the C++ side prints it.
function g17(v) {
  if (Number.isNaN(v)) return '"NaN"'
  if (v === Infinity) return '"Infinity"'
  if (v === -Infinity) return '"-Infinity"'
  if (Object.is(v, -0)) return '-0'
  return v.toPrecision(17).replace(/e\+?/, 'e')
}
function expectedLine(row, cols = columns) {
  const parts = cols.map(c => {
    const v = row[c.name]
    let s
    if (v === null) s = 'null'
    else if (c.type === 'float' || c.type === 'double') s = g17(c.type === 'float' ? Math.fround(v) : v)
    else if (c.type === 'boolean' || c.type === 'int' || c.type === 'date') s = String(v)
    else s = JSON.stringify(v)
    return `${JSON.stringify(c.name)}:${s}`
  })
  return `{${parts.join(',')}}`
}

async function writeParquet(name, rowList, cols, codec, extra = '') {
  const select = rowList.map(r => `SELECT ${cols.map(c => `${sqlValue(c, r[c.name])} AS ${c.name}`).join(', ')}`).join('\nUNION ALL ')
  const ids = cols.map((c, k) => `${c.name}: ${k + 1}`).join(', ')
  const file = path.join(out, 'parquet', `${name}.parquet`)
  await conn.run(`COPY (${select}) TO ${sqlStr(file)} (FORMAT parquet, COMPRESSION ${codec}, FIELD_IDS {${ids}}${extra})`)
  fs.writeFileSync(path.join(out, 'parquet', `${name}.expected.jsonl`), rowList.map(r => expectedLine(r, cols)).join('\n') + '\n')
  fs.writeFileSync(path.join(out, 'parquet', `${name}.schema.json`), JSON.stringify(cols.map((c, k) => ({ name: c.name, type: c.type, nullable: true, field_id: k + 1 })), null, 1))
}

for (const codec of ['zstd', 'snappy', 'uncompressed', 'gzip']) {
  await writeParquet(`types_${codec}`, rows, columns, codec)
}
// many rows, several row groups and pages, dictionary-friendly strings
{
  const cols = [columns[2], columns[5], columns[7], columns[4]]
  const many = []
  for (let k = 0; k < 5000; k++) {
    many.push({ l: String(BigInt(k) * 1000003n - 2500000000n), s: `name-${k % 37}`, dt: k % 400 - 200, d: k % 11 === 0 ? null : k / 7 })
  }
  await writeParquet('many_rows_zstd', many, cols, 'zstd', ', ROW_GROUP_SIZE 2048')
}

// ---------------------------------------------------------------------------------------------
// Avro: a schema with Iceberg ids on every field, array and map, written by avsc.
// ---------------------------------------------------------------------------------------------
const avroSchema = {
  type: 'record', name: 'sample', fields: [
    { name: 'id', type: 'long', 'field-id': 1 },
    { name: 'name', type: ['null', 'string'], default: null, 'field-id': 2 },
    { name: 'payload', type: 'bytes', 'field-id': 3 },
    { name: 'digest', type: { type: 'fixed', name: 'md5', size: 4 }, 'field-id': 4 },
    { name: 'tags', type: { type: 'array', items: 'string', 'element-id': 6 }, 'field-id': 5 },
    { name: 'attrs', type: { type: 'map', values: 'long', 'key-id': 8, 'value-id': 9 }, 'field-id': 7 },
    { name: 'counts', type: ['null', { type: 'array', logicalType: 'map', items: { type: 'record', name: 'k11_v12', fields: [{ name: 'key', type: 'int', 'field-id': 11 }, { name: 'value', type: 'long', 'field-id': 12 }] } }], default: null, 'field-id': 10 },
    { name: 'inner', type: { type: 'record', name: 'r13', fields: [{ name: 'x', type: 'double', 'field-id': 14 }, { name: 'ok', type: 'boolean', 'field-id': 15 }] }, 'field-id': 13 },
  ],
}
const avroRecords = [
  { id: 1n, name: 'a', payload: Buffer.from('00ff', 'hex'), digest: Buffer.from('01020304', 'hex'), tags: ['t1', 't2'], attrs: { k: 5n }, counts: [{ key: 1, value: 10n }], inner: { x: 0.5, ok: true } },
  { id: 9223372036854775807n, name: null, payload: Buffer.alloc(0), digest: Buffer.from('ffffffff', 'hex'), tags: [], attrs: {}, counts: null, inner: { x: -2.25, ok: false } },
  { id: -9007199254740993n, name: 'ü', payload: Buffer.from('c3', 'hex'), digest: Buffer.from('00000000', 'hex'), tags: ['x'], attrs: { a: -1n, b: 9007199254740993n }, counts: [], inner: { x: 1e300, ok: true } },
]
const avroExpected = avroRecords.map(r => ({
  id: String(r.id), name: r.name, payload: r.payload.toString('hex'), digest: r.digest.toString('hex'), tags: r.tags,
  attrs: Object.fromEntries(Object.entries(r.attrs).map(([k, v]) => [k, String(v)])),
  counts: r.counts && r.counts.map(e => ({ key: e.key, value: String(e.value) })), inner: r.inner,
}))
function writeAvro(file, schema, records, { codec = 'null', meta = {}, blockSize } = {}) {
  const type = avro.Type.forSchema(schema, { registry: { long: bigLongType() } })
  const header = { 'avro.schema': Buffer.from(JSON.stringify(schema)), 'avro.codec': Buffer.from(codec) }
  for (const [k, v] of Object.entries(meta)) header[k] = Buffer.from(v)
  const sync = crypto.randomBytes(16)
  const HEADER = avro.Type.forSchema({ type: 'record', name: 'org.apache.avro.file.Header', fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } }] })
  const parts = [HEADER.toBuffer({ magic: Buffer.from('Obj\x01', 'binary'), meta: header, sync })]
  const size = blockSize ?? Math.max(1, records.length)
  for (let k = 0; k < records.length; k += size) {
    const block = records.slice(k, k + size)
    let data = Buffer.concat(block.map(r => type.toBuffer(r)))
    if (codec === 'deflate') data = zlib.deflateRawSync(data)
    const lt = avro.Type.forSchema('long')
    parts.push(lt.toBuffer(block.length), lt.toBuffer(data.length), data, sync)
  }
  fs.writeFileSync(file, Buffer.concat(parts))
}
writeAvro(path.join(out, 'avro', 'sample.avro'), avroSchema, avroRecords)
fs.writeFileSync(path.join(out, 'avro', 'sample.expected.json'), JSON.stringify(avroExpected, null, 1))
writeAvro(path.join(out, 'avro', 'sample_deflate.avro'), avroSchema, avroRecords, { codec: 'deflate', blockSize: 2 })
fs.writeFileSync(path.join(out, 'avro', 'sample_deflate.expected.json'), JSON.stringify(avroExpected, null, 1))

// ---------------------------------------------------------------------------------------------
// Iceberg v2 table db.events, built by hand from the spec: 3 snapshots (append, append + position
// delete, equality delete), manifests and manifest lists with field ids, snapshot ids > 2^53.
// ---------------------------------------------------------------------------------------------
const tableDir = path.join(out, 'warehouse', 'db', 'events')
fs.mkdirSync(path.join(tableDir, 'metadata'), { recursive: true })
fs.mkdirSync(path.join(tableDir, 'data'), { recursive: true })
const icebergFields = [
  { id: 1, name: 'id', required: true, type: 'long', sql: 'BIGINT' },
  { id: 2, name: 'name', required: false, type: 'string', sql: 'VARCHAR' },
  { id: 3, name: 'ts', required: false, type: 'timestamp', sql: 'TIMESTAMP' },
  { id: 4, name: 'tstz', required: false, type: 'timestamptz', sql: 'TIMESTAMPTZ' },
  { id: 5, name: 'day', required: false, type: 'date', sql: 'DATE' },
  { id: 6, name: 'amount', required: false, type: 'decimal(10, 2)', sql: 'DECIMAL(10,2)' },
  { id: 7, name: 'active', required: false, type: 'boolean', sql: 'BOOLEAN' },
  { id: 8, name: 'raw', required: false, type: 'binary', sql: 'BLOB' },
  { id: 9, name: 'ratio', required: false, type: 'double', sql: 'DOUBLE' },
  { id: 10, name: 'score', required: false, type: 'float', sql: 'REAL' },
  { id: 11, name: 'n', required: false, type: 'int', sql: 'INTEGER' },
]
const icebergSchema = { type: 'struct', 'schema-id': 0, fields: icebergFields.map(({ id, name, required, type }) => ({ id, name, required, type })) }
// rows as SQL literal tuples + the `floe table scan` expected form
const tableRows = []
for (let k = 1; k <= 8; k++) {
  const micros = BigInt(k) * 3_600_000_000n + 123456n - 86_400_000_000n * 2n
  tableRows.push({
    id: k,
    sql: [`${k}::BIGINT`, k === 3 ? 'NULL' : sqlStr(`n${k}`), `make_timestamp(${micros}::BIGINT)`, `make_timestamp(${micros}::BIGINT)::TIMESTAMPTZ`,
      `(DATE '1970-01-01' + ${k * 1000 - 3000})`, `'${k * 11}.0${k}'::DECIMAL(10,2)`, k % 2 ? 'TRUE' : 'FALSE', `from_hex('0${k}ff')`,
      k === 4 ? "'NaN'::DOUBLE" : `${k}.25::DOUBLE`, `${k}.5::REAL`, k === 5 ? 'NULL' : `${-k}::INTEGER`],
    expected: null,
  })
}
async function expectedFromDuck(selectSql) {
  const r = await conn.runAndReadAll(`SELECT id, name, strftime(ts, '%Y-%m-%dT%H:%M:%S.%f') AS ts, strftime(tstz, '%Y-%m-%dT%H:%M:%S.%fZ') AS tstz, strftime(day, '%Y-%m-%d') AS day, amount::VARCHAR AS amount, active, base64(raw) AS raw, ratio, score, n FROM (${selectSql})`)
  return r.getRowObjectsJson().map(o => ({ ...o, id: Number(o.id), ratio: Number.isNaN(Number(o.ratio)) ? 'NaN' : Number(o.ratio) }))
}
const names = icebergFields.map(f => f.name)
const rowSelect = rs => rs.map(r => `SELECT ${r.sql.map((v, k) => `${v} AS ${names[k]}`).join(', ')}`).join(' UNION ALL ')
const fieldIds = icebergFields.map(f => `${f.name}: ${f.id}`).join(', ')
const dataA = path.join(tableDir, 'data', '00000-0-a.parquet')
const dataB = path.join(tableDir, 'data', '00001-0-b.parquet')
const posDel = path.join(tableDir, 'data', '00001-1-pos-deletes.parquet')
const eqDel = path.join(tableDir, 'data', '00002-0-eq-deletes.parquet')
await conn.run(`COPY (${rowSelect(tableRows.slice(0, 5))}) TO ${sqlStr(dataA)} (FORMAT parquet, COMPRESSION zstd, FIELD_IDS {${fieldIds}})`)
await conn.run(`COPY (${rowSelect(tableRows.slice(5))}) TO ${sqlStr(dataB)} (FORMAT parquet, COMPRESSION snappy, FIELD_IDS {${fieldIds}})`)
// position delete: row 1 of file A (id 2). file_path must equal the manifest's path string.
await conn.run(`COPY (SELECT ${sqlStr(dataA)} AS file_path, 1::BIGINT AS pos) TO ${sqlStr(posDel)} (FORMAT parquet, FIELD_IDS {file_path: 2147483546, pos: 2147483545})`)
// equality delete on id (field 1): id = 7 (file B, older sequence number)
await conn.run(`COPY (SELECT 7::BIGINT AS id) TO ${sqlStr(eqDel)} (FORMAT parquet, FIELD_IDS {id: 1})`)
const surviving = tableRows.filter(r => r.id !== 2 && r.id !== 7)
const expectedRows = await expectedFromDuck(rowSelect(surviving))
fs.writeFileSync(path.join(out, 'expected', 'db.events.jsonl'), expectedRows.map(r => JSON.stringify(r)).join('\n') + '\n')
fs.writeFileSync(path.join(out, 'expected', 'db.events.count'), `${expectedRows.length}\n`)

const kv = (k, v) => ({ type: 'array', logicalType: 'map', items: { type: 'record', name: `k${k}_v${v}`, fields: [{ name: 'key', type: 'int', 'field-id': k }, { name: 'value', type: v === 127 || v === 130 ? 'bytes' : 'long', 'field-id': v }] } })
const manifestEntrySchema = {
  type: 'record', name: 'manifest_entry', fields: [
    { name: 'status', type: 'int', 'field-id': 0 },
    { name: 'snapshot_id', type: ['null', 'long'], default: null, 'field-id': 1 },
    { name: 'sequence_number', type: ['null', 'long'], default: null, 'field-id': 3 },
    { name: 'file_sequence_number', type: ['null', 'long'], default: null, 'field-id': 4 },
    { name: 'data_file', 'field-id': 2, type: { type: 'record', name: 'r2', fields: [
      { name: 'content', type: 'int', 'field-id': 134 },
      { name: 'file_path', type: 'string', 'field-id': 100 },
      { name: 'file_format', type: 'string', 'field-id': 101 },
      { name: 'partition', type: { type: 'record', name: 'r102', fields: [] }, 'field-id': 102 },
      { name: 'record_count', type: 'long', 'field-id': 103 },
      { name: 'file_size_in_bytes', type: 'long', 'field-id': 104 },
      { name: 'column_sizes', type: ['null', kv(117, 118)], default: null, 'field-id': 108 },
      { name: 'value_counts', type: ['null', kv(119, 120)], default: null, 'field-id': 109 },
      { name: 'null_value_counts', type: ['null', kv(121, 122)], default: null, 'field-id': 110 },
      { name: 'nan_value_counts', type: ['null', kv(138, 139)], default: null, 'field-id': 137 },
      { name: 'lower_bounds', type: ['null', kv(126, 127)], default: null, 'field-id': 125 },
      { name: 'upper_bounds', type: ['null', kv(129, 130)], default: null, 'field-id': 128 },
      { name: 'key_metadata', type: ['null', 'bytes'], default: null, 'field-id': 131 },
      { name: 'split_offsets', type: ['null', { type: 'array', items: 'long', 'element-id': 133 }], default: null, 'field-id': 132 },
      { name: 'equality_ids', type: ['null', { type: 'array', items: 'int', 'element-id': 136 }], default: null, 'field-id': 135 },
      { name: 'sort_order_id', type: ['null', 'int'], default: null, 'field-id': 140 },
    ] } },
  ],
}
const manifestFileSchema = {
  type: 'record', name: 'manifest_file', fields: [
    { name: 'manifest_path', type: 'string', 'field-id': 500 },
    { name: 'manifest_length', type: 'long', 'field-id': 501 },
    { name: 'partition_spec_id', type: 'int', 'field-id': 502 },
    { name: 'content', type: 'int', 'field-id': 517 },
    { name: 'sequence_number', type: 'long', 'field-id': 515 },
    { name: 'min_sequence_number', type: 'long', 'field-id': 516 },
    { name: 'added_snapshot_id', type: 'long', 'field-id': 503 },
    { name: 'added_files_count', type: 'int', 'field-id': 504 },
    { name: 'existing_files_count', type: 'int', 'field-id': 505 },
    { name: 'deleted_files_count', type: 'int', 'field-id': 506 },
    { name: 'added_rows_count', type: 'long', 'field-id': 512 },
    { name: 'existing_rows_count', type: 'long', 'field-id': 513 },
    { name: 'deleted_rows_count', type: 'long', 'field-id': 514 },
    { name: 'partitions', type: ['null', { type: 'array', 'element-id': 508, items: { type: 'record', name: 'r508', fields: [
      { name: 'contains_null', type: 'boolean', 'field-id': 509 },
      { name: 'contains_nan', type: ['null', 'boolean'], default: null, 'field-id': 518 },
      { name: 'lower_bound', type: ['null', 'bytes'], default: null, 'field-id': 510 },
      { name: 'upper_bound', type: ['null', 'bytes'], default: null, 'field-id': 511 },
    ] } }], default: null, 'field-id': 507 },
    { name: 'key_metadata', type: ['null', 'bytes'], default: null, 'field-id': 519 },
  ],
}
const snapIds = [7263512938475629183n, 9007199254740993n, 5555555555555555555n]
const dataFile = (content, file, count, extra = {}) => ({
  content, file_path: file, file_format: 'PARQUET', partition: {}, record_count: BigInt(count), file_size_in_bytes: BigInt(fs.statSync(file).size),
  column_sizes: null, value_counts: null, null_value_counts: null, nan_value_counts: null, lower_bounds: null, upper_bounds: null,
  key_metadata: null, split_offsets: null, equality_ids: null, sort_order_id: content === 0 ? 0 : null, ...extra,
})
const manifestMeta = content => ({
  schema: JSON.stringify(icebergSchema), 'schema-id': '0', 'partition-spec': '[]', 'partition-spec-id': '0', 'format-version': '2', content,
})
const metaDir = path.join(tableDir, 'metadata')
function writeManifest(name, content, entries) {
  const file = path.join(metaDir, name)
  writeAvro(file, manifestEntrySchema, entries, { meta: manifestMeta(content) })
  return file
}
// snapshot 1: append A (sequence number inherited: null in the entry)
const m1 = writeManifest('m1-m0.avro', 'data', [{ status: 1, snapshot_id: snapIds[0], sequence_number: null, file_sequence_number: null, data_file: dataFile(0, dataA, 5) }])
// snapshot 2: append B + position delete in a separate delete manifest
const m2 = writeManifest('m2-m0.avro', 'data', [{ status: 1, snapshot_id: snapIds[1], sequence_number: null, file_sequence_number: null, data_file: dataFile(0, dataB, 3) }])
const m2d = writeManifest('m2-m1.avro', 'deletes', [{ status: 1, snapshot_id: snapIds[1], sequence_number: null, file_sequence_number: null, data_file: dataFile(1, posDel, 1) }])
// snapshot 3: equality delete on id
const m3d = writeManifest('m3-m0.avro', 'deletes', [{ status: 1, snapshot_id: snapIds[2], sequence_number: null, file_sequence_number: null, data_file: dataFile(2, eqDel, 1, { equality_ids: [1] }) }])
const mf = (file, content, seq, minSeq, snap, rowsAdded) => ({
  manifest_path: file, manifest_length: BigInt(fs.statSync(file).size), partition_spec_id: 0, content, sequence_number: BigInt(seq), min_sequence_number: BigInt(minSeq),
  added_snapshot_id: snap, added_files_count: 1, existing_files_count: 0, deleted_files_count: 0, added_rows_count: BigInt(rowsAdded), existing_rows_count: 0n, deleted_rows_count: 0n,
  partitions: [], key_metadata: null,
})
const lists = [
  [mf(m1, 0, 1, 1, snapIds[0], 5)],
  [mf(m2, 0, 2, 2, snapIds[1], 3), mf(m2d, 1, 2, 2, snapIds[1], 1), mf(m1, 0, 1, 1, snapIds[0], 5)],
  [mf(m3d, 1, 3, 3, snapIds[2], 1), mf(m2, 0, 2, 2, snapIds[1], 3), mf(m2d, 1, 2, 2, snapIds[1], 1), mf(m1, 0, 1, 1, snapIds[0], 5)],
]
const listFiles = lists.map((l, k) => {
  const file = path.join(metaDir, `snap-${snapIds[k]}-1-list${k}.avro`)
  writeAvro(file, manifestFileSchema, l, { codec: k === 2 ? 'deflate' : 'null', meta: { 'snapshot-id': String(snapIds[k]), 'parent-snapshot-id': k ? String(snapIds[k - 1]) : 'null', 'sequence-number': String(k + 1), 'format-version': '2' } })
  return file
})
// Table metadata JSON with snapshot ids written as raw 64-bit integers (JSON.stringify can't).
const snapshots = snapIds.map((id, k) => ({
  'snapshot-id': `@@${id}@@`, ...(k ? { 'parent-snapshot-id': `@@${snapIds[k - 1]}@@` } : {}), 'sequence-number': k + 1, 'timestamp-ms': 1700000000000 + k,
  'manifest-list': 'file://' + listFiles[k], summary: { operation: k === 0 ? 'append' : k === 1 ? 'overwrite' : 'delete' }, 'schema-id': 0,
}))
function metadataJson(nSnap) {
  const meta = {
    'format-version': 2, 'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1', location: tableDir, 'last-sequence-number': nSnap, 'last-updated-ms': 1700000000000 + nSnap,
    'last-column-id': 11, 'current-schema-id': 0, schemas: [icebergSchema], 'default-spec-id': 0, 'partition-specs': [{ 'spec-id': 0, fields: [] }], 'last-partition-id': 999,
    'default-sort-order-id': 0, 'sort-orders': [{ 'order-id': 0, fields: [] }], properties: {},
    'current-snapshot-id': nSnap ? `@@${snapIds[nSnap - 1]}@@` : -1, refs: nSnap ? { main: { 'snapshot-id': `@@${snapIds[nSnap - 1]}@@`, type: 'branch' } } : {},
    snapshots: snapshots.slice(0, nSnap), 'snapshot-log': [], 'metadata-log': [],
  }
  return JSON.stringify(meta, null, 2).replace(/"@@(\d+)@@"/g, '$1')
}
for (let v = 1; v <= 4; v++) fs.writeFileSync(path.join(metaDir, `v${v}.metadata.json`), metadataJson(v - 1))
fs.writeFileSync(path.join(metaDir, 'version-hint.text'), '4\n')

console.log(`fixtures written to ${out}`)
