import { randomUUID } from 'node:crypto';
import type { TRPCClient } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema, JobRecordSchema, replaceWords } from '@captionfarm/contracts';
import type { AgentRouter } from '../src/index.ts';
import { agentClient, agentToken, startHarness, TEST_AGENT_CAPABILITIES, type Api, type Harness } from './harness.ts';

/**
 * Issue 39 item 5, the words the speaker meant: `vocabulary` and `replacements` of a job (and of
 * a custom template, as defaults), validated at creation through the real API, resolved and kept
 * with the job, handed to the agent with its lease, and shown by GET .../style (not by the job
 * record). A test agent speaks the real protocol.
 */
let h: Harness;
let agent: TRPCClient<AgentRouter>;
let closeAgent: () => void;
let nodeId: string;
const videoUrl = 'https://videos.example.com/talk.mp4';

beforeAll(async () => {
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000 } });
  ({ agent, close: closeAgent } = agentClient(h.url, await agentToken(h)));
  nodeId = (await agent.register.mutate({ nodeName: 'recognition-words', capabilities: TEST_AGENT_CAPABILITIES })).nodeId;
});
afterAll(async () => {
  closeAgent?.();
  await h?.close();
});

/** 400 invalid_request in the documented error body, with these detail paths (and messages matching, if given). */
function expectInvalid(res: { status: number; body: any }, details: Record<string, RegExp | string>) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(ErrorBodySchema.safeParse(res.body).success, JSON.stringify(res.body)).toBe(true);
  expect(res.body.error.code).toBe('invalid_request');
  const got = res.body.error.details as { path: string; message: string }[];
  expect(got.map((d) => d.path).sort()).toEqual(Object.keys(details).sort());
  for (const d of got) expect(d.message).toMatch(details[d.path]!);
}

async function lease() {
  const [job] = await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() });
  if (!job) throw new Error('nothing leased');
  return job;
}

describe('POST /v1/automation-jobs with vocabulary and replacements', () => {
  let api: Api;
  beforeAll(async () => {
    ({ api } = await h.account('pro', 'validation'));
  });
  const create = (extra: Record<string, unknown>) => api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'karaoke', ...extra });

  it('accepts both at their limits: 100 terms of 50 characters, 200 replacements of 50 characters', async () => {
    const vocabulary = Array.from({ length: 100 }, (_, i) => `${i}`.padStart(50, 'x'));
    const replacements = Array.from({ length: 200 }, (_, i) => ({ from: `${i}`.padStart(50, 'w'), to: 'y'.repeat(50) }));
    const res = await create({ vocabulary, replacements: [...replacements.slice(0, 199), { from: 'um', to: '' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
  });

  it('refuses more than 100 terms, a term over 50 characters or blank, and one with a line break or control character', async () => {
    expectInvalid(await create({ vocabulary: Array.from({ length: 101 }, (_, i) => `t${i}`) }), { vocabulary: 'at most 100 terms' });
    expectInvalid(await create({ vocabulary: ['ok', 'x'.repeat(51), '  ', 'a\nb', 'tab\there', 'bell\u0007'] }), {
      'vocabulary.1': 'a term is at most 50 characters',
      'vocabulary.2': 'a term must not be empty or blank',
      'vocabulary.3': 'a term must be one line without control characters',
      'vocabulary.4': 'a term must be one line without control characters',
      'vocabulary.5': 'a term must be one line without control characters',
    });
    // 50 characters after trimming is fine.
    expect((await create({ vocabulary: [`  ${'x'.repeat(50)}  `] })).status).toBe(202);
  });

  it('refuses more than 200 replacements, long or empty froms, long tos, line breaks', async () => {
    expectInvalid(await create({ replacements: Array.from({ length: 201 }, (_, i) => ({ from: `w${i}`, to: 'x' })) }), {
      replacements: 'at most 200 replacements',
    });
    expectInvalid(
      await create({
        replacements: [
          { from: 'caption farm', to: 'Captionfarm' },
          { from: 'ok', to: 'OK' },
          { from: '', to: 'x' },
          { from: 'a', to: 'b'.repeat(51) },
          { from: 'f'.repeat(51), to: 'x' },
          { from: 'line\nbreak', to: 'x' },
        ],
      }),
      {
        'replacements.2.from': 'from must not be empty or blank',
        'replacements.3.to': 'to is at most 50 characters',
        'replacements.4.from': 'from is at most 50 characters',
        'replacements.5.from': 'from must be one line without control characters',
      },
    );
  });

  it('refuses a from given twice, compared case-insensitively and space-insensitively (once every item is valid)', async () => {
    expectInvalid(
      await create({
        replacements: [
          { from: 'caption farm', to: 'Captionfarm' },
          { from: 'k8s', to: 'Kubernetes' },
          { from: ' Caption   FARM', to: 'CaptionFarm' },
        ],
      }),
      { 'replacements.2.from': 'the same words as replacements[0].from (compared case-insensitively)' },
    );
  });

  it('refuses wrong types and unknown nested fields, each at its path', async () => {
    expectInvalid(await create({ vocabulary: 'Captionfarm,Kubernetes', replacements: { from: 'a', to: 'b' } }), {
      vocabulary: /array/,
      replacements: /array/,
    });
    expectInvalid(await create({ vocabulary: [42], replacements: [{ from: 'a', to: 'b', wholeWord: false }, { from: 'c' }] }), {
      'vocabulary.0': /string/,
      'replacements.0.wholeWord': 'unknown field',
      'replacements.1.to': /string/,
    });
  });

  it('keeps the job record to the spec keys; GET .../style shows the words; the lease carries them', async () => {
    const res = await create({
      vocabulary: ['  Captionfarm ', 'Kubernetes'],
      replacements: [{ from: 'caption farm', to: 'Captionfarm' }],
    });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(Object.keys(JobRecordSchema.shape).sort());
    const style = await api('GET', `/v1/automation-jobs/${res.body.id}/style`);
    expect(style.body).toMatchObject({ vocabulary: ['Captionfarm', 'Kubernetes'], replacements: [{ from: 'caption farm', to: 'Captionfarm' }] });
    expect(style.body.style).not.toHaveProperty('vocabulary');
    // Drain the queue of this file's other jobs to the one just made (only this account's are queued).
    let job = await lease();
    while (job.jobId !== res.body.id) job = await lease();
    expect(job.vocabulary).toEqual(['Captionfarm', 'Kubernetes']);
    expect(job.replacements).toEqual([{ from: 'caption farm', to: 'Captionfarm' }]);
    expect(job.template).not.toHaveProperty('vocabulary');
    await agent.fail.mutate({ nodeId, jobId: job.jobId, leaseId: job.leaseId, failureCode: 'internal', failureReason: 'test done' });
  });
});

describe('a custom template carries both as account defaults', () => {
  it('a job without its own takes the template’s; a job’s own replaces them (not merged); style cannot set them', async () => {
    const { api } = await h.account('pro', 'template-defaults');
    const body = {
      id: 'brand-words',
      name: 'Brand words',
      vocabulary: ['Captionfarm'],
      replacements: [
        { from: 'caption farm', to: 'Captionfarm' },
        { from: 'um', to: '' },
      ],
    };
    const created = await api('POST', '/v1/templates', body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await api('GET', '/v1/templates/brand-words')).body.template).toMatchObject({ vocabulary: body.vocabulary, replacements: body.replacements });
    expectInvalid(
      await api('POST', '/v1/templates', {
        ...body,
        id: 'dup',
        replacements: [
          { from: 'UM', to: '' },
          { from: 'um', to: 'uh' },
        ],
      }),
      {
        'replacements.1.from': /the same words/,
      },
    );

    const inherited = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'brand-words' })).body;
    expect((await api('GET', `/v1/automation-jobs/${inherited.id}/style`)).body).toMatchObject({
      vocabulary: body.vocabulary,
      replacements: body.replacements,
    });
    const own = (
      await api('POST', '/v1/automation-jobs', {
        videoUrl,
        templateId: 'brand-words',
        vocabulary: ['Kubernetes'],
        replacements: [{ from: 'k8s', to: 'Kubernetes' }],
      })
    ).body;
    expect((await api('GET', `/v1/automation-jobs/${own.id}/style`)).body).toMatchObject({
      vocabulary: ['Kubernetes'],
      replacements: [{ from: 'k8s', to: 'Kubernetes' }],
    });
    // An empty list is a value of its own: no replacements for this job, whatever the template says.
    const none = (await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'brand-words', replacements: [] })).body;
    expect((await api('GET', `/v1/automation-jobs/${none.id}/style`)).body).toMatchObject({ vocabulary: body.vocabulary, replacements: [] });

    expectInvalid(await api('POST', '/v1/automation-jobs', { videoUrl, templateId: 'brand-words', style: { vocabulary: ['x'] } }), {
      'style.vocabulary': 'unknown field',
    });
  });
});

