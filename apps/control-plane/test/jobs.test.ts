import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { JobRecordSchema, ErrorBodySchema, PLANS } from '@captionfarm/contracts';
import { sql } from 'kysely';
import { signToken } from '../src/crypto.ts';
import { loadOrCreateSecrets } from '../src/secrets.ts';
import { agentClient, agentToken, apiFor, startHarness, TEST_AGENT_CAPABILITIES, type Api, type Harness } from './harness.ts';

let h: Harness;
let api: Api;
let accountId: string;
let template: string;

beforeAll(async () => {
  h = await startHarness();
  ({ api, accountId } = await h.account('pro'));
  const t = await api('GET', '/v1/templates');
  template = t.body.templates[0].id;
});
afterAll(() => h.close());

const video = 'https://videos.example.com/talk.mp4';

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const parsed = ErrorBodySchema.safeParse(res.body);
  expect(parsed.success, JSON.stringify(res.body)).toBe(true);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.requestId).toMatch(/^req_/);
  expect(res.body.error.message.length).toBeGreaterThan(10);
}

describe('authentication', () => {
  it('401 with the error body when the key is missing, malformed, unknown or revoked', async () => {
    expectError(await apiFor(h.url, undefined)('GET', '/v1/automation-jobs'), 401, 'unauthenticated');
    expectError(await apiFor(h.url, undefined)('GET', '/v1/automation-jobs', undefined, { authorization: 'Basic abc' }), 401, 'unauthenticated');
    expectError(await apiFor(h.url, 'cf_live_notakey')('GET', '/v1/automation-jobs'), 401, 'unauthenticated');
    const { key } = await h.account('free', 'revokee');
    const keys = await h.admin('GET', `/accounts/${(await h.admin('GET', '/accounts')).body.accounts.at(-1).id}/keys`);
    expect((await apiFor(h.url, key)('GET', '/v1/automation-jobs')).status).toBe(200);
    expect((await h.admin('POST', `/keys/${keys.body.keys[0].id}/revoke`)).status).toBe(200);
    expectError(await apiFor(h.url, key)('GET', '/v1/automation-jobs'), 401, 'unauthenticated');
  });

  it('admin routes need the admin token; an API key is not one', async () => {
    const res = await api('GET', '/admin/v1/accounts');
    expectError(res, 401, 'unauthenticated');
  });
});

