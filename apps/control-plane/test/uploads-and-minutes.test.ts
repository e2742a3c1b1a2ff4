import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { PLANS, UploadRecordSchema } from '@captionfarm/contracts';
import { agentClient, agentToken, makeTestClip, putBytes, startHarness, TEST_AGENT_CAPABILITIES, until, type Harness } from './harness.ts';

let h: Harness;
let clockOffsetMs = 0;
let template: string;

beforeAll(async () => {
  h = await startHarness({}, { now: () => new Date(Date.now() + clockOffsetMs) });
  const { api } = await h.account('pro', 'probe');
  template = (await api('GET', '/v1/templates')).body.templates[0].id;
});
afterAll(() => h.close());

const bytes = Buffer.alloc(4096, 7);

describe('POST /v1/automation-jobs/uploads', () => {
  it('201 with a presigned URL; the three-step flow creates a job once', async () => {
    const { api } = await h.account('pro', 'uploader');
    const up = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'My Talk.MOV', sizeBytes: bytes.length });
    expect(up.status).toBe(201);
    const rec = UploadRecordSchema.parse(up.body);
    expect(rec.contentType).toBe('video/quicktime');
    expect(rec.sizeBytes).toBe(bytes.length);
    const ttl = Date.parse(rec.expiresAt) - Date.now() - clockOffsetMs;
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);

    const early = await api('POST', '/v1/automation-jobs', { uploadId: rec.uploadId, templateId: template });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('upload_not_completed');

    expect(await putBytes(rec.uploadUrl, bytes.subarray(1), { 'content-type': rec.contentType })).toBe(403);
    expect(await putBytes(rec.uploadUrl, bytes, { 'content-type': rec.contentType, authorization: 'Bearer x' })).toBe(403);
    expect(await putBytes(rec.uploadUrl, bytes, { 'content-type': rec.contentType })).toBe(200);

    const job = await api('POST', '/v1/automation-jobs', { uploadId: rec.uploadId, templateId: template });
    expect(job.status).toBe(202);
    const again = await api('POST', '/v1/automation-jobs', { uploadId: rec.uploadId, templateId: template });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('upload_already_used');
  });

  it("404 for an unknown uploadId and for another account's upload", async () => {
    const { api } = await h.account('pro', 'a1');
    const { api: other } = await h.account('pro', 'a2');
    expect((await api('POST', '/v1/automation-jobs', { uploadId: '7d0b6b9e-8a57-4f4e-9a36-2f3c0f0c1d11', templateId: template })).status).toBe(404);
    const up = await other('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: bytes.length });
    expect(await putBytes(up.body.uploadUrl, bytes)).toBe(200);
    const res = await api('POST', '/v1/automation-jobs', { uploadId: up.body.uploadId, templateId: template });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it.each([
    ['clip.mp4', 'video/mp4'],
    ['clip.m4v', 'video/x-m4v'],
    ['clip.webm', 'video/webm'],
    ['clip.mkv', 'video/x-matroska'],
    ['clip.avi', 'video/x-msvideo'],
  ])('derives the content type of %s', async (fileName, type) => {
    const { api } = await h.account('pro', `t-${fileName}`);
    const res = await api('POST', '/v1/automation-jobs/uploads', { fileName, sizeBytes: 10 });
    expect(res.status).toBe(201);
    expect(res.body.contentType).toBe(type);
  });

  it('415 for other extensions, 400 for bad bodies, 422 over the plan upload size', async () => {
    const { api } = await h.account('free', 'picky');
    for (const fileName of ['notes.txt', 'clip', 'clip.mp3', 'clip.mp4.exe']) {
      const res = await api('POST', '/v1/automation-jobs/uploads', { fileName, sizeBytes: 10 });
      expect(res.status, fileName).toBe(415);
      expect(res.body.error.code).toBe('unsupported_media_type');
    }
    for (const body of [
      { fileName: 'a.mp4' },
      { fileName: 'a.mp4', sizeBytes: 0 },
      { fileName: 'a.mp4', sizeBytes: '10' },
      { fileName: '../a.mp4', sizeBytes: 10 },
      { fileName: 'a.mp4', sizeBytes: 10, extra: 1 },
    ]) {
      const res = await api('POST', '/v1/automation-jobs/uploads', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const big = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: PLANS.free.maxUploadBytes + 1 });
    expect(big.status).toBe(422);
    expect(big.body.error.code).toBe('limit_exceeded');
  });

  it('429 quota_exceeded with Retry-After past the daily upload count', async () => {
    const { api } = await h.account('free', 'daily');
    for (let i = 0; i < PLANS.free.uploadsPerDay; i++) {
      expect((await api('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: 10 })).status).toBe(201);
    }
    const res = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: 10 });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('quota_exceeded');
    const retry = Number(res.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(86_400);
  });

  it('removes an uploaded file not turned into a job within 24 hours', async () => {
    const { api } = await h.account('pro', 'forgetful');
    const up = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: bytes.length });
    expect(await putBytes(up.body.uploadUrl, bytes)).toBe(200);
    // A real video, so its job stays queued (a job that ended would take its source with it).
    const dir = await mkdtemp(path.join(tmpdir(), 'cf-forgetful-'));
    const clip = path.join(dir, 'b.mp4');
    await makeTestClip(clip, { seconds: 1, size: '160x120', audio: false });
    const video = await readFile(clip);
    await rm(dir, { recursive: true, force: true });
    const used = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'b.mp4', sizeBytes: video.length });
    expect(await putBytes(used.body.uploadUrl, video)).toBe(200);
    const job = await api('POST', '/v1/automation-jobs', { uploadId: used.body.uploadId, templateId: template });
    expect(job.status).toBe(202);
    clockOffsetMs = 23 * 3600_000;
    await h.cp.sweep();
    expect(await h.cp.store.head(`uploads/${up.body.uploadId}.mp4`)).not.toBeNull();
    clockOffsetMs = 24 * 3600_000 + 60_000;
    try {
      await h.cp.sweep();
      expect(await h.cp.store.head(`uploads/${up.body.uploadId}.mp4`)).toBeNull();
      expect(await h.cp.store.head(`uploads/${used.body.uploadId}.mp4`)).not.toBeNull();
      const late = await api('POST', '/v1/automation-jobs', { uploadId: up.body.uploadId, templateId: template });
      expect(late.status).toBe(404);
    } finally {
      clockOffsetMs = 0;
    }
  });
});

