import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_AGENT_CAPABILITIES, agentClient, agentToken, startHarness, type Harness } from '../../../apps/control-plane/test/harness.ts';
import {
  CaptionfarmApiError,
  FAILURE_CODES,
  InvalidResponseError,
  RETRYABLE_FAILURE_CODES,
  createClient,
  isKnownFailureCode,
  isRetryableFailure,
  type CaptionfarmClient,
  type CreateJobRequest,
  type EditPlan,
  type JobEdit,
} from '../src/index.ts';

/**
 * Issue 42 through the SDK: the edit options of createJob, getJobEdit of a job a test agent
 * completed over the real agent protocol, the account's profane words, and the answers the SDK
 * refuses or keeps.
 */
let h: Harness;
let agent: ReturnType<typeof agentClient>;
let nodeId: string;
beforeAll(async () => {
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000 } });
  agent = agentClient(h.url, await agentToken(h, 'sdk-edit'));
  nodeId = (await agent.agent.register.mutate({ nodeName: 'sdk-edit', capabilities: { ...TEST_AGENT_CAPABILITIES, maxConcurrentJobs: 8 } })).nodeId;
});
afterAll(async () => {
  agent?.close();
  await h?.close();
});

const VIDEO_URL = 'https://cdn.example.com/talk.mp4';

async function clientFor(): Promise<CaptionfarmClient> {
  const { key } = await h.account('pro', 'shorts');
  return createClient({ baseUrl: h.url, apiKey: key, maxRetries: 0 });
}

async function apiError(p: Promise<unknown>): Promise<CaptionfarmApiError> {
  const err = await p.then(
    () => new Error('expected the API to refuse, got a success'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CaptionfarmApiError);
  return err as CaptionfarmApiError;
}

// "So, um, captions": the filler cut from 1.0 to 1.6 s of a 3 s source.
const WORDS = [
  { text: 'So,', start: 0.2, end: 0.6 },
  { text: 'um,', start: 1.1, end: 1.4 },
  { text: 'captions.', start: 1.7, end: 2.3 },
];
const PLAN: EditPlan = {
  sourceSeconds: 3,
  outputSeconds: 2.4,
  keep: [
    { start: 0, end: 1 },
    { start: 1.6, end: 3 },
  ],
  cuts: [{ start: 1, end: 1.6, reason: 'filler', text: 'um,' }],
  zooms: [{ start: 1.1, end: 1.7, scale: 1.1 }],
  bleeps: [],
};

/** Leases `jobId` and plays an agent's part to the end: ingest, words and plan, output, complete. */
async function succeedWithPlan(jobId: string, plan: EditPlan | undefined): Promise<void> {
  const leased = await agent.agent.lease.mutate({ nodeId, slots: 8, requestId: randomUUID() });
  const job = leased.find((j) => j.jobId === jobId);
  if (!job) throw new Error(`job ${jobId} was not leased (got ${leased.map((j) => j.jobId).join(', ')})`);
  const ref = { nodeId, jobId, leaseId: job.leaseId };
  await agent.agent.ingested.mutate({ ...ref, durationSeconds: 3, width: 64, height: 64 });
  await agent.agent.progress.mutate({ ...ref, phase: 'transcribing', percent: null });
  expect(await agent.agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: 0.9, words: WORDS, ...(plan ? { edit: plan } : {}) })).toEqual({
    ok: true,
  });
  await agent.agent.progress.mutate({ ...ref, phase: 'rendering', percent: 0 });
  const bytes = Buffer.from('the bytes of an output');
  const up = await agent.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: bytes.length });
  if (!up.ok) throw new Error('no output upload URL');
  expect((await fetch(up.url, { method: 'PUT', body: bytes })).status).toBe(200);
  expect(await agent.agent.complete.mutate({ ...ref, resolution: { width: 64, height: 64 }, outputBytes: bytes.length })).toEqual({ ok: true });
}

