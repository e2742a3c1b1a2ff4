import { randomUUID } from 'node:crypto';
import type { TRPCClient } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema, JobEditSchema, JobRecordSchema, LeasedJobSchema, TranscriptRecordSchema, type EditPlan } from '@captionfarm/contracts';
import type { AgentRouter } from '../src/index.ts';
import { agentClient, agentToken, startHarness, TEST_AGENT_CAPABILITIES, type Api, type Harness } from './harness.ts';

/**
 * Issue 42 on the control plane: a job's `edit`, `hookTitle` and `profanity` validated at
 * creation, kept beside the spec's record (never in it), handed to the agent with its lease (the
 * account's profane words resolved at creation), `edit.keep` checked against the measured source,
 * the agent's plan stored with its words and served by GET .../edit, the transcript exports on
 * both timelines, and GET/PUT /v1/profanity-words. A test agent speaks the real protocol; the
 * database is the real one (SQLite, or PostgreSQL with CAPTIONFARM_TEST_DATABASE_URL).
 */
let h: Harness;
let agent: TRPCClient<AgentRouter>;
let closeAgent: () => void;
let nodeId: string;
const videoUrl = 'https://videos.example.com/talk.mp4';

beforeAll(async () => {
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000 } });
  ({ agent, close: closeAgent } = agentClient(h.url, await agentToken(h)));
  nodeId = (await agent.register.mutate({ nodeName: 'edit', capabilities: TEST_AGENT_CAPABILITIES })).nodeId;
});
afterAll(async () => {
  closeAgent?.();
  await h?.close();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(ErrorBodySchema.safeParse(res.body).success, JSON.stringify(res.body)).toBe(true);
  expect(res.body.error.code).toBe(code);
}

/** 400 invalid_request in the documented error body, with exactly these detail paths (messages matching). */
function expectInvalid(res: { status: number; body: any }, details: Record<string, RegExp>) {
  expectError(res, 400, 'invalid_request');
  const got = res.body.error.details as { path: string; message: string }[];
  expect(got.map((d) => d.path).sort()).toEqual(Object.keys(details).sort());
  for (const d of got) expect(d.message).toMatch(details[d.path]!);
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
type Word = { text: string; start: number; end: number };

/** ingest -> words (and plan) -> upload -> complete, as an agent does. */
async function succeed(job: Leased, o: { words: Word[]; plan?: EditPlan; durationSeconds?: number }) {
  const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
  expect(await agent.ingested.mutate({ ...ref, durationSeconds: o.durationSeconds ?? 3, width: 64, height: 64 })).toEqual({ ok: true });
  const sent = { ...ref, language: 'en', languageProbability: 0.9, words: o.words, ...(o.plan ? { edit: o.plan } : {}) };
  expect(await agent.transcribed.mutate(sent)).toEqual({ ok: true });
  await complete(job);
}

/** render -> upload -> complete. */
async function complete(job: Leased) {
  const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
  await agent.progress.mutate({ ...ref, phase: 'rendering', percent: 0 });
  const bytes = Buffer.from('the cut video');
  const up = await agent.outputUploadUrl.mutate({ ...ref, sizeBytes: bytes.length });
  if (!up.ok) throw new Error('no upload url');
  expect((await fetch(up.url, { method: 'PUT', body: bytes })).status).toBe(200);
  expect(await agent.complete.mutate({ ...ref, resolution: { width: 64, height: 64 }, outputBytes: bytes.length })).toEqual({ ok: true });
}

const WORDS: Word[] = [
  { text: 'Hello', start: 0.2, end: 0.6 },
  { text: 'um', start: 0.7, end: 0.9 },
  { text: 'world.', start: 1.0, end: 1.4 },
];
/** The plan an agent makes of WORDS with fillers: "safe": "um" cut with the pause around it. */
const PLAN: EditPlan = {
  sourceSeconds: 3,
  outputSeconds: 1.2,
  keep: [
    { start: 0, end: 0.65 },
    { start: 0.95, end: 1.5 },
  ],
  cuts: [
    { start: 0.65, end: 0.95, reason: 'filler', text: 'um' },
    { start: 1.5, end: 3, reason: 'silence', text: null },
  ],
  zooms: [{ start: 0.7, end: 1.1, scale: 1.1 }],
  bleeps: [],
};

describe('POST /v1/automation-jobs with edit, hookTitle and profanity', () => {
  it('keeps the job record to the spec keys and hands all three to the agent, defaults filled, the account words of creation time', async () => {
    const { api } = await h.account('pro', 'edit-lease');
    expect((await api('PUT', '/v1/profanity-words', { words: ['frick', 'dang it'] })).status).toBe(200);
    const res = await api('POST', '/v1/automation-jobs', {
      videoUrl,
      templateId: 'karaoke',
      edit: { silences: 'fast', fillers: 'safe', zoom: 'emphasis' },
      hookTitle: { text: 'Three tips in 30 seconds' },
      profanity: 'bleep',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    const got = (await api('GET', `/v1/automation-jobs/${res.body.id}`)).body;
    expect(Object.keys(got).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    // A later change of the account's words does not change the queued job.
    expect((await api('PUT', '/v1/profanity-words', { words: ['other'] })).body).toEqual({ words: ['other'] });

    const job = await leaseJob(res.body.id);
    expect(LeasedJobSchema.parse(job)).toBeTruthy();
    expect(job.edit).toEqual({ silences: 'fast', fillers: 'safe', zoom: 'emphasis', keep: null });
    expect(job.hookTitle).toEqual({ text: 'Three tips in 30 seconds', seconds: 3, style: { size: 'medium' } });
    expect(job.profanity).toBe('bleep');
    expect(job.profanityWords).toEqual(['frick', 'dang it']);
    await agent.fail.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, failureCode: 'internal', failureReason: 'test done' });
  });

  it('a job without them leases none; profanity "off" takes no account words; its own keep-ranges reach the agent', async () => {
    const { api } = await h.account('pro', 'edit-none');
    await api('PUT', '/v1/profanity-words', { words: ['frick'] });
    const plain = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke' })).body;
    let job = await leaseJob(plain.id);
    expect({ edit: job.edit, hookTitle: job.hookTitle, profanity: job.profanity, profanityWords: job.profanityWords }).toEqual({
      edit: null,
      hookTitle: null,
      profanity: 'off',
      profanityWords: [],
    });
    await agent.fail.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, failureCode: 'internal', failureReason: 'test done' });

    const keep = [
      { start: 0, end: 1.25 },
      { start: 2, end: 2.5 },
    ];
    const own = await api('POST', '/v1/automation-jobs', {
      videoUrl,
      templateId: 'karaoke',
      edit: { keep },
      hookTitle: { text: 'Watch this', seconds: 1.5, style: { textColor: '#ffffff', boxColor: null, size: 'large' } },
      profanity: 'mask',
    });
    expect(own.status, JSON.stringify(own.body)).toBe(202);
    job = await leaseJob(own.body.id);
    expect(job.edit).toEqual({ silences: 'off', fillers: 'off', zoom: 'off', keep });
    expect(job.hookTitle).toEqual({ text: 'Watch this', seconds: 1.5, style: { textColor: '#ffffff', boxColor: null, size: 'large' } });
    expect(job.profanity).toBe('mask');
    expect(job.profanityWords).toEqual(['frick']);
    await agent.fail.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, failureCode: 'internal', failureReason: 'test done' });
  });

  const range = (start: number, end: number) => ({ start, end });
  it.each([
    ['keep descending', { edit: { keep: [range(2, 3), range(0, 1)] } }, { 'edit.keep.1.start': /ascending and not overlap/ }],
    ['keep overlapping', { edit: { keep: [range(0, 2), range(1, 3)] } }, { 'edit.keep.1.start': /ascending and not overlap/ }],
    ['a keep-range too short', { edit: { keep: [range(0, 0.02)] } }, { 'edit.keep.0.end': /at least 0\.04 s/ }],
    ['keep empty', { edit: { keep: [] } }, { 'edit.keep': /at least one range/ }],
    ['keep with silences', { edit: { silences: 'fast', keep: [range(0, 1)] } }, { 'edit.keep': /silences and fillers "off"/ }],
    ['an overlay with an edit', { overlay: true, format: 'webm', edit: { zoom: 'emphasis' } }, { edit: /overlay .* cannot cut or zoom/ }],
    ['an overlay with bleep', { overlay: true, format: 'webm', profanity: 'bleep' }, { profanity: /no audio to bleep/ }],
    ['an unknown edit field', { edit: { silence: 'fast' } }, { 'edit.silence': /unknown field/ }],
    ['an unknown pace', { edit: { silences: 'slow' } }, { 'edit.silences': /./ }],
    ['hookTitle text of 121 characters', { hookTitle: { text: 'x'.repeat(121) } }, { 'hookTitle.text': /at most 120 characters/ }],
    ['hookTitle seconds 11', { hookTitle: { text: 'Hi', seconds: 11 } }, { 'hookTitle.seconds': /10/ }],
    ['profanity "beep"', { profanity: 'beep' }, { profanity: /./ }],
  ])('refuses %s with 400 and its path', async (_name, extra, details) => {
    const { api } = await h.account('pro', 'edit-invalid');
    const res = await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', ...extra });
    expectInvalid(res, details);
    expect((await api('GET', '/v1/automation-jobs')).body.jobs).toEqual([]);
  });
});

