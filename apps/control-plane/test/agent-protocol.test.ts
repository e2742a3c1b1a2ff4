import { randomUUID } from 'node:crypto';
import type { TRPCClient } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRouter } from '../src/index.ts';
import { agentClient, agentToken, startHarness, until, TEST_AGENT_CAPABILITIES as caps, type Harness } from './harness.ts';

let h: Harness;
const clients: { close(): void }[] = [];

function connect(token: string): TRPCClient<AgentRouter> {
  const c = agentClient(h.url, token);
  clients.push(c);
  return c.agent;
}
function connectWs(token: string) {
  const c = agentClient(h.url, token);
  clients.push(c);
  return { ws: c, client: c.agent };
}

beforeAll(async () => {
  // Leases of a minute: anything a test sees sooner than that is not lease expiry.
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000, disconnectGraceMs: 300 } });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await h.close();
});

const token = () => agentToken(h, 't');

describe('agent protocol over the websocket', () => {
  it('refuses unknown tokens and nodes registered with another token', async () => {
    const stranger = connect('cf_agent_nope');
    await expect(stranger.register.mutate({ nodeName: 'x', capabilities: caps })).rejects.toThrow(/agent token/);
    const a = connect(await token());
    const { nodeId } = await a.register.mutate({ nodeName: 'node-a', capabilities: caps });
    const b = connect(await token());
    await expect(b.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() })).rejects.toThrow(/not registered/);
  });

  it('leases are idempotent per request id, guarded by the lease id, and the account concurrency holds', async () => {
    const { api } = await h.account('free', 'protocol');
    const template = (await api('GET', '/v1/templates')).body.templates[0].id;
    const j1 = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/1.mp4', templateId: template })).body;
    const j2 = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/2.mp4', templateId: template })).body;
    const agent = connect(await token());
    const { nodeId, leaseMs } = await agent.register.mutate({ nodeName: 'node-b', capabilities: caps });
    expect(leaseMs).toBe(60_000);
    const requestId = randomUUID();
    const first = await agent.lease.mutate({ nodeId, slots: 2, requestId });
    // Free plan: one job at a time, so only the older one is leased.
    expect(first.map((j) => j.jobId)).toEqual([j1.id]);
    expect(first[0]).toMatchObject({
      attempt: 1,
      source: { kind: 'url', url: 'https://v.example.com/1.mp4' },
      format: 'mp4',
      quality: 'high',
      maxInputSeconds: 180,
      frameBudget: 921_600,
    });
    // A lease re-sent after a reconnect answers the same, and leases nothing more.
    expect(await agent.lease.mutate({ nodeId, slots: 2, requestId })).toEqual(first);
    expect(await agent.lease.mutate({ nodeId, slots: 2, requestId: randomUUID() })).toEqual([]);
    const { jobId, leaseId } = first[0]!;
    expect((await api('GET', `/v1/automation-jobs/${jobId}`)).body).toMatchObject({ status: 'running', phase: 'ingesting' });

    // Writes with another lease id are refused.
    expect(await agent.progress.mutate({ nodeId, jobId, leaseId: 'stale', phase: 'rendering', percent: 50 })).toEqual({ ok: false, reason: 'lease-lost' });
    expect(await agent.progress.mutate({ nodeId, jobId, leaseId, phase: 'rendering', percent: 40 })).toEqual({ ok: true });
    // Percent never goes back within rendering.
    await agent.progress.mutate({ nodeId, jobId, leaseId, phase: 'rendering', percent: 30 });
    expect((await api('GET', `/v1/automation-jobs/${jobId}`)).body).toMatchObject({ phase: 'rendering', percent: 40 });
    expect(
      await agent.heartbeat.mutate({
        nodeId,
        leases: [
          { jobId, leaseId },
          { jobId: j2.id, leaseId: 'x' },
        ],
      }),
    ).toEqual({ lost: [j2.id], drain: false });

    // fail, then the same fail re-sent: both ok, one refund.
    const fail = { nodeId, jobId, leaseId, failureCode: 'render-failed' as const, failureReason: 'test' };
    expect(await agent.fail.mutate(fail)).toEqual({ ok: true });
    expect(await agent.fail.mutate(fail)).toEqual({ ok: true });
    expect((await api('GET', `/v1/automation-jobs/${jobId}`)).body).toMatchObject({ status: 'failed', failureCode: 'render-failed' });
    // Now the second job of the account can run.
    expect((await agent.lease.mutate({ nodeId, slots: 2, requestId: randomUUID() })).map((j) => j.jobId)).toEqual([j2.id]);
  });

  it('a drained node leases nothing and is told so; undrain resumes; cancel reaches the lease holder', async () => {
    const { api } = await h.account('pro', 'drainee');
    const template = (await api('GET', '/v1/templates')).body.templates[0].id;
    const agent = connect(await token());
    const { nodeId } = await agent.register.mutate({ nodeName: 'node-c', capabilities: caps });
    const events: unknown[] = [];
    // Resuming from event 0 replays every event of this new node, so the drain below is seen
    // however late the subscription starts on the server (no sleep to wait for it).
    const sub = agent.events.subscribe({ nodeId, lastEventId: '0' }, { onData: (e) => events.push((e as { data: unknown }).data) });
    expect((await h.admin('POST', `/nodes/${nodeId}/drain`)).status).toBe(200);
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/3.mp4', templateId: template })).body;
    expect(await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() })).toEqual([]);
    expect((await agent.heartbeat.mutate({ nodeId, leases: [] })).drain).toBe(true);
    await h.admin('POST', `/nodes/${nodeId}/undrain`);
    const [leased] = await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
    expect(leased?.jobId).toBe(job.id);
    await api('POST', `/v1/automation-jobs/${job.id}/cancel`);
    const deadline = Date.now() + 5000;
    while (!events.some((e) => (e as { type: string }).type === 'cancel') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual(expect.arrayContaining([{ type: 'drain' }, { type: 'undrain' }, { type: 'cancel', jobId: job.id }]));
    // Anything the agent sends for the cancelled job is answered job-ended; nothing changes.
    expect(await agent.complete.mutate({ nodeId, jobId: job.id, leaseId: leased!.leaseId, resolution: { width: 2, height: 2 }, outputBytes: 1 })).toEqual({
      ok: false,
      reason: 'job-ended',
    });
    expect((await api('GET', `/v1/automation-jobs/${job.id}`)).body.status).toBe('cancelled');
    sub.unsubscribe();
  });

  // Issue 11 item 17: a crashed agent's job showed `running/rendering <old %>` until its lease expired.
  it('a node whose websocket closes loses its jobs to the queue after the grace; 3 losses fail it with internal, one reserve and one refund', async () => {
    const { api, accountId } = await h.account('pro', 'crashy');
    const template = (await api('GET', '/v1/templates')).body.templates[0].id;
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/crash.mp4', templateId: template })).body;
    const agentToken = await token();
    for (let attempt = 1; attempt <= 3; attempt++) {
      const { ws, client } = connectWs(agentToken);
      const { nodeId } = await client.register.mutate({ nodeName: 'crashy-node', capabilities: caps });
      const [leased] = await client.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
      expect(leased).toMatchObject({ jobId: job.id, attempt });
      await client.progress.mutate({ nodeId, jobId: job.id, leaseId: leased!.leaseId, phase: 'rendering', percent: 40 });
      expect((await api('GET', `/v1/automation-jobs/${job.id}`)).body).toMatchObject({ status: 'running', phase: 'rendering', percent: 40 });
      ws.close(); // the agent dies: its socket closes, no release is sent
      const seen = await until(
        async () => {
          const r = (await api('GET', `/v1/automation-jobs/${job.id}`)).body;
          return r.status !== 'running' && r;
        },
        10_000,
        'the job to leave running',
      );
      if (attempt < 3) expect(seen).toMatchObject({ status: 'queued', phase: 'queued', percent: null, failureCode: null });
      else expect(seen).toMatchObject({ status: 'failed', phase: 'failed', failureCode: 'internal' });
      const nodes = (await h.admin('GET', '/nodes')).body;
      expect(nodes.nodes.find((n: { id: string }) => n.id === nodeId)?.state).toBe('offline');
    }
    const ledger = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.ledger.filter((l: { jobId: string }) => l.jobId === job.id);
    expect(ledger.map((l: { kind: string }) => l.kind).sort()).toEqual(['refund', 'reserve']);
  });

  it('a node that reconnects within the grace keeps its jobs', async () => {
    const { api } = await h.account('pro', 'blippy');
    const template = (await api('GET', '/v1/templates')).body.templates[0].id;
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/blip.mp4', templateId: template })).body;
    const agentToken = await token();
    const first = connectWs(agentToken);
    const { nodeId } = await first.client.register.mutate({ nodeName: 'blippy-node', capabilities: caps });
    const [leased] = await first.client.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
    expect(leased?.jobId).toBe(job.id);
    // A witness node on the same socket that does not come back: the socket's close starts its grace
    // in the same call as any grace of blippy-node, so once the witness's job is back in the queue,
    // blippy-node's grace is over too (no sleep guessing how long "past the grace" is on a busy machine).
    const witnessJob = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/witness.mp4', templateId: template })).body;
    const witness = await first.client.register.mutate({ nodeName: 'witness-node', capabilities: caps });
    expect((await first.client.lease.mutate({ nodeId: witness.nodeId, slots: 1, requestId: randomUUID() })).map((j) => j.jobId)).toEqual([witnessJob.id]);
    const second = connectWs(agentToken);
    first.ws.close();
    expect(await second.client.heartbeat.mutate({ nodeId, leases: [{ jobId: job.id, leaseId: leased!.leaseId }] })).toEqual({ lost: [], drain: false });
    await until(
      async () => (await api('GET', `/v1/automation-jobs/${witnessJob.id}`)).body.status === 'queued',
      10_000,
      "the witness node's job to go back to the queue after the grace",
    );
    // Past the grace: the node spoke on its new socket, so nothing was taken from it.
    expect((await api('GET', `/v1/automation-jobs/${job.id}`)).body).toMatchObject({ status: 'running' });
    const states = new Map((await h.admin('GET', '/nodes')).body.nodes.map((n: { id: string; state: string }) => [n.id, n.state]));
    expect([states.get(nodeId), states.get(witness.nodeId)]).toEqual(['online', 'offline']);
    expect(await second.client.heartbeat.mutate({ nodeId, leases: [{ jobId: job.id, leaseId: leased!.leaseId }] })).toEqual({ lost: [], drain: false });
  });
});
