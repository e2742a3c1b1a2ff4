import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestS3Server, testS3ServerMissing, type TestS3Server } from '@captionfarm/storage/testing';
import { run, startFarm, submitUpload, terminal } from './e2e-harness.ts';

// Issue 13: with S3 configured, agents download sources and upload outputs straight to the S3
// server; the control plane hands out presigned URLs and carries no video bytes. Measured on the
// control plane's own HTTP server: every byte read from and written to each of its sockets (REST,
// the agents' websocket, the built-in store's routes), from the first request to the download.
// The same run on the built-in store is the baseline that shows the counter sees video bytes.
const missing = testS3ServerMissing();

interface Traffic {
  /** Every byte read from / written to the control plane's sockets (HTTP and websockets). */
  received: number;
  sent: number;
  /** The agents' websockets alone (tRPC: leases, heartbeats, progress). */
  websocket: number;
  /** The largest single HTTP exchange (request body read after its headers + response), with its route. */
  largest: { route: string; bytes: number };
}

/** Counts the bytes of every socket `server` accepts from now on, per HTTP exchange and for websockets. */
function countBytes(server: Server): { total(): Traffic; stop(): void } {
  const open = new Set<Socket>();
  const upgraded = new WeakSet<Socket>();
  let received = 0;
  let sent = 0;
  let websocket = 0;
  let largest = { route: '', bytes: 0 };
  const onConnection = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      received += socket.bytesRead;
      sent += socket.bytesWritten;
      if (upgraded.has(socket)) websocket += socket.bytesRead + socket.bytesWritten;
      open.delete(socket);
    });
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const read0 = socket.bytesRead;
    const written0 = socket.bytesWritten;
    res.once('close', () => {
      const bytes = socket.bytesRead - read0 + (socket.bytesWritten - written0);
      if (bytes > largest.bytes) largest = { route: `${req.method} ${(req.url ?? '').split('?')[0]}`, bytes };
    });
  };
  const onUpgrade = (_req: IncomingMessage, socket: Socket) => upgraded.add(socket);
  server.on('connection', onConnection);
  server.on('request', onRequest);
  server.on('upgrade', onUpgrade);
  return {
    total() {
      let r = received;
      let s = sent;
      let ws = websocket;
      for (const socket of open) {
        r += socket.bytesRead;
        s += socket.bytesWritten;
        if (upgraded.has(socket)) ws += socket.bytesRead + socket.bytesWritten;
      }
      return { received: r, sent: s, websocket: ws, largest };
    },
    stop() {
      server.off('connection', onConnection);
      server.off('request', onRequest);
      server.off('upgrade', onUpgrade);
    },
  };
}

interface Measured {
  sourceBytes: number;
  outputBytes: number;
  cp: Traffic;
  downloadOrigin: string;
}

describe.skipIf(missing)(`agents move video straight to S3 (MinIO)${missing ? ` - skipped: ${missing}` : ''}`, () => {
  let s3: TestS3Server;
  let source: Buffer;
  let dir: string;

  beforeAll(async () => {
    s3 = await startTestS3Server();
    // 4 s of 320x180 noise, lossless: ~11 MB of source (and ~3 MB of output) that stay cheap to render,
    // against kilobytes of API traffic.
    dir = await mkdtemp(path.join(tmpdir(), 'cf-s3-direct-'));
    const file = path.join(dir, 'source.mp4');
    await run('espeak-ng', ['-w', `${file}.wav`, 'Every byte of this video goes straight to the object store.']);
    await run('ffmpeg', [
      '-y',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=s=320x180:r=25:d=4,noise=alls=60:allf=t',
      '-i',
      `${file}.wav`,
      '-map',
      '0:v',
      '-map',
      '1:a',
      '-af',
      'apad',
      '-t',
      '4',
      '-c:a',
      'aac',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-qp',
      '0',
      '-pix_fmt',
      'yuv420p',
      file,
    ]);
    source = await readFile(file);
  }, 240_000);
  afterAll(async () => {
    await s3?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** One upload job through the public API with a real agent; the control plane's socket bytes around it. */
  async function measure(env: Record<string, string>): Promise<Measured> {
    const farm = await startFarm({ env });
    const counter = countBytes(farm.cp.server);
    try {
      const { api } = await farm.account('pro', 'direct');
      await farm.startAgent();
      const created = await submitUpload(api, source, { language: 'en' });
      // Polled every second (not faster): the API's own traffic is what is left to count.
      let job = created;
      const end = Date.now() + 280_000;
      while (!terminal(job)) {
        if (Date.now() > end) throw new Error(`job still ${job.status}/${job.phase}`);
        await new Promise((r) => setTimeout(r, 1000));
        job = (await api('GET', `/v1/automation-jobs/${created.id}`)).body;
      }
      expect(job.status, JSON.stringify(job)).toBe('succeeded');
      const res = await fetch(job.downloadUrl);
      expect(res.status).toBe(200);
      const output = Buffer.from(await res.arrayBuffer());
      const outFile = path.join(dir, `out-${created.id}.mp4`);
      await writeFile(outFile, output);
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', outFile]);
      expect(stdout.split('\n').filter(Boolean).sort()).toEqual(['aac', 'h264']);
      return { sourceBytes: source.length, outputBytes: output.length, cp: counter.total(), downloadOrigin: new URL(job.downloadUrl).origin };
    } finally {
      counter.stop();
      await farm.close();
    }
  }

  it('baseline, built-in store: the control plane carries the source and the output', async () => {
    const m = await measure({});
    console.log(`control plane bytes, built-in store: ${JSON.stringify(m)}`);
    // In: the client's upload and the agent's output. Out: the source to the agent, the output to the client.
    expect(m.cp.received).toBeGreaterThan(m.sourceBytes + m.outputBytes);
    expect(m.cp.sent).toBeGreaterThan(m.sourceBytes + m.outputBytes);
    expect(m.cp.largest.bytes).toBeGreaterThan(m.sourceBytes);
  });

  it('S3: the agent downloads the source from and uploads the output to S3; the control plane carries ~0 of the video bytes', async () => {
    const m = await measure(s3.env);
    const video = m.sourceBytes + m.outputBytes;
    const share = (m.cp.received + m.cp.sent) / video;
    console.log(`control plane bytes, S3: ${JSON.stringify(m)}; all of it ${(share * 100).toFixed(2)}% of the ${video} video bytes`);
    expect(m.downloadOrigin).toBe(new URL(s3.endpoint).origin);
    expect(m.sourceBytes).toBeGreaterThan(2_000_000);
    // No HTTP exchange carried even 2% of the source: API JSON only (time-independent).
    expect(m.cp.largest.bytes, JSON.stringify(m.cp.largest)).toBeLessThan(m.sourceBytes / 50);
    // The agent's websocket: leases, heartbeats and progress, about 1 KB/s however slow the machine.
    expect(m.cp.websocket).toBeLessThan(m.sourceBytes / 5);
    // All of it together is less than either file (the API polls and heartbeats grow with wall time).
    expect(m.cp.received).toBeLessThan(m.sourceBytes / 5);
    expect(m.cp.sent).toBeLessThan(m.outputBytes / 5);
  });
});