describe('edit.keep against the measured source', () => {
  it('a range past the end fails the job after ingest with edit-out-of-range (not retryable), minutes refunded', async () => {
    const { api, accountId } = await h.account('pro', 'edit-too-far');
    const before = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance;
    const keep = [
      { start: 0, end: 1 },
      { start: 2, end: 3.5 },
    ];
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', edit: { keep } })).body;
    const job = await leaseJob(created.id);
    const answer = await agent.ingested.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, durationSeconds: 3, width: 64, height: 64 });
    expect(answer).toEqual({ ok: false, reason: 'job-ended' });
    const failed = (await api('GET', `/v1/automation-jobs/${created.id}`)).body;
    expect(failed).toMatchObject({ status: 'failed', failureCode: 'edit-out-of-range', quotedSeconds: 3 });
    expect(failed.failureReason).toMatch(/Range 1 \(2\.\.3\.5 s\) of edit\.keep ends after the end of the 3 s video/);
    expect(Object.keys(failed).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    expect((await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance).toBe(before);
    expectError(await api('GET', `/v1/automation-jobs/${created.id}/edit`), 409, 'edit_not_available');
  });

  it('a range ending within 1 ms of the end is inside the source', async () => {
    const { api } = await h.account('pro', 'edit-edge');
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', edit: { keep: [{ start: 0.5, end: 3.0005 }] } })).body;
    const job = await leaseJob(created.id);
    expect(await agent.ingested.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, durationSeconds: 3, width: 64, height: 64 })).toEqual({ ok: true });
    await agent.fail.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, failureCode: 'internal', failureReason: 'test done' });
  });
});

