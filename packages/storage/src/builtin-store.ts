import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { contentTypeForExtension, contentTypesFor } from '@captionfarm/contracts';
import { createS3Store } from './s3-store.ts';
import { verifyPresignedRequest } from './sigv4-verify.ts';
import type { ObjectStore } from './types.ts';

export interface BuiltinStoreOptions {
  /** Folder the objects live in. */
  dir: string;
  /** Public base URL of the control plane, e.g. http://127.0.0.1:8080; the store answers under `${publicUrl}/s3`. */
  publicUrl: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  now?: () => Date;
  /** Connection limits and timeouts (defaults below); see README. */
  limits?: Partial<BuiltinStoreLimits>;
  /**
   * Asked before a PUT reads its body and again before the object is replaced: a string refuses
   * the write with 409 (the control plane refuses uploads a job has already claimed).
   */
  beforePut?: (key: string) => Promise<string | null>;
  /**
   * The one origin whose pages may call the store from a browser (CORS): the dashboard, served at
   * `publicUrl`. Default: publicUrl's origin. Other origins get no CORS headers and a 403 preflight.
   */
  corsOrigin?: string;
}

interface BuiltinStoreLimits {
  /** Concurrent requests from one client address; 503 SlowDown above. */
  maxConnectionsPerIp: number;
  /** Concurrent PUTs to one object (every presigned URL of one key); 503 SlowDown above. */
  maxPutsPerObject: number;
  /** A PUT body that sends nothing for this long is cut (400 RequestTimeout) and its part file removed. */
  putIdleMs: number;
}

const DEFAULT_BUILTIN_STORE_LIMITS: BuiltinStoreLimits = { maxConnectionsPerIp: 64, maxPutsPerObject: 4, putIdleMs: 20_000 };

export interface BuiltinStore extends ObjectStore {
  /** Path prefix the handler serves (`/s3`). */
  readonly mountPath: string;
  /** Node HTTP handler for PUT/GET/HEAD of presigned object URLs. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Absolute path of an object on disk (for in-process readers and tests). */
  filePath(key: string): string;
}

const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;
/** What GET answers with, by the key's extension (the ones jobs write; anything else is octet-stream). */
const MIME = contentTypesFor(['mp4', 'm4v', 'mov', 'webm', 'mkv', 'avi', 'png', 'jpg', 'json']);

/**
 * Answers with an S3 XML error and closes the connection without reading the rest of the request
 * body: the write side closes first so the client reads the answer, then the socket is destroyed
 * a moment later (closing at once with unread input would reset it and could lose the answer).
 */
function s3Error(res: ServerResponse, status: number, code: string, message: string, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message.replace(/[<&>]/g, '')}</Message></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), connection: 'close', ...extraHeaders });
  const req = res.req;
  // Taken now: once the request has been read to its end the server may have detached it.
  const socket = req.socket as typeof req.socket | null;
  res.once('finish', () => {
    socket?.end();
    req.resume();
    setTimeout(() => socket?.destroy(), 2000).unref();
  });
  res.end(body);
}

function count(map: Map<string, number>, k: string, by: 1 | -1): void {
  const n = (map.get(k) ?? 0) + by;
  if (n <= 0) map.delete(k);
  else map.set(k, n);
}

/** What one built-in store keeps: its options and limits, and the requests in flight it counts. */
interface StoreState {
  readonly opts: BuiltinStoreOptions;
  readonly mountPath: string;
  readonly now: () => Date;
  readonly limits: BuiltinStoreLimits;
  readonly corsOrigin: string;
  /** Requests in flight per client address. */
  readonly perIp: Map<string, number>;
  /** PUTs in flight per object key. */
  readonly putsPerObject: Map<string, number>;
  readonly filePath: (key: string) => string;
}

/**
 * The embedded default's S3-compatible store: objects on local disk, URLs presigned by the AWS SDK
 * v3 presigner and verified here exactly as S3 verifies them (SigV4 query signature, expiry, signed
 * content-length). Bodies stream to disk, never buffered whole.
 */
