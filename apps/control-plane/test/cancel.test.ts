import { randomUUID } from 'node:crypto';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { execaSync } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentClient, agentToken, startHarness, TEST_AGENT_CAPABILITIES, type Api, type Harness } from './harness.ts';

// Cancel of jobs that already ended, and of a job that ends while the cancel is under way. The
// agent's part is played over the real websocket protocol, so a job succeeds the way it does in
// production: lease, ingested, rendering, output PUT to storage, complete.

let h: Harness;
/** Runs once, inside the cancel's transaction, just before its guarded update (see the race test). */
let beforeCancelWrite: (() => void) | undefined;
const clients: { close(): void }[] = [];

beforeAll(async () => {
  h = await startHarness(
    {},
    {
      now: () => {
        // The cancel takes the time for its write inside its transaction, after it read the job;
        // every other caller of now() (auth, rate limit, ...) passes through untouched.
        if (beforeCancelWrite && /at (async )?Object\.cancel \(.*jobs[\\/]service\.ts/.test(new Error().stack ?? '')) {
          const hook = beforeCancelWrite;
          beforeCancelWrite = undefined;
          hook();
        }
        return new Date();
      },
    },
  );
});
afterAll(async () => {
  for (const c of clients) c.close();
  await h.close();
});

/**
 * A second, synchronous connection to the harness's database, as another control plane would
 * have: a second handle on the SQLite file, or psql on PostgreSQL (synchronous, so it can run
 * inside the clock hook: execa's sync call, where the process module is async). Values are inlined: they are our own UUIDs and ISO times.
 */
function otherConnection() {
  const url = h.cp.config.databaseUrl;
  if (url) {
    return {
      query: (text: string) => execaSync('psql', [url, '-qtAX', '-v', 'ON_ERROR_STOP=1', '-c', text]).stdout.trim(),
      close: () => undefined,
    };
  }
  const db = new SQLite(path.join(h.dataDir, 'captionfarm.sqlite'));
  return {
    query: (text: string) => {
      const stmt = db.prepare(text);
      if (stmt.reader) return String(Object.values(stmt.get() as Record<string, unknown>)[0]);
      stmt.run();
      return '';
    },
    close: () => db.close(),
  };
}

async function agent() {
  const c = agentClient(h.url, await agentToken(h));
  clients.push(c);
  const { nodeId } = await c.agent.register.mutate({ nodeName: `node-${clients.length}`, capabilities: TEST_AGENT_CAPABILITIES });
  return { ...c, nodeId };
}

async function leasedJob(api: Api) {
  const created = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/talk.mp4', templateId: 'karaoke' });
  expect(created.status).toBe(202);
  const a = await agent();
  const [leased] = await a.agent.lease.mutate({ nodeId: a.nodeId, slots: 1, requestId: randomUUID() });
  expect(leased?.jobId).toBe(created.body.id);
  const ref = { nodeId: a.nodeId, jobId: leased!.jobId, leaseId: leased!.leaseId };
  expect(await a.agent.ingested.mutate({ ...ref, durationSeconds: 12, width: 320, height: 240 })).toEqual({ ok: true });
  expect(await a.agent.progress.mutate({ ...ref, phase: 'rendering', percent: 50 })).toEqual({ ok: true });
  return { a, ref, id: created.body.id as string };
}

async function succeed(a: Awaited<ReturnType<typeof agent>>, ref: { nodeId: string; jobId: string; leaseId: string }) {
  const output = Buffer.alloc(2048, 1);
  const up = await a.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: output.length });
  if (!up.ok) throw new Error(`no upload URL: ${JSON.stringify(up)}`);
  expect((await fetch(up.url, { method: 'PUT', body: output })).status).toBe(200);
  return a.agent.complete.mutate({ ...ref, resolution: { width: 320, height: 240 }, outputBytes: output.length });
}

describe('cancel of a job that has ended', () => {
  it('a succeeded job: 409 job_not_cancellable, the record and the minutes unchanged', async () => {
    const { api, accountId } = await h.account('pro', 'winner');
    const { a, ref, id } = await leasedJob(api);
    expect(await succeed(a, ref)).toEqual({ ok: true });
    const before = (await api('GET', `/v1/automation-jobs/${id}`)).body;
    expect(before).toMatchObject({ status: 'succeeded', phase: 'succeeded' });
    expect(before.downloadUrl).toEqual(expect.any(String));
    const balance = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance;

    const res = await api('POST', `/v1/automation-jobs/${id}/cancel`);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('job_not_cancellable');
    expect(res.body.error.message).toMatch(/succeeded/);
    expect((await api('GET', `/v1/automation-jobs/${id}`)).body).toEqual(before);
    expect((await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance).toBe(balance);
  });

  it('a job that succeeds between the cancel reading it and writing it: 409, the job stays succeeded, no refund', async () => {
    const { api, accountId } = await h.account('pro', 'racer');
    const { id } = await leasedJob(api);
    // The cancel reads the job (running), then opens its transaction and takes the time for its
    // write. At that moment another process finishes the job: a second connection to the same
    // database file commits the success, as another control plane would.
    const other = otherConnection();
    beforeCancelWrite = () => {
      expect(other.query(`select status from jobs where id = '${id}'`)).toBe('running');
      const t = new Date().toISOString();
      other.query(
        `update jobs set status = 'succeeded', phase = 'succeeded', percent = null, lease_id = null, ` +
          `lease_owner = null, lease_expires_at = null, settled_at = '${t}', finished_at = '${t}' where id = ` +
          `'${id}'`,
      );
    };
    const balance = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance;
    const res = await api('POST', `/v1/automation-jobs/${id}/cancel`);
    other.close();
    expect(beforeCancelWrite, 'the hook ran inside the cancel').toBeUndefined();
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.error.code).toBe('job_not_cancellable');
    expect((await api('GET', `/v1/automation-jobs/${id}`)).body).toMatchObject({ status: 'succeeded', phase: 'succeeded' });
    // The cancel refunded nothing: its transaction changed no row.
    const ledger = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body;
    expect(ledger.balance).toBe(balance);
    expect(ledger.ledger.filter((l: { jobId: string; kind: string }) => l.jobId === id && l.kind === 'refund')).toEqual([]);
  });

  it('a job cancelled between the read and the write (a concurrent cancel): 200 with the cancelled record', async () => {
    const { api } = await h.account('pro', 'twice');
    const { id } = await leasedJob(api);
    const other = otherConnection();
    beforeCancelWrite = () => {
      other.query(`update jobs set status = 'cancelled', phase = 'cancelled', percent = null, lease_id = null, lease_owner = null where id = '${id}'`);
    };
    const res = await api('POST', `/v1/automation-jobs/${id}/cancel`);
    other.close();
    expect(beforeCancelWrite, 'the hook ran inside the cancel').toBeUndefined();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id, status: 'cancelled', phase: 'cancelled' });
  });
});
