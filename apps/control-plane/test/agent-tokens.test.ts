import { randomUUID } from 'node:crypto';
import { ErrorBodySchema, type AgentEvent } from '@captionfarm/contracts';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createAgentHub } from '../src/agents/hub.ts';
import { createAgentRouter } from '../src/agents/router.ts';
import { TOKEN_REVOKED_CLOSE } from '../src/agents/sockets.ts';
import { agentClient, startHarness, until, TEST_AGENT_CAPABILITIES as caps, type Harness } from './harness.ts';

// Issue 40 item 4: an agent token can be revoked (admin API), and a revoke takes effect at once:
// the token's open sockets are closed, the jobs its nodes held go back to the queue, and every
// call made with it is refused, on a socket the server has not closed yet too. Agents are played
// over the real websocket protocol.

let h: Harness;
beforeAll(async () => {
  // Leases of a minute and a minute's grace after a socket closes: a job queued again within
  // seconds was queued by the revoke, not by the lease's expiry or the closed socket.
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000, disconnectGraceMs: 60_000 } });
});
afterAll(() => h.close());

async function newToken(name: string): Promise<{ id: string; token: string }> {
  const r = await h.admin('POST', '/agents/tokens', { name });
  expect(r.status).toBe(201);
  return r.body as { id: string; token: string };
}

/** An agent connection that records when (and with which code) the server closed it. */
function watchedAgent(token: string) {
  const closes: { at: number; code: number | undefined }[] = [];
  const c = agentClient(h.url, token, { onClose: (code) => closes.push({ at: performance.now(), code }) });
  onTestFinished(() => c.close());
  return { agent: c.agent, closes, close: () => c.close() };
}

function expectError(res: { status: number; body: unknown }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(ErrorBodySchema.safeParse(res.body).success, JSON.stringify(res.body)).toBe(true);
  expect((res.body as { error: { code: string } }).error.code).toBe(code);
}

