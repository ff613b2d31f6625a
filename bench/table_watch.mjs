// Watches an Iceberg table's metadata folder while a job writes it (table_health.mjs,
// file_size.mjs): every new vN.metadata.json is read once, in version order, and described by
// what its current snapshot is: a data commit of the sink (with its checkpoint id), a compaction
// ("replace"), an expiry (same current snapshot, fewer snapshots), or the table's creation.
//
// A version's figures come from the JSON itself (the current snapshot's summary totals, the
// number of snapshots held, the file's size and mtime), so they describe exactly that version.
// The metadata folder's bytes and files are those found when the version was first seen (the
// folder is polled every `pollMs`; a version superseded within one poll shares its successor's
// folder figures).
import fs from 'node:fs'
import path from 'node:path'

// Snapshot ids exceed 2^53: quote them before JSON.parse.
export const parseIds = (text) =>
  JSON.parse(text.replace(/("(?:current-|parent-)?snapshot-id"\s*:\s*)(-?\d+)/g, '$1"$2"'))

// The metadata folder: bytes and counts by kind; the newest metadata JSON.
export function metadataFolder(dir) {
  const out = { json: { files: 0, bytes: 0 }, manifest_lists: { files: 0, bytes: 0 }, manifests: { files: 0, bytes: 0 },
                other: { files: 0, bytes: 0 }, current_json_bytes: null, current_version: 0 }
  let names = []
  try { names = fs.readdirSync(dir) } catch { return { ...out, total_bytes: 0, total_files: 0 } }
  for (const n of names) {
    let st
    try { st = fs.statSync(path.join(dir, n)) } catch { continue }   // deleted meanwhile
    const kind = /\.metadata\.json$/.test(n) ? 'json' : /^snap-.*\.avro$/.test(n) ? 'manifest_lists'
      : /\.avro$/.test(n) ? 'manifests' : 'other'
    out[kind].files++
    out[kind].bytes += st.size
    const v = /^v(\d+)\.metadata\.json$/.exec(n)
    if (v && Number(v[1]) > out.current_version) { out.current_version = Number(v[1]); out.current_json_bytes = st.size }
  }
  out.total_bytes = out.json.bytes + out.manifest_lists.bytes + out.manifests.bytes + out.other.bytes
  out.total_files = out.json.files + out.manifest_lists.files + out.manifests.files + out.other.files
  return out
}

// Files and bytes of a folder tree (the table's data/ folder: every file on disk, referenced or not).
export function folderBytes(dir) {
  let files = 0
  let bytes = 0
  const walk = (d) => {
    let entries = []
    try { entries = fs.readdirSync(d, { withFileTypes: true }) } catch { return }
    for (const e of entries) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else {
        try { bytes += fs.statSync(p).size; files++ } catch { /* deleted meanwhile */ }
      }
    }
  }
  walk(dir)
  return { files, bytes }
}

const n = (x) => (x == null ? null : Number(x))

// What one metadata JSON says (see the head of this file).
export function describeVersion(text, prev) {
  const d = parseIds(text)
  const snaps = d.snapshots || []
  const cur = snaps.find((s) => s['snapshot-id'] === d['current-snapshot-id'])
  const s = cur ? cur.summary || {} : {}
  const op = cur ? s.operation : null
  const out = {
    snapshot_id: cur ? cur['snapshot-id'] : null,
    op,
    snapshots: snaps.length,
    data_files: n(s['total-data-files']),
    delete_files: n(s['total-delete-files']),
    files_bytes: n(s['total-files-size']),
    records: n(s['total-records']),
    json_bytes: text.length,
  }
  if (!cur) out.kind = 'create'
  else if (op === 'replace' && (!prev || prev.snapshot_id !== out.snapshot_id)) {
    out.kind = 'replace'
    out.rewritten_data_files = n(s['deleted-data-files']) || 0
    out.added_data_files = n(s['added-data-files']) || 0
    out.removed_delete_files = n(s['removed-delete-files']) || 0
    out.added_bytes = n(s['added-files-size']) || 0
    out.rewritten_bytes = n(s['removed-files-size']) || 0
  } else if (s['floe.checkpoint-id'] != null && (!prev || prev.snapshot_id !== out.snapshot_id)) {
    out.kind = 'commit'
    out.checkpoint = Number(s['floe.checkpoint-id'])
    out.added_data_files = n(s['added-data-files']) || 0
    out.added_bytes = n(s['added-files-size']) || 0
    out.added_records = n(s['added-records']) || 0
  } else if (prev && prev.snapshot_id === out.snapshot_id && out.snapshots < prev.snapshots) {
    out.kind = 'expire'
    out.expired = prev.snapshots - out.snapshots
  } else {
    out.kind = 'other'
  }
  return out
}

// Polls `metaDir` until stop(); `versions` holds one record per version seen, in order:
// {v, mtime_ms, seen_ms, folder: {json, manifest_lists, manifests, other: {files, bytes},
// total_bytes, total_files}, ...describeVersion()}. onVersion(rec) is called for each.
export class TableWatch {
  constructor(metaDir, { pollMs = 20, onVersion = () => {} } = {}) {
    this.metaDir = metaDir
    this.pollMs = pollMs
    this.onVersion = onVersion
    this.versions = []
    this.byCommit = new Map()   // checkpoint -> index in versions of the data commit
    this.last = 0
    this.running = false
  }

  start() {
    this.running = true
    this.done = (async () => {
      while (this.running) {
        this.poll()
        await new Promise((r) => setTimeout(r, this.pollMs))
      }
      this.poll()
    })()
    return this
  }

  async stop() {
    this.running = false
    await this.done
  }

  poll() {
    let names
    try { names = fs.readdirSync(this.metaDir) } catch { return }
    const fresh = []
    for (const name of names) {
      const m = /^v(\d+)\.metadata\.json$/.exec(name)
      if (m && Number(m[1]) > this.last) fresh.push(Number(m[1]))
    }
    if (!fresh.length) return
    fresh.sort((a, b) => a - b)
    const seen = Date.now()
    const { current_json_bytes: _j, current_version: _v, ...folder } = metadataFolder(this.metaDir)
    for (const v of fresh) {
      const file = path.join(this.metaDir, `v${v}.metadata.json`)
      let text, mt
      try { mt = fs.statSync(file).mtimeMs; text = fs.readFileSync(file, 'utf8') } catch { continue }   // gone already
      let rec
      try {
        rec = { v, mtime_ms: mt, seen_ms: seen, folder, ...describeVersion(text, this.versions.at(-1)) }
      } catch { return }   // being written: read it at the next poll
      this.last = v
      this.versions.push(rec)
      if (rec.kind === 'commit' && !this.byCommit.has(rec.checkpoint)) this.byCommit.set(rec.checkpoint, this.versions.length - 1)
      this.onVersion(rec)
    }
  }

  // The data commit of checkpoint k (a version record), or undefined.
  commit(k) {
    const i = this.byCommit.get(k)
    return i === undefined ? undefined : this.versions[i]
  }

  // The table after commit k and the maintenance that ran before the next data commit (the
  // expiry after commit k; a compaction written in the background lands after a later commit):
  // the last version before the data commit of the next checkpoint (undefined until it is seen).
  afterMaintenance(k) {
    const i = this.byCommit.get(k)
    if (i === undefined) return undefined
    for (let j = i + 1; j < this.versions.length; j++) {
      if (this.versions[j].kind === 'commit') return this.versions[j - 1]
    }
    return undefined
  }
}