describe('GET /v1/automation-jobs/:id/edit', () => {
  it('409 edit_not_available until the job succeeded; then the request as resolved and the agent’s plan; 404 for another account', async () => {
    const { api } = await h.account('pro', 'edit-get');
    const created = (
      await api('POST', '/v1/automation-jobs', {
        videoUrl,
        templateId: 'karaoke',
        edit: { fillers: 'safe', zoom: 'emphasis' },
        hookTitle: { text: 'One job, one short', seconds: 2 },
      })
    ).body;
    const queued = await api('GET', `/v1/automation-jobs/${created.id}/edit`);
    expectError(queued, 409, 'edit_not_available');
    expect(queued.body.error.message).toMatch(/queued .*once it has succeeded/);
    const job = await leaseJob(created.id);
    await succeed(job, { words: WORDS, plan: PLAN });

    const res = await api('GET', `/v1/automation-jobs/${created.id}/edit`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(JobEditSchema.parse(res.body)).toEqual({
      jobId: created.id,
      edit: { silences: 'off', fillers: 'safe', zoom: 'emphasis', keep: null },
      hookTitle: { text: 'One job, one short', seconds: 2 },
      profanity: 'off',
      plan: PLAN,
    });
    // Billing stays on the source: 3 s quoted, though the output lasts 1.2 s.
    expect((await api('GET', `/v1/automation-jobs/${created.id}`)).body).toMatchObject({ status: 'succeeded', quotedSeconds: 3 });

    const other = await h.account('pro', 'edit-stranger');
    expectError(await other.api('GET', `/v1/automation-jobs/${created.id}/edit`), 404, 'not_found');
    expectError(await api('GET', '/v1/automation-jobs/not-a-uuid/edit'), 404, 'not_found');
    expectError(await api('GET', `/v1/automation-jobs/${randomUUID()}/edit`), 404, 'not_found');
  });

  it('a job created without an edit has none (409, saying how to get one); a cancelled one neither', async () => {
    const { api } = await h.account('pro', 'edit-absent');
    const plain = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke' })).body;
    await succeed(await leaseJob(plain.id), { words: WORDS });
    const none = await api('GET', `/v1/automation-jobs/${plain.id}/edit`);
    expectError(none, 409, 'edit_not_available');
    expect(none.body.error.message).toMatch(/created without edit, hookTitle or profanity.*"edit": \{"silences": "fast"\}/);

    const cancelled = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', edit: { silences: 'natural' } })).body;
    await api('POST', `/v1/automation-jobs/${cancelled.id}/cancel`);
    const res = await api('GET', `/v1/automation-jobs/${cancelled.id}/edit`);
    expectError(res, 409, 'edit_not_available');
    expect(res.body.error.message).toMatch(/cancelled.*only for succeeded jobs/);
  });

  it('a re-sent or retried transcribed replaces the plan; a job with a given transcript stores the plan and keeps its words', async () => {
    const { api } = await h.account('pro', 'edit-given');
    const given = [
      { text: 'Given', start: 0.2, end: 0.6 },
      { text: 'words.', start: 1.0, end: 1.4 },
    ];
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', transcript: { words: given }, edit: { silences: 'fast' } }))
      .body;
    const job = await leaseJob(created.id);
    expect(job.transcript?.words).toEqual(given);
    const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
    // A first plan, then the one the agent renders (sent again on the same lease): the second replaces the first.
    expect(await agent.ingested.mutate({ ...ref, durationSeconds: 3, width: 64, height: 64 })).toEqual({ ok: true });
    const first = { ...PLAN, keep: [{ start: 0, end: 3 }], outputSeconds: 3 };
    expect(await agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: null, words: given, edit: first })).toEqual({ ok: true });
    const words = [{ text: 'Replaced', start: 0, end: 1 }];
    expect(await agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: null, words, edit: PLAN })).toEqual({ ok: true });
    await complete(job);
    const edit = (await api('GET', `/v1/automation-jobs/${created.id}/edit`)).body;
    expect(edit.plan).toEqual(PLAN);
    expect(edit.edit).toEqual({ silences: 'fast', fillers: 'off', zoom: 'off', keep: null });
    const transcript = TranscriptRecordSchema.parse((await api('GET', `/v1/automation-jobs/${created.id}/transcript`)).body);
    expect(transcript.words.map((w) => w.text)).toEqual(['Given', 'words.']);
  });
});