describe('createJob with an edit, a hook title and profanity', () => {
  it('are create options, typed, and checked by the service with the path of each problem', async () => {
    const client = await clientFor();
    const req: CreateJobRequest = {
      videoUrl: VIDEO_URL,
      templateId: 'karaoke',
      edit: { silences: 'fast', fillers: 'safe', zoom: 'emphasis' },
      hookTitle: { text: 'Three tips in 30 seconds', seconds: 2.5 },
      profanity: 'bleep',
    };
    const job = await client.createJob(req);
    expect(job).toMatchObject({ status: 'queued', phase: 'queued', templateId: 'karaoke' });
    // The record keeps exactly the spec's keys: the edit is read with getJobEdit.
    expect(Object.keys(job)).not.toContain('edit');
    await client.cancelJob(job.id);

    // @ts-expect-error a pace the service does not know
    const slow: CreateJobRequest = { ...req, edit: { silences: 'slow' } };
    // @ts-expect-error profanity is a mode, not a boolean
    const yes: CreateJobRequest = { ...req, profanity: true };
    const cases: [CreateJobRequest, string][] = [
      [slow, 'edit.silences'],
      [yes, 'profanity'],
      [{ ...req, edit: { silences: 'fast', keep: [{ start: 0, end: 2 }] } }, 'edit.keep'], // keep gives the cut itself
      [
        {
          ...req,
          edit: {
            keep: [
              { start: 0, end: 2 },
              { start: 1.5, end: 3 },
            ],
          },
        },
        'edit.keep.1.start',
      ],
      [{ ...req, hookTitle: { text: 'x'.repeat(121) } }, 'hookTitle.text'],
      [{ ...req, hookTitle: { text: 'Hook', seconds: 11 } }, 'hookTitle.seconds'],
      [{ ...req, edit: undefined, profanity: 'mask', format: 'webm', overlay: true, hookTitle: undefined }, 'accepted'],
    ];
    for (const [body, path] of cases) {
      if (path === 'accepted') {
        await client.cancelJob((await client.createJob(body)).id);
        continue;
      }
      const err = await apiError(client.createJob(body));
      expect({ status: err.status, code: err.code }, path).toEqual({ status: 400, code: 'invalid_request' });
      expect(err.details, path).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    }
    // An overlay cannot be cut, nor bleeped.
    const overlay = await apiError(client.createJob({ ...req, format: 'webm', overlay: true }));
    expect((overlay.details as { path: string }[]).map((d) => d.path).sort()).toEqual(['edit', 'profanity']);
  });
});

