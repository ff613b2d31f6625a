// A local S3 server for the tests: s3rver (npm) behind a front that checks every request's
// SigV4 signature with the AWS SDK's own signer (@smithy/signature-v4), because s3rver accepts
// any V4 signature of a known key. Listens on 127.0.0.1, a free port; objects under DIR/data;
// buckets BUCKET... made at start; writes its endpoint to DIR/endpoint once it listens and runs
// until killed. Usage: node s3rver.mjs DIR [BUCKET...]. Access key and
// secret: S3RVER. A request whose signature or payload hash does not match gets S3's 403
// SignatureDoesNotMatch (or XAmzContentSHA256Mismatch) and never reaches s3rver; a conditional
// create (If-None-Match: *) of an existing key gets AWS's 412.
// Tests can have an answer lost: after POST /_floe_test/lose-answer?path=/BUCKET/KEY the next PUT
// of that key lands and its connection is cut before the answer, as when a network drops it; with
// a body, that body lands instead (another writer won the race) and the PUT's own never does.
import crypto from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { SignatureV4 } from '@smithy/signature-v4'
import S3rver from 's3rver'

const dir = process.argv[2]
if (!dir) {
  console.error('usage: node s3rver.mjs DIR')
  process.exit(2)
}
const SECRET = 'S3RVER'

class Sha256 {
  constructor (secret) { this.h = secret ? crypto.createHmac('sha256', secret) : crypto.createHash('sha256') }
  update (data) { this.h.update(data) }
  async digest () { return new Uint8Array(this.h.digest()) }
}

fs.mkdirSync(path.join(dir, 'data'), { recursive: true })
const backend = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(dir, 'data'),
                             configureBuckets: process.argv.slice(3).map((name) => ({ name, configs: [] })) })
const { port: backendPort } = await backend.run()

function s3Error (res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/xml' })
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`)
}

// The request's Authorization recomputed by the SDK's signer from what it signed.
async function expectedAuthorization (req, body) {
  const auth = req.headers.authorization || ''
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(auth)
  if (!m) return { error: 'not a SigV4 Authorization header' }
  const [, accessKeyId, , region, signedHeaders] = m
  const headers = {}
  for (const name of signedHeaders.split(';')) headers[name] = req.headers[name] ?? ''
  const url = new URL(req.url, 'http://placeholder')
  const query = {}
  for (const [k, v] of url.searchParams) query[k] = v
  const amzDate = req.headers['x-amz-date'] || ''
  const date = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`)
  const signer = new SignatureV4({ service: 's3', region, sha256: Sha256, uriEscapePath: false,
                                   credentials: { accessKeyId, secretAccessKey: SECRET } })
  const signed = await signer.sign({ method: req.method, protocol: 'http:', hostname: headers.host, path: url.pathname,
                                     query, headers, body }, { signingDate: date })
  return { expected: signed.headers.authorization, got: auth }
}

// Whether the object at `url` (path style) exists on s3rver.
function exists (url) {
  return new Promise((resolve) => {
    const head = http.request({ host: '127.0.0.1', port: backendPort, method: 'HEAD', path: url.split('?')[0] },
                              (r) => { r.resume(); resolve(r.statusCode === 200) })
    head.on('error', () => resolve(false))
    head.end()
  })
}

// A PUT to s3rver without credentials (it has no access control); resolves with the status.
function backendPut (url, body) {
  return new Promise((resolve, reject) => {
    const put = http.request({ host: '127.0.0.1', port: backendPort, method: 'PUT', path: url,
                               headers: { 'content-length': body.length } },
                             (r) => { r.resume(); r.on('end', () => resolve(r.statusCode)) })
    put.on('error', reject)
    put.end(body)
  })
}

const loseAnswer = new Map() // path -> body to store instead ('' = the PUT's own)

const front = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', async () => {
    try {
      const body = Buffer.concat(chunks)
      const url = new URL(req.url, 'http://placeholder')
      if (req.method === 'POST' && url.pathname === '/_floe_test/lose-answer') {
        loseAnswer.set(url.searchParams.get('path'), body)
        res.writeHead(204)
        return res.end()
      }
      const hash = crypto.createHash('sha256').update(body).digest('hex')
      if (req.headers.authorization && req.headers['x-amz-content-sha256'] !== hash) {
        return s3Error(res, 400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.')
      }
      // Anonymous reads (icebird over HTTP) go through: s3rver has no access control.
      const anonymousRead = !req.headers.authorization && (req.method === 'GET' || req.method === 'HEAD')
      const { expected, got, error } = anonymousRead ? {} : await expectedAuthorization(req, body)
      if (!anonymousRead && (error || expected.replace(/, /g, ',') !== got.replace(/, /g, ','))) {
        return s3Error(res, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.')
      }
      // AWS's conditional create, which s3rver lacks: If-None-Match: * on an existing key is a
      // 412, so the tests see what floe does against AWS S3 or MinIO.
      if (req.method === 'PUT' && req.headers['if-none-match'] === '*' && await exists(req.url)) {
        return s3Error(res, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold')
      }
      if (req.method === 'PUT' && loseAnswer.has(url.pathname)) {
        const instead = loseAnswer.get(url.pathname)
        loseAnswer.delete(url.pathname)
        await backendPut(req.url, instead.length ? instead : body)
        return req.socket.destroy()
      }
      const forward = http.request({ host: '127.0.0.1', port: backendPort, method: req.method, path: req.url,
                                     headers: req.headers }, (up) => {
        res.writeHead(up.statusCode, up.headers)
        up.pipe(res)
      })
      forward.on('error', (e) => s3Error(res, 502, 'BadGateway', e.message))
      forward.end(body)
    } catch (e) {
      s3Error(res, 500, 'InternalError', String(e && e.message))
    }
  })
})
front.listen(0, '127.0.0.1', () => {
  const { port } = front.address()
  fs.writeFileSync(path.join(dir, 'endpoint.tmp'), `http://127.0.0.1:${port}\n`)
  fs.renameSync(path.join(dir, 'endpoint.tmp'), path.join(dir, 'endpoint'))
})
