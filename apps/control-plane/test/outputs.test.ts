import { randomUUID } from 'node:crypto';
import type { TRPCClient } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema, JobOutputsSchema, JobRecordSchema, LeasedJobSchema } from '@captionfarm/contracts';
import type { AgentRouter } from '../src/index.ts';
import { agentClient, agentToken, putBytes, startHarness, TEST_AGENT_CAPABILITIES, type Api, type Harness } from './harness.ts';

/**
 * Issue 43 on the control plane: renditions, poster, safe area, placement and subtitles validated
 * at creation (the documented error body), kept beside the spec's record (format, resolution and
 * downloadUrl stay the first rendition's), leased, uploaded each to its own key, completed, served
 * by GET .../outputs with their own links, deleted together. A test agent speaks the real protocol
 * over a websocket; the store is the built-in one over HTTP; the database is the real one (SQLite,
 * or PostgreSQL with CAPTIONFARM_TEST_DATABASE_URL).
 */
let h: Harness;
let agent: TRPCClient<AgentRouter>;
let closeAgent: () => void;
let nodeId: string;
let clockOffsetMs = 0;
const videoUrl = 'https://videos.example.com/talk.mp4';

beforeAll(async () => {
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000 }, now: () => new Date(Date.now() + clockOffsetMs) });
  ({ agent, close: closeAgent } = agentClient(h.url, await agentToken(h)));
  nodeId = (await agent.register.mutate({ nodeName: 'outputs', capabilities: TEST_AGENT_CAPABILITIES })).nodeId;
});
afterAll(async () => {
  closeAgent?.();
  await h?.close();
});

function expectError(res: { status: number; body: any }, status: number, code: string, paths: string[]) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(ErrorBodySchema.safeParse(res.body).success, JSON.stringify(res.body)).toBe(true);
  expect(res.body.error.code).toBe(code);
  expect((res.body.error.details ?? []).map((d: { path: string }) => d.path).sort()).toEqual(paths.sort());
}

/** Leases until the job `id` comes (jobs of earlier tests still queued are failed on the way). */
async function leaseJob(id: string) {
  for (let i = 0; i < 50; i++) {
    const [job] = await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
    if (!job) break;
    if (job.jobId === id) return job;
    await agent.fail.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, failureCode: 'internal', failureReason: 'not this test’s job' });
  }
  throw new Error(`job ${id} was not leased`);
}
type Leased = Awaited<ReturnType<typeof leaseJob>>;
const refOf = (job: Leased) => ({ nodeId, jobId: job.jobId, leaseId: job.leaseId });

/** Asks for a rendition's (or the poster's) PUT URL and puts the bytes there over HTTP. */
async function upload(job: Leased, bytes: Buffer, at: { output?: number; target?: 'video' | 'poster' }) {
  const up = await agent.outputUploadUrl.mutate({ ...refOf(job), sizeBytes: bytes.length, ...at });
  if (!up.ok) throw new Error(`no upload url: ${up.reason}`);
  expect(await putBytes(up.url, bytes)).toBe(200);
}

