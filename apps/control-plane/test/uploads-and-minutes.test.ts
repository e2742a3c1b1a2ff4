import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS, UploadRecordSchema } from '@captionfarm/contracts';
import { agentClient, agentToken, startHarness, TEST_AGENT_CAPABILITIES, type Api, type Harness } from './harness.ts';

let h: Harness;
let clockOffsetMs = 0;
let template: string;

beforeAll(async () => {
  h = await startHarness({}, { now: () => new Date(Date.now() + clockOffsetMs) });
  const { api } = await h.account('pro', 'probe');
  template = (await api('GET', '/v1/templates')).body.templates[0].id;
});
afterAll(() => h.close());

function put(url: string, body: Buffer, headers: Record<string, string | number> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': body.length, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

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

    expect(await put(rec.uploadUrl, bytes.subarray(1), { 'content-type': rec.contentType })).toBe(403);
    expect(await put(rec.uploadUrl, bytes, { 'content-type': rec.contentType, authorization: 'Bearer x' })).toBe(403);
    expect(await put(rec.uploadUrl, bytes, { 'content-type': rec.contentType })).toBe(200);

    const job = await api('POST', '/v1/automation-jobs', { uploadId: rec.uploadId, templateId: template });
    expect(job.status).toBe(202);
    const again = await api('POST', '/v1/automation-jobs', { uploadId: rec.uploadId, templateId: template });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('upload_already_used');
  });

  it('404 for an unknown uploadId and for another account\'s upload', async () => {
    const { api } = await h.account('pro', 'a1');
    const { api: other } = await h.account('pro', 'a2');
    expect((await api('POST', '/v1/automation-jobs', { uploadId: '7d0b6b9e-8a57-4f4e-9a36-2f3c0f0c1d11', templateId: template })).status).toBe(404);
    const up = await other('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: bytes.length });
    expect(await put(up.body.uploadUrl, bytes)).toBe(200);
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
    for (const body of [{ fileName: 'a.mp4' }, { fileName: 'a.mp4', sizeBytes: 0 }, { fileName: 'a.mp4', sizeBytes: '10' }, { fileName: '../a.mp4', sizeBytes: 10 }, { fileName: 'a.mp4', sizeBytes: 10, extra: 1 }]) {
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
    expect(await put(up.body.uploadUrl, bytes)).toBe(200);
    const used = await api('POST', '/v1/automation-jobs/uploads', { fileName: 'b.mp4', sizeBytes: bytes.length });
    expect(await put(used.body.uploadUrl, bytes)).toBe(200);
    expect((await api('POST', '/v1/automation-jobs', { uploadId: used.body.uploadId, templateId: template })).status).toBe(202);
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
  async function balance(accountId: string): Promise<number> {
    return (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance;
  }

  it('never goes negative under concurrent creates, and cancels refund exactly', async () => {
    const { api, accountId } = await h.account('free', 'racer');
    // free: 30 minutes a month, each job reserves 3 (its 3-minute max input).
    expect(await balance(accountId)).toBe(30);
    const creates = await Promise.all(Array.from({ length: 16 }, () => api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template })));
    expect(creates.every((r) => r.status === 202)).toBe(true);
    const queued = creates.filter((r) => r.body.status === 'queued');
    const failed = creates.filter((r) => r.body.status === 'failed');
    expect(queued).toHaveLength(10);
    expect(failed).toHaveLength(6);
    for (const f of failed) expect(f.body.failureCode).toBe('automation-minutes-exhausted');
    expect(await balance(accountId)).toBe(0);

    // Cancels racing each other and new creates: the balance always equals the ledger's story.
    const ops = await Promise.all([
      ...queued.map((q) => api('POST', `/v1/automation-jobs/${q.body.id}/cancel`)),
      ...queued.slice(0, 5).map((q) => api('POST', `/v1/automation-jobs/${q.body.id}/cancel`)),
      ...Array.from({ length: 4 }, () => api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template })),
    ]);
    expect(ops.every((r) => r.status === 200 || r.status === 202)).toBe(true);
    const b = await balance(accountId);
    expect(b).toBeGreaterThanOrEqual(0);
    const stillQueued = ops.filter((r) => r.status === 202 && r.body.status === 'queued').length;
    expect(b).toBe(30 - 3 * stillQueued);
    const shown = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body;
    const refunds = shown.ledger.filter((l: { kind: string }) => l.kind === 'refund');
    expect(refunds).toHaveLength(10);
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
});

describe('concurrency limit', () => {
  it('jobs past the plan concurrency are accepted and wait in queued while an agent with free slots runs only the plan\'s share', async () => {
    const limit = PLANS.starter.concurrentJobs;
    const { api } = await h.account('starter', 'busy');
    const jobs = await Promise.all(Array.from({ length: limit + 2 }, () => api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: template })));
    expect(jobs.map((j) => [j.status, j.body.status])).toEqual(jobs.map(() => [202, 'queued']));
    // An agent with more free slots than the plan allows asks for work: it gets the plan's share only.
    const a = agentClient(h.url, await agentToken(h));
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