describe('a masked job with a given transcript', () => {
  it('exports the given words with the agent’s masked text and the given times', async () => {
    const { api } = await h.account('pro', 'edit-masked-given');
    const given = [
      { text: 'What', start: 0.2, end: 0.5 },
      { text: 'the', start: 0.5, end: 0.7 },
      { text: 'frick.', start: 0.7, end: 1.2 },
    ];
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', transcript: { words: given }, profanity: 'mask' })).body;
    const job = await leaseJob(created.id);
    // The agent sends the given words masked (its times may be fitted to the millisecond: the given ones stay).
    const sent = given.map((w) => ({ ...w, text: w.text === 'frick.' ? 'f****.' : w.text, end: w.end + 0.0004 }));
    const plan: EditPlan = { sourceSeconds: 3, outputSeconds: 3, keep: [{ start: 0, end: 3 }], cuts: [], zooms: [], bleeps: [] };
    await succeed(job, { words: sent, plan });
    const json = TranscriptRecordSchema.parse((await api('GET', `/v1/automation-jobs/${created.id}/transcript`)).body);
    expect(json.words.map(({ text, start, end }) => ({ text, start, end }))).toEqual([given[0], given[1], { text: 'f****.', start: 0.7, end: 1.2 }]);
    expect((await api('GET', `/v1/automation-jobs/${created.id}/edit`)).body).toMatchObject({ profanity: 'mask', edit: { silences: 'off', keep: null }, plan });
  });
});

