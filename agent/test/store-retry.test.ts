import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSafeFetch } from '@captionfarm/net';
import { parseWavHeader } from '@captionfarm/transcriber';
import { extractWhisperWav, startAudioTap } from '../src/audio-tap.ts';
import { downloadSource, uploadFile } from '../src/ingest.ts';
import { run } from './e2e-harness.ts';

// Transfers to and from our own store (presigned URLs) against a real HTTP server on loopback that
// plays a store restarting: it drops the connection or answers 503 before it serves.
let dir: string;
let server: Server;
let base: string;
/**
 * Per path, what each request gets in turn: drop the socket, a status, 'half' (the headers of the
 * whole body, half of it, then the socket dropped), 'refuse-unread' (a 409 before the body is read,
 * then the connection closed), 'discard' (a PUT's body read and thrown away, then 200), or serve
 * (store a PUT's body; a GET gets `bodies` or `bytes`, from its Range start with a 206 when it has one).
 */
const plans = new Map<string, ('drop' | 503 | 403 | 'half' | 'refuse-unread' | 'discard' | 'serve')[]>();
const seen: string[] = [];
const stored = new Map<string, Buffer>();
const bytes = randomBytes(300_000);
const bodies = new Map<string, Buffer>();

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cf-store-retry-'));
  server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const p = req.url!;
    seen.push(`${req.method} ${p}${req.headers.range ? ` ${req.headers.range}` : ''}`);
    const step = plans.get(p)?.shift() ?? 'serve';
    const body = bodies.get(p) ?? bytes;
    if (step === 'drop') return void req.socket.destroy();
    if (step === 'half') {
      res.writeHead(200, { 'content-length': body.length });
      return void res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => req.socket.destroy(), 50));
    }
    if (step === 'discard') {
      req.resume();
      return void req.on('end', () => res.writeHead(200).end());
    }
    if (step === 'refuse-unread') {
      // As the built-in store refuses (s3Error): the answer first, the body left unread, the connection closed after it.
      res.writeHead(409, { 'content-type': 'application/xml', connection: 'close' });
      return void res.end('<Error><Code>UploadAlreadyUsed</Code></Error>', () => {
        req.socket.end();
        req.resume();
      });
    }
    if (step !== 'serve') {
      req.resume();
      return void res.writeHead(step, { 'content-type': 'application/xml' }).end('<Error><Code>SlowDown</Code></Error>');
    }
    if (req.method === 'PUT') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      stored.set(p, Buffer.concat(chunks));
      return void res.writeHead(200).end();
    }
    const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? -1);
    if (from >= 0) {
      const rest = body.subarray(from);
      return void res.writeHead(206, { 'content-length': rest.length, 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` }).end(rest);
    }
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe('transfers to and from our own store', () => {
  it('upload: a PUT that got no answer, then a 503, is sent again whole, and the output arrives intact', async () => {
    const file = path.join(dir, 'out.mp4');
    await writeFile(file, bytes);
    plans.set('/outputs/a.mp4', ['drop', 503]);
    await uploadFile(`${base}/outputs/a.mp4`, file, bytes.length, 'video/mp4', new AbortController().signal);
    expect(seen.filter((s) => s === 'PUT /outputs/a.mp4')).toHaveLength(3);
    expect(stored.get('/outputs/a.mp4')?.equals(bytes)).toBe(true);
  });

  it('upload: a refusal (403) is not retried, and says what the store answered', async () => {
    const file = path.join(dir, 'out2.mp4');
    await writeFile(file, bytes);
    plans.set('/outputs/b.mp4', [403]);
    await expect(uploadFile(`${base}/outputs/b.mp4`, file, bytes.length, 'video/mp4', new AbortController().signal)).rejects.toThrow(
      /output upload answered HTTP 403: <Error><Code>SlowDown/,
    );
    expect(seen.filter((s) => s === 'PUT /outputs/b.mp4')).toHaveLength(1);
  });

  it('upload: a store that refuses before it reads the body gets its answer reported, not a broken write retried', async () => {
    const file = path.join(dir, 'out-big.mp4');
    const big = randomBytes(16 << 20);
    await writeFile(file, big);
    plans.set('/outputs/d.mp4', ['refuse-unread']);
    await expect(uploadFile(`${base}/outputs/d.mp4`, file, big.length, 'video/mp4', new AbortController().signal)).rejects.toThrow(
      /output upload answered HTTP 409: <Error><Code>UploadAlreadyUsed/,
    );
    expect(seen.filter((s) => s === 'PUT /outputs/d.mp4')).toHaveLength(1);
  });

  it('upload: a large output streams through bounded memory (it is never held whole)', async () => {
    // 256 MB, sparse: made at once, read as zeros.
    const file = path.join(dir, 'out-huge.mp4');
    const size = 256 << 20;
    await writeFile(file, '');
    await truncate(file, size);
    plans.set('/outputs/e.mp4', ['discard']);
    let peak = 0;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 5);
    try {
      await uploadFile(`${base}/outputs/e.mp4`, file, size, 'video/mp4', new AbortController().signal);
    } finally {
      clearInterval(sample);
    }
    // fetch's default redirect mode kept the whole body: a 300 MB upload peaked at 305 MB of buffers.
    expect(peak / 2 ** 20).toBeLessThan(96);
  });

  it('upload: a cancel while the agent waits to try again stops it at once, with no further PUT', async () => {
    const file = path.join(dir, 'out3.mp4');
    await writeFile(file, bytes);
    plans.set('/outputs/c.mp4', [503, 503, 503, 503, 503, 503, 503]);
    const cancel = new AbortController();
    const upload = uploadFile(`${base}/outputs/c.mp4`, file, bytes.length, 'video/mp4', cancel.signal);
    // After the first 503, the agent waits 0.5 s before the second try: cancel it there.
    await new Promise<void>((r) => server.once('request', () => setImmediate(r)));
    cancel.abort(new Error('cancelled by the client'));
    await expect(upload).rejects.toThrow();
    expect(seen.filter((s) => s === 'PUT /outputs/c.mp4')).toHaveLength(1);
  });

  it('download of an uploaded source: no answer, then a 503, then the bytes', async () => {
    plans.set('/uploads/src.mp4', ['drop', 503]);
    const dest = path.join(dir, 'source');
    const n = await downloadSource({
      source: { kind: 'upload', url: `${base}/uploads/src.mp4`, sizeBytes: bytes.length },
      dest,
      maxBytes: 1 << 30,
      safeFetch: createSafeFetch(),
      signal: new AbortController().signal,
    });
    expect(n).toBe(bytes.length);
    expect((await readFile(dest)).equals(bytes)).toBe(true);
    expect(seen.filter((s) => s === 'GET /uploads/src.mp4')).toHaveLength(3);
  });

  it('download of an uploaded source whose body breaks off halfway: the rest is fetched from the byte on disk, and the audio is made from the file', async () => {
    // A real MP4 (index first, so the audio extraction streams it), larger than the tap's sniff window.
    const mp4 = path.join(dir, 'talk.mp4');
    await run('ffmpeg', [
      '-y',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=s=320x240:r=25:d=4',
      '-f',
      'lavfi',
      '-i',
      'sine=f=440:d=4',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-b:v',
      '4M',
      '-c:a',
      'aac',
      '-movflags',
      '+faststart',
      mp4,
    ]);
    bodies.set('/uploads/talk.mp4', await readFile(mp4));
    plans.set('/uploads/talk.mp4', ['half']);
    const dest = path.join(dir, 'talk-source');
    const wav = path.join(dir, 'talk.wav');
    const signal = new AbortController().signal;
    const tap = startAudioTap(wav, signal);
    const whole = bodies.get('/uploads/talk.mp4')!;
    const n = await downloadSource({
      source: { kind: 'upload', url: `${base}/uploads/talk.mp4`, sizeBytes: whole.length },
      dest,
      maxBytes: 1 << 30,
      safeFetch: createSafeFetch(),
      signal,
      tap,
    });
    expect(n).toBe(whole.length);
    expect((await readFile(dest)).equals(whole)).toBe(true);
    const gets = seen.filter((s) => s.startsWith('GET /uploads/talk.mp4'));
    expect(gets).toHaveLength(2);
    expect(gets[1]).toMatch(/^GET \/uploads\/talk\.mp4 bytes=(\d+)-$/);
    expect(Number(/bytes=(\d+)-/.exec(gets[1]!)![1])).toBeGreaterThan(0);
    // The streamed extraction was stopped at the break: the pipeline makes the WAV from the file.
    expect(await tap.end()).toBeNull();
    expect(await extractWhisperWav(dest, wav, signal)).toBe(true);
    expect(parseWavHeader(await readFile(wav))).toMatchObject({ sampleRate: 16_000, channels: 1 });
  });
});
