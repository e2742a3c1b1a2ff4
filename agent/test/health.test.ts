import { describe, expect, it } from 'vitest';
import { readAgentEnv } from '../src/env.ts';
import { healthOf, probe, startHealthServer, type AgentHealth } from '../src/health.ts';

const jobs = { connected: true, jobs: 1, slots: 2 };

describe("the agent's probes", () => {
  it('ready only while registered, connected and leasing; alive until closed', () => {
    const cases: [Parameters<typeof healthOf>[0], boolean, string, number, number][] = [
      [{ kind: 'starting' }, false, 'starting', 200, 503],
      [{ kind: 'registered', nodeId: 'n1', drainedByAdmin: false }, true, 'leasing', 200, 200],
      [{ kind: 'registered', nodeId: 'n1', drainedByAdmin: false }, false, 'leasing', 200, 503],
      [{ kind: 'registered', nodeId: 'n1', drainedByAdmin: true }, true, 'drained', 200, 503],
      [{ kind: 'draining', nodeId: 'n1' }, true, 'draining', 200, 503],
      [{ kind: 'closed', nodeId: 'n1' }, false, 'closed', 503, 503],
    ];
    for (const [state, connected, name, live, ready] of cases) {
      const h = healthOf(state, { ...jobs, connected });
      expect(h.state).toBe(name);
      expect(probe('/healthz', h)!.status, `${name} alive`).toBe(live);
      expect(probe('/readyz', h)!.status, `${name} ready (connected ${connected})`).toBe(ready);
    }
    expect(probe('/metrics', healthOf({ kind: 'starting' }, jobs))).toBeNull();
  });

  it('serves them over HTTP: JSON, no other path or method', async () => {
    let health: AgentHealth = healthOf({ kind: 'registered', nodeId: 'n1', drainedByAdmin: false }, jobs);
    const server = await startHealthServer({ host: '127.0.0.1', port: 0, health: () => health });
    try {
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ state: 'leasing', connected: true, nodeId: 'n1', jobs: 1, slots: 2 });
      health = healthOf({ kind: 'draining', nodeId: 'n1' }, jobs);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
      expect((await fetch(`${server.url}/healthz?x=1`)).status).toBe(200);
      expect((await fetch(`${server.url}/`)).status).toBe(404);
      expect((await fetch(`${server.url}/healthz`, { method: 'POST' })).status).toBe(405);
    } finally {
      await server.close();
    }
  });

  it('CAPTIONFARM_AGENT_HEALTH_LISTEN is host:port, refused otherwise', () => {
    expect(readAgentEnv({ CAPTIONFARM_AGENT_HEALTH_LISTEN: '0.0.0.0:8081' }).healthListen).toEqual({ host: '0.0.0.0', port: 8081 });
    expect(readAgentEnv({ CAPTIONFARM_AGENT_HEALTH_LISTEN: '[::]:8081' }).healthListen).toEqual({ host: '::', port: 8081 });
    expect(readAgentEnv({}).healthListen).toBeUndefined();
    expect(() => readAgentEnv({ CAPTIONFARM_AGENT_HEALTH_LISTEN: '8081' })).toThrow(/host:port/);
    expect(() => readAgentEnv({ CAPTIONFARM_AGENT_HEALTH_LISTEN: 'x:99999' })).toThrow(/host:port/);
    expect(() => readAgentEnv({ CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS: '10.0.0.0/40' })).toThrow(/CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS/);
  });
});
