// A small schema registry speaking the part of Confluent Schema Registry's REST API that floe and
// its tests use, run as its own process (floe's jobs run while the test's event loop waits):
//
//   node tests/integration/schema_registry.mjs --port-file F [--user NAME:PASSWORD]
//
// It writes "http://127.0.0.1:<port>" to F once it listens. What it answers, as Confluent's
// documentation of the API describes it (docs/kafka.md, "avro-confluent"):
//   POST /subjects/{subject}/versions   {"schema": "...", "schemaType"?}: registers, {"id": N};
//                                       the same schema again under the subject returns its id,
//                                       the same schema under another subject shares the id
//   GET  /schemas/ids/{id}              {"schema": "...", "schemaType": "AVRO"} or 404 / 40403
//   GET  /subjects                      ["subject", ...]
//   GET  /subjects/{subject}/versions   [1, 2, ...] or 404 / 40401
//   GET  /subjects/{subject}/versions/{version|latest}
//                                       {"subject", "id", "version", "schema"} or 40401 / 40402
//   POST /compatibility/subjects/{subject}/versions/{version|latest}
//                                       {"is_compatible": bool} against that version
//   GET  /config, /config/{subject}     {"compatibilityLevel": ...}; PUT with {"compatibility"}
// Registering under a subject checks the schema against the subject's latest version with its
// compatibility level (BACKWARD by default, as Confluent's; NONE turns it off; the other levels
// are checked as BACKWARD) and answers 409 when it is not compatible. BACKWARD, per Avro's
// resolution rules: the new schema reads data written with the old one: each of its fields
// either exists in the old one with a type that resolves (the same, or one of Avro's promotions)
// or has a default.
// Errors are {"error_code": N, "message": "..."}. With --user every request needs HTTP basic auth
// (401 without it). Query parameters are ignored, as the real registry ignores unknown ones.
// Schemas are compared as their JSON text with whitespace removed (Confluent compares parsed
// schemas; the tests register schemas serialized one way).
import http from 'node:http';
import fs from 'node:fs';

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const portFile = opt('--port-file');
const user = opt('--user');
if (!portFile) { console.error('usage: schema_registry.mjs --port-file F [--user U:P]'); process.exit(2); }

const schemas = [];            // id - 1 -> {schema, schemaType, canonical}
const subjects = new Map();    // subject -> [id of version 1, id of version 2, ...]
const canonical = (text) => { try { return JSON.stringify(JSON.parse(text)); } catch { return null; } };

function reply(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/vnd.schemaregistry.v1+json' });
  res.end(JSON.stringify(body));
}
const error = (res, status, code, message) => reply(res, status, { error_code: code, message });

const LEVELS = ['NONE', 'BACKWARD', 'BACKWARD_TRANSITIVE', 'FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE'];
let globalLevel = 'BACKWARD';
const subjectLevels = new Map();
const PROMOTIONS = { int: ['long', 'float', 'double'], long: ['float', 'double'], float: ['double'],
                     string: ['bytes'], bytes: ['string'] };
const typeName = (t) => (typeof t === 'string' ? t : Array.isArray(t) ? 'union' : t.type);

// Whether data written with `writer` reads as `reader` (Avro's resolution, named types by name).
function canRead(reader, writer) {
  if (Array.isArray(writer)) return writer.every((w) => canRead(reader, w));
  if (Array.isArray(reader)) return reader.some((r) => canRead(r, writer));
  const [r, w] = [typeName(reader), typeName(writer)];
  if (r !== w) return (PROMOTIONS[w] || []).includes(r);
  if (r === 'record') {
    return reader.fields.every((f) => {
      const wf = writer.fields.find((x) => x.name === f.name);
      return wf ? canRead(f.type, wf.type) : 'default' in f;
    });
  }
  if (r === 'enum') return writer.symbols.every((x) => reader.symbols.includes(x)) || 'default' in reader;
  if (r === 'array') return canRead(reader.items, writer.items);
  if (r === 'map') return canRead(reader.values, writer.values);
  if (r === 'fixed') return reader.size === writer.size;
  return true;
}

function compatible(subject, text, version) {
  const level = subjectLevels.get(subject) ?? globalLevel;
  const versions = subjects.get(subject);
  if (level === 'NONE' || !versions || versions.length === 0) return true;
  const against = schemas[versions[(version ?? versions.length) - 1] - 1];
  return against.schemaType !== 'AVRO' || canRead(JSON.parse(text), JSON.parse(against.schema));
}

