#!/usr/bin/env node
// Deterministic generator of a provider-roster-like JSON-lines file (the append benchmark's
// input).
//
//   node bench/gen_roster.mjs N OUT.jsonl [seed]
//
// Columns (floe schema):
//   seq BIGINT NOT NULL        1..N, in file order
//   npi STRING NOT NULL        10 digits with a valid Luhn check digit; about N/6 distinct
//   source STRING NOT NULL     one of 4 feeds
//   revision INT NOT NULL      per-npi counter: 1 for a provider's first row, 2 for its second...
//   event_time TIMESTAMP NOT NULL  "YYYY-MM-DD HH:MM:SS.mmm", increasing with seq but with up to
//                              +-2 h of jitter, so out of order
//   first_name, last_name, specialty, state (2 letters), city, zip (5 digits), phone: STRING
//   active BOOLEAN
// Same (N, seed) -> byte-identical file.
import fs from 'node:fs'
import path from 'node:path'
import { mulberry32 } from './prng.mjs'

const [nArg, out, seedArg] = process.argv.slice(2)
const N = Number(nArg)
if (!out || !Number.isInteger(N) || N < 0) {
  console.error('usage: gen_roster.mjs N OUT.jsonl [seed]')
  process.exit(2)
}
const seed = seedArg === undefined ? 42 : Number(seedArg)
if (!Number.isInteger(seed)) {
  console.error('seed must be an integer')
  process.exit(2)
}

const rand = mulberry32(seed)
const hash = (p, k) => {
  let h = Math.imul(p ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(k + seed, 0xc2b2ae35)
  h ^= h >>> 13
  h = Math.imul(h, 0x27d4eb2f)
  return (h ^ (h >>> 16)) >>> 0
}

const SOURCES = ['nppes', 'state_board', 'payer_feed', 'self_attested']
const FIRST = ['James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William', 'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Chen', 'Aisha', 'Carlos', 'Priya', 'Olga', 'Kenji', 'Fatima', 'Mateo', 'Nia', 'Ivan', 'Sofia', 'Omar']
const LAST = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Patel', 'Nguyen', 'Kim', 'Okafor', 'Ivanova', 'Tanaka', 'Haddad', 'Silva', 'Kowalski']
const SPECIALTY = ['Family Medicine', 'Internal Medicine', 'Pediatrics', 'Cardiology', 'Dermatology', 'Orthopaedic Surgery', 'Psychiatry', 'Radiology', 'Anesthesiology', 'Emergency Medicine', 'Obstetrics & Gynecology', 'Neurology', 'Oncology', 'Ophthalmology', 'Nurse Practitioner', 'Physical Therapist']
const STATES = [['CA', ['Los Angeles', 'San Diego', 'Fresno', 'Oakland'], 90], ['TX', ['Houston', 'Austin', 'Dallas', 'El Paso'], 75], ['NY', ['New York', 'Buffalo', 'Albany', 'Rochester'], 10], ['FL', ['Miami', 'Tampa', 'Orlando', 'Tallahassee'], 32], ['IL', ['Chicago', 'Springfield', 'Peoria', 'Naperville'], 60], ['PA', ['Philadelphia', 'Pittsburgh', 'Erie', 'Allentown'], 15], ['OH', ['Columbus', 'Cleveland', 'Dayton', 'Toledo'], 43], ['WA', ['Seattle', 'Spokane', 'Tacoma', 'Olympia'], 98], ['MA', ['Boston', 'Worcester', 'Lowell', 'Cambridge'], 1], ['GA', ['Atlanta', 'Savannah', 'Augusta', 'Macon'], 30]]

// Providers: deterministic attributes from the provider index.
const P = Math.max(1, Math.ceil(N / 6))
function luhnNpi(base9) {
  // NPI check digit: Luhn over "80840" + the first 9 digits
  const digits = `80840${base9}`
  let sum = 0
  for (let k = digits.length - 1, dbl = true; k >= 0; k--, dbl = !dbl) {
    let d = digits.charCodeAt(k) - 48
    if (dbl) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return `${base9}${(10 - (sum % 10)) % 10}`
}
// distinct 9-digit bases: 1 + 8 digits of an affine permutation of p (gcd(a, 1e8) = 1)
const npiOf = p => luhnNpi(`1${String((p * 48271 + 12345) % 100000000).padStart(8, '0')}`)
const revisions = new Int32Array(P)
const pad2 = n => (n < 10 ? '0' : '') + n
const pad3 = n => (n < 10 ? '00' : n < 100 ? '0' : '') + n

const START_MS = Date.UTC(2024, 0, 1)
const STEP_MS = 250
const JITTER_MS = 2 * 3600 * 1000
function fmtTime(ms) {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}.${pad3(d.getUTCMilliseconds())}`
}

fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true })
const stream = fs.createWriteStream(out)
const write = s => (stream.write(s) ? Promise.resolve() : new Promise(res => stream.once('drain', res)))

const CHUNK = 20000
const t0 = performance.now()
for (let start = 1; start <= N; start += CHUNK) {
  const end = Math.min(N, start + CHUNK - 1)
  const lines = new Array(end - start + 1)
  for (let seq = start; seq <= end; seq++) {
    const p = Math.floor(rand() * P)
    const rev = ++revisions[p]
    const h = hash(p, 1)
    const st = STATES[h % STATES.length]
    const city = st[1][(h >>> 8) % 4]
    const zip = String(st[2] * 1000 + ((h >>> 12) % 1000)).padStart(5, '0')
    // some attributes change between revisions
    const hr = hash(p, 100 + (rev >> 1))
    const phone = `${200 + (hr % 800)}-${100 + ((hr >>> 10) % 900)}-${String((hr >>> 3) % 10000).padStart(4, '0')}`
    const active = rand() < 0.92
    const source = SOURCES[Math.floor(rand() * 4)]
    const t = START_MS + seq * STEP_MS + Math.floor((rand() * 2 - 1) * JITTER_MS)
    lines[seq - start] = `{"seq":${seq},"npi":"${npiOf(p)}","source":"${source}","revision":${rev},"event_time":"${fmtTime(t)}","first_name":"${FIRST[hash(p, 2) % FIRST.length]}","last_name":"${LAST[hash(p, 3) % LAST.length]}","specialty":"${SPECIALTY[hash(p, 4) % SPECIALTY.length]}","state":"${st[0]}","city":"${city}","zip":"${zip}","phone":"${phone}","active":${active}}\n`
  }
  await write(lines.join(''))
}
await new Promise((res, rej) => stream.end(err => (err ? rej(err) : res())))
const distinct = revisions.reduce((n, r) => n + (r > 0 ? 1 : 0), 0)
console.error(`gen_roster: ${N} rows, ${distinct} distinct npi, seed ${seed}, ${((performance.now() - t0) / 1000).toFixed(2)} s -> ${out}`)
