// Avro checks:
//  1. every $FLOE_INTEROP_DIR/avro/<name>.avro with <name>.expected.json decodes (avsc Types on
//     blocks parsed here, and avsc's own createFileDecoder) to exactly the expected records;
//  2. every Avro file there and every Iceberg manifest / manifest list under
//     $FLOE_INTEROP_DIR/warehouse/**/metadata/ carries Iceberg ids in its RAW header schema
//     (field-id on record fields, element-id on arrays, key-id/value-id on maps);
//  3. Iceberg manifests carry the v2 header keys, the spec's field ids, and decode completely,
//     with avsc AND with icebird's own Avro reader (the one icebird uses for manifests).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { avroMetadata, avroRead } from 'icebird'
import { filesWithSuffix, firstDiff, floatCanon, interopDir, show, toHex, walk } from './lib/common.mjs'
import { decodeWithAvscStream, missingIds, readAvroContainer } from './lib/avro.mjs'

let root
try {
  root = interopDir()
} catch (e) {
  test('FLOE_INTEROP_DIR', () => assert.fail(e.message))
}

/** avsc-decoded value -> expected.json convention (longs as strings, bytes/fixed as hex). */
function canon(v) {
  if (v === null || v === undefined) return null
  if (typeof v === 'bigint') return String(v)
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return toHex(v)
  if (typeof v === 'number') return floatCanon(v)
  if (Array.isArray(v)) return v.map(canon)
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canon(x)]))
  return v
}

/**
 * icebird's avroRead value -> same convention, guided by the writer schema (icebird returns
 * undefined for null, Date for date/timestamp logical types, Number for decimals).
 * Logical types are projected from the avsc value to what icebird can represent.
 */
function compareIcebird(schema, avscVal, iceVal, at, named, errors) {
  if (errors.length > 5) return
  const fail = msg => errors.push(`${at}: ${msg}`)
  if (typeof schema === 'string' && named.has(schema)) schema = named.get(schema)
  if (Array.isArray(schema)) {
    // unions: avsc (wrapUnions false) and icebird both return the plain branch value
    if (avscVal === null) {
      if (iceVal !== undefined && iceVal !== null) fail(`expected null, icebird gave ${show(iceVal)}`)
      return
    }
    const branches = schema.filter(b => b !== 'null')
    if (branches.length !== 1) {
      if (firstDiff(canon(avscVal), canon(iceVal))) fail(`union value differs: avsc ${show(canon(avscVal))}, icebird ${show(canon(iceVal))}`)
      return
    }
    return compareIcebird(branches[0], avscVal, iceVal, at, named, errors)
  }
  if (typeof schema === 'object') {
    if (schema.type === 'record') {
      if (schema.name) named.set(schema.name, schema)
      for (const f of schema.fields) compareIcebird(f.type, avscVal[f.name], iceVal?.[f.name], `${at}.${f.name}`, named, errors)
      return
    }
    if (schema.type === 'array') {
      if (!Array.isArray(iceVal) || iceVal.length !== avscVal.length) return fail(`array of ${avscVal.length}, icebird gave ${show(iceVal)}`)
      avscVal.forEach((x, k) => compareIcebird(schema.items, x, iceVal[k], `${at}[${k}]`, named, errors))
      return
    }
    if (schema.logicalType === 'date') {
      if (!(iceVal instanceof Date) || iceVal.getTime() !== avscVal * 86400000) fail(`date ${avscVal}, icebird gave ${show(iceVal)}`)
      return
    }
    if (schema.logicalType === 'timestamp-micros' || schema.logicalType === 'timestamptz-micros') {
      if (!(iceVal instanceof Date) || iceVal.getTime() !== Number(BigInt(avscVal) / 1000n)) fail(`timestamp ${avscVal}, icebird gave ${show(iceVal)}`)
      return
    }
    if (schema.logicalType === 'decimal') {
      return // icebird turns it into a lossy Number; exactness is checked by avsc above
    }
    return compareIcebird(schema.type, avscVal, iceVal, at, named, errors)
  }
  const d = firstDiff(canon(avscVal), canon(iceVal))
  if (d) fail(`avsc ${show(d.expected)}, icebird ${show(d.got)}`)
}

/** Decode with icebird's Avro reader exactly as icebird does for manifests (fetch.js). */
function decodeWithIcebird(file) {
  const buf = fs.readFileSync(file)
  const reader = { view: new DataView(buf.buffer, buf.byteOffset, buf.byteLength), offset: 0 }
  const { metadata, syncMarker } = avroMetadata(reader)
  return avroRead({ reader, metadata, syncMarker })
}