describe('minutes ledger', () => {
  async function balance(accountId: string, farm: Harness = h): Promise<number> {
    return (await farm.admin('GET', `/accounts/${accountId}/minutes`)).body.balance;
  }

  /** kind counts of one job's ledger rows. */
  async function ledgerOf(accountId: string, jobId: string, farm: Harness = h): Promise<Record<string, number>> {
    const rows = (await farm.admin('GET', `/accounts/${accountId}/minutes`)).body.ledger.filter((l: { jobId: string | null }) => l.jobId === jobId);
    const kinds: Record<string, number> = {};
    for (const l of rows as { kind: string }[]) kinds[l.kind] = (kinds[l.kind] ?? 0) + 1;
    return kinds;
  }

  it('never goes negative under concurrent creates, jobs past the balance wait in queued, and cancels refund exactly', async () => {
    const { api, accountId } = await h.account('pro', 'racer');
    // 30 minutes left; each URL job reserves up to 10 (its plan's 10-minute max input).
    await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: 30 - (await balance(accountId)) });
    const creates = await Promise.all(
      Array.from({ length: 6 }, () => api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template })),
    );
    // The spec's rule: 202 with a queued record, always.
    expect(creates.map((r) => [r.status, r.body.status])).toEqual(creates.map(() => [202, 'queued']));
    expect(await balance(accountId)).toBe(0);
    const holding = new Set<string>();
    for (const r of creates) if ((await ledgerOf(accountId, r.body.id)).reserve === 1) holding.add(r.body.id);
    expect(holding.size).toBe(3);
    // The other 3 wait for minutes (agents skip them): not failed while 3 jobs may give minutes back.
    for (const r of creates) expect((await api('GET', `/v1/automation-jobs/${r.body.id}`)).body.status).toBe('queued');

    // Cancels racing each other and new creates: the balance always equals the ledger's story.
    const first = creates.filter((r) => holding.has(r.body.id));
    const ops = await Promise.all([
      ...first.map((q) => api('POST', `/v1/automation-jobs/${q.body.id}/cancel`)),
      ...first.slice(0, 2).map((q) => api('POST', `/v1/automation-jobs/${q.body.id}/cancel`)),
      ...Array.from({ length: 2 }, () => api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template })),
    ]);
    expect(ops.every((r) => r.status === 200 || r.status === 202)).toBe(true);
    await h.cp.sweep(); // admission passes queue per account: this one runs after those the cancels started
    // 30 minutes came back and went to 3 of the 5 live jobs; the other 2 wait; nothing failed.
    const live = [...creates.filter((r) => !holding.has(r.body.id)), ...ops.filter((r) => r.status === 202)];
    expect(live).toHaveLength(5);
    let reserved = 0;
    for (const r of live) {
      expect((await api('GET', `/v1/automation-jobs/${r.body.id}`)).body.status).toBe('queued');
      const kinds = await ledgerOf(accountId, r.body.id);
      expect([{}, { reserve: 1 }]).toContainEqual(kinds);
      reserved += kinds.reserve ?? 0;
    }
    expect(reserved).toBe(3);
    for (const r of first) expect(await ledgerOf(accountId, r.body.id)).toEqual({ reserve: 1, refund: 1 });
    expect(await balance(accountId)).toBe(0);
    // Leave no leasable jobs behind for the agents of later tests.
    for (const r of live) await api('POST', `/v1/automation-jobs/${r.body.id}/cancel`);
  });

  // Issue 11 item 14: an upload reserved its plan's maximum until ingest; now it is probed when claimed.
  it('an upload is probed when a job claims it: a 3 s video reserves 1 minute; bytes that are no video fail source-unreadable after the 202', async () => {
    const { api, accountId } = await h.account('pro', 'prober');
    const dir = await mkdtemp(path.join(tmpdir(), 'cf-probe-'));
    try {
      const clip = path.join(dir, 'clip.mp4');
      await makeTestClip(clip, { seconds: 3 });

      const create = async (bytes: Buffer) => {
        const up = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'clip.mp4', sizeBytes: bytes.length });
        expect(await putBytes(up.body.uploadUrl, bytes)).toBe(200);
        return api('POST', '/v1/automation-jobs', { uploadId: up.body.uploadId, templateId: template });
      };
      const good = await create(await readFile(clip));
      expect([good.status, good.body.status, good.body.quotedSeconds]).toEqual([202, 'queued', null]);
      const ledger = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.ledger.filter((l: { jobId: string }) => l.jobId === good.body.id);
      expect(ledger.map((l: { kind: string; minutes: number }) => [l.kind, l.minutes])).toEqual([['reserve', -1]]);

      const junk = await create(Buffer.alloc(4096, 7));
      expect([junk.status, junk.body.status]).toEqual([202, 'queued']);
      const failed = (await api('GET', `/v1/automation-jobs/${junk.body.id}`)).body;
      expect(failed).toMatchObject({ status: 'failed', failureCode: 'source-unreadable' });
      expect(failed.failureReason).toMatch(/not a readable media container/);
      expect(await ledgerOf(accountId, junk.body.id)).toEqual({});
      await api('POST', `/v1/automation-jobs/${good.body.id}/cancel`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Issue 11 item 14: POST answered 202 with a record already `failed`.
  it('with no minutes left: 202 queued, then failed with automation-minutes-exhausted and its webhook', async () => {
    const { api, accountId } = await h.account('free', 'empty');
    await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: -30 });
    const created = await api('POST', '/v1/automation-jobs', {
      videoUrl: 'https://v.example.com/a.mp4',
      templateId: template,
      webhookUrl: 'https://hooks.example.com/cf',
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: 'queued', phase: 'queued', failureCode: null, failureReason: null });
    const job = (await api('GET', `/v1/automation-jobs/${created.body.id}`)).body;
    expect(job).toMatchObject({ status: 'failed', phase: 'failed', failureCode: 'automation-minutes-exhausted' });
    expect(job.failureReason).toMatch(/at least 1 minute.*has 0 left/);
    const deliveries = (await api('GET', `/v1/automation-jobs/${created.body.id}/webhook-deliveries`)).body.deliveries;
    expect(deliveries).toHaveLength(1);
    expect(await ledgerOf(accountId, created.body.id)).toEqual({});
  });

  // Issue 11 item 14: each job reserved its plan's maximum until ingest, so job 201 of a burst failed.
  it('a burst of 201 one-minute jobs on a 2,000-minute pro account: job 201 waits, then runs once ingest gives minutes back', async () => {
    // A farm of its own: the agent below leases the oldest job of the farm.
    const farm = await startHarness();
    try {
      const { api, accountId } = await farm.account('pro', 'burst');
      const ids: string[] = [];
      for (let i = 0; i < 201; i++) {
        const r = await api('POST', '/v1/automation-jobs', { videoUrl: `https://v.example.com/clip-${i}.mp4`, templateId: template });
        expect([r.status, r.body.status]).toEqual([202, 'queued']);
        ids.push(r.body.id);
      }
      const last = ids[200]!;
      expect((await api('GET', `/v1/automation-jobs/${last}`)).body.status).toBe('queued');
      expect(await ledgerOf(accountId, last, farm)).toEqual({});
      // An agent ingests the first job: it is 60 s long, so 9 of its 10 minutes come back.
      const c = agentClient(farm.url, await agentToken(farm, 'burst'));
      try {
        const { nodeId } = await c.agent.register.mutate({ nodeName: 'burst-node', capabilities: TEST_AGENT_CAPABILITIES });
        const [leased] = await c.agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
        expect(leased?.jobId).toBe(ids[0]);
        expect(
          await c.agent.ingested.mutate({ nodeId, jobId: leased!.jobId, leaseId: leased!.leaseId, durationSeconds: 60, width: 1280, height: 720 }),
        ).toEqual({ ok: true });
        await until(async () => (await ledgerOf(accountId, last, farm)).reserve === 1, 10_000, 'job 201 to get its minutes');
      } finally {
        c.close();
      }
      expect(await balance(accountId, farm)).toBe(0);
      const failed = [];
      for (const id of ids) if ((await api('GET', `/v1/automation-jobs/${id}`)).body.status === 'failed') failed.push(id);
      expect(failed).toEqual([]);
    } finally {
      await farm.close();
    }
  });

  it('reserves at most the balance when it is below the plan maximum', async () => {
    const { api, accountId } = await h.account('pro', 'low');
    const b = await balance(accountId);
    await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: -(b - 4) });
    const job = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template });
    expect(job.body.status).toBe('queued');
    expect(await balance(accountId)).toBe(0);
    await api('POST', `/v1/automation-jobs/${job.body.id}/cancel`);
    expect(await balance(accountId)).toBe(4);
  });

  it('tops the balance up to the plan allowance at the first activity of a new month, keeping grants above it', async () => {
    const { api, accountId } = await h.account('free', 'monthly');
    const job = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template });
    expect(job.body.status).toBe('queued');
    expect(await balance(accountId)).toBe(27);
    const now = new Date();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 5);
    clockOffsetMs = nextMonth - Date.now();
    try {
      expect(await balance(accountId)).toBe(30);
      await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: 50 });
      expect(await balance(accountId)).toBe(80);
      clockOffsetMs = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1, 0, 5) - Date.now();
      expect(await balance(accountId)).toBe(80);
      const kinds = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.ledger.map((l: { kind: string }) => l.kind);
      expect(kinds.filter((k: string) => k === 'monthly_reset')).toHaveLength(3);
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('admin grants add to the balance and cannot take it below zero', async () => {
    const { accountId } = await h.account('starter', 'granted');
    expect(await balance(accountId)).toBe(300);
    expect((await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: 120 })).body.balance).toBe(420);
    expect((await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: -421 })).status).toBe(400);
    expect(await balance(accountId)).toBe(420);
  });
});

