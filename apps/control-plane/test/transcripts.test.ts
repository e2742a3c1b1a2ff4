import { randomUUID } from 'node:crypto';
import { createTRPCClient, createWSClient, wsLink, type TRPCClient } from '@trpc/client';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toSrt, toVtt } from '@captionfarm/captions';
import { ErrorBodySchema, JobRecordSchema, TranscriptRecordSchema } from '@captionfarm/contracts';
import type { AgentRouter } from '../src/index.ts';
import { jsonOf, rawRequest, startHarness, type Api, type Harness } from './harness.ts';

/**
 * The transcript as an output (GET .../transcript) and an input (POST with `transcript`), driven
 * through the real agent protocol: a test agent leases, reports ingest, words and completion.
 */
let h: Harness;
let agent: TRPCClient<AgentRouter>;
let nodeId: string;
const sockets: { close(): void }[] = [];
const video = 'https://videos.example.com/talk.mp4';

beforeAll(async () => {
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000 } });
  const token = (await h.admin('POST', '/agents/tokens', { name: 't' })).body.token as string;
  const ws = createWSClient({
    url: `${h.url.replace('http', 'ws')}/agent`,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: { token },
  });
  sockets.push(ws);
  agent = createTRPCClient<AgentRouter>({ links: [wsLink({ client: ws })] });
  nodeId = (
    await agent.register.mutate({ nodeName: 'transcripts', capabilities: { gpu: false, nvenc: false, cudaWhisper: false, models: [], maxConcurrentJobs: 4 } })
  ).nodeId;
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await h.close();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(ErrorBodySchema.safeParse(res.body).success, JSON.stringify(res.body)).toBe(true);
  expect(res.body.error.code).toBe(code);
}

const WORDS = [
  { text: 'Captionfarm', start: 0.2, end: 0.9 },
  { text: 'makes', start: 0.9, end: 1.2 },
  { text: 'captions.', start: 1.25, end: 1.9 },
];

/** Leases the next queued job (only ours are queued in this file at a time). */
async function lease() {
  const [job] = await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
  if (!job) throw new Error('nothing leased');
  return job;
}

/** ingest -> (words) -> upload -> complete, as an agent does. */
async function succeed(job: { jobId: string; leaseId: string }, words?: typeof WORDS, durationSeconds = 3) {
  const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
  expect(await agent.ingested.mutate({ ...ref, durationSeconds, width: 64, height: 64 })).toEqual({ ok: true });
  await agent.progress.mutate({ ...ref, phase: 'transcribing', percent: null });
  if (words) expect(await agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: 0.93, words })).toEqual({ ok: true });
  await agent.progress.mutate({ ...ref, phase: 'rendering', percent: 0 });
  const bytes = Buffer.from('not really a video, but bytes in the store');
  const up = await agent.outputUploadUrl.mutate({ ...ref, sizeBytes: bytes.length });
  if (!up.ok) throw new Error('no upload url');
  expect((await fetch(up.url, { method: 'PUT', body: bytes })).status).toBe(200);
  expect(await agent.complete.mutate({ ...ref, resolution: { width: 64, height: 64 }, outputBytes: bytes.length })).toEqual({ ok: true });
}

async function template(api: Api): Promise<string> {
  return (await api('GET', '/v1/templates')).body.templates[0].id;
}

