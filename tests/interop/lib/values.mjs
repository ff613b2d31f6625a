// Value normalization for the interop tests.
//
// "Exact canonical" form (what floe's C++ tests write into <name>.expected.jsonl):
//   null -> null; boolean -> true/false; int, date (days) -> number;
//   long, timestamp, timestamptz, time (micros; time: since midnight) -> decimal string; float/double -> number or
//   "NaN"/"Infinity"/"-Infinity"; string -> string; binary -> lowercase hex;
//   decimal -> string of the unscaled integer.
import { bigIntFromBytesBE, bigIntFromWordsLE, floatCanon, toHex } from './common.mjs'

/** Parse an Iceberg primitive type name: 'long', 'decimal(10, 2)', ... */
export function parseType(t) {
  if (typeof t !== 'string') throw new Error(`only primitive types are supported here, got ${JSON.stringify(t)}`)
  const m = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t)
  if (m) return { kind: 'decimal', precision: Number(m[1]), scale: Number(m[2]) }
  const known = ['boolean', 'int', 'long', 'float', 'double', 'string', 'binary', 'date', 'time', 'timestamp', 'timestamptz']
  if (!known.includes(t)) throw new Error(`unsupported Iceberg type ${t}`)
  return { kind: t }
}

class Mismatch extends Error {}
const bad = (what, v) => {
  throw new Mismatch(`${what}, got JS ${v === null ? 'null' : typeof v}${v?.constructor?.name ? ` (${v.constructor.name})` : ''}`)
}

/**
 * hyparquet, read with utf8:false, parsers that keep raw date days / timestamp BigInts, and
 * decimal annotations stripped (so the raw physical value arrives: number, bigint or bytes).
 */
export function canonFromHyparquet(type, v) {
  if (v === null || v === undefined) return null
  switch (type.kind) {
    case 'boolean': return typeof v === 'boolean' ? v : bad('boolean expected', v)
    case 'int': return typeof v === 'number' && Number.isInteger(v) ? v : bad('int32 number expected', v)
    case 'date': return typeof v === 'number' && Number.isInteger(v) ? v : bad('date: days number expected (is the DATE converted_type set?)', v)
    case 'long': return typeof v === 'bigint' ? String(v) : bad('int64 BigInt expected', v)
    case 'time': return typeof v === 'bigint' ? String(v) : bad('time micros BigInt expected', v)
    case 'timestamp': case 'timestamptz':
      if (v && typeof v === 'object' && 'unit' in v) bad(`timestamp in ${v.unit}, MICROS expected`, v)
      return typeof v === 'bigint' ? String(v) : bad('timestamp micros BigInt expected', v)
    case 'float': case 'double': return typeof v === 'number' ? floatCanon(v) : bad('number expected', v)
    case 'string': return typeof v === 'string' ? v : bad('string expected (UTF8/STRING annotation?)', v)
    case 'binary': return v instanceof Uint8Array ? toHex(v) : bad('bytes expected (binary must not be annotated as a string)', v)
    case 'decimal':
      if (typeof v === 'number' && Number.isInteger(v)) return String(v)
      if (typeof v === 'bigint') return String(v)
      if (v instanceof Uint8Array) return String(bigIntFromBytesBE(v))
      return bad('raw decimal (int32/int64/bytes) expected', v)
  }
}

/** hyparquet parsers that keep full precision; other units come back tagged so they fail. */
export const exactParsers = {
  timestampFromMilliseconds: v => ({ unit: 'MILLIS', v }),
  timestampFromMicroseconds: v => v,
  timestampFromNanoseconds: v => ({ unit: 'NANOS', v }),
  dateFromDays: v => v,
}

/**
 * Arrow JS (apache-arrow) vector value at row `i` of a column produced by parquet-wasm.
 * Reads the raw buffers for dates, timestamps and decimals: Arrow JS's get() turns dates and
 * timestamps into (fractional) milliseconds, losing microseconds beyond 2^53 ms precision.
 */