describe('revoking an agent token', () => {
  it("closes the token's open socket within seconds, and another agent leases its job again", async () => {
    const { api } = await h.account('pro', 'revoked-farm');
    const template = (await api('GET', '/v1/templates')).body.templates[0].id as string;
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/leaked.mp4', templateId: template })).body as { id: string };

    const a = watchedAgent((await newToken('leaked')).token);
    const { nodeId: nodeA } = await a.agent.register.mutate({ nodeName: 'agent-a', capabilities: caps });
    const [leased] = await a.agent.lease.mutate({ nodeId: nodeA, slots: 1, requestId: randomUUID() });
    expect(leased).toMatchObject({ jobId: job.id, attempt: 1 });

    // Agent B, with a token of its own, waits for work as the agent does: on its event stream.
    const b = agentClient(h.url, (await newToken('healthy')).token);
    onTestFinished(() => b.close());
    const { nodeId: nodeB } = await b.agent.register.mutate({ nodeName: 'agent-b', capabilities: caps });
    const events: AgentEvent[] = [];
    const sub = b.agent.events.subscribe({ nodeId: nodeB, lastEventId: null }, { onData: (e) => events.push((e as { data: AgentEvent }).data) });
    onTestFinished(() => sub.unsubscribe());
    expect(await b.agent.lease.mutate({ nodeId: nodeB, slots: 1, requestId: randomUUID() })).toEqual([]);
    expect(a.closes).toEqual([]);

    const tokenA = (await h.admin('GET', '/agents/tokens')).body.tokens.find((t: { name: string }) => t.name === 'leaked') as { id: string };
    const started = performance.now();
    const revoked = await h.admin('POST', `/agents/tokens/${tokenA.id}/revoke`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toMatchObject({
      id: tokenA.id,
      name: 'leaked',
      revokedAt: expect.any(String),
      nodes: [{ id: nodeA, name: 'agent-a', state: 'offline' }],
    });
    // The job is back in the queue when the revoke answers (not after the lease's minute).
    expect((await api('GET', `/v1/automation-jobs/${job.id}`)).body).toMatchObject({ status: 'queued', phase: 'queued' });

    const closed = await until(async () => a.closes[0], 5_000, "agent A's socket to close");
    a.close(); // The agent would reconnect, and be refused (below): not this test's business.
    expect(closed.code).toBe(TOKEN_REVOKED_CLOSE);
    await until(async () => events.some((e) => e.type === 'work-available'), 5_000, 'work-available on B');
    const again = await b.agent.lease.mutate({ nodeId: nodeB, slots: 1, requestId: randomUUID() });
    const releasedMs = performance.now() - started;
    expect(again).toMatchObject([{ jobId: job.id, attempt: 2 }]);
    expect(releasedMs).toBeLessThan(5_000);
    console.log(`revoke -> socket closed ${((closed.at - started) / 1000).toFixed(3)} s; revoke -> leased by agent B ${(releasedMs / 1000).toFixed(3)} s`);
    expect((await api('GET', `/v1/automation-jobs/${job.id}`)).body).toMatchObject({ status: 'running' });
    await api('POST', `/v1/automation-jobs/${job.id}/cancel`);
  });

  it('refuses every call made with a revoked token, on a socket not closed yet as on a new one', async () => {
    const { api } = await h.account('pro', 'still-open');
    const template = (await api('GET', '/v1/templates')).body.templates[0].id as string;
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/held.mp4', templateId: template })).body as { id: string };
    const created = await newToken('soon-revoked');
    const c = agentClient(h.url, created.token);
    onTestFinished(() => c.close());
    const { nodeId } = await c.agent.register.mutate({ nodeName: 'agent-c', capabilities: caps });
    const [leased] = await c.agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
    expect(leased?.jobId).toBe(job.id);
    expect((await h.admin('POST', `/agents/tokens/${created.id}/revoke`)).status).toBe(200);

    // A socket that authenticated before the revoke carries the token id in its context (the
    // server closes it, but calls may arrive first): the same router, called with that context.
    const router = createAgentRouter({ agents: h.cp.services.agents, hub: createAgentHub() });
    const open = router.createCaller({ tokenId: created.id });
    const leaseId = leased!.leaseId;
    const calls: [string, () => Promise<unknown>][] = [
      ['register', () => open.register({ nodeName: 'agent-c', capabilities: caps })],
      ['lease', () => open.lease({ nodeId, slots: 1, requestId: randomUUID() })],
      ['heartbeat', () => open.heartbeat({ nodeId, leases: [{ jobId: job.id, leaseId }] })],
      ['progress', () => open.progress({ nodeId, jobId: job.id, leaseId, phase: 'rendering', percent: 10 })],
      ['ingested', () => open.ingested({ nodeId, jobId: job.id, leaseId, durationSeconds: 2, width: 320, height: 240 })],
      ['transcribed', () => open.transcribed({ nodeId, jobId: job.id, leaseId, language: 'en', languageProbability: 1, words: [] })],
      ['outputUploadUrl', () => open.outputUploadUrl({ nodeId, jobId: job.id, leaseId, sizeBytes: 1000 })],
      ['complete', () => open.complete({ nodeId, jobId: job.id, leaseId, resolution: { width: 320, height: 240 }, outputBytes: 1000 })],
      ['fail', () => open.fail({ nodeId, jobId: job.id, leaseId, failureCode: 'internal', failureReason: 'x' })],
      ['release', () => open.release({ nodeId, jobId: job.id, leaseId })],
      ['events', async () => (await open.events({ nodeId, lastEventId: null }))[Symbol.asyncIterator]().next()],
    ];
    for (const [name, call] of calls) await expect(call(), name).rejects.toMatchObject({ code: 'UNAUTHORIZED' });

    // A new connection with the token is refused at once too.
    const again = agentClient(h.url, created.token);
    onTestFinished(() => again.close());
    await expect(again.agent.register.mutate({ nodeName: 'agent-c', capabilities: caps })).rejects.toThrow(/unknown or revoked agent token/);
    // Its job went back to the queue (nothing else leased it).
    expect((await api('GET', `/v1/automation-jobs/${job.id}`)).body).toMatchObject({ status: 'queued' });
    await api('POST', `/v1/automation-jobs/${job.id}/cancel`);
  });

  it('lists tokens without their secret; a revoke by prefix, again, and of an unknown token', async () => {
    const created = await newToken('listed');
    const c = agentClient(h.url, created.token);
    onTestFinished(() => c.close());
    const { nodeId } = await c.agent.register.mutate({ nodeName: 'agent-listed', capabilities: caps });

    const list = await h.admin('GET', '/agents/tokens');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(created.token);
    const row = list.body.tokens.find((t: { id: string }) => t.id === created.id);
    expect(row).toEqual({
      id: created.id,
      name: 'listed',
      prefix: created.token.slice(0, 13),
      createdAt: expect.any(String),
      revokedAt: null,
      nodes: [{ id: nodeId, name: 'agent-listed', state: 'online' }],
    });

    const first = await h.admin('POST', `/agents/tokens/${row.prefix}/revoke`);
    expect(first.status).toBe(200);
    expect(first.body.revokedAt).toEqual(expect.any(String));
    // Idempotent: the same answer, the first time kept.
    const second = await h.admin('POST', `/agents/tokens/${created.id}/revoke`);
    expect(second.status).toBe(200);
    expect(second.body.revokedAt).toBe(first.body.revokedAt);
    const listed = (await h.admin('GET', '/agents/tokens')).body.tokens.find((t: { id: string }) => t.id === created.id);
    expect(listed).toMatchObject({ revokedAt: first.body.revokedAt, nodes: [{ id: nodeId, state: 'offline' }] });

    expectError(await h.admin('POST', `/agents/tokens/${randomUUID()}/revoke`), 404, 'not_found');
    expectError(await h.admin('POST', '/agents/tokens/cf_agent_zzzz/revoke'), 404, 'not_found');
  });
});