describe('GET /v1/automation-jobs/:id/transcript', () => {
  it('409 transcript_not_available until the job succeeded; then json, srt and vtt; the job record keeps the spec keys', async () => {
    const { api } = await h.account('pro', 'recognized');
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: await template(api) })).body;
    expectError(await api('GET', `/v1/automation-jobs/${created.id}/transcript`), 409, 'transcript_not_available');
    const job = await lease();
    expect(job.jobId).toBe(created.id);
    expect(job.transcript).toBeNull();
    // Running, even with words already kept: still 409.
    const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
    await agent.ingested.mutate({ ...ref, durationSeconds: 3, width: 64, height: 64 });
    await agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: 0.93, words: WORDS });
    const running = await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=srt`);
    expectError(running, 409, 'transcript_not_available');
    expect(running.body.error.message).toMatch(/running .*once it has succeeded/);
    // A stale lease cannot write words.
    expect(await agent.transcribed.mutate({ ...ref, leaseId: 'stale', language: 'de', languageProbability: null, words: [] })).toEqual({
      ok: false,
      reason: 'lease-lost',
    });
    await succeed(job, WORDS);

    const json = await api('GET', `/v1/automation-jobs/${created.id}/transcript`);
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(TranscriptRecordSchema.parse(json.body)).toEqual({ language: 'en', languageProbability: 0.93, words: WORDS });
    expect((await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=json`)).body).toEqual(json.body);

    const srt = await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=srt`);
    expect(srt.status).toBe(200);
    expect(srt.headers.get('content-type')).toBe('application/x-subrip; charset=utf-8');
    expect(srt.body).toBe('1\n00:00:00,200 --> 00:00:01,900\nCaptionfarm makes captions.\n\n');
    const vtt = await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=vtt`);
    expect(vtt.headers.get('content-type')).toBe('text/vtt; charset=utf-8');
    expect(vtt.body).toBe('WEBVTT\n\n00:00:00.200 --> 00:00:01.900\nCaptionfarm makes captions.\n\n');

    const record = (await api('GET', `/v1/automation-jobs/${created.id}`)).body;
    expect(JobRecordSchema.parse(record).status).toBe('succeeded');
    expect(Object.keys(record).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
  });

  it("another account's job is 404, a malformed id is 404, an unknown format is 400", async () => {
    const { api } = await h.account('pro', 'owner');
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: await template(api) })).body;
    await succeed(await lease(), WORDS);
    expect((await api('GET', `/v1/automation-jobs/${created.id}/transcript`)).status).toBe(200);
    const other = await h.account('pro', 'stranger');
    expectError(await other.api('GET', `/v1/automation-jobs/${created.id}/transcript`), 404, 'not_found');
    expectError(await other.api('GET', `/v1/automation-jobs/${created.id}/transcript?format=srt`), 404, 'not_found');
    expectError(await api('GET', '/v1/automation-jobs/not-a-uuid/transcript'), 404, 'not_found');
    expectError(await api('GET', `/v1/automation-jobs/${randomUUID()}/transcript`), 404, 'not_found');
    for (const q of ['format=ass', 'format=', 'format=SRT', 'format=srt&format=vtt', 'colour=red']) {
      const res = await api('GET', `/v1/automation-jobs/${created.id}/transcript?${q}`);
      expectError(res, 400, 'invalid_request');
    }
  });

  it('a failed or cancelled job has no transcript (409), with the reason in the message', async () => {
    const { api } = await h.account('pro', 'ended');
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: await template(api) })).body;
    await api('POST', `/v1/automation-jobs/${created.id}/cancel`);
    const res = await api('GET', `/v1/automation-jobs/${created.id}/transcript`);
    expectError(res, 409, 'transcript_not_available');
    expect(res.body.error.message).toMatch(/cancelled.*only for succeeded jobs/);
  });
});