function register(subject, body, res) {
  const schemaType = body.schemaType ?? 'AVRO';
  const text = typeof body.schema === 'string' ? body.schema : null;
  // A PROTOBUF schema is kept as its text (compatibility is checked for Avro only).
  const c = text === null ? null : schemaType === 'AVRO' ? canonical(text) : text.trim() || null;
  if (c === null) return error(res, 422, 42201, 'Invalid schema');
  const known = schemas.findIndex((s) => s.canonical === c && s.schemaType === schemaType);
  if (!(subjects.get(subject) ?? []).includes(known + 1) && schemaType === 'AVRO' && !compatible(subject, text)) {
    return error(res, 409, 409, `Schema being registered is incompatible with an earlier schema for subject "${subject}"`);
  }
  let index = schemas.findIndex((s) => s.canonical === c && s.schemaType === schemaType);
  if (index < 0) index = schemas.push({ schema: text, schemaType, canonical: c }) - 1;
  const versions = subjects.get(subject) ?? [];
  if (!versions.includes(index + 1)) versions.push(index + 1);
  subjects.set(subject, versions);
  reply(res, 200, { id: index + 1 });
}

function route(req, res, body) {
  const url = new URL(req.url, 'http://registry');
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (req.method === 'POST' && parts.length === 3 && parts[0] === 'subjects' && parts[2] === 'versions') {
    let parsed;
    try { parsed = JSON.parse(body); } catch { return error(res, 422, 42201, 'Invalid schema'); }
    return register(parts[1], parsed ?? {}, res);
  }
  if (req.method === 'POST' && parts.length === 5 && parts[0] === 'compatibility' && parts[1] === 'subjects' &&
      parts[3] === 'versions') {
    const versions = subjects.get(parts[2]);
    if (!versions) return error(res, 404, 40401, `Subject '${parts[2]}' not found.`);
    const v = parts[4] === 'latest' ? versions.length : Number(parts[4]);
    if (!Number.isInteger(v) || v < 1 || v > versions.length) return error(res, 404, 40402, 'Version not found.');
    let parsed;
    try { parsed = JSON.parse(body); JSON.parse(parsed.schema); } catch { return error(res, 422, 42201, 'Invalid schema'); }
    return reply(res, 200, { is_compatible: compatible(parts[2], parsed.schema, v) });
  }
  if (req.method === 'PUT' && parts[0] === 'config' && parts.length <= 2) {
    let level;
    try { level = JSON.parse(body).compatibility; } catch { /* below */ }
    if (!LEVELS.includes(level)) return error(res, 422, 42203, 'Invalid compatibility level');
    if (parts.length === 2) subjectLevels.set(parts[1], level); else globalLevel = level;
    return reply(res, 200, { compatibility: level });
  }
  if (req.method !== 'GET') return error(res, 405, 405, `${req.method} not supported`);
  if (parts[0] === 'config' && parts.length <= 2) {
    return reply(res, 200, { compatibilityLevel: (parts.length === 2 && subjectLevels.get(parts[1])) || globalLevel });
  }
  if (parts.length === 3 && parts[0] === 'schemas' && parts[1] === 'ids') {
    const s = /^[0-9]+$/.test(parts[2]) ? schemas[Number(parts[2]) - 1] : undefined;
    if (!s) return error(res, 404, 40403, 'Schema not found');
    return reply(res, 200, { schema: s.schema, schemaType: s.schemaType });
  }
  if (parts.length === 1 && parts[0] === 'subjects') return reply(res, 200, [...subjects.keys()]);
  if (parts[0] === 'subjects' && parts[2] === 'versions' && parts.length <= 4) {
    const versions = subjects.get(parts[1]);
    if (!versions) return error(res, 404, 40401, `Subject '${parts[1]}' not found.`);
    if (parts.length === 3) return reply(res, 200, versions.map((_, i) => i + 1));
    const v = parts[3] === 'latest' ? versions.length : Number(parts[3]);
    if (!Number.isInteger(v) || v < 1 || v > versions.length) return error(res, 404, 40402, 'Version not found.');
    const id = versions[v - 1];
    return reply(res, 200, { subject: parts[1], id, version: v, schema: schemas[id - 1].schema });
  }
  return error(res, 404, 404, 'HTTP 404 Not Found');
}

const server = http.createServer((req, res) => {
  if (user && req.headers.authorization !== `Basic ${Buffer.from(user).toString('base64')}`) {
    return error(res, 401, 401, 'Unauthorized');
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d) => { body += d; if (body.length > 1 << 20) req.destroy(); });
  req.on('end', () => { try { route(req, res, body); } catch (e) { error(res, 500, 50001, String(e)); } });
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(`${portFile}.tmp`, `http://127.0.0.1:${server.address().port}`);
  fs.renameSync(`${portFile}.tmp`, portFile);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