describe('POST /v1/automation-jobs', () => {
  it('202 with a full queued record and the defaults (mp4, high)', async () => {
    const res = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    expect(res.status).toBe(202);
    expect(JobRecordSchema.parse(res.body)).toEqual({
      id: expect.any(String),
      status: 'queued',
      phase: 'queued',
      templateId: template,
      quotedSeconds: null,
      format: 'mp4',
      quality: 'high',
      resolution: null,
      percent: null,
      downloadUrl: null,
      outputExpiresAt: null,
      failureReason: null,
      failureCode: null,
      settledAt: null,
      createdAt: expect.any(String),
    });
    expect(Object.keys(res.body)).toHaveLength(15);
    const got = await api('GET', `/v1/automation-jobs/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('keeps the chosen format, quality, resolution and language (the last two reach the agent)', async () => {
    // A control plane of its own, so the lease below can only pick this job.
    const ownHarness = await startHarness();
    const { api: own } = await ownHarness.account('pro', 'chooser');
    const res = await own('POST', '/v1/automation-jobs', {
      videoUrl: video,
      templateId: template,
      format: 'webm',
      quality: 'low',
      resolution: { width: 1080, height: 1920 },
      language: 'EN',
    });
    expect(res.status).toBe(202);
    expect(res.body.format).toBe('webm');
    expect(res.body.quality).toBe('low');
    // The record's resolution is the output's, so null until the job succeeds...
    expect(res.body.resolution).toBeNull();
    // ...while the requested one, and the language, are what the agent that leases the job gets.
    const a = agentClient(ownHarness.url, await agentToken(ownHarness));
    try {
      const { nodeId } = await a.agent.register.mutate({ nodeName: 'chooser-node', capabilities: TEST_AGENT_CAPABILITIES });
      const leased = await a.agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
      expect(leased).toHaveLength(1);
      expect(leased[0]).toMatchObject({ jobId: res.body.id, format: 'webm', quality: 'low', resolution: { width: 1080, height: 1920 }, language: 'en' });
    } finally {
      a.close();
      await ownHarness.close();
    }
  });

  it.each([
    ['malformed JSON', '{"videoUrl": ', 400, 'invalid_request'],
    ['a JSON array', '[]', 400, 'invalid_request'],
    ['JSON null', 'null', 400, 'invalid_request'],
  ])('%s -> %i', async (_name, raw, status, code) => {
    expectError(await api('POST', '/v1/automation-jobs', raw as string, { 'content-type': 'application/json' }), status as number, code as string);
  });

  it('an empty body -> 400', async () => {
    expectError(await api('POST', '/v1/automation-jobs'), 400, 'invalid_request');
  });

  it('a body that is not JSON -> 415', async () => {
    expectError(await api('POST', '/v1/automation-jobs', 'videoUrl=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
  });

  it('a huge body -> 413: over 64 KiB on most routes, over 8 MiB on job creation (which may carry a transcript)', async () => {
    const big = JSON.stringify({ fileName: 'a.mp4', sizeBytes: 1000, pad: 'x'.repeat(200_000) });
    expectError(await api('POST', '/v1/automation-jobs/uploads', big, { 'content-type': 'application/json' }), 413, 'payload_too_large');
    const huge = JSON.stringify({ videoUrl: video, templateId: template, pad: 'x'.repeat(8 * 1024 * 1024) });
    expectError(await api('POST', '/v1/automation-jobs', huge, { 'content-type': 'application/json' }), 413, 'payload_too_large');
  });

  it.each([
    ['unknown field', { videoUrl: video, templateId: 'x', colour: 'red' }, 'colour'],
    ['neither source', { templateId: 'x' }, 'videoUrl'],
    ['both sources', { videoUrl: video, uploadId: '7d0b6b9e-8a57-4f4e-9a36-2f3c0f0c1d11', templateId: 'x' }, 'uploadId'],
    ['wrong type of videoUrl', { videoUrl: 42, templateId: 'x' }, 'videoUrl'],
    ['missing templateId', { videoUrl: video }, 'templateId'],
    ['bad format', { videoUrl: video, templateId: 'x', format: 'avi' }, 'format'],
    ['bad quality', { videoUrl: video, templateId: 'x', quality: 'ultra' }, 'quality'],
    ['3-letter language', { videoUrl: video, templateId: 'x', language: 'eng' }, 'language'],
    ['non-integer resolution', { videoUrl: video, templateId: 'x', resolution: { width: 1.5, height: 720 } }, 'resolution.width'],
    ['negative resolution', { videoUrl: video, templateId: 'x', resolution: { width: -2, height: 720 } }, 'resolution.width'],
    ['uploadId not a uuid', { uploadId: 'abc', templateId: 'x' }, 'uploadId'],
    // Requests that could never succeed: refused here rather than failing later with a retryable code.
    ['a 1x1 resolution', { videoUrl: video, templateId: 'x', resolution: { width: 1, height: 1 } }, 'resolution.width'],
    ['a resolution under 64 px a side', { videoUrl: video, templateId: 'x', resolution: { width: 640, height: 62 } }, 'resolution.height'],
    ['an odd resolution', { videoUrl: video, templateId: 'x', resolution: { width: 1281, height: 720 } }, 'resolution.width'],
    ['a resolution wider than 4:1', { videoUrl: video, templateId: 'x', resolution: { width: 2048, height: 500 } }, 'resolution'],
    ['a language the recognizer does not know', { videoUrl: video, templateId: 'x', language: 'zz' }, 'language'],
    ['a 2-letter code that is not a language', { videoUrl: video, templateId: 'x', language: 'qq' }, 'language'],
  ])('400 for %s, naming the field', async (_name, body, field) => {
    const res = await api('POST', '/v1/automation-jobs', body);
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  it('accepts the smallest and the widest resolutions the renderer produces, and every 2-letter whisper language', async () => {
    for (const resolution of [
      { width: 64, height: 64 },
      { width: 2048, height: 512 },
      { width: 256, height: 1024 },
    ]) {
      expect((await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template, resolution })).status).toBe(202);
    }
    for (const language of ['en', 'DE', 'ja', 'ha', 'jw']) {
      expect((await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template, language })).status, language).toBe(202);
    }
  });

  it('400 for an unknown templateId', async () => {
    const res = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: 'no-such-template' });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain('no-such-template');
  });

  it.each([
    'http://videos.example.com/a.mp4',
    'ftp://videos.example.com/a.mp4',
    'https://localhost/a.mp4',
    'https://api.localhost/a.mp4',
    'https://127.0.0.1/a.mp4',
    'https://127.1/a.mp4',
    'https://2130706433/a.mp4',
    'https://0x7f000001/a.mp4',
    'https://0177.0.0.1/a.mp4',
    'https://0.0.0.0/a.mp4',
    'https://10.0.0.8/a.mp4',
    'https://172.16.3.4/a.mp4',
    'https://192.168.1.1/a.mp4',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/a.mp4',
    'https://[::1]/a.mp4',
    'https://[::ffff:127.0.0.1]/a.mp4',
    'https://[fd00::1]/a.mp4',
    'https://[fe80::1]/a.mp4',
    'https://user:pw@videos.example.com/a.mp4',
    'https://cdn.rebind.test/a.mp4',
    'https://cdn.private.test/a.mp4',
    'not a url',
  ])('400 for videoUrl and webhookUrl %s', async (bad) => {
    expectError(await api('POST', '/v1/automation-jobs', { videoUrl: bad, templateId: template }), 400, 'invalid_request');
    expectError(await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template, webhookUrl: bad }), 400, 'invalid_request');
  });

  it('accepts a public https webhookUrl', async () => {
    const res = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template, webhookUrl: 'https://hooks.example.com/captionfarm' });
    expect(res.status).toBe(202);
  });

  it('422 limit_exceeded for a resolution over the plan frame budget', async () => {
    const { api: free } = await h.account('free', 'small');
    const over = await free('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template, resolution: { width: 1920, height: 1080 } });
    expectError(over, 422, 'limit_exceeded');
    const at = await free('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template, resolution: { width: 1280, height: 720 } });
    expect(at.status).toBe(202);
    const portrait = await free('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template, resolution: { width: 720, height: 1280 } });
    expect(portrait.status).toBe(202);
  });
});

describe('GET /v1/automation-jobs/:id', () => {
  it("404 for an unknown id, a non-uuid, and another account's job", async () => {
    const mine = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    expectError(await api('GET', '/v1/automation-jobs/7d0b6b9e-8a57-4f4e-9a36-2f3c0f0c1d11'), 404, 'not_found');
    expectError(await api('GET', '/v1/automation-jobs/not-a-uuid'), 404, 'not_found');
    const { api: other } = await h.account('pro', 'other');
    const theirs = await other('GET', `/v1/automation-jobs/${mine.body.id}`);
    expectError(theirs, 404, 'not_found');
    expectError(await other('POST', `/v1/automation-jobs/${mine.body.id}/cancel`), 404, 'not_found');
    const list = await other('GET', '/v1/automation-jobs');
    expect(list.body.jobs.map((j: { id: string }) => j.id)).not.toContain(mine.body.id);
  });
});

describe('POST /v1/automation-jobs/:id/cancel', () => {
  it('cancels a queued job, is idempotent, and refunds the reservation', async () => {
    const before = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance;
    const job = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    const during = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance;
    expect(during).toBe(before - PLANS.pro.maxInputSeconds / 60);
    const c1 = await api('POST', `/v1/automation-jobs/${job.body.id}/cancel`);
    expect(c1.status).toBe(200);
    expect(c1.body).toMatchObject({ id: job.body.id, status: 'cancelled', phase: 'cancelled', percent: null, failureCode: null, settledAt: null });
    const c2 = await api('POST', `/v1/automation-jobs/${job.body.id}/cancel`);
    expect(c2.status).toBe(200);
    expect(c2.body).toEqual(c1.body);
    expect((await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance).toBe(before);
  });

  it('409 job_not_cancellable on a failed job, record unchanged', async () => {
    const { api: broke, accountId: brokeId } = await h.account('free', 'broke');
    const balance = (await h.admin('GET', `/accounts/${brokeId}/minutes`)).body.balance;
    expect((await h.admin('POST', `/accounts/${brokeId}/minutes`, { minutes: -balance })).status).toBe(200);
    const created = await broke('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    // The spec's 202 carries `queued`; the exhaustion is a job failure right after it.
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: 'queued', phase: 'queued', failureCode: null });
    const job = await broke('GET', `/v1/automation-jobs/${created.body.id}`);
    expect(job.body).toMatchObject({ status: 'failed', phase: 'failed', failureCode: 'automation-minutes-exhausted' });
    expect(job.body.failureReason).toMatch(/minutes/);
    const res = await broke('POST', `/v1/automation-jobs/${job.body.id}/cancel`);
    expectError(res, 409, 'job_not_cancellable');
    expect((await broke('GET', `/v1/automation-jobs/${job.body.id}`)).body).toEqual(job.body);
    expect((await h.admin('GET', `/accounts/${brokeId}/minutes`)).body.balance).toBe(0);
  });

  it('rejects a body on cancel', async () => {
    const job = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    expectError(await api('POST', `/v1/automation-jobs/${job.body.id}/cancel`, { reason: 'x' }), 400, 'invalid_request');
  });
});

describe('GET /v1/automation-jobs (list)', () => {
  it('pages newest first with a signed cursor that stays stable as new jobs arrive', async () => {
    const { api: lister } = await h.account('pro', 'lister');
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await lister('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template })).body.id);
    const newestFirst = [...ids].reverse();
    const p1 = await lister('GET', '/v1/automation-jobs?limit=3');
    expect(p1.status).toBe(200);
    expect(p1.body.jobs.map((j: { id: string }) => j.id)).toEqual(newestFirst.slice(0, 3));
    expect(typeof p1.body.nextCursor).toBe('string');
    // Jobs created between pages do not shift what the next page shows.
    await lister('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    await lister('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    const p2 = await lister('GET', `/v1/automation-jobs?limit=3&cursor=${encodeURIComponent(p1.body.nextCursor)}`);
    expect(p2.body.jobs.map((j: { id: string }) => j.id)).toEqual(newestFirst.slice(3, 6));
    const p3 = await lister('GET', `/v1/automation-jobs?limit=3&cursor=${encodeURIComponent(p2.body.nextCursor)}`);
    expect(p3.body.jobs.map((j: { id: string }) => j.id)).toEqual(newestFirst.slice(6));
    expect(p3.body.nextCursor).toBeNull();
    for (const j of p1.body.jobs) expect(JobRecordSchema.safeParse(j).success).toBe(true);
  });

  it('jobs created in the same millisecond list in creation order, and their pages neither skip nor repeat one', async () => {
    // A clock that never moves: every job of this control plane has the same created_at.
    const frozen = new Date('2026-11-22T12:00:00.000Z');
    const still = await startHarness({}, { now: () => new Date(frozen) });
    onTestFinished(() => still.close());
    const { api: twins } = await still.account('pro', 'twins');
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push((await twins('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await twins('GET', `/v1/automation-jobs?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      for (const j of page.body.jobs) expect(j.createdAt).toBe(frozen.toISOString());
      seen.push(...page.body.jobs.map((j: { id: string }) => j.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it('a cursor signed before jobs.seq (created_at + id) still pages on after the upgrade, neither skipping nor repeating a job', async () => {
    // Jobs from before migration 0013, all in one millisecond: the old list ordered them by id,
    // and 0013 numbered them in that order (its own statement, run again on these rows).
    const frozen = new Date('2026-11-22T12:00:00.000Z');
    const old = await startHarness({}, { now: () => new Date(frozen) });
    onTestFinished(() => old.close());
    const { api: pager, accountId: pagerId } = await old.account('pro', 'upgraded');
    for (let i = 0; i < 7; i++) await pager('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    const db = old.cp.db;
    await db.updateTable('jobs').set({ seq: null }).where('account_id', '=', pagerId).execute();
    await sql`update jobs set seq = (select count(*) from jobs j2 where j2.account_id = jobs.account_id and (j2.created_at < jobs.created_at or (j2.created_at = jobs.created_at and j2.id <= jobs.id))) where account_id = ${pagerId}`.execute(
      db,
    );
    const oldOrder = (await db.selectFrom('jobs').select(['id', 'created_at']).where('account_id', '=', pagerId).execute()).sort((a, b) =>
      a.id < b.id ? 1 : -1,
    );
    // The cursor the old control plane handed out after its first page of 3.
    const { cursorKey } = loadOrCreateSecrets(old.dataDir);
    const third = oldOrder[2]!;
    let cursor: string | null = signToken({ a: pagerId, c: third.created_at, i: third.id }, cursorKey);
    const seen: string[] = [];
    do {
      const page = await pager('GET', `/v1/automation-jobs?limit=2&cursor=${encodeURIComponent(cursor)}`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      seen.push(...page.body.jobs.map((j: { id: string }) => j.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(oldOrder.slice(3).map((j) => j.id));
    // A job named by an old cursor may be gone since (this id, just above the third, names none):
    // the walk goes on from its place, with the third job.
    const gone = signToken({ a: pagerId, c: third.created_at, i: `${third.id}-gone` }, cursorKey);
    const fromGone = await pager('GET', `/v1/automation-jobs?limit=10&cursor=${encodeURIComponent(gone)}`);
    expect(fromGone.body.jobs.map((j: { id: string }) => j.id)).toEqual(oldOrder.slice(2).map((j) => j.id));
    // Still signed and still the account's own: another account's old cursor is refused.
    const { api: stranger } = await old.account('pro', 'stranger');
    expectError(
      await stranger('GET', `/v1/automation-jobs?cursor=${encodeURIComponent(signToken({ a: pagerId, c: third.created_at, i: third.id }, cursorKey))}`),
      400,
      'invalid_request',
    );
  });

  it('defaults to 20 per page, caps limit at 100', async () => {
    const { api: many } = await h.account('pro', 'many');
    for (let i = 0; i < 21; i++) await many('POST', '/v1/automation-jobs', { videoUrl: video, templateId: template });
    const page = await many('GET', '/v1/automation-jobs');
    expect(page.body.jobs).toHaveLength(20);
    expect(page.body.nextCursor).not.toBeNull();
    expectError(await many('GET', '/v1/automation-jobs?limit=101'), 400, 'invalid_request');
    expectError(await many('GET', '/v1/automation-jobs?limit=0'), 400, 'invalid_request');
  });

  it("400 for a tampered cursor or another account's cursor", async () => {
    const p1 = await api('GET', '/v1/automation-jobs?limit=1');
    const cursor: string = p1.body.nextCursor;
    const [body, mac] = cursor.split('.');
    const forged = `${Buffer.from(JSON.stringify({ a: accountId, c: '2999-01-01T00:00:00.000Z', i: 'z' })).toString('base64url')}.${mac}`;
    expectError(await api('GET', `/v1/automation-jobs?cursor=${encodeURIComponent(forged)}`), 400, 'invalid_request');
    expectError(await api('GET', `/v1/automation-jobs?cursor=${encodeURIComponent(`${body}.AAAA`)}`), 400, 'invalid_request');
    const { api: other } = await h.account('pro', 'cursor-thief');
    expectError(await other('GET', `/v1/automation-jobs?cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_request');
  });
});

describe('service documents', () => {
  it('serves /healthz and an OpenAPI 3.1 document generated from the schemas', async () => {
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    const doc = (await (await fetch(`${h.url}/v1/openapi.json`)).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/automation-jobs', '/v1/automation-jobs/{id}', '/v1/automation-jobs/{id}/cancel', '/v1/automation-jobs/uploads']),
    );
    expect(doc.components.schemas.JobRecord.required).toHaveLength(15);
    expect(doc.components.schemas.CreateJobRequest.properties.format.default).toBe('mp4');
    // Issue 10: the transcript as an output and an input, and the failure code it adds.
    expect(doc.paths['/v1/automation-jobs/{id}/transcript'].get.responses['409'].description).toMatch(/^transcript_not_available/);
    expect(Object.keys(doc.paths['/v1/automation-jobs/{id}/transcript'].get.responses['200'].content)).toEqual([
      'application/json',
      'application/x-subrip; charset=utf-8',
      'text/vtt; charset=utf-8',
    ]);
    expect(doc.components.schemas.TranscriptRecord.required).toEqual(['language', 'languageProbability', 'words']);
    expect(doc.components.schemas.CreateJobRequest.properties.transcript.properties.words.maxItems).toBe(20_000);
    expect(doc.components.schemas.JobRecord.properties.failureCode.anyOf[0].enum).toContain('transcript-out-of-range');
    // Issue 16: per-job style, fonts, overlay output.
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/automation-jobs/{id}/style', '/v1/fonts', '/v1/fonts/{id}', '/v1/fonts/{id}/complete']),
    );
    expect(doc.components.schemas.CreateJobRequest.properties.style.$ref).toBe('#/components/schemas/Style');
    expect(Object.keys(doc.components.schemas.Style.properties)).toEqual(
      expect.arrayContaining(['font', 'fill', 'outline', 'shadow', 'background', 'position', 'layout', 'active', 'animation', 'emoji', 'keywords']),
    );
    expect(doc.components.schemas.Style.properties.font.properties.fontId).toBeDefined();
    expect(doc.components.schemas.CreateJobRequest.properties.format.enum).toEqual(['mp4', 'webm', 'mov']);
    expect(doc.components.schemas.CreateJobRequest.properties.overlay.description).toMatch(/"mov" is accepted only with overlay: true/);
    expect(doc.paths['/v1/fonts/{id}/complete'].post.responses['422'].description).toMatch(/^invalid_font/);
    expect(doc.paths['/v1/templates/{id}/preview'].post.requestBody.content['application/json'].schema.properties.style.$ref).toBe(
      '#/components/schemas/Style',
    );
  });

  it('answers unknown routes with the error body', async () => {
    expectError(await api('GET', '/v1/nothing-here'), 404, 'not_found');
  });
});