describe('rate limit', () => {
  it('429 rate_limited with Retry-After past the plan requests per minute', async () => {
    const { api } = await h.account('free', 'chatty');
    // Start at the beginning of a one-minute window, so the burst cannot straddle two windows
    // however slow the machine is.
    const t = Date.now() + clockOffsetMs;
    clockOffsetMs += Math.ceil(t / 60_000) * 60_000 + 10 - t;
    const results = await Promise.all(Array.from({ length: PLANS.free.requestsPerMinute + 5 }, () => api('GET', '/v1/automation-jobs?limit=1')));
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(5);
    expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(PLANS.free.requestsPerMinute);
    expect(limited[0]!.body.error.code).toBe('rate_limited');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another account is not affected.
    const { api: quiet } = await h.account('free', 'quiet');
    expect((await quiet('GET', '/v1/automation-jobs')).status).toBe(200);
  });

  it('a create counts in its own transaction: past the limit 429 and no job; a refused body counts too, and is refused as rate_limited once past it', async () => {
    const { api, accountId } = await h.account('free', 'creator');
    const limit = PLANS.free.requestsPerMinute;
    const t = Date.now() + clockOffsetMs;
    clockOffsetMs += Math.ceil(t / 60_000) * 60_000 + 10 - t;
    const create = () => api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template });
    const jobsOf = async () => (await h.cp.db.selectFrom('jobs').select('id').where('account_id', '=', accountId).execute()).length;
    // Reads spend most of the window; creates count in the same window.
    const reads = await Promise.all(Array.from({ length: limit - 5 }, () => api('GET', '/v1/automation-jobs?limit=1')));
    expect(reads.map((r) => r.status)).toEqual(reads.map(() => 200));
    const first = await Promise.all(Array.from({ length: 2 }, create));
    expect(first.map((r) => r.status)).toEqual([202, 202]);
    expect(first.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual([String(limit), String(limit)]);
    expect(first.map((r) => r.headers.get('x-ratelimit-remaining')).sort()).toEqual(['3', '4']);
    // Refused before its transaction (a bad template): still one request of the window.
    const bad = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: 'no-such-template' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-ratelimit-remaining')).toBe('2');
    // Two places left, four creates at once: two jobs, two refusals, and nothing created for them.
    const racing = await Promise.all(Array.from({ length: 4 }, create));
    expect(racing.map((r) => r.status).sort()).toEqual([202, 202, 429, 429]);
    const limited = racing.find((r) => r.status === 429)!;
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await jobsOf()).toBe(4);
    // Past the limit a bad body is refused for the limit, as when the count came first.
    const late = await api('POST', '/v1/automation-jobs', { templateId: 'no-such-template' });
    expect(late.status).toBe(429);
    expect(late.body.error.code).toBe('rate_limited');
    expect(await jobsOf()).toBe(4);
  });
});