describe('getJobEdit', () => {
  it('404 for an unknown job; 409 edit_not_available until the job succeeded; then the plan its agent rendered', async () => {
    const client = await clientFor();
    const notFound = await apiError(client.getJobEdit(randomUUID()));
    expect({ status: notFound.status, code: notFound.code }).toEqual({ status: 404, code: 'not_found' });

    const job = await client.createJob({
      videoUrl: VIDEO_URL,
      templateId: 'karaoke',
      edit: { fillers: 'safe', zoom: 'emphasis' },
      hookTitle: { text: 'Watch this' },
    });
    const early = await apiError(client.getJobEdit(job.id));
    expect({ status: early.status, code: early.code }).toEqual({ status: 409, code: 'edit_not_available' });
    expect(early.message.length).toBeGreaterThan(20);

    await succeedWithPlan(job.id, PLAN);
    expect(await client.getJob(job.id)).toMatchObject({ status: 'succeeded', quotedSeconds: 3 });
    const edit: JobEdit = await client.getJobEdit(job.id);
    expect(edit).toEqual({
      jobId: job.id,
      edit: { silences: 'off', fillers: 'safe', zoom: 'emphasis', keep: null },
      hookTitle: { text: 'Watch this', seconds: 3 },
      profanity: 'off',
      plan: PLAN,
    });

    // The transcript gives each word its source and its output time (null: the cut removed it).
    const t = await client.getTranscript(job.id);
    expect(t.words.map((w) => [w.text, w.start, w.outputStart ?? null])).toEqual([
      ['So,', 0.2, 0.2],
      ['um,', 1.1, null],
      ['captions.', 1.7, expect.closeTo(1.1, 6)],
    ]);
    // ...and the subtitles are on the output timeline: "captions." is heard at 1.1 s of the output.
    expect(await client.getTranscript(job.id, { format: 'srt' })).toMatch(/00:00:00,200 --> 00:00:01,700/);

    // Fix a cut and render again: the plan's keep-ranges, changed, as the new job's edit.keep.
    const keep = edit.plan.keep.map((r, i) => (i === 1 ? { ...r, start: 1.5 } : r));
    const again = await client.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke', edit: { keep } });
    await succeedWithPlan(again.id, { ...PLAN, keep, outputSeconds: 2.5, cuts: [{ start: 1, end: 1.5, reason: 'client', text: null }] });
    expect((await client.getJobEdit(again.id)).edit).toEqual({ silences: 'off', fillers: 'off', zoom: 'off', keep });
  });

  it('409 edit_not_available for a succeeded job that asked for no edit', async () => {
    const client = await clientFor();
    const job = await client.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke' });
    await succeedWithPlan(job.id, undefined);
    const err = await apiError(client.getJobEdit(job.id));
    expect({ status: err.status, code: err.code }).toEqual({ status: 409, code: 'edit_not_available' });
  });
});

describe("the account's profane words", () => {
  it('start empty, are replaced by setProfanityWords, and checked by the service', async () => {
    const client = await clientFor();
    expect(await client.getProfanityWords()).toEqual([]);
    expect(await client.setProfanityWords(['frak', 'smeg'])).toEqual(['frak', 'smeg']);
    expect(await client.getProfanityWords()).toEqual(['frak', 'smeg']);
    // Another account has its own list.
    expect(await (await clientFor()).getProfanityWords()).toEqual([]);
    for (const words of [[''], Array.from({ length: 501 }, (_, i) => `w${i}`), ['two\nlines']]) {
      const err = await apiError(client.setProfanityWords(words));
      expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: 'invalid_request' });
    }
    expect(await client.getProfanityWords()).toEqual(['frak', 'smeg']);
    expect(await client.setProfanityWords([])).toEqual([]);
  });
});

describe('the answers the SDK checks', () => {
  it('refuses an edit that is not the contract, keeps what a newer service adds', async () => {
    let body: unknown;
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k', maxRetries: 0 });
      const good = {
        jobId: randomUUID(),
        edit: { silences: 'fast', fillers: 'off', zoom: 'off', keep: null },
        hookTitle: null,
        profanity: 'mask',
        plan: PLAN,
      };
      // A newer service: a cut reason and a field this SDK does not know.
      body = { ...good, plan: { ...PLAN, cuts: [{ start: 1, end: 1.6, reason: 'bad-take', text: null }], music: [] } };
      expect((await client.getJobEdit(good.jobId)).plan.cuts[0]?.reason).toBe('bad-take');
      body = { ...good, plan: { ...PLAN, keep: 'everything' } };
      const wrong = await client.getJobEdit(good.jobId).catch((e: unknown) => e);
      expect(wrong).toBeInstanceOf(InvalidResponseError);
      expect((wrong as Error).message).toContain('plan.keep');
      body = { words: 'frak' };
      expect(await client.getProfanityWords().catch((e: unknown) => e)).toBeInstanceOf(InvalidResponseError);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('the failure codes of an edit are known and not retryable', () => {
    for (const code of ['edit-out-of-range', 'edit-left-nothing']) {
      expect(FAILURE_CODES).toContain(code);
      expect(isKnownFailureCode(code)).toBe(true);
      expect(isRetryableFailure(code)).toBe(false);
      expect(RETRYABLE_FAILURE_CODES).not.toContain(code);
    }
  });
});
