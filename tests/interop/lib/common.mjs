// Shared helpers for the interop tests (node --test, ESM).
import fs from 'node:fs'
import path from 'node:path'

/** The directory the C++ tests wrote into; every test needs it. */
export function interopDir() {
  const dir = process.env.FLOE_INTEROP_DIR
  if (!dir) throw new Error('FLOE_INTEROP_DIR is not set (run tests/interop/run.sh DIR)')
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`FLOE_INTEROP_DIR=${dir} is not a directory`)
  return path.resolve(dir)
}

/** Files directly in `dir` whose name ends with `suffix`, sorted; [] if `dir` does not exist. */
export function filesWithSuffix(dir, suffix) {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir).filter(n => n.endsWith(suffix)).sort().map(n => path.join(dir, n))
}

/** Recursively list files under `dir` for which `pred(fullPath)` holds, sorted. */
export function walk(dir, pred = () => true) {
  const out = []
  if (!fs.existsSync(dir)) return out
  const rec = d => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) rec(p)
      else if (e.isFile() && pred(p)) out.push(p)
    }
  }
  rec(dir)
  return out.sort()
}

export const toHex = bytes => Buffer.from(bytes.buffer ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes).toString('hex')

/** Two's-complement big-endian bytes -> BigInt. */
export function bigIntFromBytesBE(bytes) {
  let v = 0n
  for (const b of bytes) v = (v << 8n) | BigInt(b)
  if (bytes.length && bytes[0] & 0x80) v -= 1n << BigInt(bytes.length * 8)
  return v
}

/** Little-endian 32-bit words (Arrow decimal storage) -> signed BigInt. */
export function bigIntFromWordsLE(words) {
  let v = 0n
  for (let k = words.length - 1; k >= 0; k--) v = (v << 32n) | BigInt(words[k] >>> 0)
  const bits = BigInt(words.length * 32)
  if (v >= 1n << (bits - 1n)) v -= 1n << bits
  return v
}

/** A float/double in the expected-value convention: number, or "NaN"/"Infinity"/"-Infinity". */
export function floatCanon(v) {
  if (typeof v !== 'number') return v
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return 'Infinity'
  if (v === -Infinity) return '-Infinity'
  return v
}

/** Equality for canonical values: Object.is for numbers (so -0 != 0, NaN handled by canon). */
export function sameValue(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b)
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  return ka.every(k => Object.prototype.hasOwnProperty.call(b, k) && sameValue(a[k], b[k]))
}

/** First differing path between two canonical JSON-like values, or null. */
export function firstDiff(exp, got, at = '') {
  if (sameValue(exp, got)) return null
  if (exp && got && typeof exp === 'object' && typeof got === 'object' && Array.isArray(exp) === Array.isArray(got)) {
    const keys = new Set([...Object.keys(exp), ...Object.keys(got)])
    for (const k of keys) {
      const d = firstDiff(exp[k], got[k], `${at}${Array.isArray(exp) ? `[${k}]` : `.${k}`}`)
      if (d) return d
    }
  }
  return { at: at || '(root)', expected: exp, got }
}

/** JSON.stringify that prints BigInt, -0 and typed arrays recognisably (for messages only). */
export function show(v) {
  return JSON.stringify(v, (k, x) => {
    if (typeof x === 'bigint') return `${x}n`
    if (Object.is(x, -0)) return '-0'
    if (typeof x === 'number' && !Number.isFinite(x)) return String(x)
    if (x instanceof Uint8Array) return `bytes:${toHex(x)}`
    if (x instanceof Date) return `Date(${Number.isNaN(x.getTime()) ? 'invalid' : x.toISOString()})`
    return x
  })
}

/** Read a JSON-lines file into an array of objects (blank lines ignored). */
export function readJsonl(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(l => l.trim() !== '').map((l, k) => {
    try {
      return JSON.parse(l)
    } catch (e) {
      throw new Error(`${file}:${k + 1}: bad JSON: ${e.message}`)
    }
  })
}
