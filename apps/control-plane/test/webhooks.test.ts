import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { freshTestDatabase } from '@captionfarm/db/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema, JobRecordSchema } from '@captionfarm/contracts';
import type { LookupFn } from '@captionfarm/net';
import { createControlPlane, loadConfig, type ControlPlane } from '../src/index.ts';
import { createTestCertificates, type TestCertificates } from '../../../packages/net/test/helpers/test-ca.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../../../packages/net/test/helpers/receiver.ts';
import { apiFor, testLookup, until, type Api } from './harness.ts';

// Real control planes on loopback sending to real HTTPS receivers on loopback (test CA made
// with openssl for this run). Clocks are frozen and moved by hand: the retry schedule runs in
// compressed time, and "not yet" is checked with explicit dispatcher ticks, never sleeps.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const VIDEO = 'https://videos.example.com/talk.mp4';

let certs: TestCertificates;
beforeAll(async () => {
  certs = await createTestCertificates();
});
afterAll(() => certs.cleanup());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A clock the test moves; `null` follows real time (needed where standardwebhooks checks timestamps). */
function manualClock(start: number | null = Date.now()) {
  let t = start;
  return {
    now: () => new Date(t ?? Date.now()),
    ms: () => t ?? Date.now(),
    set(ms: number) {
      t = ms;
    },
    advance(ms: number) {
      t = (t ?? Date.now()) + ms;
    },
  };
}
type Clock = ReturnType<typeof manualClock>;

interface Node {
  cp: ControlPlane;
  url: string;
  admin(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }>;
  api(key: string): Api;
}

/** Data dir -> its database's environment (SQLite lives in the dir; PostgreSQL gets one database per dir). */
const databases = new Map<string, Record<string, string>>();

