import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLANS, type AgentEvent } from '@captionfarm/contracts';
import { freshTestDatabase, testDatabaseServerUrl, type TestDatabase } from '@captionfarm/db/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runProcess, type RunningProcess } from '@captionfarm/process';
import { readAdminToken } from '../src/index.ts';
import { agentClient, apiFor, TEST_AGENT_CAPABILITIES, until, type Api } from './harness.ts';

// Several control planes on one PostgreSQL (issue 13): two real processes, one database, one
// data dir (the shared secrets and the built-in store). PostgreSQL only: SQLite is one process.
const server = testDatabaseServerUrl();
const entry = path.join(import.meta.dirname, 'cluster-process.ts');
let template: string;
const video = 'https://v.example.com/a.mp4';

interface Cp {
  url: string;
  proc: RunningProcess;
  /** Settles when it has exited. */
  exited: Promise<unknown>;
  admin: Api;
}

let testDb: TestDatabase;
let dataDir: string;
const cps: Cp[] = [];

async function startCp(name: string): Promise<Cp> {
  let out = '';
  let running = true;
  const proc = runProcess(process.execPath, {
    args: ['--import', 'tsx', entry],
    env: {
      ...process.env,
      ...testDb.env,
      CAPTIONFARM_DATA_DIR: dataDir,
      CAPTIONFARM_LOG: 'silent',
      CAPTIONFARM_EMBEDDED_AGENT: '0',
      PORT: '0',
      HOST: '127.0.0.1',
    },
    onStdout: (d) => (out += d),
    onStderr: (d) => (out += d),
  });
  const exited = proc.done.finally(() => (running = false)).catch(() => undefined);
  const url = await until(
    async () => /listening (\S+)/.exec(out)?.[1] ?? (!running ? Promise.reject(new Error(`${name} exited:\n${out}`)) : undefined),
    180_000,
    `${name} to listen`,
  );
  const cp = { url, proc, exited, admin: apiFor(url, readAdminToken(dataDir)) };
  cps.push(cp);
  return cp;
}

/** An account with a key, made through `a`; its API on each control plane. */
async function account(a: Cp, plan: 'free' | 'starter' | 'pro', name: string) {
  const acc = await a.admin('POST', '/admin/v1/accounts', { name, plan });
  const key = (await a.admin('POST', `/admin/v1/accounts/${acc.body.id}/keys`)).body.key as string;
  return { accountId: acc.body.id as string, on: (cp: Cp) => apiFor(cp.url, key) };
}

/** An agent on `cp`: registered, subscribed to its events, which it collects. */
async function agentOn(cp: Cp, issuer: Cp, name: string) {
  const token = (await issuer.admin('POST', '/admin/v1/agents/tokens', { name })).body.token as string;
  const client = agentClient(cp.url, token);
  const { nodeId } = await client.agent.register.mutate({ nodeName: name, capabilities: TEST_AGENT_CAPABILITIES });
  const events: AgentEvent[] = [];
  const sub = client.agent.events.subscribe({ nodeId, lastEventId: null }, { onData: (e) => events.push((e as { data: AgentEvent }).data) });
  // The subscription is live once the node is online on `cp` and a first event reaches it.
  return {
    nodeId,
    token,
    client,
    events,
    close() {
      sub.unsubscribe();
      client.close();
    },
  };
}