async function fetchBytes(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

const THREE = [
  { resolution: { width: 1080, height: 1920 }, reframe: 'subject' },
  { resolution: { width: 1920, height: 1080 } },
  { resolution: { width: 720, height: 720 }, format: 'webm' },
] as const;
const SIZES = [
  { width: 1080, height: 1920 },
  { width: 1920, height: 1080 },
  { width: 720, height: 720 },
];
/** Distinct bytes per rendition and for the poster, so a link serving another's is caught. */
const BYTES = [Buffer.from('rendition zero, 9:16'), Buffer.from('rendition one, 16:9 wider'), Buffer.from('rendition two, square webm!')];
const POSTER = Buffer.from('\xff\xd8\xff poster jpeg bytes');

/**
 * A job of three renditions and a poster chosen by the agent, ingested as a 125 s 3840x2160 source
 * (a 1920x1080 one would fail 1080x1920 with output-larger-than-source: no side is upscaled).
 */
async function threeRenditionJob(api: Api, extra: Record<string, unknown> = {}) {
  const res = await api('POST', '/v1/automation-jobs', {
    videoUrl,
    templateId: 'karaoke',
    outputs: THREE,
    poster: true,
    safeArea: 'tiktok',
    placement: 'auto',
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const job = await leaseJob(res.body.id);
  expect(await agent.ingested.mutate({ ...refOf(job), durationSeconds: 125, width: 3840, height: 2160 })).toEqual({ ok: true });
  return { record: res.body, job };
}

/** Every rendition and the poster uploaded, then the complete an agent of issue 43 sends. */
async function completeAll(job: Leased, o: { bytes?: Buffer[]; skip?: number } = {}) {
  const bytes = o.bytes ?? BYTES;
  for (const [i, b] of bytes.entries()) await upload(job, b, { output: i });
  await upload(job, POSTER, { target: 'poster' });
  return agent.complete.mutate({
    ...refOf(job),
    resolution: SIZES[0]!,
    outputBytes: bytes[0]!.length,
    outputs: bytes.map((b, index) => ({ index, resolution: SIZES[index]!, outputBytes: b.length })).filter((o2) => o2.index !== o.skip),
    poster: { at: 1.5, width: 1080, height: 1920, bytes: POSTER.length },
  });
}

describe('POST /v1/automation-jobs with outputs, poster, reframe, safeArea, placement, subtitles', () => {
  it('refuses bad input at creation with the documented error body', async () => {
    const { api } = await h.account('pro', 'refusals');
    const post = (body: Record<string, unknown>) => api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', ...body });
    const five = Array.from({ length: 5 }, (_, i) => ({ resolution: { width: 640 + 2 * i, height: 360 } }));
    expectError(await post({ outputs: five }), 400, 'invalid_request', ['outputs']);
    expectError(await post({ outputs: [{ resolution: { width: 1081, height: 1920 } }] }), 400, 'invalid_request', ['outputs.0.resolution.width']);
    expectError(await post({ resolution: { width: 1080, height: 1919 } }), 400, 'invalid_request', ['resolution.height']);
    expectError(await post({ overlay: true, format: 'webm', reframe: 'subject', resolution: { width: 1080, height: 1920 } }), 400, 'invalid_request', [
      'reframe',
    ]);
    expectError(await post({ safeArea: 'snapchat' }), 400, 'invalid_request', ['safeArea']);
    // Over the plan's frame budget (free: 1280x720): 422 limit_exceeded naming the rendition.
    const free = await h.account('free', 'refusals-free');
    const over = await free.api('POST', '/v1/automation-jobs', {
      videoUrl,
      templateId: 'karaoke',
      outputs: [{ resolution: { width: 720, height: 1280 } }, { resolution: { width: 1080, height: 1920 } }],
    });
    expectError(over, 422, 'limit_exceeded', ['outputs.1.resolution']);
    expect(over.body.error.message).toMatch(/^outputs\[1\]\.resolution 1080x1920 is over the free plan's frame budget of 921600 pixels/);
    // Nothing was created by any of them.
    expect((await api('GET', '/v1/automation-jobs')).body.jobs).toEqual([]);
    expect((await free.api('GET', '/v1/automation-jobs')).body.jobs).toEqual([]);
  });

  it('keeps the record to the spec keys (the first rendition’s format) and leases every rendition, the poster, zones, placement, subtitles', async () => {
    const { api } = await h.account('pro', 'lease');
    const res = await api('POST', '/v1/automation-jobs', {
      videoUrl,
      templateId: 'karaoke',
      format: 'mp4',
      outputs: [
        { resolution: { width: 720, height: 720 }, format: 'webm' },
        { resolution: { width: 1080, height: 1920 }, reframe: 'subject' },
      ],
      poster: { at: 2.5 },
      safeArea: 'reels',
      subtitles: 'both',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    expect({ format: res.body.format, resolution: res.body.resolution, downloadUrl: res.body.downloadUrl }).toEqual({
      format: 'webm',
      resolution: null,
      downloadUrl: null,
    });
    const job = await leaseJob(res.body.id);
    expect(LeasedJobSchema.parse(job)).toBeTruthy();
    expect({ format: job.format, resolution: job.resolution }).toEqual({ format: 'webm', resolution: { width: 720, height: 720 } });
    expect(job.outputs).toEqual([
      { resolution: { width: 720, height: 720 }, format: 'webm', reframe: 'center' },
      { resolution: { width: 1080, height: 1920 }, format: 'mp4', reframe: 'subject' },
    ]);
    expect({ safeArea: job.safeArea, placement: job.placement, poster: job.poster, subtitles: job.subtitles }).toEqual({
      safeArea: 'reels',
      placement: 'fixed',
      poster: { at: 2.5 },
      subtitles: 'both',
    });
    await agent.fail.mutate({ ...refOf(job), failureCode: 'internal', failureReason: 'test done' });

    // Without outputs: one rendition, the job's own; the defaults; no poster.
    const plain = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', resolution: { width: 1080, height: 1920 }, reframe: 'subject' }))
      .body;
    const one = await leaseJob(plain.id);
    expect(one.outputs).toEqual([{ resolution: { width: 1080, height: 1920 }, format: 'mp4', reframe: 'subject' }]);
    expect({ safeArea: one.safeArea, placement: one.placement, poster: one.poster, subtitles: one.subtitles }).toEqual({
      safeArea: 'none',
      placement: 'fixed',
      poster: null,
      subtitles: 'burn',
    });
    await agent.fail.mutate({ ...refOf(one), failureCode: 'internal', failureReason: 'test done' });
  });
});

describe('three renditions and a poster through the public API', () => {
  it('uploaded each to its own key, completed, served by GET .../outputs with working links; the record’s downloadUrl is rendition 0; minutes charged once', async () => {
    const { api, accountId } = await h.account('pro', 'three');
    const before = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance as number;
    const { record, job } = await threeRenditionJob(api);
    expect(job.outputs.map((o) => o.resolution)).toEqual(SIZES);
    expect(job.poster).toEqual({ at: null });

    // Before success: every rendition listed as asked, no link, no poster.
    const early = await api('GET', `/v1/automation-jobs/${record.id}/outputs`);
    expect(early.status).toBe(200);
    expect(JobOutputsSchema.parse(early.body)).toEqual(early.body);
    expect(early.body).toEqual({
      jobId: record.id,
      safeArea: 'tiktok',
      placement: 'auto',
      subtitles: 'burn',
      outputs: [
        {
          index: 0,
          format: 'mp4',
          reframe: 'subject',
          requestedResolution: SIZES[0],
          resolution: null,
          sizeBytes: null,
          downloadUrl: null,
          outputExpiresAt: null,
        },
        {
          index: 1,
          format: 'mp4',
          reframe: 'center',
          requestedResolution: SIZES[1],
          resolution: null,
          sizeBytes: null,
          downloadUrl: null,
          outputExpiresAt: null,
        },
        {
          index: 2,
          format: 'webm',
          reframe: 'center',
          requestedResolution: SIZES[2],
          resolution: null,
          sizeBytes: null,
          downloadUrl: null,
          outputExpiresAt: null,
        },
      ],
      poster: null,
    });

    expect(await completeAll(job)).toEqual({ ok: true });
    const done = (await api('GET', `/v1/automation-jobs/${record.id}`)).body;
    expect(Object.keys(done).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    expect({ status: done.status, format: done.format, resolution: done.resolution, quotedSeconds: done.quotedSeconds }).toEqual({
      status: 'succeeded',
      format: 'mp4',
      resolution: SIZES[0],
      quotedSeconds: 125,
    });
    expect((await fetchBytes(done.downloadUrl)).bytes).toEqual(BYTES[0]);

    const out = (await api('GET', `/v1/automation-jobs/${record.id}/outputs`)).body;
    expect(JobOutputsSchema.parse(out)).toEqual(out);
    expect(out.outputs[0].downloadUrl).toBe(done.downloadUrl);
    for (const o of out.outputs) {
      expect({ resolution: o.resolution, sizeBytes: o.sizeBytes, outputExpiresAt: o.outputExpiresAt }).toEqual({
        resolution: SIZES[o.index],
        sizeBytes: BYTES[o.index]!.length,
        outputExpiresAt: done.outputExpiresAt,
      });
      const got = await fetchBytes(o.downloadUrl);
      expect({ status: got.status, type: got.type, text: got.bytes.toString() }).toEqual({
        status: 200,
        type: o.format === 'webm' ? 'video/webm' : 'video/mp4',
        text: BYTES[o.index]!.toString(),
      });
    }
    expect(new Set(out.outputs.map((o: { downloadUrl: string }) => o.downloadUrl)).size).toBe(3);
    expect(out.poster).toMatchObject({ at: 1.5, width: 1080, height: 1920, sizeBytes: POSTER.length, outputExpiresAt: done.outputExpiresAt });
    const poster = await fetchBytes(out.poster.downloadUrl);
    expect({ status: poster.status, type: poster.type, bytes: poster.bytes }).toEqual({ status: 200, type: 'image/jpeg', bytes: POSTER });

    // A 125 s source: 3 minutes, once, whatever the number of renditions.
    expect((await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance).toBe(before - 3);
    const ledger = await h.cp.db.selectFrom('minutes_ledger').select(['kind', 'minutes']).where('job_id', '=', record.id).orderBy('id').execute();
    expect(ledger.reduce((sum, r) => sum + r.minutes, 0)).toBe(-3);
  });

  it('404 in the error body for another account’s job and an unknown one; a dashboard session gets the same answer as the API key', async () => {
    const owner = await h.account('pro', 'owner');
    const other = await h.account('pro', 'other');
    const { record, job } = await threeRenditionJob(owner.api);
    expect(await completeAll(job)).toEqual({ ok: true });
    expectError(await other.api('GET', `/v1/automation-jobs/${record.id}/outputs`), 404, 'not_found', []);
    expectError(await owner.api('GET', `/v1/automation-jobs/${randomUUID()}/outputs`), 404, 'not_found', []);
    expectError(await owner.api('GET', '/v1/automation-jobs/not-a-job/outputs'), 404, 'not_found', []);

    const byKey = (await owner.api('GET', `/v1/automation-jobs/${record.id}/outputs`)).body;
    const session = await dashboardSession(owner.accountId, 'outputs@example.com');
    const bySession = await fetch(`${h.url}/app/api/v1/automation-jobs/${record.id}/outputs`, { headers: { cookie: session } });
    expect(bySession.status).toBe(200);
    expect(await bySession.json()).toEqual(byKey);
  });

  it('a retried attempt’s uploads replace the earlier attempt’s', async () => {
    const { api } = await h.account('pro', 'retry');
    const { record, job } = await threeRenditionJob(api);
    for (let i = 0; i < BYTES.length; i++) await upload(job, Buffer.from(`first attempt ${i}`), { output: i });
    await upload(job, Buffer.from('first poster'), { target: 'poster' });
    expect(await agent.release.mutate(refOf(job))).toEqual({ ok: true });
    const again = await leaseJob(record.id);
    expect(again.attempt).toBe(job.attempt + 1);
    expect(await agent.ingested.mutate({ ...refOf(again), durationSeconds: 125, width: 3840, height: 2160 })).toEqual({ ok: true });
    expect(await completeAll(again)).toEqual({ ok: true });
    const out = (await api('GET', `/v1/automation-jobs/${record.id}/outputs`)).body;
    for (const o of out.outputs) expect((await fetchBytes(o.downloadUrl)).bytes.toString()).toBe(BYTES[o.index]!.toString());
    expect((await fetchBytes(out.poster.downloadUrl)).bytes).toEqual(POSTER);
  });
});

/** A member of the account signed in to the dashboard (invite accepted): its session cookie. */
async function dashboardSession(accountId: string, email: string): Promise<string> {
  const inv = await h.admin('POST', '/users/invites', { email, accountId });
  expect(inv.status).toBe(201);
  const start = await fetch(`${h.url}/app/api/session`);
  const cookie = start.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const { csrfToken } = (await start.json()) as { csrfToken: string };
  const accepted = await fetch(`${h.url}/app/api/invite/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: h.url, 'x-csrf-token': csrfToken, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ token: new URL(inv.body.link).hash.slice(1), password: 'correct horse battery' }),
  });
  expect(accepted.status).toBe(200);
  const session = accepted.headers.getSetCookie().find((c) => c.startsWith('cf_session='));
  expect(session).toBeDefined();
  return session!.split(';')[0]!;
}

describe('what the agent reports is checked against the job', () => {
  it('a complete that lacks a rendition fails the job (internal, answered job-ended) and deletes what was uploaded', async () => {
    const { api } = await h.account('pro', 'lacks');
    const { record, job } = await threeRenditionJob(api);
    expect(await completeAll(job, { skip: 2 })).toEqual({ ok: false, reason: 'job-ended' });
    const failed = (await api('GET', `/v1/automation-jobs/${record.id}`)).body;
    expect({ status: failed.status, failureCode: failed.failureCode, downloadUrl: failed.downloadUrl }).toEqual({
      status: 'failed',
      failureCode: 'internal',
      downloadUrl: null,
    });
    expect(failed.failureReason).toMatch(/without rendition 2 of the 3/);
    for (const key of [`outputs/${record.id}.mp4`, `outputs/${record.id}.1.mp4`, `outputs/${record.id}.2.webm`, `outputs/${record.id}.poster.jpg`]) {
      expect(await h.cp.store.head(key), key).toBeNull();
    }
    const out = (await api('GET', `/v1/automation-jobs/${record.id}/outputs`)).body;
    expect(out.outputs.map((o: { downloadUrl: string | null }) => o.downloadUrl)).toEqual([null, null, null]);
    expect(out.poster).toBeNull();
  });

  it('a complete without the poster the job asked for is refused; so is an upload URL past the renditions or for a poster not asked for', async () => {
    const { api } = await h.account('pro', 'poster-missing');
    const { record, job } = await threeRenditionJob(api);
    for (const [i, bytes] of BYTES.entries()) await upload(job, bytes, { output: i });
    const sent = await agent.complete.mutate({
      ...refOf(job),
      resolution: SIZES[0]!,
      outputBytes: BYTES[0]!.length,
      outputs: BYTES.map((bytes, index) => ({ index, resolution: SIZES[index]!, outputBytes: bytes.length })),
    });
    expect(sent).toEqual({ ok: false, reason: 'job-ended' });
    expect((await api('GET', `/v1/automation-jobs/${record.id}`)).body.failureReason).toMatch(/without the poster/);

    const past = await threeRenditionJob(api);
    expect(await agent.outputUploadUrl.mutate({ ...refOf(past.job), sizeBytes: 10, output: 3 })).toEqual({ ok: false, reason: 'job-ended' });
    expect((await api('GET', `/v1/automation-jobs/${past.record.id}`)).body).toMatchObject({ status: 'failed', failureCode: 'internal' });

    const plain = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke' })).body;
    const one = await leaseJob(plain.id);
    expect(await agent.outputUploadUrl.mutate({ ...refOf(one), sizeBytes: 10, target: 'poster' })).toEqual({ ok: false, reason: 'job-ended' });
    expect((await api('GET', `/v1/automation-jobs/${plain.id}`)).body.failureReason).toMatch(/a poster, which the job did not ask for/);
  });

  it('an agent from before (no output index, no outputs at complete) still completes a one-rendition job; GET .../outputs lists it', async () => {
    const { api } = await h.account('pro', 'old-agent');
    const plain = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke' })).body;
    const job = await leaseJob(plain.id);
    expect(await agent.ingested.mutate({ ...refOf(job), durationSeconds: 3, width: 320, height: 240 })).toEqual({ ok: true });
    const up = await agent.outputUploadUrl.mutate({ ...refOf(job), sizeBytes: BYTES[0]!.length });
    if (!up.ok) throw new Error('no url');
    expect(await putBytes(up.url, BYTES[0]!)).toBe(200);
    expect(await agent.complete.mutate({ ...refOf(job), resolution: { width: 320, height: 240 }, outputBytes: BYTES[0]!.length })).toEqual({ ok: true });
    const done = (await api('GET', `/v1/automation-jobs/${plain.id}`)).body;
    const out = (await api('GET', `/v1/automation-jobs/${plain.id}/outputs`)).body;
    expect(out.outputs).toEqual([
      {
        index: 0,
        format: 'mp4',
        reframe: 'center',
        requestedResolution: null,
        resolution: { width: 320, height: 240 },
        sizeBytes: BYTES[0]!.length,
        downloadUrl: done.downloadUrl,
        outputExpiresAt: done.outputExpiresAt,
      },
    ]);
    expect(out.poster).toBeNull();
  });

  it('a rendition larger than the source fails the job at ingest with output-larger-than-source naming it', async () => {
    const { api } = await h.account('pro', 'larger');
    const res = await api('POST', '/v1/automation-jobs', {
      videoUrl,
      templateId: 'karaoke',
      outputs: [{ resolution: { width: 640, height: 360 } }, { resolution: { width: 2560, height: 1440 } }],
    });
    const job = await leaseJob(res.body.id);
    expect(await agent.ingested.mutate({ ...refOf(job), durationSeconds: 3, width: 1920, height: 1080 })).toEqual({ ok: false, reason: 'job-ended' });
    const failed = (await api('GET', `/v1/automation-jobs/${res.body.id}`)).body;
    expect({ code: failed.failureCode, reason: failed.failureReason }).toEqual({
      code: 'output-larger-than-source',
      reason: 'The requested outputs[1].resolution 2560x1440 is larger than the 1920x1080 source; videos are never upscaled.',
    });
  });
});

describe('expiry', () => {
  it('the 7 days over, the sweep deletes every rendition and the poster; GET .../outputs then serves no link', async () => {
    const { api } = await h.account('pro', 'expiry');
    const { record, job } = await threeRenditionJob(api);
    expect(await completeAll(job)).toEqual({ ok: true });
    const keys = [`outputs/${record.id}.mp4`, `outputs/${record.id}.1.mp4`, `outputs/${record.id}.2.webm`, `outputs/${record.id}.poster.jpg`];
    await h.cp.sweep();
    for (const key of keys) expect(await h.cp.store.head(key), key).not.toBeNull();
    clockOffsetMs = 7 * 86_400_000 + 60_000;
    try {
      await h.cp.sweep();
      for (const key of keys) expect(await h.cp.store.head(key), key).toBeNull();
      const out = (await api('GET', `/v1/automation-jobs/${record.id}/outputs`)).body;
      expect(out.outputs.map((o: { downloadUrl: string | null; resolution: unknown }) => [o.downloadUrl, o.resolution])).toEqual(SIZES.map((s) => [null, s]));
      expect(out.poster).toBeNull();
    } finally {
      clockOffsetMs = 0;
    }
  });
});
