import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { apiFor } from '../../apps/control-plane/test/harness.ts';
import { terminal, watchJob } from './e2e-harness.ts';

// The benches' and e2e suites' job poll on a loaded machine: a connection the server drops (reset,
// or closed without an answer) is retried with a bounded backoff instead of failing the run.

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

/** A loopback job API whose nth GET (1-based) is handled by `drop(n)`: 'reset' (RST), 'close' (FIN, no answer) or an answer. */
async function jobServer(drop: (n: number) => 'reset' | 'close' | null, succeedAt: number): Promise<{ url: string; requests: () => number }> {
  let n = 0;
  server = createServer((req, res) => {
    n++;
    const how = drop(n);
    if (how === 'reset') return req.socket.resetAndDestroy();
    if (how === 'close') return req.socket.destroy();
    const done = n >= succeedAt;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'job_1', status: done ? 'succeeded' : 'running', phase: done ? 'done' : 'render', percent: done ? 100 : n }));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => n };
}

describe('watchJob', () => {
  it('retries polls whose connection is reset or closed without an answer, and returns the terminal job', async () => {
    const s = await jobServer((n) => (n === 2 ? 'reset' : n === 3 ? 'close' : n === 5 ? 'reset' : null), 6);
    const { job, seen } = await watchJob(apiFor(s.url, 'key'), 'job_1', terminal, 30_000);
    expect(job.status).toBe('succeeded');
    // Requests 1, 4 and 6 were answered; 2, 3 and 5 were dropped and retried.
    expect(s.requests()).toBe(6);
    expect(seen.map((x) => x.percent)).toEqual([1, 4, 100]);
  });

  it('gives up after a bounded number of dropped polls in a row, with the socket error', async () => {
    const s = await jobServer(() => 'reset', Number.POSITIVE_INFINITY);
    await expect(watchJob(apiFor(s.url, 'key'), 'job_1', terminal, 60_000)).rejects.toThrow(/polling job job_1 failed 7 times in a row: .*ECONNRESET/);
    expect(s.requests()).toBe(7);
  });

  it('stops retrying at the deadline', async () => {
    const s = await jobServer(() => 'close', Number.POSITIVE_INFINITY);
    await expect(watchJob(apiFor(s.url, 'key'), 'job_1', terminal, 250)).rejects.toThrow(/failed \d times in a row/);
    // 0.1 s, then 0.2 s would pass the 0.25 s deadline: no third try.
    expect(s.requests()).toBeLessThanOrEqual(2);
  });
});
