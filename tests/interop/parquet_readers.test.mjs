// Reads every $FLOE_INTEROP_DIR/parquet/<name>.parquet with two independent Parquet decoders
// (hyparquet + hyparquet-compressors, and parquet-wasm = arrow-rs compiled to wasm, converted to
// JS through Arrow IPC + apache-arrow) and checks rows, values, types and field ids against
// <name>.expected.jsonl and <name>.schema.json. See README.md for the conventions.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import * as parquetWasm from 'parquet-wasm'
import { tableFromIPC } from 'apache-arrow'
import { filesWithSuffix, firstDiff, interopDir, readJsonl, sameValue, show } from './lib/common.mjs'
import { arrowRaw, canonFromArrow, canonFromHyparquet, exactParsers, lossyFromDefault, lossyFromExact, parseType } from './lib/values.mjs'

let dir
let files = []
try {
  dir = path.join(interopDir(), 'parquet')
  files = filesWithSuffix(dir, '.parquet')
} catch (e) {
  test('FLOE_INTEROP_DIR', () => assert.fail(e.message))
}

if (dir) {
  test('parquet directory has files to check', () => {
    assert.ok(files.length > 0, `no *.parquet files in ${dir}: a run that checks nothing must not pass`)
  })
}

const MAX_REPORTED = 5

