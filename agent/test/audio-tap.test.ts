import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWavHeader } from '@captionfarm/transcriber';
import { createSafeFetch } from '@captionfarm/net';
import { extractWhisperWav, indexBeforeMedia, startAudioTap } from '../src/audio-tap.ts';
import { downloadSource } from '../src/ingest.ts';
import { ffmpegProcesses, run } from './e2e-harness.ts';

// The audio extraction that overlaps the download: real ffmpeg, a real HTTP server on loopback
// that holds back the end of the file until the test has seen what it waits for.

const shared = path.resolve(import.meta.dirname, '../../../shared/media');
let dir: string;
const files: Record<string, string> = {};
let server: Server;
let port: number;
/** Per path: the response is held after all but the last 64 KiB until `release` is called. */
const holds = new Map<string, { sent: Promise<void>; markSent: () => void; release: Promise<void>; doRelease: () => void }>();

function hold(p: string) {
  let markSent!: () => void;
  let doRelease!: () => void;
  const h = { sent: new Promise<void>((r) => (markSent = r)), markSent, release: new Promise<void>((r) => (doRelease = r)), doRelease };
  holds.set(p, h);
  return h;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cf-audio-tap-'));
  const video = ['-f', 'lavfi', '-i', 'testsrc2=s=320x568:r=25:d=8', '-i', path.join(shared, 'en.wav'), '-map', '0:v', '-map', '1:a', '-t', '8'];
  // As cameras write it (index after the media), the same moved to the front, and Matroska.
  files['/end.mp4'] = path.join(dir, 'end.mp4');
  await run('ffmpeg', ['-y', '-loglevel', 'error', ...video, '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', files['/end.mp4']]);
  files['/fast.mp4'] = path.join(dir, 'fast.mp4');
  await run('ffmpeg', ['-y', '-loglevel', 'error', '-i', files['/end.mp4'], '-c', 'copy', '-movflags', '+faststart', files['/fast.mp4']]);
  files['/clip.webm'] = path.join(dir, 'clip.webm');
  await run('ffmpeg', [
    '-y',
    '-loglevel',
    'error',
    ...video,
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-c:a',
    'libopus',
    files['/clip.webm'],
  ]);

  server = createServer((req, res) => void serve(req.url ?? '', res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
}, 120_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await rm(dir, { recursive: true, force: true });
});

/** Paths the store no longer has (404): a download broken off there cannot go on. */
const gone = new Set<string>();

async function serve(p: string, res: ServerResponse): Promise<void> {
  const name = p.split('?')[0]!;
  if (!files[name] || gone.has(p)) return void res.writeHead(404).end();
  const body = await readFile(files[name]);
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': body.length });
  const h = holds.get(p);
  if (!h) return void res.end(body);
  const cut = body.length - 64 * 1024;
  res.write(body.subarray(0, cut), () => h.markSent());
  await h.release;
  res.end(body.subarray(cut));
}

const url = (p: string) => `http://127.0.0.1:${port}${p}`;
const download = (p: string, dest: string, signal: AbortSignal, tap?: ReturnType<typeof startAudioTap>) =>
  downloadSource({ source: { kind: 'upload', url: url(p), sizeBytes: 1 }, dest, maxBytes: 1 << 30, safeFetch: createSafeFetch(), signal, tap });

