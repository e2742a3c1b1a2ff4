import { createServer, request, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinStore, createS3Store, type BuiltinStore } from '../src/index.ts';

let dir: string;
let server: Server;
let store: BuiltinStore;
let base: string;
let clock = () => new Date();

function send(
  url: string,
  init: { method: string; body?: Buffer; headers?: Record<string, string | number> },
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  // node:http, not fetch: fetch cannot send a Content-Length that disagrees with the body.
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method, headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers }));
    });
    req.on('error', reject);
    if (init.body) req.write(init.body);
    req.end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cf-store-'));
  server = createServer((req, res) => store.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  store = createBuiltinStore({ dir, publicUrl: base, bucket: 'cf', accessKeyId: 'test-key', secretAccessKey: 'test-secret-0123456789', now: () => clock() });
});
afterAll(async () => {
  server.close();
  await rm(dir, { recursive: true, force: true });
});

const bytes = Buffer.from('0123456789abcdef'.repeat(64));

describe('built-in store: presigned PUT', () => {
  it('accepts the exact bytes with 200 and stores them unchanged', async () => {
    const url = await store.presignPut({ key: 'uploads/a.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host');
    const res = await send(url, { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length, 'content-type': 'video/mp4' } });
    expect(res.status).toBe(200);
    expect(await readFile(store.filePath('uploads/a.mp4'))).toEqual(bytes);
    expect(await store.head('uploads/a.mp4')).toEqual({ sizeBytes: bytes.length });
  });

  it('rejects a different Content-Length with 403 and stores nothing', async () => {
    const url = await store.presignPut({ key: 'uploads/b.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    const shorter = bytes.subarray(0, 100);
    const res = await send(url, { method: 'PUT', body: shorter, headers: { 'content-length': shorter.length } });
    expect(res.status).toBe(403);
    expect(res.body).toContain('SignatureDoesNotMatch');
    expect(await store.head('uploads/b.mp4')).toBeNull();
  });

  it('rejects a tampered URL (other key in the path, changed expiry) with 403', async () => {
    const url = await store.presignPut({ key: 'uploads/c.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    const other = url.replace('uploads/c.mp4', 'uploads/d.mp4');
    expect((await send(other, { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length } })).status).toBe(403);
    const longer = url.replace('X-Amz-Expires=900', 'X-Amz-Expires=9000');
    expect((await send(longer, { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length } })).status).toBe(403);
    const sig = new URL(url);
    const s = sig.searchParams.get('X-Amz-Signature')!;
    sig.searchParams.set('X-Amz-Signature', (s[0] === 'a' ? 'b' : 'a') + s.slice(1));
    expect((await send(sig.toString(), { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length } })).status).toBe(403);
    expect(await store.head('uploads/d.mp4')).toBeNull();
  });

  it('rejects an expired URL with 403', async () => {
    const url = await store.presignPut({ key: 'uploads/e.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    clock = () => new Date(Date.now() + 901_000);
    try {
      const res = await send(url, { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length } });
      expect(res.status).toBe(403);
      expect(res.body).toContain('RequestExpired');
    } finally {
      clock = () => new Date();
    }
  });

  it('rejects a URL signed with another secret with 403', async () => {
    const foreign = createS3Store({ endpoint: `${base}/s3`, region: 'us-east-1', bucket: 'cf', accessKeyId: 'test-key', secretAccessKey: 'not-the-secret' });
    const url = await foreign.presignPut({ key: 'uploads/f.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect((await send(url, { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length } })).status).toBe(403);
    const otherId = createS3Store({
      endpoint: `${base}/s3`,
      region: 'us-east-1',
      bucket: 'cf',
      accessKeyId: 'someone-else',
      secretAccessKey: 'test-secret-0123456789',
    });
    const url2 = await otherId.presignPut({ key: 'uploads/f.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect((await send(url2, { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length } })).status).toBe(403);
  });

  it('rejects a PUT that carries an Authorization header with 403', async () => {
    const url = await store.presignPut({ key: 'uploads/g.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    const res = await send(url, { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length, authorization: 'Bearer cf_live_x' } });
    expect(res.status).toBe(403);
    expect(await store.head('uploads/g.mp4')).toBeNull();
  });

  it('rejects a PUT without a presigned query with 403', async () => {
    const res = await send(`${base}/s3/cf/uploads/h.mp4`, { method: 'PUT', body: bytes, headers: { 'content-length': bytes.length } });
    expect(res.status).toBe(403);
  });
});

describe('built-in store: presigned GET', () => {
  it('serves the object, ranges, and refuses a tampered GET URL', async () => {
    const url = await store.presignGet({ key: 'uploads/a.mp4', expiresInSeconds: 60 });
    const whole = await send(url, { method: 'GET' });
    expect(whole.status).toBe(200);
    expect(whole.body).toBe(bytes.toString());
    expect(whole.headers['content-type']).toBe('video/mp4');
    const part = await send(url, { method: 'GET', headers: { range: 'bytes=16-31' } });
    expect(part.status).toBe(206);
    expect(part.body).toBe('0123456789abcdef');
    expect((await send(url.replace('a.mp4', 'b.mp4'), { method: 'GET' })).status).toBe(403);
  });

  it('answers 404 for a presigned GET of a missing object', async () => {
    const url = await store.presignGet({ key: 'outputs/none.mp4', expiresInSeconds: 60 });
    expect((await send(url, { method: 'GET' })).status).toBe(404);
  });
});

describe('built-in store: CORS for the dashboard only', () => {
  it("answers a preflight from the dashboard's origin and refuses any other", async () => {
    const url = await store.presignPut({ key: 'uploads/cors.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    const ok = await send(url, {
      method: 'OPTIONS',
      headers: { origin: base, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe(base);
    expect(String(ok.headers['access-control-allow-methods'])).toContain('PUT');
    const evil = await send(url, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'PUT' } });
    expect(evil.status).toBe(403);
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    const put = await send(url, { method: 'PUT', body: bytes, headers: { origin: base, 'content-length': bytes.length, 'content-type': 'video/mp4' } });
    expect(put.status).toBe(200);
    expect(put.headers['access-control-allow-origin']).toBe(base);
    const get = await send(await store.presignGet({ key: 'uploads/cors.mp4', expiresInSeconds: 60 }), {
      method: 'GET',
      headers: { origin: 'https://evil.example' },
    });
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
  });
});