for (const file of files) {
  const name = path.basename(file, '.parquet')
  test(`parquet ${name}`, async t => {
    const expFile = path.join(dir, `${name}.expected.jsonl`)
    const schemaFile = path.join(dir, `${name}.schema.json`)
    assert.ok(fs.existsSync(expFile), `${name}: missing ${expFile}`)
    assert.ok(fs.existsSync(schemaFile), `${name}: missing ${schemaFile}`)
    const schema = JSON.parse(fs.readFileSync(schemaFile, 'utf8'))
    assert.ok(Array.isArray(schema) && schema.length > 0, `${schemaFile}: expected a non-empty array`)
    const cols = schema.map(c => ({ ...c, t: parseType(c.type) }))
    const expected = readJsonl(expFile)
    for (const [k, row] of expected.entries()) {
      const keys = Object.keys(row)
      assert.deepEqual(keys.slice().sort(), cols.map(c => c.name).sort(), `${expFile}: line ${k + 1} keys ${show(keys)} do not match schema.json`)
    }
    const bytes = fs.readFileSync(file)
    const arrayBuffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)

    const compare = (reader, rows, canon) => {
      assert.equal(rows.length, expected.length, `${name}: ${reader} read ${rows.length} rows, expected ${expected.length}`)
      const errors = []
      for (let r = 0; r < rows.length && errors.length < MAX_REPORTED; r++) {
        for (const c of cols) {
          let got
          try {
            got = canon(c, rows[r], r)
          } catch (e) {
            errors.push(`${name}: row ${r}, column ${c.name} (${c.type}), reader ${reader}: ${e.message}; raw value ${show(rows[r]?.[c.name])}`)
            continue
          }
          const exp = expected[r][c.name]
          if (!sameValue(exp, got)) {
            errors.push(`${name}: row ${r}, column ${c.name} (${c.type}), reader ${reader}: expected ${show(exp)}, got ${show(got)}`)
          }
        }
      }
      if (errors.length) assert.fail(errors.join('\n'))
    }

    // ---- schema and field ids, as hyparquet parses the footer ----
    const meta = parquetMetadata(arrayBuffer)
    await t.test('hyparquet: footer schema, field ids, annotations', () => {
      assert.equal(Number(meta.num_rows), expected.length, `${name}: footer num_rows ${meta.num_rows}, expected ${expected.length} rows`)
      const [root, ...elements] = meta.schema
      assert.equal(root.num_children, cols.length, `${name}: root has ${root.num_children} children, schema.json has ${cols.length} columns`)
      assert.equal(elements.length, cols.length, `${name}: nested columns are not covered by this test`)
      const problems = []
      for (const [k, c] of cols.entries()) {
        const e = elements[k]
        const where = `${name}: column ${k} ${c.name}`
        if (e.name !== c.name) problems.push(`${where}: Parquet name is ${e.name}`)
        if (e.field_id !== c.field_id) problems.push(`${where}: field_id ${e.field_id}, expected ${c.field_id}`)
        const rep = c.nullable ? 'OPTIONAL' : 'REQUIRED'
        if (e.repetition_type !== rep) problems.push(`${where}: repetition ${e.repetition_type}, expected ${rep}`)
        problems.push(...annotationProblems(where, c.t, e))
      }
      if (problems.length) assert.fail(problems.join('\n'))
      const codecs = new Set(meta.row_groups.flatMap(g => g.columns.map(col => col.meta_data?.codec)))
      t.diagnostic(`${name}: ${meta.row_groups.length} row group(s), codecs ${[...codecs].join(',')}, created_by ${meta.created_by}`)
    })

    // ---- hyparquet values, exact: raw timestamps/dates/decimals, binary kept as bytes ----
    await t.test('hyparquet: values', async () => {
      const stripped = {
        ...meta,
        schema: meta.schema.map(e => (e.converted_type === 'DECIMAL' || e.logical_type?.type === 'DECIMAL'
          ? { ...e, converted_type: undefined, logical_type: undefined }
          : e)),
      }
      const rows = await parquetReadObjects({ file: arrayBuffer, metadata: stripped, compressors, utf8: false, parsers: exactParsers })
      compare('hyparquet', rows, (c, row) => canonFromHyparquet(c.t, row[c.name]))
    })

    // ---- hyparquet with its default conversions (what icebird sees) ----
    await t.test('hyparquet: default conversions (icebird path)', async () => {
      const rows = await parquetReadObjects({ file: arrayBuffer, compressors })
      assert.equal(rows.length, expected.length, `${name}: hyparquet(default) read ${rows.length} rows, expected ${expected.length}`)
      const errors = []
      for (let r = 0; r < rows.length && errors.length < MAX_REPORTED; r++) {
        for (const c of cols) {
          const exp = lossyFromExact(c.t, expected[r][c.name], { decimalByDivision: true })
          let got
          try {
            got = lossyFromDefault(c.t, rows[r][c.name])
          } catch (e) {
            errors.push(`${name}: row ${r}, column ${c.name} (${c.type}), reader hyparquet(default): ${e.message}`)
            continue
          }
          const d = firstDiff(exp, got)
          if (d) errors.push(`${name}: row ${r}, column ${c.name} (${c.type}), reader hyparquet(default): expected ${show(exp)}, got ${show(got)}`)
        }
      }
      if (errors.length) assert.fail(errors.join('\n'))
    })

    // ---- parquet-wasm (arrow-rs) -> Arrow IPC -> apache-arrow ----
    await t.test('parquet-wasm: schema, field ids, values', () => {
      const wasmTable = parquetWasm.readParquet(new Uint8Array(bytes))
      const table = tableFromIPC(wasmTable.intoIPCStream())
      assert.equal(table.numRows, expected.length, `${name}: parquet-wasm read ${table.numRows} rows, expected ${expected.length}`)
      const fields = table.schema.fields
      assert.deepEqual(fields.map(f => f.name), cols.map(c => c.name), `${name}: parquet-wasm column names`)
      const problems = []
      for (const [k, c] of cols.entries()) {
        const id = fields[k].metadata.get('PARQUET:field_id')
        if (id !== String(c.field_id)) problems.push(`${name}: column ${c.name}: parquet-wasm PARQUET:field_id ${id}, expected ${c.field_id}`)
        if (fields[k].nullable !== c.nullable) problems.push(`${name}: column ${c.name}: parquet-wasm nullable ${fields[k].nullable}, expected ${c.nullable}`)
      }
      if (problems.length) assert.fail(problems.join('\n'))
      const vectors = cols.map(c => table.getChild(c.name))
      const rows = { length: table.numRows }
      compare('parquet-wasm', rows, (c, _row, r) => canonFromArrow(c.t, arrowRaw(vectors[cols.indexOf(c)], r)))
    })
  })
}