export function arrowRaw(vector, i) {
  let k = i
  for (const d of vector.data) {
    if (k >= d.length) {
      k -= d.length
      continue
    }
    if (!d.getValid(k)) return null
    const tid = d.type.typeId
    // Arrow Type ids: 7 Decimal, 8 Date, 9 Time, 10 Timestamp (see apache-arrow enum Type)
    if (tid === 8) {
      if (d.type.unit !== 0) return { arrowDateMillis: d.values[d.offset + k] }
      return { days: d.values[d.offset + k] }
    }
    if (tid === 9) {
      const unit = ['SECOND', 'MILLISECOND', 'MICROSECOND', 'NANOSECOND'][d.type.unit]
      return { time: BigInt(d.values[d.offset + k]), unit }
    }
    if (tid === 10) {
      const unit = ['SECOND', 'MILLISECOND', 'MICROSECOND', 'NANOSECOND'][d.type.unit]
      return { ts: BigInt(d.values[d.offset + k]), unit, tz: d.type.timezone ?? null }
    }
    if (tid === 7) {
      const words = d.type.bitWidth / 32
      const start = (d.offset + k) * words
      return { unscaled: bigIntFromWordsLE(d.values.subarray(start, start + words)), scale: d.type.scale, precision: d.type.precision }
    }
    return vector.get(i)
  }
  throw new Error(`row ${i} out of range`)
}

export function canonFromArrow(type, v) {
  if (v === null || v === undefined) return null
  switch (type.kind) {
    case 'boolean': return typeof v === 'boolean' ? v : bad('boolean expected', v)
    case 'int': return typeof v === 'number' && Number.isInteger(v) ? v : bad('int32 number expected', v)
    case 'long': return typeof v === 'bigint' ? String(v) : bad('Int64 BigInt expected', v)
    case 'date': return v && typeof v.days === 'number' ? v.days : bad('Date32 expected', v)
    case 'time':
      if (!v || typeof v.time !== 'bigint') bad('Time expected', v)
      if (v.unit !== 'MICROSECOND') bad(`Time unit ${v.unit}, MICROSECOND expected`, v)
      return String(v.time)
    case 'timestamp': case 'timestamptz':
      if (!v || typeof v.ts !== 'bigint') bad('Timestamp expected', v)
      if (v.unit !== 'MICROSECOND') bad(`Timestamp unit ${v.unit}, MICROSECOND expected`, v)
      if (type.kind === 'timestamptz' && v.tz === null) bad('timestamptz read as a Timestamp without time zone (isAdjustedToUTC must be true)', v)
      if (type.kind === 'timestamp' && v.tz !== null) bad(`timestamp read as Timestamp with time zone ${v.tz} (isAdjustedToUTC must be false)`, v)
      return String(v.ts)
    case 'float': case 'double': return typeof v === 'number' ? floatCanon(v) : bad('number expected', v)
    case 'string': return typeof v === 'string' ? v : bad('string expected', v)
    case 'binary': return v instanceof Uint8Array ? toHex(v) : bad('Binary expected', v)
    case 'decimal':
      if (!v || typeof v.unscaled !== 'bigint') bad('Decimal expected', v)
      if (v.scale !== type.scale || v.precision !== type.precision) bad(`Decimal(${v.precision}, ${v.scale}) instead of decimal(${type.precision}, ${type.scale})`, v)
      return String(v.unscaled)
  }
}

/**
 * Project an exact canonical value to what hyparquet's DEFAULT conversions produce (the path
 * icebird uses): timestamps -> Date at millisecond precision (BigInt division, so truncation
 * toward zero), dates -> Date, decimals -> Number, binary -> UTF-8 decoded string.
 * `decimalByDivision`: hyparquet >= 1.2x divides by 10^scale; 1.19 (icebird's) multiplies by
 * 10^-scale.
 */
export function lossyFromExact(type, v, { decimalByDivision }) {
  if (v === null) return null
  switch (type.kind) {
    // Outside JavaScript's Date range (+-8.64e15 ms) a default reader can only give Invalid Date.
    case 'timestamp': case 'timestamptz': return jsDateMs(Number(BigInt(v) / 1000n))
    case 'date': return jsDateMs(v * 86400000)
    case 'decimal': {
      const n = Number(BigInt(v))
      return decimalByDivision ? n / 10 ** type.scale : n * 10 ** -type.scale
    }
    case 'binary': return new TextDecoder().decode(Buffer.from(v, 'hex'))
    default: return v
  }
}

function jsDateMs(ms) {
  return { ms: Math.abs(ms) > 8.64e15 ? NaN : ms }
}

/** Canonicalize a value from hyparquet's default conversions into the lossy form above. */
export function lossyFromDefault(type, v) {
  if (v === null || v === undefined) return null
  switch (type.kind) {
    case 'timestamp': case 'timestamptz': case 'date':
      return v instanceof Date ? { ms: v.getTime() } : bad('Date expected', v)
    case 'decimal': return typeof v === 'number' ? floatCanon(v) : bad('number expected', v)
    case 'binary': return typeof v === 'string' ? v : bad('string (utf8-decoded bytes) expected', v)
    default: return canonFromHyparquet(type, v)
  }
}

export { Mismatch }
