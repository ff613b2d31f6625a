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

function register(subject, body, res) {
  const schemaType = body.schemaType ?? 'AVRO';
  const text = typeof body.schema === 'string' ? body.schema : null;
  const c = text === null ? null : canonical(text);
  if (c === null) return error(res, 422, 42201, 'Invalid schema');
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
  if (req.method !== 'GET') return error(res, 405, 405, `${req.method} not supported`);
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