/** Iceberg spec "Parquet" type mapping, plus what hyparquet needs to decode values faithfully. */
function annotationProblems(where, t, e) {
  const p = []
  const lt = e.logical_type
  const want = (cond, msg) => { if (!cond) p.push(`${where}: ${msg} (physical ${e.type}, converted_type ${e.converted_type}, logical_type ${show(lt)})`) }
  switch (t.kind) {
    case 'boolean': want(e.type === 'BOOLEAN', 'boolean must be BOOLEAN'); break
    case 'int': want(e.type === 'INT32' && (!lt || (lt.type === 'INTEGER' && lt.bitWidth === 32 && lt.isSigned)) && (!e.converted_type || e.converted_type === 'INT_32'), 'int must be plain or signed INT32'); break
    case 'long': want(e.type === 'INT64' && (!lt || (lt.type === 'INTEGER' && lt.bitWidth === 64 && lt.isSigned)) && (!e.converted_type || e.converted_type === 'INT_64'), 'long must be plain or signed INT64'); break
    case 'float': want(e.type === 'FLOAT', 'float must be FLOAT'); break
    case 'double': want(e.type === 'DOUBLE', 'double must be DOUBLE'); break
    case 'string': want(e.type === 'BYTE_ARRAY' && (e.converted_type === 'UTF8' || lt?.type === 'STRING'), 'string must be BYTE_ARRAY annotated UTF8/STRING'); break
    case 'binary': want(e.type === 'BYTE_ARRAY' && !e.converted_type && !lt, 'binary must be un-annotated BYTE_ARRAY'); break
    case 'date':
      want(e.type === 'INT32' && e.converted_type === 'DATE', 'date must be INT32 with converted_type DATE (hyparquet only looks at converted_type for dates)')
      break
    case 'time':
      want(e.type === 'INT64' && lt?.type === 'TIME' && lt.unit === 'MICROS' && lt.isAdjustedToUTC === false,
        'time must be INT64 with logical type TIME(isAdjustedToUTC=false, MICROS)')
      if (e.converted_type !== undefined) want(e.converted_type === 'TIME_MICROS', 'converted_type, if set, must be TIME_MICROS')
      break
    case 'timestamp': case 'timestamptz': {
      const utc = t.kind === 'timestamptz'
      want(e.type === 'INT64', `${t.kind} must be INT64`)
      want(lt?.type === 'TIMESTAMP' && lt.unit === 'MICROS' && lt.isAdjustedToUTC === utc, `${t.kind} must have logical type TIMESTAMP(isAdjustedToUTC=${utc}, MICROS)`)
      if (e.converted_type !== undefined) want(e.converted_type === 'TIMESTAMP_MICROS', 'converted_type, if set, must be TIMESTAMP_MICROS')
      break
    }
    case 'decimal': {
      const minBytes = decimalMinBytes(t.precision)
      want(e.converted_type === 'DECIMAL' && e.precision === t.precision && (e.scale ?? 0) === t.scale,
        `decimal(${t.precision}, ${t.scale}) needs converted_type DECIMAL with precision/scale set (hyparquet only converts on converted_type)`)
      if (lt) want(lt.type === 'DECIMAL' && lt.precision === t.precision && lt.scale === t.scale, 'logical type must match decimal precision/scale')
      want((e.type === 'INT32' && t.precision <= 9) || (e.type === 'INT64' && t.precision <= 18) ||
        (e.type === 'FIXED_LEN_BYTE_ARRAY' && e.type_length === minBytes),
      `decimal(${t.precision}, ${t.scale}) must be INT32 (P<=9), INT64 (P<=18) or FIXED_LEN_BYTE_ARRAY(${minBytes})`)
      break
    }
  }
  return p
}

/** Minimum bytes for a two's-complement decimal of `precision` digits (Iceberg spec). */
function decimalMinBytes(precision) {
  const max = 10n ** BigInt(precision) - 1n
  let n = 1
  while ((1n << BigInt(8 * n - 1)) <= max) n++
  return n
}