describe('GET .../transcript of an edited job', () => {
  it('a word the plan removed has no output time, even where a sliver of its recognized span lies in a keep-range', async () => {
    const { api } = await h.account('pro', 'edit-removed');
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', edit: { fillers: 'safe' } })).body;
    // Whisper's "um" runs 0.17 s past the cut the audio placed (e2e clip: um, 8.66-9.13; cut 8.56-8.96).
    const words = [
      { text: 'cut,', start: 0.2, end: 0.6 },
      { text: 'um,', start: 0.66, end: 1.13 },
      { text: 'long', start: 1.32, end: 1.65 },
    ];
    const plan: EditPlan = {
      sourceSeconds: 3,
      outputSeconds: 2.6,
      keep: [
        { start: 0, end: 0.56 },
        { start: 0.96, end: 3 },
      ],
      cuts: [{ start: 0.56, end: 0.96, reason: 'filler', text: 'um,' }],
      zooms: [],
      bleeps: [],
      removed: [1],
    };
    await succeed(await leaseJob(created.id), { words, plan });
    const json = TranscriptRecordSchema.parse((await api('GET', `/v1/automation-jobs/${created.id}/transcript`)).body);
    expect(json.words.map((w) => [w.text, w.outputStart])).toEqual([
      ['cut,', 0.2],
      ['um,', null],
      ['long', 0.92],
    ]);
    const srt = await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=srt`);
    expect(srt.body).not.toContain('um');
  });

  it('JSON words carry source and output times (null when cut); SRT and VTT are on the output timeline without the cut words', async () => {
    const { api } = await h.account('pro', 'edit-export');
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', edit: { fillers: 'safe' } })).body;
    await succeed(await leaseJob(created.id), { words: WORDS, plan: PLAN });

    const json = await api('GET', `/v1/automation-jobs/${created.id}/transcript`);
    expect(json.status).toBe(200);
    expect(TranscriptRecordSchema.parse(json.body)).toEqual({
      language: 'en',
      languageProbability: 0.9,
      words: [
        { text: 'Hello', start: 0.2, end: 0.6, outputStart: 0.2, outputEnd: 0.6 },
        { text: 'um', start: 0.7, end: 0.9, outputStart: null, outputEnd: null },
        // 0.65 s kept before it, then 0.05 s of its range: 0.7 .. 1.1 on the output.
        { text: 'world.', start: 1.0, end: 1.4, outputStart: 0.7, outputEnd: 1.1 },
      ],
    });
    // The export is accepted back as a transcript unchanged (the output times are ignored).
    const again = await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', transcript: json.body });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    await api('POST', `/v1/automation-jobs/${again.body.id}/cancel`);

    const srt = await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=srt`);
    expect(srt.body).toBe('1\n00:00:00,200 --> 00:00:01,100\nHello world.\n\n');
    const vtt = await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=vtt`);
    expect(vtt.body).toBe('WEBVTT\n\n00:00:00.200 --> 00:00:01.100\nHello world.\n\n');
  });

  it('a long transcript (on the transcript worker) gets the same output times', async () => {
    const { api } = await h.account('pro', 'edit-long');
    // 600 words, one every 0.5 s; the plan keeps 0..100 s and 150..300.5 s: words 200-299 are cut,
    // the words after them move 50 s earlier.
    const words = Array.from({ length: 600 }, (_, i) => ({ text: `w${i}`, start: i * 0.5, end: i * 0.5 + 0.4 }));
    const plan: EditPlan = {
      sourceSeconds: 300.5,
      outputSeconds: 250.5,
      keep: [
        { start: 0, end: 100 },
        { start: 150, end: 300.5 },
      ],
      cuts: [{ start: 100, end: 150, reason: 'client', text: null }],
      zooms: [],
      bleeps: [],
    };
    const created = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', edit: { keep: plan.keep } })).body;
    await succeed(await leaseJob(created.id), { words, plan, durationSeconds: 300.5 });
    const worked = h.cp.services.transcriptWork.stats().completed;
    const json = TranscriptRecordSchema.parse((await api('GET', `/v1/automation-jobs/${created.id}/transcript`)).body);
    expect(h.cp.services.transcriptWork.stats().completed).toBe(worked + 1);
    expect(json.words).toHaveLength(600);
    json.words.forEach((w, i) => {
      const shift = i < 200 ? 0 : i < 300 ? null : 50;
      const want =
        shift === null
          ? { outputStart: null, outputEnd: null }
          : { outputStart: i * 0.5 - shift, outputEnd: Math.round((i * 0.5 + 0.4 - shift) * 1000) / 1000 };
      expect({ i, outputStart: w.outputStart, outputEnd: w.outputEnd }).toEqual({ i, ...want });
    });
    const srt = (await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=srt`)).body as string;
    expect(srt).toMatch(/^1\n00:00:00,000 --> /);
    expect(srt).not.toMatch(/\bw2[0-9][0-9]\b/);
    expect(srt).toMatch(/\bw199\b/);
    expect(srt).toMatch(/\bw300\b/);
    // The last word, w599, ends at 299.9 s in the source, 249.9 s in the output.
    expect(srt.split('\n').findLast((l) => l.includes(' --> '))).toMatch(/ --> 00:04:09,900$/);
  });
});