// -------------------------------------------------------------------------------------------
// 1 + 2: $FLOE_INTEROP_DIR/avro
// -------------------------------------------------------------------------------------------
const avroDir = root && path.join(root, 'avro')
const avroFiles = root ? filesWithSuffix(avroDir, '.avro') : []
const metadataAvro = root
  ? walk(path.join(root, 'warehouse'), p => p.endsWith('.avro') && path.basename(path.dirname(p)) === 'metadata')
  : []

if (root) {
  test('there are Avro files to check', () => {
    assert.ok(avroFiles.length + metadataAvro.length > 0,
      `no *.avro in ${avroDir} and no manifests under ${path.join(root, 'warehouse')}/**/metadata: a run that checks nothing must not pass`)
  })
}

for (const file of avroFiles) {
  const name = path.basename(file, '.avro')
  test(`avro ${name}`, async t => {
    const c = readAvroContainer(file)
    const problems = missingIds(c.schema)
    assert.deepEqual(problems, [], `${file}: Iceberg ids missing from the header schema:\n${problems.join('\n')}`)
    const stream = await decodeWithAvscStream(file)
    assert.equal(stream.records.length, c.records.length, `${file}: avsc createFileDecoder read ${stream.records.length} records, block parse read ${c.records.length}`)
    const expFile = path.join(avroDir, `${name}.expected.json`)
    if (!fs.existsSync(expFile)) {
      t.diagnostic(`${name}: no ${name}.expected.json, only ids and decoding were checked`)
      return
    }
    const expected = JSON.parse(fs.readFileSync(expFile, 'utf8'))
    assert.ok(Array.isArray(expected), `${expFile}: expected a JSON array`)
    assert.equal(c.records.length, expected.length, `${file}: ${c.records.length} records, expected ${expected.length}`)
    for (const [reader, records] of [['avsc(blocks)', c.records], ['avsc(createFileDecoder)', stream.records]]) {
      for (let r = 0; r < records.length; r++) {
        const d = firstDiff(expected[r], canon(records[r]))
        if (d) assert.fail(`${file}: record ${r}, field ${d.at}, reader ${reader}: expected ${show(d.expected)}, got ${show(d.got)}`)
      }
    }
    t.diagnostic(`${name}: codec ${c.codec}, ${c.blocks.length} block(s), ${c.records.length} record(s)`)
  })
}

// -------------------------------------------------------------------------------------------
// 3: Iceberg manifests and manifest lists
// -------------------------------------------------------------------------------------------
// Field ids fixed by the Iceberg spec (names: spec name | Java's v2 name).
const LIST_IDS = {
  manifest_path: 500, manifest_length: 501, partition_spec_id: 502, content: 517, sequence_number: 515,
  min_sequence_number: 516, added_snapshot_id: 503, added_files_count: 504, added_data_files_count: 504,
  existing_files_count: 505, existing_data_files_count: 505, deleted_files_count: 506, deleted_data_files_count: 506,
  added_rows_count: 512, existing_rows_count: 513, deleted_rows_count: 514, partitions: 507, key_metadata: 519, first_row_id: 520,
}
const LIST_REQUIRED = ['manifest_path', 'manifest_length', 'partition_spec_id', 'content', 'sequence_number', 'min_sequence_number', 'added_snapshot_id']
const ENTRY_IDS = { status: 0, snapshot_id: 1, sequence_number: 3, file_sequence_number: 4, data_file: 2 }
const DATA_FILE_IDS = {
  content: 134, file_path: 100, file_format: 101, partition: 102, record_count: 103, file_size_in_bytes: 104,
  column_sizes: 108, value_counts: 109, null_value_counts: 110, nan_value_counts: 137, lower_bounds: 125, upper_bounds: 128,
  key_metadata: 131, split_offsets: 132, equality_ids: 135, sort_order_id: 140, first_row_id: 142, referenced_data_file: 143,
  content_offset: 144, content_size_in_bytes: 145,
}
const DATA_FILE_REQUIRED = ['content', 'file_path', 'file_format', 'partition', 'record_count', 'file_size_in_bytes']

function idProblems(fields, table, required, where) {
  const p = []
  const byName = new Map(fields.map(f => [f.name, f]))
  for (const r of required) if (!byName.has(r)) p.push(`${where}: required field ${r} is missing`)
  for (const f of fields) {
    if (f.name in table && f['field-id'] !== table[f.name]) p.push(`${where}.${f.name}: field-id ${f['field-id']}, the spec says ${table[f.name]}`)
  }
  return p
}