describe('POST /v1/automation-jobs with a transcript', () => {
  it('the agent gets the words with its lease, and the export returns exactly them', async () => {
    const { api } = await h.account('pro', 'fixer');
    const words = [
      { text: 'Acme™', start: 0, end: 0.5 },
      { text: 'ships', start: 0.5, end: 0.5001 },
      { text: 'today', start: 0.5, end: 1 },
    ];
    const created = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: await template(api), transcript: { words, language: 'EN' } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(Object.keys(created.body).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    const job = await lease();
    expect(job.transcript).toEqual({ language: 'en', words });
    // The agent sends no words of its own; a stray report would not replace the given ones.
    await agent.transcribed.mutate({
      nodeId,
      jobId: job.jobId,
      leaseId: job.leaseId,
      language: 'de',
      languageProbability: 0.5,
      words: [{ text: 'x', start: 0, end: 1 }],
    });
    await succeed(job, undefined, 2);
    expect((await api('GET', `/v1/automation-jobs/${created.body.id}/transcript`)).body).toEqual({ language: 'en', languageProbability: null, words });
  });

  it("language: the transcript's, else the job's, else null; an exported transcript is accepted back unchanged", async () => {
    const { api } = await h.account('pro', 'langs');
    const tpl = await template(api);
    const a = (await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: tpl, language: 'de', transcript: { words: WORDS } })).body;
    await succeed(await lease(), undefined);
    expect((await api('GET', `/v1/automation-jobs/${a.id}/transcript`)).body.language).toBe('de');
    const b = (await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: tpl, transcript: { words: WORDS } })).body;
    await succeed(await lease(), undefined);
    const exported = (await api('GET', `/v1/automation-jobs/${b.id}/transcript`)).body;
    expect(exported.language).toBeNull();
    const again = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: tpl, transcript: exported });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    await api('POST', `/v1/automation-jobs/${again.body.id}/cancel`);
  });

  it('a word past the end of the source fails the job after ingest with transcript-out-of-range (not retryable), minutes refunded', async () => {
    const { api, accountId } = await h.account('pro', 'too-far');
    const before = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance;
    const words = [...WORDS, { text: 'late', start: 2.5, end: 3.2 }];
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: await template(api), transcript: { words } })).body;
    const job = await lease();
    const answer = await agent.ingested.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, durationSeconds: 3, width: 64, height: 64 });
    expect(answer).toEqual({ ok: false, reason: 'job-ended' });
    const failed = (await api('GET', `/v1/automation-jobs/${created.id}`)).body;
    expect(failed).toMatchObject({ status: 'failed', failureCode: 'transcript-out-of-range' });
    expect(failed.failureReason).toMatch(/Word 3 \("late"\) .*ends at 3\.2 s, after the end of the 3 s video/);
    expect((await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance).toBe(before);
    expectError(await api('GET', `/v1/automation-jobs/${created.id}/transcript`), 409, 'transcript_not_available');
  });

  it('a word ending exactly at the end of the source is within it', async () => {
    const { api } = await h.account('pro', 'edge');
    await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: await template(api), transcript: { words: [{ text: 'end', start: 2, end: 3 }] } });
    const job = await lease();
    expect(await agent.ingested.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, durationSeconds: 3, width: 64, height: 64 })).toEqual({ ok: true });
    await agent.fail.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, failureCode: 'internal', failureReason: 'test over' });
  });

  const w = (text: string, start: number, end: number) => ({ text, start, end });
  it.each([
    ['starts going back', { words: [w('a', 1, 2), w('b', 0.5, 3)] }, 'transcript.words.1.start'],
    ['end equal to start', { words: [w('a', 1, 1)] }, 'transcript.words.0.end'],
    ['end before start', { words: [w('a', 1, 0.5)] }, 'transcript.words.0.end'],
    ['empty text', { words: [w('', 0, 1)] }, 'transcript.words.0.text'],
    ['blank text', { words: [w('   ', 0, 1)] }, 'transcript.words.0.text'],
    ['text of 65 characters', { words: [w('x'.repeat(65), 0, 1)] }, 'transcript.words.0.text'],
    ['a line break in text', { words: [w('a\nb', 0, 1)] }, 'transcript.words.0.text'],
    ['negative start', { words: [w('a', -1, 1)] }, 'transcript.words.0.start'],
    ['time as a string', { words: [{ text: 'a', start: '0', end: 1 }] }, 'transcript.words.0.start'],
    ['unknown word field', { words: [{ text: 'a', start: 0, end: 1, confidence: 1 }] }, 'transcript.words.0.confidence'],
    ['missing words', { language: 'en' }, 'transcript.words'],
    ['bad language', { language: 'english', words: [] }, 'transcript.language'],
    ['words not an array', { words: 'hello' }, 'transcript.words'],
  ])('400 invalid_request with details: %s', async (_name, transcript, path) => {
    const { api } = await h.account('free', `v-${_name}`);
    const res = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: await template(api), transcript });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it('64 characters (not UTF-16 units) are accepted: 64 emoji', async () => {
    const { api } = await h.account('pro', 'emoji');
    const res = await api('POST', '/v1/automation-jobs', {
      videoUrl: video,
      templateId: await template(api),
      transcript: { words: [w('😀'.repeat(64), 0, 1)] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await api('POST', `/v1/automation-jobs/${res.body.id}/cancel`);
  });

  it('a long transcript is parsed, validated and exported on the transcript worker, with the same answers as the event loop gives', async () => {
    const { api } = await h.account('pro', 'worker');
    const tpl = await template(api);
    const work = h.cp.services.transcriptWork;
    // 2,000 words: about 90 KB of JSON, over the 64 KiB parsed inline.
    const words = Array.from({ length: 2_000 }, (_, i) => w(`word${i}`, i * 0.25, i * 0.25 + 0.2));
    const before = work.stats().completed;
    const created = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: tpl, transcript: { words } });
    expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBe(202);
    expect(work.stats().completed).toBe(before + 1);
    await succeed(await lease(), undefined, 501);
    const json = await api('GET', `/v1/automation-jobs/${created.body.id}/transcript`);
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(json.body).toEqual({ language: null, languageProbability: null, words });
    const srt = await api('GET', `/v1/automation-jobs/${created.body.id}/transcript?format=srt`);
    expect(srt.headers.get('content-type')).toBe('application/x-subrip; charset=utf-8');
    expect(srt.body).toBe(toSrt(words));
    const vtt = await api('GET', `/v1/automation-jobs/${created.body.id}/transcript?format=vtt`);
    expect(vtt.body).toBe(toVtt(words));
    expect(work.stats().completed).toBe(before + 4);
    // Large bodies get the errors small ones get: malformed JSON, an invalid job, another charset.
    const big = JSON.stringify({ videoUrl: video, templateId: tpl, transcript: { words } });
    expectError(await api('POST', '/v1/automation-jobs', `${big.slice(0, -1)},`, { 'content-type': 'application/json' }), 400, 'invalid_request');
    const invalid = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: tpl, transcript: { words: [...words, w('', 500, 500.5)] } });
    expectError(invalid, 400, 'invalid_request');
    expect(invalid.body.error.details[0].path).toBe('transcript.words.2000.text');
    expectError(await api('POST', '/v1/automation-jobs', big, { 'content-type': 'application/json; charset=iso-8859-1' }), 415, 'unsupported_media_type');
  });

  it("an account with 5 large bodies in work gets 429 for a sixth from its headers, before a byte of it is read; another account's is read", async () => {
    const { api, key, accountId } = await h.account('pro', 'busy');
    const tpl = await template(api);
    const work = h.cp.services.transcriptWork;
    const words = Array.from({ length: 20_000 }, (_, i) => w(`w${i}`, i * 0.025, i * 0.025 + 0.02));
    const body = Buffer.from(JSON.stringify({ videoUrl: video, templateId: tpl, transcript: { words } }));
    // Five bodies of this account in work (one parsing, four waiting).
    const inWork = Array.from({ length: 5 }, () => work.jobBody(accountId, Buffer.from(body)));
    const head = (k: string) => `POST /v1/automation-jobs HTTP/1.1\nAuthorization: Bearer ${k}\nContent-Type: application/json\nContent-Length: ${body.length}`;
    // The sixth sends its headers and no body: the answer comes anyway, and the connection closes.
    const sixth = rawRequest(h.url, head(key));
    const answer = await sixth.closed;
    expect(answer).toMatch(/^HTTP\/1.1 429/);
    expect(jsonOf(answer).error.code).toBe('rate_limited');
    // A body of another account is read meanwhile, and parsed in its turn.
    const other = await h.account('pro', 'calm');
    const created = other.api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: await template(other.api), transcript: { words } });
    await Promise.all(inWork);
    expect((await created).status).toBe(202);
  });

  it('20,000 long words fit in the body limit of job creation; 20,001 words are refused with a bounded details list', async () => {
    const { api } = await h.account('pro', 'bulk');
    const tpl = await template(api);
    // 64 three-byte characters a word: about 4.2 MB of JSON, far over the general 64 KiB limit.
    const words = Array.from({ length: 20_000 }, (_, i) => w('字'.repeat(64), i * 0.01, i * 0.01 + 0.01));
    const ok = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: tpl, transcript: { words } });
    expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(202);
    await api('POST', `/v1/automation-jobs/${ok.body.id}/cancel`);
    const tooMany = await api('POST', '/v1/automation-jobs', { videoUrl: video, templateId: tpl, transcript: { words: [...words, w('x', 200, 201)] } });
    expectError(tooMany, 400, 'invalid_request');
    expect(tooMany.body.error.details).toEqual([{ path: 'transcript.words', message: 'at most 20000 words' }]);
    const allBad = await api('POST', '/v1/automation-jobs', {
      videoUrl: video,
      templateId: tpl,
      transcript: { words: words.map((x) => ({ ...x, text: '' })) },
    });
    expectError(allBad, 400, 'invalid_request');
    expect(allBad.body.error.details.length).toBe(101);
    expect(allBad.body.error.details.at(-1).message).toMatch(/and \d+ more problems/);
  });
});