describe('concurrency limit', () => {
  it("jobs past the plan concurrency are accepted and wait in queued while an agent with free slots runs only the plan's share", async () => {
    const limit = PLANS.starter.concurrentJobs;
    // A control plane of its own: the other tests' queued jobs (older, so leased first) would take
    // the agent's slots.
    const own = await startHarness();
    onTestFinished(() => own.close());
    const { api } = await own.account('starter', 'busy');
    const jobs = await Promise.all(
      Array.from({ length: limit + 2 }, () => api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template })),
    );
    expect(jobs.map((j) => [j.status, j.body.status])).toEqual(jobs.map(() => [202, 'queued']));
    // An agent with more free slots than the plan allows asks for work: it gets the plan's share only.
    const a = agentClient(own.url, await agentToken(own));
    try {
      const { nodeId } = await a.agent.register.mutate({ nodeName: 'busy-node', capabilities: { ...TEST_AGENT_CAPABILITIES, maxConcurrentJobs: 8 } });
      const leased = await a.agent.lease.mutate({ nodeId, slots: 8, requestId: randomUUID() });
      const mine = new Set(jobs.map((j) => j.body.id as string));
      expect(leased.filter((l) => mine.has(l.jobId))).toHaveLength(limit);
      const statuses = await Promise.all(jobs.map(async (j) => (await api('GET', `/v1/automation-jobs/${j.body.id}`)).body.status as string));
      expect(statuses.filter((s) => s === 'running')).toHaveLength(limit);
      expect(statuses.filter((s) => s === 'queued')).toHaveLength(2);
      // A job that ends frees its slot for the next one.
      const first = leased.find((l) => mine.has(l.jobId))!;
      await a.agent.fail.mutate({ nodeId, jobId: first.jobId, leaseId: first.leaseId, failureCode: 'render-failed', failureReason: 'test' });
      const next = await a.agent.lease.mutate({ nodeId, slots: 8, requestId: randomUUID() });
      expect(next.filter((l) => mine.has(l.jobId))).toHaveLength(1);
    } finally {
      a.close();
    }
  });
});