async function newDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cf-cp-wh-'));
  const testDb = await freshTestDatabase();
  databases.set(dir, testDb.env);
  cleanups.push(async () => {
    await testDb.drop();
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** A control plane with its own config object (unsafeTestNetwork is never read from env). */
async function startNode(opts: { dataDir: string; clock: Clock; unsafe?: boolean; lookup?: LookupFn }): Promise<Node> {
  const base = loadConfig({ CAPTIONFARM_DATA_DIR: opts.dataDir, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0', ...databases.get(opts.dataDir) });
  const config = Object.freeze({ ...base, ...(opts.unsafe === false ? {} : { unsafeTestNetwork: { allowLoopback: true as const, ca: certs.ca } }) });
  const cp = await createControlPlane(config, {
    now: opts.clock.now,
    lookup: opts.lookup ?? testLookup,
    webhookTimings: { pollIntervalMs: 20 },
  });
  const url = await cp.listen(0, '127.0.0.1');
  let closed = false;
  const close = cp.close.bind(cp);
  cp.close = async () => {
    if (closed) return;
    closed = true;
    await close();
  };
  cleanups.push(() => cp.close());
  const adminApi = apiFor(url, cp.adminToken);
  return {
    cp,
    url,
    async admin(method, p, body) {
      const r = await adminApi(method, `/admin/v1${p}`, body);
      return { status: r.status, body: r.body };
    },
    api: (key) => apiFor(url, key),
  };
}

async function newAccount(node: Node, name = 'hooks'): Promise<{ accountId: string; key: string; api: Api; templateId: string }> {
  const a = await node.admin('POST', '/accounts', { name, plan: 'pro' });
  expect(a.status).toBe(201);
  const k = await node.admin('POST', `/accounts/${a.body.id}/keys`);
  const api = node.api(k.body.key);
  const t = await api('GET', '/v1/templates');
  return { accountId: a.body.id, key: k.body.key, api, templateId: t.body.templates[0].id };
}

async function receiver(handler: (req: ReceivedRequest, res: ServerResponse, n: number) => unknown): Promise<Receiver & { hookUrl: string }> {
  let n = 0;
  const r = await startReceiver(certs, (req, res) => handler(req, res, ++n));
  cleanups.push(() => r.close());
  return Object.assign(r, { hookUrl: `https://127.0.0.1:${r.port}/hooks/captionfarm?x=1` });
}
const status = (code: number) => (_req: ReceivedRequest, res: ServerResponse) => {
  res.writeHead(code, { 'content-type': 'text/plain' }).end('ok');
};

/** Creates a job that reports to `webhookUrl` and cancels it (a terminal state without an agent). */
async function cancelledJob(acct: { api: Api; templateId: string }, webhookUrl: string): Promise<string> {
  const created = await acct.api('POST', '/v1/automation-jobs', { videoUrl: VIDEO, templateId: acct.templateId, webhookUrl });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const cancelled = await acct.api('POST', `/v1/automation-jobs/${created.body.id}/cancel`);
  expect(cancelled.status).toBe(200);
  return created.body.id as string;
}

async function deliveriesOf(api: Api, jobId: string): Promise<any[]> {
  const res = await api('GET', `/v1/automation-jobs/${jobId}/webhook-deliveries`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.jobId).toBe(jobId);
  return res.body.deliveries;
}

/** Waits until the job's delivery has `count` recorded attempts; returns the delivery. */
async function attemptsRecorded(api: Api, jobId: string, count: number): Promise<any> {
  return until(
    async () => {
      const [d] = await deliveriesOf(api, jobId);
      return d && d.attemptCount >= count ? d : undefined;
    },
    15_000,
    `${count} recorded attempt(s) of job ${jobId}'s webhook`,
  );
}

function handSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}

function headersOf(req: ReceivedRequest): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  return {
    'webhook-id': String(req.headers['webhook-id']),
    'webhook-timestamp': String(req.headers['webhook-timestamp']),
    'webhook-signature': String(req.headers['webhook-signature']),
  };
}

describe('webhook delivery', () => {
  it('POSTs the job record once, byte for byte as GET returns it, signed with the account secret', async () => {
    const clock = manualClock(null);
    const node = await startNode({ dataDir: await newDataDir(), clock });
    const acct = await newAccount(node);
    const r = await receiver(status(200));
    const jobId = await cancelledJob(acct, r.hookUrl);

    const [req] = await r.waitForRequests(1, 15_000);
    const d = await until(async () => (await deliveriesOf(acct.api, jobId)).find((x) => x.state === 'delivered'), 15_000, 'delivered');

    // The body is the GET job response, byte for byte (one serializer for both).
    const get = await fetch(`${node.url}/v1/automation-jobs/${jobId}`, { headers: { authorization: `Bearer ${acct.key}` } });
    const getText = await get.text();
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/hooks/captionfarm?x=1');
    expect(req!.headers['content-type']).toMatch(/^application\/json/);
    expect(req!.body).toBe(getText);
    expect(JobRecordSchema.parse(JSON.parse(req!.body))).toMatchObject({ id: jobId, status: 'cancelled', phase: 'cancelled' });

    // webhook-id is the delivery's id; the timestamp is the attempt's time.
    const h = headersOf(req!);
    expect(h['webhook-id']).toBe(d.id);
    expect(Math.abs(Number(h['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);

    // Verified with the official library and by hand, using the secret the admin API shows.
    const { secret } = (await node.admin('GET', `/accounts/${acct.accountId}/webhook-secret`)).body as { secret: string };
    expect(new Webhook(secret).verify(req!.body, h)).toEqual(JSON.parse(getText));
    expect(h['webhook-signature']).toBe(handSignature(secret, h['webhook-id'], h['webhook-timestamp'], req!.body));
    expect(() => new Webhook(secret).verify(req!.body.replace('cancelled', 'succeeded'), h)).toThrow();

    // The deliveries endpoint shows it.
    expect(d).toMatchObject({
      jobId,
      url: r.hookUrl,
      state: 'delivered',
      exhaustedReason: null,
      attemptCount: 1,
      nextAttemptAt: null,
      lastStatusCode: 200,
      deliveredAt: expect.any(String),
      firstAttemptAt: expect.any(String),
      attempts: [{ attempt: 1, startedAt: expect.any(String), durationMs: expect.any(Number), outcome: 'success', statusCode: 200, error: null }],
    });
    expect(d.accountId).toBeUndefined();

    // Exactly once: further ticks (even a day later) find nothing to send.
    clock.set(Date.now() + 25 * HOUR);
    for (let i = 0; i < 3; i += 1) expect((await node.cp.services.webhooks.dispatcher.tick()).claimed).toBe(0);
    expect(r.requests).toHaveLength(1);
  });

  it('retries 500s on the schedule (compressed clock), same webhook-id, each attempt signed afresh', async () => {
    const T0 = Date.parse('2031-03-01T12:00:00.000Z');
    const clock = manualClock(T0);
    const node = await startNode({ dataDir: await newDataDir(), clock });
    const acct = await newAccount(node);
    const r = await receiver((req, res, n) => status(n <= 2 ? 500 : 200)(req, res));
    const { secret } = (await node.admin('GET', `/accounts/${acct.accountId}/webhook-secret`)).body as { secret: string };
    const dispatcher = node.cp.services.webhooks.dispatcher;
    const jobId = await cancelledJob(acct, r.hookUrl);

    // Attempt 1 at T0 fails; attempt 2 is due 5 s after it (jitter only ever makes it earlier, by <= 0.5 s).
    await r.waitForRequests(1, 15_000);
    let d = await attemptsRecorded(acct.api, jobId, 1);
    expect(d).toMatchObject({ state: 'pending', firstAttemptAt: new Date(T0).toISOString(), lastStatusCode: 500 });
    let next = Date.parse(d.nextAttemptAt);
    expect(next - T0).toBeGreaterThanOrEqual(5 * SECOND - 500);
    expect(next - T0).toBeLessThanOrEqual(5 * SECOND);
    clock.set(next - 1);
    expect((await dispatcher.tick()).claimed).toBe(0);
    expect(r.requests).toHaveLength(1);

    clock.set(next);
    dispatcher.wake();
    await r.waitForRequests(2, 15_000);
    d = await attemptsRecorded(acct.api, jobId, 2);
    expect(d.attempts[1]).toMatchObject({
      attempt: 2,
      startedAt: new Date(next).toISOString(),
      statusCode: 500,
      outcome: 'retry',
      error: { code: 'http_status' },
    });
    // Attempt 3: 5 min after the FIRST attempt, at most 29.5 s early.
    next = Date.parse(d.nextAttemptAt);
    expect(next - T0).toBeGreaterThanOrEqual(5 * MINUTE - 29_500);
    expect(next - T0).toBeLessThanOrEqual(5 * MINUTE);
    clock.set(next - 1);
    expect((await dispatcher.tick()).claimed).toBe(0);

    clock.set(next);
    dispatcher.wake();
    await r.waitForRequests(3, 15_000);
    d = await until(async () => (await deliveriesOf(acct.api, jobId)).find((x) => x.state === 'delivered'), 15_000, 'delivered');
    expect(d.attempts.map((a: any) => [a.attempt, a.outcome, a.statusCode])).toEqual([
      [1, 'retry', 500],
      [2, 'retry', 500],
      [3, 'success', 200],
    ]);
    expect(d).toMatchObject({ attemptCount: 3, nextAttemptAt: null, firstAttemptAt: new Date(T0).toISOString() });

    // Same id and body every time; the timestamp is each attempt's, and each signature matches it.
    const ids = new Set(r.requests.map((q) => q.headers['webhook-id']));
    expect([...ids]).toEqual([d.id]);
    expect(new Set(r.requests.map((q) => q.body)).size).toBe(1);
    expect(r.requests.map((q) => Number(q.headers['webhook-timestamp']))).toEqual(d.attempts.map((a: any) => Math.floor(Date.parse(a.startedAt) / 1000)));
    for (const q of r.requests) {
      const h = headersOf(q);
      expect(h['webhook-signature']).toBe(handSignature(secret, h['webhook-id'], h['webhook-timestamp'], q.body));
    }

    clock.advance(25 * HOUR);
    expect((await dispatcher.tick()).claimed).toBe(0);
    expect(r.requests).toHaveLength(3);
  });

  it('410 Gone stops at once: exhausted, never retried', async () => {
    const clock = manualClock();
    const node = await startNode({ dataDir: await newDataDir(), clock });
    const acct = await newAccount(node);
    const r = await receiver(status(410));
    const jobId = await cancelledJob(acct, r.hookUrl);
    const d = await until(async () => (await deliveriesOf(acct.api, jobId)).find((x) => x.state === 'exhausted'), 15_000, 'exhausted');
    expect(d).toMatchObject({
      exhaustedReason: 'gone',
      attemptCount: 1,
      nextAttemptAt: null,
      lastStatusCode: 410,
      attempts: [{ attempt: 1, outcome: 'gone', statusCode: 410 }],
    });
    for (const step of [5 * SECOND, 5 * MINUTE, 25 * HOUR]) {
      clock.advance(step);
      expect((await node.cp.services.webhooks.dispatcher.tick()).claimed).toBe(0);
    }
    expect(r.requests).toHaveLength(1);
  });

  it('gives up after 8 attempts; an admin redelivery re-queues it with the same webhook-id and a fresh schedule', async () => {
    const T0 = Date.parse('2031-04-01T00:00:00.000Z');
    const clock = manualClock(T0);
    const node = await startNode({ dataDir: await newDataDir(), clock });
    const acct = await newAccount(node);
    let answer = 503;
    const r = await receiver((req, res) => status(answer)(req, res));
    const jobId = await cancelledJob(acct, r.hookUrl);
    await attemptsRecorded(acct.api, jobId, 1);

    // A day later every remaining slot is overdue: they run one after another, none skipped.
    clock.advance(25 * HOUR);
    node.cp.services.webhooks.wake();
    const d = await until(async () => (await deliveriesOf(acct.api, jobId)).find((x) => x.state === 'exhausted'), 20_000, 'exhausted');
    expect(d).toMatchObject({ exhaustedReason: 'attempts_exhausted', attemptCount: 8, nextAttemptAt: null });
    expect(d.attempts.map((a: any) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(r.requests).toHaveLength(8);

    // Admin view and redelivery.
    const listed = await node.admin('GET', `/webhooks?job=${jobId}`);
    expect(listed.status).toBe(200);
    expect(listed.body.deliveries).toEqual([expect.objectContaining({ id: d.id, accountId: acct.accountId, jobId, state: 'exhausted' })]);
    answer = 200;
    const re = await node.admin('POST', `/webhooks/${d.id}/redeliver`);
    expect(re.status, JSON.stringify(re.body)).toBe(200);
    expect(re.body).toMatchObject({ id: d.id, state: 'pending', exhaustedReason: null, requeuedAt: clock.now().toISOString() });
    await r.waitForRequests(9, 15_000);
    const after = await until(async () => (await deliveriesOf(acct.api, jobId)).find((x) => x.state === 'delivered'), 15_000, 'delivered');
    expect(after).toMatchObject({ attemptCount: 9, firstAttemptAt: clock.now().toISOString() });
    expect(after.attempts.at(-1)).toMatchObject({ attempt: 9, outcome: 'success', statusCode: 200 });
    expect(r.requests[8]!.headers['webhook-id']).toBe(d.id);
    expect(r.requests[8]!.body).toBe(r.requests[0]!.body);

    expect((await node.admin('POST', '/webhooks/msg_unknown/redeliver')).status).toBe(404);
    expect((await node.admin('GET', '/webhooks?state=bogus')).status).toBe(400);
  });

  it('a restart between attempts delivers exactly once, and never repeats a recorded success', async () => {
    const T0 = Date.parse('2031-05-01T00:00:00.000Z');
    const clock = manualClock(T0);
    const dataDir = await newDataDir();
    let answer = 500;
    let hold: Promise<void> | undefined;
    const r = await receiver(async (req, res) => {
      await hold;
      status(answer)(req, res);
    });

    const first = await startNode({ dataDir, clock });
    const acct = await newAccount(first);
    const jobId = await cancelledJob(acct, r.hookUrl);
    const d1 = await attemptsRecorded(acct.api, jobId, 1);
    expect(d1).toMatchObject({ state: 'pending', lastStatusCode: 500 });
    await first.cp.close();

    // Restarted on the same data dir after the retry is due: it picks the row up by itself.
    answer = 200;
    let release!: () => void;
    hold = new Promise((resolve) => {
      release = resolve;
    });
    clock.set(Date.parse(d1.nextAttemptAt));
    const second = await startNode({ dataDir, clock });
    await r.waitForRequests(2, 15_000);
    // Closing while that attempt is in flight waits for it and records it before the database closes.
    const closing = second.cp.close();
    release();
    await closing;

    clock.advance(25 * HOUR);
    const third = await startNode({ dataDir, clock });
    const api = third.api(acct.key);
    const [d] = await deliveriesOf(api, jobId);
    expect(d).toMatchObject({ id: d1.id, state: 'delivered', attemptCount: 2 });
    expect(d.attempts.map((a: any) => a.statusCode)).toEqual([500, 200]);
    for (let i = 0; i < 3; i += 1) expect((await third.cp.services.webhooks.dispatcher.tick()).claimed).toBe(0);
    expect(r.requests).toHaveLength(2);
    expect(new Set(r.requests.map((q) => q.headers['webhook-id']))).toEqual(new Set([d1.id]));
  });

  it('after a secret rotation each delivery carries two signatures, and both secrets verify it', async () => {
    const clock = manualClock(null);
    const node = await startNode({ dataDir: await newDataDir(), clock });
    const acct = await newAccount(node);
    const rotated = await node.admin('POST', `/accounts/${acct.accountId}/webhook-secret/rotate`);
    expect(rotated.status).toBe(200);
    const { secret, previous } = rotated.body as { secret: string; previous: string };
    const r = await receiver(status(204));
    await cancelledJob(acct, r.hookUrl);
    const [req] = await r.waitForRequests(1, 15_000);
    const h = headersOf(req!);
    const sigs = h['webhook-signature'].split(' ');
    expect(sigs).toHaveLength(2);
    expect(sigs).toEqual(
      expect.arrayContaining([
        handSignature(secret, h['webhook-id'], h['webhook-timestamp'], req!.body),
        handSignature(previous, h['webhook-id'], h['webhook-timestamp'], req!.body),
      ]),
    );
    expect(new Webhook(secret).verify(req!.body, h)).toEqual(JSON.parse(req!.body));
    expect(new Webhook(previous).verify(req!.body, h)).toEqual(JSON.parse(req!.body));
  });
});

describe('GET /v1/automation-jobs/:id/webhook-deliveries', () => {
  it("is the owner's only: 404 with the standard error body for another account or an unknown job", async () => {
    const clock = manualClock();
    const node = await startNode({ dataDir: await newDataDir(), clock });
    const owner = await newAccount(node, 'owner');
    const other = await newAccount(node, 'other');
    const r = await receiver(status(200));
    const jobId = await cancelledJob(owner, r.hookUrl);
    await attemptsRecorded(owner.api, jobId, 1);

    for (const res of [
      await other.api('GET', `/v1/automation-jobs/${jobId}/webhook-deliveries`),
      await owner.api('GET', '/v1/automation-jobs/00000000-0000-4000-8000-000000000000/webhook-deliveries'),
    ]) {
      expect(res.status).toBe(404);
      expect(ErrorBodySchema.parse(res.body).error.code).toBe('not_found');
    }
    // The 404 for a foreign job reads exactly like the one for a missing job (no existence leak).
    const foreign = await other.api('GET', `/v1/automation-jobs/${jobId}`);
    const foreignDeliveries = await other.api('GET', `/v1/automation-jobs/${jobId}/webhook-deliveries`);
    expect(foreignDeliveries.body.error.message).toBe(foreign.body.error.message);
    expect((await node.api('cf_live_nope')('GET', `/v1/automation-jobs/${jobId}/webhook-deliveries`)).status).toBe(401);

    // A job without a webhookUrl has none.
    const plain = await owner.api('POST', '/v1/automation-jobs', { videoUrl: VIDEO, templateId: owner.templateId });
    expect(await deliveriesOf(owner.api, plain.body.id)).toEqual([]);
  });
});

describe('delivery-time SSRF checks (unsafeTestNetwork off)', () => {
  it('refuses a name that resolved publicly at creation but resolves to 127.0.0.1 when delivering', async () => {
    const clock = manualClock();
    let rebound = false;
    const lookup: LookupFn = async (hostname, ...rest) => {
      if (hostname === 'hooks.flip.test') return [{ address: rebound ? '127.0.0.1' : '93.184.215.14', family: 4 }];
      return testLookup(hostname, ...rest);
    };
    const node = await startNode({ dataDir: await newDataDir(), clock, unsafe: false, lookup });
    const acct = await newAccount(node);
    const r = await receiver(status(200));

    // Loopback is refused at creation without the test switch...
    const direct = await acct.api('POST', '/v1/automation-jobs', { videoUrl: VIDEO, templateId: acct.templateId, webhookUrl: r.hookUrl });
    expect(direct.status).toBe(400);
    expect(direct.body.error.code).toBe('invalid_request');

    // ...and a name that passes the creation check but then rebinds to loopback is refused when sending.
    const created = await acct.api('POST', '/v1/automation-jobs', {
      videoUrl: VIDEO,
      templateId: acct.templateId,
      webhookUrl: `https://hooks.flip.test:${r.port}/hook`,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    rebound = true;
    expect((await acct.api('POST', `/v1/automation-jobs/${created.body.id}/cancel`)).status).toBe(200);
    const d = await attemptsRecorded(acct.api, created.body.id, 1);
    expect(d).toMatchObject({
      state: 'pending',
      lastStatusCode: null,
      attempts: [{ attempt: 1, outcome: 'retry', statusCode: null, error: { code: 'blocked_address' } }],
    });
    expect(r.connections).toBe(0);
    expect(r.requests).toHaveLength(0);
  });
});