describe('the transcript exports show the replaced words', () => {
  it('a job created with replacements, its recognized words replaced by the agent, answers them in SRT', async () => {
    const { api } = await h.account('pro', 'srt');
    const created = (
      await api('POST', '/v1/automation-jobs', {
        videoUrl,
        templateId: 'karaoke',
        replacements: [
          { from: 'caption farm', to: 'Captionfarm' },
          { from: 'um', to: '' },
        ],
      })
    ).body;
    let job = await lease();
    while (job.jobId !== created.id) job = await lease();
    const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
    expect(await agent.ingested.mutate({ ...ref, durationSeconds: 3, width: 64, height: 64 })).toEqual({ ok: true });
    // What whisper heard, replaced as the agent's pipeline does (agent/src/pipeline.ts, recognize).
    const heard = [
      { text: 'We', start: 0.1, end: 0.3 },
      { text: 'um,', start: 0.3, end: 0.5 },
      { text: 'love', start: 0.5, end: 0.8 },
      { text: 'caption', start: 0.8, end: 1.2 },
      { text: 'farm.', start: 1.2, end: 1.6 },
    ];
    const words = replaceWords(heard, job.replacements);
    expect(await agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: null, words })).toEqual({ ok: true });
    const bytes = Buffer.from('output bytes');
    const up = await agent.outputUploadUrl.mutate({ ...ref, sizeBytes: bytes.length });
    if (!up.ok) throw new Error('no upload url');
    expect((await fetch(up.url, { method: 'PUT', body: bytes })).status).toBe(200);
    expect(await agent.complete.mutate({ ...ref, resolution: { width: 64, height: 64 }, outputBytes: bytes.length })).toEqual({ ok: true });

    const srt = await api('GET', `/v1/automation-jobs/${created.id}/transcript?format=srt`);
    expect(srt.status).toBe(200);
    expect(srt.body).toBe('1\n00:00:00,100 --> 00:00:01,600\nWe love Captionfarm.\n\n');
  });
});
