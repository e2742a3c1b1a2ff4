import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Store, type ObjectStore } from '../src/index.ts';
import { startTestS3Server, testS3ServerMissing, type TestS3Server } from '../src/testing.ts';

// The S3 path against a real S3 server (MinIO on loopback, one per file): the spec's presigned
// URL rules hold on the server, not only in our built-in store. Skipped only when the MinIO binary
// is absent on this machine; on CI (CI=true) its absence fails the file.
const missing = testS3ServerMissing();

function send(
  url: string,
  init: { method: string; body?: Buffer; headers?: Record<string, string | number> },
): Promise<{ status: number; body: Buffer; headers: Record<string, unknown> }> {
  // node:http, not fetch: fetch cannot send a Content-Length that disagrees with the body. The
  // server may answer 403 before it reads the body and close the socket: the answer counts.
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(url, { method: init.method, headers: init.headers }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (init.body) req.write(init.body);
    req.end();
  });
}

const bytes = Buffer.from('captionfarm-s3-'.repeat(4096));
const put = (url: string, body: Buffer, length = body.length) =>
  send(url, { method: 'PUT', body, headers: { 'content-length': length, 'content-type': 'video/mp4' } });

describe.skipIf(missing)(`S3 store against a real S3 server (MinIO)${missing ? ` - skipped: ${missing}` : ''}`, () => {
  let s3: TestS3Server;
  let store: ObjectStore;

  beforeAll(async () => {
    s3 = await startTestS3Server();
    store = createS3Store(s3);
  });
  afterAll(async () => {
    await s3?.close();
  });

  it('a presigned PUT of the exact bytes is stored; a presigned GET returns them unchanged, with the download name', async () => {
    const url = await store.presignPut({ key: 'uploads/exact.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect(new URL(url).origin).toBe(new URL(s3.endpoint).origin);
    expect((await put(url, bytes)).status).toBe(200);
    expect(await store.head('uploads/exact.mp4')).toEqual({ sizeBytes: bytes.length });

    const get = await send(await store.presignGet({ key: 'uploads/exact.mp4', expiresInSeconds: 60, downloadName: 'captioned-job_1.mp4' }), { method: 'GET' });
    expect(get.status).toBe(200);
    expect(get.body.equals(bytes)).toBe(true);
    expect(get.headers['content-disposition']).toBe('attachment; filename="captioned-job_1.mp4"');

    const range = await send(await store.presignGet({ key: 'uploads/exact.mp4', expiresInSeconds: 60 }), { method: 'GET', headers: { range: 'bytes=15-29' } });
    expect(range.status).toBe(206);
    expect(range.body.toString()).toBe('captionfarm-s3-');
  });

  it('a presigned PUT with another Content-Length gets 403 and stores nothing', async () => {
    const url = await store.presignPut({ key: 'uploads/size.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    const longer = Buffer.concat([bytes, Buffer.from('x')]);
    const more = await put(url, longer);
    expect(more.status).toBe(403);
    expect(more.body.toString()).toContain('SignatureDoesNotMatch');
    expect((await put(url, bytes.subarray(1))).status).toBe(403);
    expect(await store.head('uploads/size.mp4')).toBeNull();
    // The same URL still takes the announced size.
    expect((await put(url, bytes)).status).toBe(200);
  });

  it('expired PUT and GET URLs get 403', async () => {
    const key = 'uploads/expired.mp4';
    const url = await store.presignPut({ key, contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect((await put(url, bytes)).status).toBe(200);
    // Signed 16 minutes ago for 15 minutes: expired one minute ago.
    const past = createS3Store(s3, { now: () => new Date(Date.now() - 16 * 60_000) });
    const expiredPut = await put(
      await past.presignPut({ key: 'uploads/expired-2.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 }),
      bytes,
    );
    expect(expiredPut.status).toBe(403);
    expect(expiredPut.body.toString()).toContain('expired');
    expect(await store.head('uploads/expired-2.mp4')).toBeNull();
    const expiredGet = await send(await past.presignGet({ key, expiresInSeconds: 900 }), { method: 'GET' });
    expect(expiredGet.status).toBe(403);
    expect(expiredGet.body.includes(bytes.subarray(0, 64))).toBe(false);
  });

  it('tampered URLs get 403: another key, a longer expiry, an edited signature, another secret', async () => {
    const key = 'uploads/tamper.mp4';
    const putUrl = await store.presignPut({ key, contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect((await put(putUrl, bytes)).status).toBe(200);
    const getUrl = await store.presignGet({ key, expiresInSeconds: 60 });

    const otherKey = new URL(putUrl);
    otherKey.pathname = otherKey.pathname.replace('tamper.mp4', 'tamper2.mp4');
    expect((await put(otherKey.toString(), bytes)).status).toBe(403);
    expect(await store.head('uploads/tamper2.mp4')).toBeNull();

    const longer = new URL(getUrl);
    longer.searchParams.set('X-Amz-Expires', '604800');
    expect((await send(longer.toString(), { method: 'GET' })).status).toBe(403);

    const sig = new URL(getUrl);
    const s = sig.searchParams.get('X-Amz-Signature')!;
    sig.searchParams.set('X-Amz-Signature', `${s[0] === 'a' ? 'b' : 'a'}${s.slice(1)}`);
    expect((await send(sig.toString(), { method: 'GET' })).status).toBe(403);

    const foreign = createS3Store({ ...s3, secretAccessKey: `${s3.secretAccessKey}x` });
    expect((await send(await foreign.presignGet({ key, expiresInSeconds: 60 }), { method: 'GET' })).status).toBe(403);
    const stranger = createS3Store({ ...s3, accessKeyId: 'someone-else' });
    expect(
      (
        await put(
          await stranger.presignPut({ key: 'uploads/stranger.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 }),
          bytes,
        )
      ).status,
    ).toBe(403);

    // The untouched URL still works: the 403s came from the edits.
    expect((await send(getUrl, { method: 'GET' })).body.equals(bytes)).toBe(true);
  });

  it('head of a missing object is null; delete removes an object and deleting a missing one is no error', async () => {
    expect(await store.head('outputs/none.mp4')).toBeNull();
    const url = await store.presignPut({ key: 'outputs/gone.mp4', contentLength: bytes.length, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect((await put(url, bytes)).status).toBe(200);
    await store.delete('outputs/gone.mp4');
    expect(await store.head('outputs/gone.mp4')).toBeNull();
    expect((await send(await store.presignGet({ key: 'outputs/gone.mp4', expiresInSeconds: 60 }), { method: 'GET' })).status).toBe(404);
    await store.delete('outputs/gone.mp4');
  });
});
