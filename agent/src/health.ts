/**
 * The agent's probes (`CAPTIONFARM_AGENT_HEALTH_LISTEN=host:port`): a Kubernetes or podman
 * health check of a process that has no other port.
 *
 *   GET /healthz  alive: 200 until the agent has closed (it is then on its way out), 503 after
 *   GET /readyz   ready for work: 200 while it is registered, connected and leasing; 503 while
 *                 it starts, is disconnected, or drains (ours on SIGTERM, or an admin's)
 *
 * Both answer the same JSON: { state, connected, nodeId, jobs, slots }.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentState } from './agent-state.ts';

export interface AgentHealth {
  /** leasing: registered and taking jobs; drained: an admin drained the node; draining/closed: our own stop. */
  state: 'starting' | 'leasing' | 'drained' | 'draining' | 'closed';
  /** Whether the websocket to the control plane is open. */
  connected: boolean;
  nodeId: string | null;
  /** Jobs running now, and at most. */
  jobs: number;
  slots: number;
}

export function healthOf(state: AgentState, o: { connected: boolean; jobs: number; slots: number }): AgentHealth {
  const kind = state.kind === 'registered' ? (state.drainedByAdmin ? 'drained' : 'leasing') : state.kind;
  return { state: kind, connected: o.connected, nodeId: state.kind === 'starting' ? null : (state.nodeId ?? null), jobs: o.jobs, slots: o.slots };
}

/** A probe's answer for a path: status and body (null: no such probe). */
export function probe(path: string, health: AgentHealth): { status: number; body: AgentHealth } | null {
  if (path === '/healthz') return { status: health.state === 'closed' ? 503 : 200, body: health };
  if (path === '/readyz') return { status: health.state === 'leasing' && health.connected ? 200 : 503, body: health };
  return null;
}

/** Serves the probes on host:port (port 0: any free one) until closed. */
export async function startHealthServer(o: { host: string; port: number; health: () => AgentHealth }): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const answer = req.method === 'GET' || req.method === 'HEAD' ? probe(path, o.health()) : null;
    if (!answer) {
      res.writeHead(req.method === 'GET' || req.method === 'HEAD' ? 404 : 405, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'GET /healthz or /readyz' } }));
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify(answer.body));
  });
  // A probe is one short request: no keep-alive connection holds the process at exit.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