export function createBuiltinStore(opts: BuiltinStoreOptions): BuiltinStore {
  const mountPath = '/s3';
  const endpoint = `${opts.publicUrl.replace(/\/+$/, '')}${mountPath}`;
  const presigner = createS3Store({ endpoint, region: 'us-east-1', bucket: opts.bucket, accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey });
  const root = path.resolve(opts.dir);
  const filePath = (key: string) => {
    if (!KEY_RE.test(key)) throw new Error(`invalid object key: ${key}`);
    return path.join(root, key);
  };
  const s: StoreState = {
    opts,
    mountPath,
    now: opts.now ?? (() => new Date()),
    limits: { ...DEFAULT_BUILTIN_STORE_LIMITS, ...opts.limits },
    corsOrigin: opts.corsOrigin ?? new URL(opts.publicUrl).origin,
    perIp: new Map(),
    putsPerObject: new Map(),
    filePath,
  };

  return {
    mountPath,
    filePath,
    handle(req, res) {
      const ip = req.socket.remoteAddress ?? 'unknown';
      if ((s.perIp.get(ip) ?? 0) >= s.limits.maxConnectionsPerIp) {
        s3Error(res, 503, 'SlowDown', `at most ${s.limits.maxConnectionsPerIp} requests from one address at a time; retry later`, { 'retry-after': '1' });
        return;
      }
      count(s.perIp, ip, 1);
      res.once('close', () => count(s.perIp, ip, -1));
      handleAsync(s, req, res).catch(() => s3Error(res, 500, 'InternalError', 'the store failed to serve the request'));
    },
    presignPut: (o) => presigner.presignPut(o),
    presignGet: (o) => presigner.presignGet(o),
    async head(key) {
      try {
        const st = await stat(filePath(key));
        return st.isFile() ? { sizeBytes: st.size } : null;
      } catch {
        return null;
      }
    },
    async delete(key) {
      await rm(filePath(key), { force: true });
    },
    // Its PUTs ask `beforePut` first, which refuses a claimed upload (409): the key stays as it is.
    seal: async (key) => key,
  };
}

/** One request to the store: its key, CORS, the presigned URL's check; then the PUT or the GET / HEAD. */
async function handleAsync(s: StoreState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { opts, corsOrigin } = s;
  const rawUrl = req.url ?? '/';
  const method = (req.method ?? 'GET').toUpperCase();
  const pathPart = rawUrl.split('?')[0]!;
  const prefix = `${s.mountPath}/${opts.bucket}/`;
  if (!pathPart.startsWith(prefix)) return s3Error(res, 404, 'NoSuchBucket', 'no such bucket');
  let key: string;
  try {
    key = decodeURIComponent(pathPart.slice(prefix.length));
  } catch {
    return s3Error(res, 400, 'InvalidURI', 'the object key is not valid');
  }
  if (!KEY_RE.test(key)) return s3Error(res, 400, 'InvalidURI', 'the object key is not valid');
  // CORS for the dashboard's origin only (uploads from the browser, the job page's player).
  const origin = req.headers.origin;
  res.setHeader('Vary', 'Origin');
  if (origin === corsOrigin) {
    res.setHeader('Access-Control-Allow-Origin', corsOrigin);
    res.setHeader('Access-Control-Expose-Headers', 'ETag');
  }
  if (method === 'OPTIONS') {
    const wanted = String(req.headers['access-control-request-method'] ?? '').toUpperCase();
    if (origin !== corsOrigin || !['PUT', 'GET', 'HEAD'].includes(wanted))
      return s3Error(res, 403, 'AccessForbidden', 'CORSResponse: this CORS request is not allowed');
    res.writeHead(204, {
      'Access-Control-Allow-Methods': 'GET, HEAD, PUT',
      'Access-Control-Allow-Headers': 'content-type',
      'Access-Control-Max-Age': '600',
      'content-length': 0,
    });
    res.end();
    return;
  }
  if (req.headers.authorization !== undefined) {
    return s3Error(res, 403, 'AccessDenied', 'a presigned URL must not carry an Authorization header');
  }
  if (method !== 'PUT' && method !== 'GET' && method !== 'HEAD') return s3Error(res, 405, 'MethodNotAllowed', 'only PUT, GET and HEAD are served');
  const check = verifyPresignedRequest({
    method,
    rawUrl,
    headers: req.headers,
    now: s.now(),
    secretFor: (id) => (id === opts.accessKeyId ? opts.secretAccessKey : undefined),
  });
  if (!check.ok) return s3Error(res, check.status, check.code, check.message);
  const file = s.filePath(key);
  if (method === 'PUT') return handlePut(s, req, res, { key, file, signedHeaders: check.signedHeaders });
  return handleGet(req, res, { method, rawUrl, key, file });
}

