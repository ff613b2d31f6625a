// A replacement for globalThis.fetch that serves local files, for icebird (which reads
// everything through fetch: version-hint, metadata JSON, manifest lists, manifests with plain
// GETs; Parquet data and delete files through hyparquet's asyncBufferFromUrl, i.e. GET with a
// `Range: bytes=a-b` header expecting 206, or HEAD for Content-Length when the manifest's
// file_size_in_bytes is 0).
//
// Accepted locations: file:// URLs (file:///abs/path, file:/abs/path) and absolute paths.
// Anything else (http(s), s3 — which icebird rewrites to https://BUCKET.s3.amazonaws.com) is
// refused: these tests never touch the network.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export function localPath(input) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input?.url
  if (typeof url !== 'string') throw new TypeError(`local fetch: unsupported input ${String(input)}`)
  if (url.startsWith('file:')) return fileURLToPath(new URL(url))
  if (path.isAbsolute(url)) return url
  throw new TypeError(`local fetch: refusing non-local URL ${url}`)
}

/**
 * @param {{ log?: Array<{method:string, path:string, range?:string, status:number}> }} [opts]
 * @returns {typeof globalThis.fetch}
 */
export function makeLocalFetch({ log = [] } = {}) {
  return async function localFetch(input, init = {}) {
    const file = localPath(input)
    const method = (init.method ?? input?.method ?? 'GET').toUpperCase()
    const headers = new Headers(init.headers ?? input?.headers)
    const range = headers.get('range') ?? undefined
    let stat
    try {
      stat = fs.statSync(file)
    } catch {
      log.push({ method, path: file, range, status: 404 })
      return new Response(`not found: ${file}`, { status: 404, statusText: 'Not Found' })
    }
    if (!stat.isFile()) {
      log.push({ method, path: file, range, status: 404 })
      return new Response(`not a file: ${file}`, { status: 404, statusText: 'Not Found' })
    }
    const size = stat.size
    if (method === 'HEAD') {
      log.push({ method, path: file, status: 200 })
      return new Response(null, { status: 200, headers: { 'content-length': String(size), 'accept-ranges': 'bytes' } })
    }
    if (method !== 'GET') return new Response(null, { status: 405, statusText: 'Method Not Allowed' })
    if (range === undefined) {
      log.push({ method, path: file, status: 200 })
      return new Response(fs.readFileSync(file), { status: 200, headers: { 'content-length': String(size), 'accept-ranges': 'bytes' } })
    }
    // RFC 9110 single byte range: bytes=a-b | bytes=a- | bytes=-n
    const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim())
    if (!m || (m[1] === '' && m[2] === '')) {
      log.push({ method, path: file, range, status: 416 })
      return new Response(null, { status: 416, statusText: 'Range Not Satisfiable', headers: { 'content-range': `bytes */${size}` } })
    }
    let start, end
    if (m[1] === '') {
      start = Math.max(0, size - Number(m[2]))
      end = size - 1
    } else {
      start = Number(m[1])
      end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
    }
    if (start >= size || start > end) {
      log.push({ method, path: file, range, status: 416 })
      return new Response(null, { status: 416, statusText: 'Range Not Satisfiable', headers: { 'content-range': `bytes */${size}` } })
    }
    const len = end - start + 1
    const buf = Buffer.alloc(len)
    const fd = fs.openSync(file, 'r')
    try {
      fs.readSync(fd, buf, 0, len, start)
    } finally {
      fs.closeSync(fd)
    }
    log.push({ method, path: file, range, status: 206 })
    return new Response(buf, {
      status: 206,
      statusText: 'Partial Content',
      headers: { 'content-length': String(len), 'content-range': `bytes ${start}-${end}/${size}`, 'accept-ranges': 'bytes' },
    })
  }
}