describe('GET and PUT /v1/profanity-words', () => {
  let api: Api;
  beforeAll(async () => {
    ({ api } = await h.account('pro', 'words'));
  });

  it('round trip: none at first, PUT replaces the list, an empty list clears it; each account has its own', async () => {
    expect(await api('GET', '/v1/profanity-words')).toMatchObject({ status: 200, body: { words: [] } });
    const put = await api('PUT', '/v1/profanity-words', { words: ['  frick ', 'Schei\u00dfe', '\u30af\u30bd'] });
    expect(put).toMatchObject({ status: 200, body: { words: ['frick', 'Schei\u00dfe', '\u30af\u30bd'] } });
    expect((await api('GET', '/v1/profanity-words')).body).toEqual(put.body);
    const other = await h.account('pro', 'words-other');
    expect((await other.api('GET', '/v1/profanity-words')).body).toEqual({ words: [] });
    expect(await api('PUT', '/v1/profanity-words', { words: [] })).toMatchObject({ status: 200, body: { words: [] } });
    expect((await api('GET', '/v1/profanity-words')).body).toEqual({ words: [] });
  });

  it.each([
    ['an empty word', { words: [''] }, { 'words.0': /empty or blank/ }],
    ['a line break', { words: ['a\nb'] }, { 'words.0': /one line/ }],
    ['a word of 51 characters', { words: ['x'.repeat(51)] }, { 'words.0': /at most 50/ }],
    ['501 words', { words: Array.from({ length: 501 }, (_, i) => `w${i}`) }, { words: /at most 500/ }],
    ['no letter or digit', { words: ['ok', '!!!'] }, { 'words.1': /letter or a digit/ }],
    ['a string', { words: 'frick' }, { words: /array/ }],
    ['no words', {}, { words: /array/ }],
    ['an unknown field', { words: [], lang: 'en' }, { lang: /unknown field/ }],
  ])('refuses %s with 400 and its path, and keeps the list', async (_name, body, details) => {
    await api('PUT', '/v1/profanity-words', { words: ['kept'] });
    expectInvalid(await api('PUT', '/v1/profanity-words', body), details);
    expect((await api('GET', '/v1/profanity-words')).body).toEqual({ words: ['kept'] });
  });

  it('needs the API key like every /v1 route', async () => {
    const anon = await fetch(`${h.url}/v1/profanity-words`);
    expect(anon.status).toBe(401);
    const put = await fetch(`${h.url}/v1/profanity-words`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"words":[]}' });
    expect(put.status).toBe(401);
  });
});