async function until(what: string, ok: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const wavData = async (file: string) => {
  const buf = await readFile(file);
  const info = parseWavHeader(buf)!;
  expect(info).toMatchObject({ format: 1, channels: 1, sampleRate: 16_000, bitsPerSample: 16 });
  return buf.subarray(info.dataOffset, info.dataOffset + info.dataBytes);
};

describe('audio extraction overlapped with the download', () => {
  it('an MP4 indexed at its front: the WAV is written while the download is still held back, and is the one made from the whole file', async () => {
    const work = await mkdtemp(path.join(dir, 'job-'));
    const wav = path.join(work, 'audio-16k.wav');
    const h = hold('/fast.mp4?a');
    const tap = startAudioTap(wav, new AbortController().signal);
    const downloading = download('/fast.mp4?a', path.join(work, 'source'), new AbortController().signal, tap);
    // Ordering, not timing: the last 64 KiB stay on the server until ffmpeg has written audio.
    await h.sent;
    await until('the streamed WAV to grow', async () => existsSync(wav) && (await stat(wav)).size > 64 * 1024);
    h.doRelease();
    await downloading;
    expect(await tap.end()).toBe(wav);

    const fromFile = path.join(work, 'from-file.wav');
    expect(await extractWhisperWav(path.join(work, 'source'), fromFile, new AbortController().signal)).toBe(true);
    const [streamed, whole] = [await wavData(wav), await wavData(fromFile)];
    expect(streamed.length / 2 / 16_000).toBeGreaterThan(7.5);
    expect(streamed.equals(whole)).toBe(true);
  });

  it('Matroska/WebM is streamed too', async () => {
    const work = await mkdtemp(path.join(dir, 'job-'));
    const wav = path.join(work, 'audio-16k.wav');
    const tap = startAudioTap(wav, new AbortController().signal);
    await download('/clip.webm', path.join(work, 'source'), new AbortController().signal, tap);
    expect(await tap.end()).toBe(wav);
    expect((await wavData(wav)).length / 2 / 16_000).toBeGreaterThan(7.5);
  });

  it('an MP4 indexed at its end is not piped to ffmpeg (it would give an empty WAV); extracted from the file it gives all the audio', async () => {
    const work = await mkdtemp(path.join(dir, 'job-'));
    const wav = path.join(work, 'audio-16k.wav');
    const h = hold('/end.mp4?b');
    const tap = startAudioTap(wav, new AbortController().signal);
    const downloading = download('/end.mp4?b', path.join(work, 'source'), new AbortController().signal, tap);
    await h.sent;
    expect(await ffmpegProcesses(work)).toEqual([]);
    h.doRelease();
    await downloading;
    expect(await tap.end()).toBeNull();
    expect(existsSync(wav)).toBe(false);
    expect(await extractWhisperWav(path.join(work, 'source'), wav, new AbortController().signal)).toBe(true);
    expect((await wavData(wav)).length / 2 / 16_000).toBeGreaterThan(7.5);
  });

  it('a cancel during the download stops ffmpeg and leaves no WAV', async () => {
    const work = await mkdtemp(path.join(dir, 'job-'));
    const wav = path.join(work, 'audio-16k.wav');
    const h = hold('/fast.mp4?c');
    const job = new AbortController();
    const tap = startAudioTap(wav, job.signal);
    const downloading = download('/fast.mp4?c', path.join(work, 'source'), job.signal, tap);
    await h.sent;
    await until('ffmpeg to read the pipe', async () => (await ffmpegProcesses(work)).length === 1);
    job.abort(new Error('cancelled by the test'));
    await expect(downloading).rejects.toThrow();
    await tap.cancel();
    h.doRelease();
    expect(await ffmpegProcesses(work)).toEqual([]);
    expect(existsSync(wav)).toBe(false);
    expect(existsSync(path.join(work, 'source'))).toBe(false);
  });

  it('a failed download stops ffmpeg too', async () => {
    const work = await mkdtemp(path.join(dir, 'job-'));
    const wav = path.join(work, 'audio-16k.wav');
    const tap = startAudioTap(wav, new AbortController().signal);
    const signal = new AbortController().signal;
    // The server cuts the connection after the head: ffmpeg was started on it. The object is gone
    // by the time the agent asks for the rest (404), so the download fails for good.
    const h = hold('/fast.mp4?d');
    const downloading = download('/fast.mp4?d', path.join(work, 'source'), signal, tap);
    await h.sent;
    await until('ffmpeg to read the pipe', async () => (await ffmpegProcesses(work)).length === 1);
    gone.add('/fast.mp4?d');
    server.closeAllConnections();
    await expect(downloading).rejects.toMatchObject({ code: 'ingest-failed' });
    await tap.cancel();
    h.doRelease();
    expect(await ffmpegProcesses(work)).toEqual([]);
    expect(existsSync(wav)).toBe(false);
  });
});

describe('indexBeforeMedia', () => {
  const box = (type: string, size = 16) => {
    const b = Buffer.alloc(Math.max(8, size));
    b.writeUInt32BE(size, 0);
    b.write(type, 4, 'latin1');
    return b;
  };
  it('reads the top-level boxes of an ISO file', () => {
    expect(indexBeforeMedia(Buffer.concat([box('ftyp', 24), box('moov', 100)]))).toBe(true);
    expect(indexBeforeMedia(Buffer.concat([box('ftyp', 24), box('free'), box('mdat', 100)]))).toBe(false);
    // The head ends inside a box that is not the index: more bytes are needed.
    expect(indexBeforeMedia(Buffer.concat([box('ftyp', 24), box('free', 4096).subarray(0, 100)]))).toBeUndefined();
    expect(indexBeforeMedia(box('ftyp').subarray(0, 6))).toBeUndefined();
  });
  it('64-bit box sizes and a box that runs to the end of the file', () => {
    const large = Buffer.alloc(16);
    large.writeUInt32BE(1, 0);
    large.write('free', 4, 'latin1');
    large.writeBigUInt64BE(16n, 8);
    expect(indexBeforeMedia(Buffer.concat([box('ftyp', 24), large, box('moov')]))).toBe(true);
    expect(indexBeforeMedia(Buffer.concat([box('ftyp', 24), box('mdat', 0)]))).toBe(false);
  });
  it('other containers are streamed', () => {
    expect(indexBeforeMedia(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0, 0, 0]))).toBe(true); // EBML (Matroska)
  });
});
