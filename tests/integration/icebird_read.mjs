// What icebird (a reader floe did not write) sees in a table, for the multi-process tests:
// the `key` column of every row, as sorted strings (icebirdKeys), or every row (icebirdRows).
// `location` is the table's metadata file (file:// URI, absolute path or s3:// URI) or, for a
// filesystem-catalog table, the table directory (icebird then follows
// metadata/version-hint.text). Local files are served by tests/interop/lib/localfetch.mjs;
// s3:// objects, which icebird asks for as https://BUCKET.s3.amazonaws.com/KEY, are read over
// HTTP from `s3Endpoint` (path style).
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { icebergRead } from 'icebird'
import { makeLocalFetch } from '../interop/lib/localfetch.mjs'

export async function icebirdKeys({ location, key, s3Endpoint }) {
  const rows = await icebirdRows({ location, s3Endpoint })
  return rows.map((r) => String(r[key])).sort()
}

// Every row of the table as icebird reads it (objects by column name).
export async function icebirdRows({ location, s3Endpoint }) {
  const s3 = location.startsWith('s3://')
  const realFetch = globalThis.fetch
  globalThis.fetch = s3
    ? (input, init) => {
        const url = String(typeof input === 'string' ? input : input.url ?? input)
        const m = /^https:\/\/([^.]+)\.s3\.amazonaws\.com\/(.*)$/.exec(url)
        return realFetch(m ? `${s3Endpoint}/${m[1]}/${m[2]}` : url, init)
      }
    : makeLocalFetch({ log: [] })
  try {
    let options
    if (location.endsWith('.metadata.json')) {
      const file = s3 ? location : location.startsWith('file:') ? fileURLToPath(location) : location
      const tableDir = path.posix.dirname(path.posix.dirname(file))
      options = { tableUrl: s3 ? tableDir : pathToFileURL(tableDir).href, metadataFileName: path.posix.basename(file) }
    } else {
      options = { tableUrl: s3 ? location : pathToFileURL(location).href }
    }
    return await icebergRead(options)
  } finally {
    globalThis.fetch = realFetch
  }
}
