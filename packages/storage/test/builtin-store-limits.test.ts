import { createServer, request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createBuiltinStore, type BuiltinStore, type BuiltinStoreOptions } from '../src/index.ts';

interface Started {
  store: BuiltinStore;
  dir: string;
  base: string;
  server: Server;
}
const started: Started[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) {
    s.server.closeAllConnections();
    await new Promise((r) => s.server.close(r));
    await rm(s.dir, { recursive: true, force: true });
  }
});

async function start(o: Partial<BuiltinStoreOptions> = {}): Promise<Started> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cf-store-limits-'));
  let store: BuiltinStore | undefined;
  const server = createServer((req, res) => store!.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  store = createBuiltinStore({ dir, publicUrl: base, bucket: 'cf', accessKeyId: 'k', secretAccessKey: 'test-secret-0123456789', ...o });
  const s = { store, dir, base, server };
  started.push(s);
  return s;
}

function put(url: string, body: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': body.length, 'content-type': 'video/mp4' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw client that declares `declared` bytes, sends `sent` of them and then stalls. */
function stalledPut(url: string, declared: number, sent = 10, localAddress?: string) {
  const u = new URL(url);
  const socket = connect({ host: u.hostname, port: Number(u.port), ...(localAddress ? { localAddress } : {}) });
  let response = '';
  socket.on('data', (d) => (response += d.toString()));
  socket.on('error', () => undefined);
  const opened = Date.now();
  const closed = new Promise<{ afterMs: number; response: string }>((resolve) => socket.on('close', () => resolve({ afterMs: Date.now() - opened, response })));
  socket.write(`PUT ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: video/mp4\r\nContent-Length: ${declared}\r\n\r\n`);
  socket.write(Buffer.alloc(sent, 7));
  return { socket, closed };
}

async function partFiles(dir: string): Promise<string[]> {
  const files = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return files.filter((f) => f.includes('.part'));
}

/** Polls `check` until it holds (no fixed sleeps). */
async function until(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('built-in store: concurrent PUTs to one upload URL', () => {
  it('12 parallel PUTs all succeed, the object is one whole body, and no part file is left', async () => {
    const s = await start({ limits: { maxPutsPerObject: 12 } });
    const size = 64 * 1024;
    const url = await s.store.presignPut({ key: 'uploads/same.mp4', contentLength: size, contentType: 'video/mp4', expiresInSeconds: 900 });
    // Three rounds: the old pid+time names collided in most rounds, not in every one.
    for (let round = 0; round < 3; round++) {
      const bodies = Array.from({ length: 12 }, (_, i) => Buffer.alloc(size, i + 1));
      // Twelve connections first, then every request written in one go, so the store starts them
      // within the same millisecond (what made pid+time part names collide).
      const u = new URL(url);
      const sockets = await Promise.all(
        bodies.map(
          () =>
            new Promise<Socket>((resolve) => {
              const socket: Socket = connect({ host: u.hostname, port: Number(u.port) }, () => resolve(socket));
            }),
        ),
      );
      const responses = sockets.map(
        (socket) =>
          new Promise<string>((resolve) => {
            let text = '';
            socket.on('data', (d) => (text += d.toString()));
            socket.on('close', () => resolve(text));
          }),
      );
      for (const [i, socket] of sockets.entries())
        socket.write(
          Buffer.concat([
            Buffer.from(`PUT ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`),
            bodies[i]!,
          ]),
        );
      const statuses = (await Promise.all(responses)).map((r) => r.slice(0, 12));
      expect(statuses).toEqual(Array(12).fill('HTTP/1.1 200'));
      const stored = await readFile(s.store.filePath('uploads/same.mp4'));
      expect(bodies.some((b) => b.equals(stored))).toBe(true);
    }
    expect(await partFiles(s.dir)).toEqual([]);
  });

  it('past the per-object cap the extra PUTs get 503 SlowDown with Retry-After, never 500', async () => {
    const s = await start({ limits: { maxPutsPerObject: 2 } });
    const url = await s.store.presignPut({ key: 'uploads/capped.mp4', contentLength: 1000, contentType: 'video/mp4', expiresInSeconds: 900 });
    const a = stalledPut(url, 1000);
    const b = stalledPut(url, 1000);
    await until(async () => (await partFiles(s.dir)).length === 2);
    const third = await new Promise<{ status: number; retryAfter: unknown; body: string }>((resolve, reject) => {
      const req = request(url, { method: 'PUT', headers: { 'content-length': 1000 } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }));
      });
      req.on('error', reject);
      req.end(Buffer.alloc(1000));
    });
    expect(third).toMatchObject({ status: 503, retryAfter: '1' });
    expect(third.body).toContain('SlowDown');
    a.socket.destroy();
    b.socket.destroy();
    await until(async () => (await partFiles(s.dir)).length === 0);
    expect((await put(url, Buffer.alloc(1000, 1))).status).toBe(200);
  });
});