describe.skipIf(!server)('several control planes on one PostgreSQL', () => {
  let a: Cp;
  let b: Cp;
  beforeAll(async () => {
    testDb = await freshTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'cf-cluster-'));
    // One after the other: the first one migrates the database and writes the shared secrets.
    a = await startCp('a');
    b = await startCp('b');
    const first = await account(a, 'pro', 'catalog');
    template = (await first.on(a)('GET', '/v1/templates')).body.templates[0].id;
  }, 400_000);
  afterAll(async () => {
    for (const cp of cps) cp.proc.kill('SIGTERM');
    await Promise.all(cps.map((cp) => cp.exited));
    await testDb?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('an agent connected to one control plane hears new work, a cancel and a drain made on the other', async () => {
    const acc = await account(a, 'pro', 'events');
    const agent = await agentOn(b, a, 'on-b');
    onTestFinished(() => agent.close());
    // New work created through A reaches the agent on B.
    const job = await acc.on(a)('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    expect(job.status).toBe(202);
    await until(async () => agent.events.some((e) => e.type === 'work-available'), 15_000, 'work-available on B');
    const leased = await agent.client.agent.lease.mutate({ nodeId: agent.nodeId, slots: 1, requestId: randomUUID() });
    expect(leased.map((l) => l.jobId)).toEqual([job.body.id]);
    // Cancelled through A: the agent on B is told to stop that job.
    expect((await acc.on(a)('POST', `/v1/automation-jobs/${job.body.id}/cancel`)).body.status).toBe('cancelled');
    await until(async () => agent.events.some((e) => e.type === 'cancel' && e.jobId === job.body.id), 15_000, 'cancel on B');
    // Drained by the admin API of A.
    expect((await a.admin('POST', `/admin/v1/nodes/${agent.nodeId}/drain`)).status).toBeLessThan(300);
    await until(async () => agent.events.some((e) => e.type === 'drain'), 15_000, 'drain on B');
  });

  it("a token revoked through one control plane closes its agent's socket on the other, whose job another agent leases", async () => {
    const acc = await account(a, 'pro', 'revoker');
    const made = (await a.admin('POST', '/admin/v1/agents/tokens', { name: 'leaked-on-b' })).body as { id: string; token: string };
    const closes: { at: number; code: number | undefined }[] = [];
    const ws = agentClient(b.url, made.token, { onClose: (code) => closes.push({ at: performance.now(), code }) });
    onTestFinished(() => ws.close());
    const leaked = ws.agent;
    const { nodeId } = await leaked.register.mutate({ nodeName: 'leaked-on-b', capabilities: TEST_AGENT_CAPABILITIES });
    const job = await acc.on(a)('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    const [held] = await leaked.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
    expect(held?.jobId).toBe(job.body.id);
    const other = await agentOn(a, a, 'healthy-on-a');
    onTestFinished(() => other.close());

    const started = performance.now();
    expect((await a.admin('POST', `/admin/v1/agents/tokens/${made.id}/revoke`)).status).toBe(200);
    const closed = await until(async () => closes[0], 10_000, 'the socket on B to close');
    ws.close();
    expect(closed.code).toBe(4403);
    const again = await until(
      async () => {
        const l = await other.client.agent.lease.mutate({ nodeId: other.nodeId, slots: 1, requestId: randomUUID() });
        return l.length > 0 ? l : undefined;
      },
      10_000,
      'the job to be leased again',
    );
    expect(again).toMatchObject([{ jobId: job.body.id, attempt: 2 }]);
    console.log(
      `revoke on A -> socket on B closed ${((closed.at - started) / 1000).toFixed(3)} s; -> leased on A ${((performance.now() - started) / 1000).toFixed(3)} s`,
    );
    await acc.on(a)('POST', `/v1/automation-jobs/${job.body.id}/cancel`);
  });

  it('a lease re-sent to the other control plane returns the same jobs, and none twice', async () => {
    const acc = await account(a, 'pro', 'replay');
    const agentA = await agentOn(a, a, 'replayer');
    onTestFinished(() => agentA.close());
    const jobs = await Promise.all([0, 1].map(() => acc.on(b)('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template })));
    const requestId = randomUUID();
    const first = await agentA.client.agent.lease.mutate({ nodeId: agentA.nodeId, slots: 2, requestId });
    expect(first.map((l) => l.jobId).sort()).toEqual(jobs.map((j) => j.body.id).sort());
    // The agent reconnects to B and re-sends the same request: the same answer, no other job taken.
    const same = agentClient(b.url, agentA.token);
    onTestFinished(() => same.close());
    const replay = await same.agent.lease.mutate({ nodeId: agentA.nodeId, slots: 2, requestId });
    expect(replay).toEqual(first);
    for (const j of jobs) await acc.on(a)('POST', `/v1/automation-jobs/${j.body.id}/cancel`);
  });

  it('the plan requests per minute hold across both control planes', async () => {
    const acc = await account(a, 'free', 'limited');
    const limit = PLANS.free.requestsPerMinute;
    // Alternate between the two processes: each alone sees about half of the requests.
    const answers = await Promise.all(Array.from({ length: limit + 10 }, (_, i) => acc.on(i % 2 ? a : b)('GET', '/v1/automation-jobs?limit=1')));
    const limited = answers.filter((r) => r.status === 429);
    // A request that crosses a minute boundary starts a new window: at most `limit` more pass.
    expect(limited.length === 10 || answers.filter((r) => r.status === 200).length <= limit * 2).toBe(true);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.body.error.code).toBe('rate_limited');
  });

  it('creates, which count in their own transaction, hold the plan requests per minute across both control planes', async () => {
    const acc = await account(a, 'free', 'creator');
    const limit = PLANS.free.requestsPerMinute;
    const reads = await Promise.all(Array.from({ length: limit - 4 }, (_, i) => acc.on(i % 2 ? a : b)('GET', '/v1/automation-jobs?limit=1')));
    const creates = await Promise.all(
      Array.from({ length: 8 }, (_, i) => acc.on(i % 2 ? a : b)('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template })),
    );
    const passed = [...reads, ...creates].filter((r) => r.status === 200 || r.status === 202).length;
    const refused = creates.filter((r) => r.status === 429);
    // A burst that crosses a minute boundary starts a new window: at most `limit` more pass.
    expect(refused.length === 4 || passed <= limit * 2).toBe(true);
    expect(refused.every((r) => r.body.error.code === 'rate_limited')).toBe(true);
    // A refused create made no job: one reservation (3 of the free plan's 30 minutes) per 202.
    const ledger = (await a.admin('GET', `/admin/v1/accounts/${acc.accountId}/minutes`)).body as { ledger: { kind: string }[] };
    expect(ledger.ledger.filter((l) => l.kind === 'reserve')).toHaveLength(creates.filter((r) => r.status === 202).length);
  });

  it('the daily upload quota holds across both control planes', async () => {
    const acc = await account(a, 'free', 'uploader');
    const quota = PLANS.free.uploadsPerDay;
    const answers = await Promise.all(
      Array.from({ length: quota + 4 }, (_, i) => acc.on(i % 2 ? a : b)('POST', '/v1/automation-jobs/uploads', { fileName: 'clip.mp4', sizeBytes: 1000 })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(quota);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.body.error.code])).toEqual(refused.map(() => [429, 'quota_exceeded']));
  });

  it('concurrent creates through both control planes reserve each job once and never overdraw the balance', async () => {
    const acc = await account(a, 'free', 'racer');
    // A free account: 30 minutes, each URL job reserves its plan's 3-minute maximum: 10 jobs hold minutes.
    const creates = await Promise.all(
      Array.from({ length: 14 }, (_, i) => acc.on(i % 2 ? a : b)('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template })),
    );
    expect(creates.map((r) => r.status)).toEqual(creates.map(() => 202));
    const ledger = (await a.admin('GET', `/admin/v1/accounts/${acc.accountId}/minutes`)).body as {
      balance: number;
      ledger: { kind: string; jobId: string | null }[];
    };
    const reserves = ledger.ledger.filter((l) => l.kind === 'reserve');
    expect(new Set(reserves.map((l) => l.jobId)).size).toBe(reserves.length);
    expect(reserves).toHaveLength(10);
    expect(ledger.balance).toBe(0);
    for (const r of creates) await acc.on(a)('POST', `/v1/automation-jobs/${r.body.id}/cancel`);
  });
});