for (const file of metadataAvro) {
  const rel = path.relative(root, file)
  test(`iceberg metadata ${rel}`, () => {
    const c = readAvroContainer(file)
    const top = c.schema
    assert.equal(top?.type, 'record', `${rel}: top-level schema is not a record`)
    const names = top.fields.map(f => f.name)
    const kind = names.includes('manifest_path') ? 'manifest-list' : names.includes('data_file') ? 'manifest' : 'unknown'
    assert.notEqual(kind, 'unknown', `${rel}: neither a manifest (data_file) nor a manifest list (manifest_path): fields ${names.join(', ')}`)
    const base = path.basename(file)
    if (kind === 'manifest-list' && !base.startsWith('snap-')) assert.fail(`${rel}: manifest list not named snap-*.avro`)

    const problems = missingIds(top)
    if (kind === 'manifest-list') {
      problems.push(...idProblems(top.fields, LIST_IDS, LIST_REQUIRED, 'manifest_file'))
    } else {
      problems.push(...idProblems(top.fields, ENTRY_IDS, ['status', 'data_file'], 'manifest_entry'))
      const df = top.fields.find(f => f.name === 'data_file')
      if (df?.type?.type !== 'record') problems.push('manifest_entry.data_file: not an inline record type')
      else problems.push(...idProblems(df.type.fields, DATA_FILE_IDS, DATA_FILE_REQUIRED, 'data_file'))
      // v2 manifest header key-value metadata
      for (const k of ['schema', 'schema-id', 'partition-spec', 'partition-spec-id', 'format-version', 'content']) {
        if (c.meta[k] === undefined) problems.push(`header: key ${k} missing`)
      }
      if (c.meta['format-version'] !== undefined && c.meta['format-version'] !== '2') problems.push(`header: format-version ${c.meta['format-version']}, expected 2`)
      if (c.meta.content !== undefined && !['data', 'deletes'].includes(c.meta.content)) problems.push(`header: content ${c.meta.content}, expected data or deletes`)
      try {
        const s = JSON.parse(c.meta.schema)
        if (s.type !== 'struct' || !Array.isArray(s.fields)) problems.push('header: schema is not an Iceberg struct')
        if (c.meta['schema-id'] !== undefined && String(s['schema-id']) !== c.meta['schema-id']) problems.push(`header: schema's schema-id ${s['schema-id']} != schema-id ${c.meta['schema-id']}`)
      } catch (e) {
        if (c.meta.schema !== undefined) problems.push(`header: schema is not JSON: ${e.message}`)
      }
      try {
        if (c.meta['partition-spec'] !== undefined && !Array.isArray(JSON.parse(c.meta['partition-spec']))) problems.push('header: partition-spec is not a JSON array of fields')
      } catch (e) {
        problems.push(`header: partition-spec is not JSON: ${e.message}`)
      }
      if (!/^\d+$/.test(c.meta['partition-spec-id'] ?? '0')) problems.push(`header: partition-spec-id ${c.meta['partition-spec-id']} is not an integer`)
      const wantContent = c.meta.content === 'deletes' ? [1, 2] : [0]
      for (const [k, r] of c.records.entries()) {
        if (!wantContent.includes(r.data_file?.content)) problems.push(`record ${k}: data_file.content ${r.data_file?.content} in a "${c.meta.content}" manifest`)
      }
    }
    if (c.meta['avro.codec'] === undefined) problems.push('header: avro.codec missing (icebird throws "unsupported codec: undefined"; write "null" explicitly)')
    else if (!['null', 'deflate'].includes(c.meta['avro.codec'])) problems.push(`header: avro.codec ${c.meta['avro.codec']} (icebird reads only null and deflate)`)
    if (problems.length) assert.fail(`${rel} (${kind}):\n${problems.join('\n')}`)

    // every record decodes with icebird's reader, to the same values avsc gives
    let ice
    try {
      ice = decodeWithIcebird(file)
    } catch (e) {
      assert.fail(`${rel}: icebird's Avro reader failed: ${e.message} (codec ${c.codec}, block sizes ${c.blocks.map(b => b.size).join(',')})`)
    }
    assert.equal(ice.length, c.records.length, `${rel}: icebird's Avro reader decoded ${ice.length} records, avsc ${c.records.length}`)
    const errors = []
    for (let r = 0; r < ice.length; r++) compareIcebird(top, c.records[r], ice[r], `${rel} record ${r}`, new Map(), errors)
    if (errors.length) assert.fail(errors.join('\n'))
  })
}