describe('built-in store: stalled and cut uploads', () => {
  it('a PUT that stalls is answered 400 RequestTimeout, its connection closed and its part file removed', async () => {
    const s = await start({ limits: { putIdleMs: 1000 } });
    const url = await s.store.presignPut({ key: 'uploads/stall.mp4', contentLength: 5_000_000, contentType: 'video/mp4', expiresInSeconds: 900 });
    const c = stalledPut(url, 5_000_000);
    await until(async () => (await partFiles(s.dir)).length === 1);
    const { response } = await c.closed;
    expect(response).toMatch(/^HTTP\/1.1 400/);
    expect(response).toContain('RequestTimeout');
    await until(async () => (await partFiles(s.dir)).length === 0);
    expect(await s.store.head('uploads/stall.mp4')).toBeNull();
  });

  it('a PUT whose client goes away leaves no part file', async () => {
    const s = await start();
    const url = await s.store.presignPut({ key: 'uploads/gone.mp4', contentLength: 100_000, contentType: 'video/mp4', expiresInSeconds: 900 });
    const c = stalledPut(url, 100_000, 5000);
    await until(async () => (await partFiles(s.dir)).length === 1);
    c.socket.destroy();
    await until(async () => (await partFiles(s.dir)).length === 0);
  });

  it('past the per-address cap a request gets 503 SlowDown at once, without its body being read', async () => {
    const s = await start({ limits: { maxConnectionsPerIp: 3, putIdleMs: 60_000 } });
    const urls = await Promise.all(
      [1, 2, 3, 4].map((i) => s.store.presignPut({ key: `uploads/ip${i}.mp4`, contentLength: 1_000_000, contentType: 'video/mp4', expiresInSeconds: 900 })),
    );
    const held = urls.slice(0, 3).map((u) => stalledPut(u, 1_000_000));
    await until(async () => (await partFiles(s.dir)).length === 3);
    const fourth = stalledPut(urls[3]!, 1_000_000);
    const { response } = await fourth.closed;
    expect(response).toMatch(/^HTTP\/1.1 503/);
    expect(response).toMatch(/retry-after: 1/i);
    // Another address is not affected by this one's cap.
    const other = stalledPut(urls[3]!, 1_000_000, 10, '127.0.0.2');
    await until(async () => (await partFiles(s.dir)).length === 4);
    for (const h of [...held, other]) h.socket.destroy();
    await until(async () => (await partFiles(s.dir)).length === 0);
  });
});

describe('built-in store: beforePut guard', () => {
  it('refuses with 409 before reading the body, and again if the object was claimed during the upload', async () => {
    const claimed = new Set<string>();
    const s = await start({ beforePut: async (key) => (claimed.has(key) ? 'this upload was already used by a job; create a new upload' : null) });
    const url = await s.store.presignPut({ key: 'uploads/claim.mp4', contentLength: 20, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect((await put(url, Buffer.alloc(20, 1))).status).toBe(200);
    claimed.add('uploads/claim.mp4');
    const again = await put(url, Buffer.alloc(20, 2));
    expect(again.status).toBe(409);
    expect(again.body).toContain('UploadAlreadyUsed');
    expect(await readFile(s.store.filePath('uploads/claim.mp4'))).toEqual(Buffer.alloc(20, 1));

    // Claimed while the body is on its way: the old object stays.
    const url2 = await s.store.presignPut({ key: 'uploads/claim2.mp4', contentLength: 20, contentType: 'video/mp4', expiresInSeconds: 900 });
    expect((await put(url2, Buffer.alloc(20, 1))).status).toBe(200);
    const c = stalledPut(url2, 20, 10);
    await until(async () => (await partFiles(s.dir)).length === 1);
    claimed.add('uploads/claim2.mp4');
    c.socket.write(Buffer.alloc(10, 9));
    const { response } = await c.closed;
    expect(response).toMatch(/^HTTP\/1.1 409/);
    expect(await readFile(s.store.filePath('uploads/claim2.mp4'))).toEqual(Buffer.alloc(20, 1));
    expect(await partFiles(s.dir)).toEqual([]);
  });
});