/** A presigned PUT: the body streamed to a part file of its own, which replaces the object once whole. */
async function handlePut(
  s: StoreState,
  req: IncomingMessage,
  res: ServerResponse,
  o: { key: string; file: string; signedHeaders: readonly string[] },
): Promise<void> {
  const { key, file, signedHeaders } = o;
  const { opts, limits, putsPerObject } = s;
  if (!signedHeaders.includes('content-length')) {
    return s3Error(res, 403, 'AccessDenied', 'upload URLs must sign content-length');
  }
  const expected = Number(req.headers['content-length']);
  if (!Number.isSafeInteger(expected) || expected < 0) return s3Error(res, 411, 'MissingContentLength', 'Content-Length is required');
  if ((putsPerObject.get(key) ?? 0) >= limits.maxPutsPerObject) {
    return s3Error(res, 503, 'SlowDown', `at most ${limits.maxPutsPerObject} uploads to one object at a time; retry later`, { 'retry-after': '1' });
  }
  count(putsPerObject, key, 1);
  res.once('close', () => count(putsPerObject, key, -1));
  // An upload that stalls is cut, so a stalled client holds neither a socket nor a part file.
  req.setTimeout(limits.putIdleMs, () => {
    s3Error(res, 400, 'RequestTimeout', `no data received for ${limits.putIdleMs / 1000} s; the upload was cut`);
    // A stalled client has nothing unread to lose: close at once. Destroying the request (not
    // only its socket, which the finished response has already let go of) ends the pipeline
    // below, so the part file is removed.
    req.destroy(new Error('upload idle timeout'));
  });
  const refused = await opts.beforePut?.(key);
  if (refused) return s3Error(res, 409, 'UploadAlreadyUsed', refused);
  await mkdir(path.dirname(file), { recursive: true });
  // Unique per attempt: concurrent PUTs to one URL each write their own part file, and the
  // last to finish replaces the object atomically (a pid+time name collided: issue 11, item 7).
  const tmp = `${file}.part-${randomBytes(12).toString('hex')}`;
  let received = 0;
  const md5 = createHash('md5');
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      received += chunk.length;
      if (received > expected) return cb(new Error('body longer than Content-Length'));
      md5.update(chunk);
      cb(null, chunk);
    },
  });
  try {
    await pipeline(req, counter, createWriteStream(tmp));
  } catch (err) {
    await rm(tmp, { force: true });
    // Our disk, not the client's body: S3's "try again later" (the client keeps its bytes).
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC')
      return s3Error(res, 503, 'ServiceUnavailable', "the store's disk is full (ENOSPC); retry later", { 'retry-after': '30' });
    return s3Error(res, 400, 'IncompleteBody', 'the body did not match Content-Length');
  }
  if (received !== expected) {
    await rm(tmp, { force: true });
    return s3Error(res, 400, 'IncompleteBody', 'the body did not match Content-Length');
  }
  const refusedNow = await opts.beforePut?.(key);
  if (refusedNow) {
    await rm(tmp, { force: true });
    return s3Error(res, 409, 'UploadAlreadyUsed', refusedNow);
  }
  await rename(tmp, file);
  res.writeHead(200, { etag: `"${md5.digest('hex')}"`, 'content-length': 0 });
  res.end();
}

/** A presigned GET or HEAD, with one byte range (`Range: bytes=a-b`, `a-`, `-n`) or none. */
async function handleGet(req: IncomingMessage, res: ServerResponse, o: { method: 'GET' | 'HEAD'; rawUrl: string; key: string; file: string }): Promise<void> {
  const { method, rawUrl, key, file } = o;
  let size: number;
  try {
    const st = await stat(file);
    if (!st.isFile()) throw new Error('not a file');
    size = st.size;
  } catch {
    return s3Error(res, 404, 'NoSuchKey', 'the object does not exist');
  }
  const ext = key.slice(key.lastIndexOf('.') + 1).toLowerCase();
  const params = new URLSearchParams(rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?') + 1) : '');
  const headers: Record<string, string | number> = {
    'content-type': contentTypeForExtension(ext, MIME) ?? 'application/octet-stream',
    'accept-ranges': 'bytes',
  };
  const disposition = params.get('response-content-disposition');
  if (disposition) headers['content-disposition'] = disposition;
  let start = 0;
  let end = size - 1;
  let status = 200;
  const range = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? ''));
  if (range && size > 0 && (range[1] || range[2])) {
    if (range[1]) {
      start = Number(range[1]);
      if (range[2]) end = Math.min(Number(range[2]), size - 1);
    } else {
      start = Math.max(0, size - Number(range[2]));
    }
    if (start > end || start >= size) {
      res.writeHead(416, { 'content-range': `bytes */${size}` });
      res.end();
      return;
    }
    status = 206;
    headers['content-range'] = `bytes ${start}-${end}/${size}`;
  }
  headers['content-length'] = size === 0 ? 0 : end - start + 1;
  res.writeHead(status, headers);
  if (method === 'HEAD' || size === 0) {
    res.end();
    return;
  }
  await pipeline(createReadStream(file, { start, end }), res);
}
