// Avro container reading for the interop tests: the header is parsed here so that the RAW
// `avro.schema` JSON (with Iceberg's field-id / element-id / key-id / value-id, which avsc's own
// schema export drops) is available; record blocks are decoded with avsc Types.
import fs from 'node:fs'
import zlib from 'node:zlib'
import avro from 'avsc'

/** A long type that decodes to BigInt (avsc's default throws on longs beyond 2^53). */
export function bigLongType() {
  return avro.types.LongType.__with({
    fromBuffer: buf => buf.readBigInt64LE(0),
    toBuffer: n => {
      const buf = Buffer.alloc(8)
      buf.writeBigInt64LE(BigInt(n))
      return buf
    },
    fromJSON: x => BigInt(x),
    toJSON: n => String(n),
    isValid: n => typeof n === 'bigint' || Number.isSafeInteger(n),
    compare: (a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0),
  })
}

const HEADER_TYPE = avro.Type.forSchema({
  type: 'record', name: 'org.apache.avro.file.Header', fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } },
  ],
})
const LONG = avro.Type.forSchema('long')

/** avsc Type for a writer schema, with BigInt longs and plain (unwrapped) unions. */
export function typeForSchema(schema) {
  // Longs written in object form ({"type":"long","logicalType":...}) bypass the registry.
  const longType = bigLongType()
  return avro.Type.forSchema(schema, {
    registry: { long: longType },
    wrapUnions: false,
    typeHook: (s) => (s && typeof s === 'object' && s.type === 'long' ? longType : undefined),
  })
}

/**
 * Parse an Avro object container file.
 * @returns {{ meta: Record<string,string>, schemaText: string, schema: any, codec: string,
 *   blocks: {count:number, size:number}[], records: any[] }}
 */
export function readAvroContainer(file) {
  const buf = fs.readFileSync(file)
  if (buf.length < 4 || buf.subarray(0, 4).toString('binary') !== 'Obj\x01') throw new Error(`${file}: not an Avro container (bad magic)`)
  const { value: header, offset: headerEnd } = HEADER_TYPE.decode(buf, 0)
  if (headerEnd < 0) throw new Error(`${file}: truncated Avro header`)
  const meta = {}
  for (const [k, v] of Object.entries(header.meta)) meta[k] = v.toString('utf8')
  const schemaText = meta['avro.schema']
  if (schemaText === undefined) throw new Error(`${file}: header has no avro.schema`)
  const schema = JSON.parse(schemaText)
  const codec = meta['avro.codec'] ?? 'null'
  const type = typeForSchema(schema)
  const records = []
  const blocks = []
  let pos = headerEnd
  while (pos < buf.length) {
    const c = LONG.decode(buf, pos)
    if (c.offset < 0) throw new Error(`${file}: truncated block count at byte ${pos}`)
    const s = LONG.decode(buf, c.offset)
    if (s.offset < 0) throw new Error(`${file}: truncated block size at byte ${c.offset}`)
    const count = c.value
    const size = s.value
    const dataStart = s.offset
    if (count < 0 || size < 0 || dataStart + size + 16 > buf.length) throw new Error(`${file}: bad block at byte ${pos} (count ${count}, size ${size})`)
    let data = buf.subarray(dataStart, dataStart + size)
    const sync = buf.subarray(dataStart + size, dataStart + size + 16)
    if (!sync.equals(header.sync)) throw new Error(`${file}: sync marker mismatch after block at byte ${pos}`)
    if (codec === 'deflate') data = zlib.inflateRawSync(data)
    else if (codec !== 'null') throw new Error(`${file}: codec ${codec} not supported by this test`)
    let p = 0
    for (let k = 0; k < count; k++) {
      const r = type.decode(data, p)
      if (r.offset < 0) throw new Error(`${file}: record ${records.length} runs past the end of its block`)
      records.push(r.value)
      p = r.offset
    }
    if (p !== data.length) throw new Error(`${file}: block at byte ${pos} has ${data.length - p} trailing bytes after ${count} records`)
    blocks.push({ count, size })
    pos = dataStart + size + 16
  }
  return { meta, schemaText, schema, codec, blocks, records }
}

/** Decode the same file through avsc's own container decoder (a second, independent path). */
export function decodeWithAvscStream(file) {
  return new Promise((resolve, reject) => {
    const records = []
    let rawSchema
    avro.createFileDecoder(file, {
      parseHook: schema => {
        rawSchema = schema
        return typeForSchema(schema)
      },
    })
      .on('data', r => records.push(r))
      .on('error', reject)
      .on('end', () => resolve({ records, rawSchema }))
  })
}

/**
 * Walk a raw Avro schema and report every place where an Iceberg id is missing.
 * Records' fields need integer `field-id`; arrays `element-id`; maps `key-id` and `value-id`.
 * Iceberg's map encoding for non-string keys (array of key/value records, logicalType "map")
 * counts as a map: its key/value record fields carry field-id (checked as record fields).
 */
export function missingIds(schema, where = '$', named = new Map()) {
  const problems = []
  const isInt = v => Number.isInteger(v)
  const visit = (t, at) => {
    if (typeof t === 'string') {
      return // primitive or a reference to a named type already visited
    }
    if (Array.isArray(t)) {
      t.forEach((b, k) => visit(b, `${at}|${k}`))
      return
    }
    if (t === null || typeof t !== 'object') {
      problems.push(`${at}: not a schema`)
      return
    }
    switch (t.type) {
      case 'record': case 'error':
        if (t.name) named.set(t.name, t)
        for (const f of t.fields ?? []) {
          if (!isInt(f['field-id'])) problems.push(`${at}.${f.name}: record field without integer field-id`)
          visit(f.type, `${at}.${f.name}`)
        }
        return
      case 'array':
        if (t.logicalType === 'map') {
          const item = t.items
          const rec = typeof item === 'string' ? named.get(item) : item
          if (!rec || rec.type !== 'record' || !rec.fields || rec.fields.length !== 2 || rec.fields[0].name !== 'key' || rec.fields[1].name !== 'value') {
            problems.push(`${at}: logicalType map array whose items are not a {key, value} record`)
          }
        } else if (!isInt(t['element-id'])) {
          problems.push(`${at}: array without integer element-id`)
        }
        visit(t.items, `${at}[]`)
        return
      case 'map':
        if (!isInt(t['key-id'])) problems.push(`${at}: map without integer key-id`)
        if (!isInt(t['value-id'])) problems.push(`${at}: map without integer value-id`)
        visit(t.values, `${at}{}`)
        return
      default:
        if (typeof t.type === 'object') visit(t.type, at)
    }
  }
  visit(schema, where)
  return problems
}
