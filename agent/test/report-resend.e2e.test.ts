import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeClip, startFarm, submitUpload, terminal, watchJob, type Farm } from './e2e-harness.ts';

/**
 * A TCP proxy in front of the control plane that plays its death at the worst moment: the first
 * agent -> control plane websocket message calling `path` is never passed on, and that connection
 * is cut on both sides, so the call is in flight and unanswered. Every later connection (the
 * agent's reconnect) is passed through untouched.
 */
async function cuttingProxy(target: URL, path: string): Promise<{ url: string; cuts: () => number; close(): Promise<void> }> {
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server = createServer((agentSide) => {
    const cpSide = createConnection({ host: target.hostname, port: Number(target.port) });
    for (const s of [agentSide, cpSide]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    const cut = () => {
      agentSide.destroy();
      cpSide.destroy();
    };
    cpSide.on('data', (d) => agentSide.write(d));
    cpSide.on('close', cut);
    agentSide.on('close', cut);
    // Agent -> control plane: the HTTP upgrade, then websocket frames (masked, as from any client).
    let pending = Buffer.alloc(0);
    let upgraded = false;
    agentSide.on('data', (d: Buffer) => {
      if (cuts > 0) return void cpSide.write(d);
      pending = Buffer.concat([pending, d]);
      if (!upgraded) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        cpSide.write(pending.subarray(0, end + 4));
        pending = pending.subarray(end + 4);
        upgraded = true;
      }
      for (;;) {
        if (pending.length < 2) return;
        let len = pending[1]! & 0x7f;
        let at = 2;
        if (len === 126) {
          if (pending.length < 4) return;
          len = pending.readUInt16BE(2);
          at = 4;
        } else if (len === 127) {
          if (pending.length < 10) return;
          len = Number(pending.readBigUInt64BE(2));
          at = 10;
        }
        const masked = (pending[1]! & 0x80) !== 0;
        const frameEnd = at + (masked ? 4 : 0) + len;
        if (pending.length < frameEnd) return;
        const frame = pending.subarray(0, frameEnd);
        pending = pending.subarray(frameEnd);
        const payload = Buffer.from(frame.subarray(frameEnd - len));
        if (masked) for (let i = 0; i < len; i++) payload[i]! ^= frame[at + (i % 4)]!;
        if ((frame[0]! & 0x0f) === 1 && payload.toString('utf8').includes(`"path":"${path}"`)) {
          cuts++;
          return cut();
        }
        cpSide.write(frame);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cuts: () => cuts,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let farm: Farm;
let clip: Buffer;
beforeAll(async () => {
  farm = await startFarm();
  clip = await readFile(await makeClip(farm.dir, 'clip.mp4', { width: 320, height: 240, seconds: 3, speech: 'Nothing is lost when the line drops.' }));
}, 120_000);
afterAll(async () => {
  await farm.close();
});

describe('a control plane that dies while a report is in flight', () => {
  // ingested trues the minutes up (the re-sent one must not charge twice); complete ends the job.
  it.each(['ingested', 'transcribed', 'complete'])(
    'loses no job: the unanswered %s is sent again once the agent has reconnected, and the job succeeds with one reserve and one settle',
    async (path) => {
      const proxy = await cuttingProxy(new URL(farm.url), path);
      const lines: string[] = [];
      const agent = await farm.startAgent({ controlPlaneUrl: proxy.url, name: `resend-${path}`, log: (m) => lines.push(m) });
      try {
        const { api, accountId } = await farm.account('pro', `resend-${path}`);
        const { job } = await watchJob(api, (await submitUpload(api, clip, { language: 'en' })).id, terminal);
        expect(proxy.cuts()).toBe(1);
        expect(job, JSON.stringify(job)).toMatchObject({ status: 'succeeded', failureCode: null });
        expect(lines.some((l) => l.startsWith(`${path}: `) && l.endsWith('sent again once the control plane answers'))).toBe(true);
        const ledger = (await farm.admin('GET', `/admin/v1/accounts/${accountId}/minutes`)).body.ledger.filter((l: { jobId: string }) => l.jobId === job.id);
        expect(ledger.map((l: { kind: string }) => l.kind).sort()).toEqual(['reserve', 'settle']);
      } finally {
        await agent.close();
        await proxy.close();
      }
    },
    120_000,
  );
});
