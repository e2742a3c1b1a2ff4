import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/index.ts';
import { startHarness, type Harness } from './harness.ts';

/** A port nothing listens on (a server on port 0 tells it, then closes). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('CAPTIONFARM_METRICS_LISTEN', () => {
  let h: Harness;
  let closed = false;
  let metricsUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}`;
    h = await startHarness({ CAPTIONFARM_METRICS_LISTEN: `127.0.0.1:${port}` });
  });
  afterAll(async () => {
    if (!closed) await h?.close();
  });

  it('serves /metrics without the admin token, and nothing else; the API port still asks for the token', async () => {
    const res = await fetch(`${metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(await res.text()).toMatch(/^captionfarm_/m);
    expect((await fetch(`${metricsUrl}/v1/automation-jobs`)).status).toBe(404);
    expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(404);
    expect((await fetch(`${h.url}/metrics`)).status).toBe(401);
  });

  it('closes with the control plane', async () => {
    closed = true;
    await h.close();
    await expect(fetch(`${metricsUrl}/metrics`)).rejects.toThrow();
  });
});

describe('CAPTIONFARM_METRICS_LISTEN parsing', () => {
  it('takes host:port (IPv6 in brackets) and stops the control plane at start on anything else, a port over 65535 included', () => {
    expect(loadConfig({ CAPTIONFARM_METRICS_LISTEN: '[::1]:9100' }).metricsListen).toEqual({ host: '::1', port: 9100 });
    expect(loadConfig({}).metricsListen).toBeUndefined();
    for (const bad of ['9100', 'host:70000', '::1:9100'])
      expect(() => loadConfig({ CAPTIONFARM_METRICS_LISTEN: bad }), bad).toThrow(/CAPTIONFARM_METRICS_LISTEN/);
  });
});
