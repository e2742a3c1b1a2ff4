import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_TIMINGS } from '../src/index.ts';
import { agentClient, agentToken, startHarness, TEST_AGENT_CAPABILITIES, type Harness } from './harness.ts';

// A job whose agents keep dying: each lost lease sends it back to the queue, and the third loss
// fails it with `internal` (retryable), its minutes refunded. Agents are played over the real
// websocket protocol; the clock is moved past each lease instead of waiting for it.

let h: Harness;
let offsetMs = 0;
beforeAll(async () => {
  h = await startHarness({}, { now: () => new Date(Date.now() + offsetMs) });
});
afterAll(() => h.close());

describe('agents lost mid-job', () => {
  it('three lost agents turn the job internal, refunded; the first two losses queue it again', async () => {
    const { api, accountId } = await h.account('pro', 'unlucky');
    const balance = async () => (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance as number;
    const before = await balance();
    const created = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/talk.mp4', templateId: 'karaoke' });
    const id = created.body.id as string;
    expect(await balance()).toBeLessThan(before); // reserved

    for (let attempt = 1; attempt <= DEFAULT_AGENT_TIMINGS.maxAttempts; attempt++) {
      const c = agentClient(h.url, await agentToken(h));
      const { nodeId } = await c.agent.register.mutate({ nodeName: `doomed-${attempt}`, capabilities: TEST_AGENT_CAPABILITIES });
      const [leased] = await c.agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
      expect(leased).toMatchObject({ jobId: id, attempt });
      await c.agent.progress.mutate({ nodeId, jobId: id, leaseId: leased!.leaseId, phase: 'ingesting', percent: null });
      expect((await api('GET', `/v1/automation-jobs/${id}`)).body).toMatchObject({ status: 'running', phase: 'ingesting' });
      // The agent dies: no more heartbeats. Its lease runs out, and the sweeper notices.
      c.close();
      offsetMs += DEFAULT_AGENT_TIMINGS.leaseMs + 1000;
      await h.cp.sweep();
      const job = (await api('GET', `/v1/automation-jobs/${id}`)).body;
      if (attempt < DEFAULT_AGENT_TIMINGS.maxAttempts) {
        expect(job, `after loss ${attempt}`).toMatchObject({ status: 'queued', phase: 'queued', percent: null, failureCode: null });
      } else {
        expect(job).toMatchObject({ status: 'failed', phase: 'failed', failureCode: 'internal', downloadUrl: null, settledAt: null });
        expect(job.failureReason).toMatch(/lost its agent 3 times/);
      }
    }
    expect(await balance()).toBe(before);
    const ledger = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.ledger.filter((l: { jobId: string }) => l.jobId === id);
    expect(ledger.map((l: { kind: string }) => l.kind).sort()).toEqual(['refund', 'reserve']);
    // Nothing is leased any more.
    const c = agentClient(h.url, await agentToken(h));
    const { nodeId } = await c.agent.register.mutate({ nodeName: 'survivor', capabilities: TEST_AGENT_CAPABILITIES });
    expect(await c.agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() })).toEqual([]);
    c.close();
  });
});
