import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_AGENT_CAPABILITIES, agentClient, agentToken, startHarness, type Harness } from '../../../apps/control-plane/test/harness.ts';
import {
  CaptionfarmApiError,
  CaptionfarmError,
  InvalidResponseError,
  MAX_OUTPUTS,
  SAFE_AREAS,
  createClient,
  safeAreaZones,
  type CaptionfarmClient,
  type CreateJobRequest,
  type JobOutputs,
} from '../src/index.ts';

/**
 * Issue 43 through the SDK: the framing options of createJob (reframe, safeArea, placement,
 * outputs, poster, subtitles) and the service's refusals, getJobOutputs of a job a test agent
 * completed with three renditions and a poster over the real agent protocol, and downloadRendition
 * of each against the real store's presigned links.
 */
let h: Harness;
let agent: ReturnType<typeof agentClient>;
let nodeId: string;
let dir: string;
beforeAll(async () => {
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000 } });
  agent = agentClient(h.url, await agentToken(h, 'sdk-outputs'));
  nodeId = (await agent.agent.register.mutate({ nodeName: 'sdk-outputs', capabilities: { ...TEST_AGENT_CAPABILITIES, maxConcurrentJobs: 8 } })).nodeId;
  dir = await mkdtemp(path.join(tmpdir(), 'cf-sdk-outputs-'));
});
afterAll(async () => {
  agent?.close();
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const VIDEO_URL = 'https://cdn.example.com/talk.mp4';

async function clientFor(plan: 'pro' | 'free' = 'pro'): Promise<CaptionfarmClient> {
  const { key } = await h.account(plan, 'framing');
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

const VERTICAL = { width: 1080, height: 1920 };
const WIDE = { width: 1920, height: 1080 };
const SQUARE = { width: 1080, height: 1080 };

/** What the test agent uploads: each rendition's bytes differ, so a link serving another's is caught. */
const renditionBytes = (i: number) => Buffer.from(`rendition ${i} of a framed job`);
const POSTER_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0xff, 0xd9]);

/**
 * Leases `jobId` and plays an agent's part to the end: ingest, words, then every rendition of the
 * lease and the poster uploaded to its own presigned URL, and complete reporting them all.
 */
async function succeedWithRenditions(jobId: string) {
  const leased = await agent.agent.lease.mutate({ nodeId, slots: 8, requestId: randomUUID() });
  const job = leased.find((j) => j.jobId === jobId);
  if (!job) throw new Error(`job ${jobId} was not leased (got ${leased.map((j) => j.jobId).join(', ')})`);
  const ref = { nodeId, jobId, leaseId: job.leaseId };
  await agent.agent.ingested.mutate({ ...ref, durationSeconds: 3, width: 3840, height: 2160 });
  await agent.agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: 0.9, words: [{ text: 'Framed.', start: 0.2, end: 0.8 }] });
  await agent.agent.progress.mutate({ ...ref, phase: 'rendering', percent: 0 });
  const outputs = job.outputs.map((o, index) => ({
    index,
    resolution: o.resolution ?? { width: 1920, height: 1080 },
    outputBytes: renditionBytes(index).length,
  }));
  for (const o of outputs) {
    const up = await agent.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: o.outputBytes, output: o.index, target: 'video' });
    if (!up.ok) throw new Error(`no upload URL for rendition ${o.index}: ${JSON.stringify(up)}`);
    expect((await fetch(up.url, { method: 'PUT', body: renditionBytes(o.index) })).status).toBe(200);
  }
  let poster: { at: number; width: number; height: number; bytes: number } | undefined;
  if (job.poster) {
    const up = await agent.agent.outputUploadUrl.mutate({ ...ref, sizeBytes: POSTER_BYTES.length, target: 'poster' });
    if (!up.ok) throw new Error('no upload URL for the poster');
    expect((await fetch(up.url, { method: 'PUT', body: POSTER_BYTES })).status).toBe(200);
    poster = { at: job.poster.at ?? 1.25, ...outputs[0]!.resolution, bytes: POSTER_BYTES.length };
  }
  const first = outputs[0]!;
  expect(
    await agent.agent.complete.mutate({ ...ref, resolution: first.resolution, outputBytes: first.outputBytes, outputs, ...(poster ? { poster } : {}) }),
  ).toEqual({ ok: true });
  return job;
}

describe('createJob with framing options', () => {
  it('are create options, typed; the refusals of issue 43 come back with the path and message of each problem', async () => {
    const client = await clientFor();
    const req: CreateJobRequest = {
      videoUrl: VIDEO_URL,
      templateId: 'karaoke',
      reframe: 'subject',
      safeArea: 'tiktok',
      placement: 'auto',
      outputs: [{ resolution: VERTICAL }, { resolution: WIDE, reframe: 'center' }, { resolution: SQUARE, format: 'webm' }],
      poster: true,
      subtitles: 'both',
    };
    const job = await client.createJob(req);
    // The record keeps exactly the spec's keys; its format is the first rendition's.
    expect(job).toMatchObject({ status: 'queued', format: 'mp4', resolution: null });
    for (const key of ['outputs', 'reframe', 'safeArea', 'poster']) expect(Object.keys(job)).not.toContain(key);
    await client.cancelJob(job.id);

    const five = Array.from({ length: MAX_OUTPUTS + 1 }, (_, i) => ({ resolution: { width: 640 + 2 * i, height: 360 } }));
    // @ts-expect-error a safe area the service does not know
    const snapchat: CreateJobRequest = { ...req, safeArea: 'snapchat' };
    const cases: [CreateJobRequest, string, RegExp][] = [
      [{ ...req, outputs: five }, 'outputs', /^at most 4 outputs$/],
      [{ ...req, outputs: [{ resolution: { width: 1081, height: 1920 } }] }, 'outputs.0.resolution.width', /an even number of pixels .* e\.g\. 1080/],
      [{ ...req, outputs: undefined, resolution: VERTICAL, overlay: true, format: 'webm', poster: false, subtitles: 'burn' }, 'reframe', /cannot be reframed/],
      [snapchat, 'safeArea', /./],
      [{ ...req, resolution: VERTICAL }, 'resolution', /^give each output its own resolution/],
      [{ ...req, outputs: [{ resolution: VERTICAL }, { resolution: VERTICAL, format: 'mp4' }] }, 'outputs.1', /^the same rendition twice/],
      [{ ...req, outputs: undefined }, 'reframe', /^reframe subject needs a resolution/],
    ];
    for (const [body, at, message] of cases) {
      const err = await apiError(client.createJob(body));
      expect({ status: err.status, code: err.code }, at).toEqual({ status: 400, code: 'invalid_request' });
      expect(err.details, at).toEqual(expect.arrayContaining([{ path: at, message: expect.stringMatching(message) }]));
    }
  });

  it("a rendition over the plan's frame budget is 422 limit_exceeded at its path", async () => {
    const free = await clientFor('free');
    const err = await apiError(
      free.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke', outputs: [{ resolution: { width: 640, height: 360 } }, { resolution: VERTICAL }] }),
    );
    expect({ status: err.status, code: err.code }).toEqual({ status: 422, code: 'limit_exceeded' });
    expect(err.details).toEqual([expect.objectContaining({ path: 'outputs.1.resolution' })]);
  });

  it('exports the safe areas and their zones at an output size', () => {
    expect(SAFE_AREAS).toEqual(['none', 'tiktok', 'reels', 'shorts']);
    // TikTok's button column (right 164 px of 1080) at 540x960 is the right 82 px.
    expect(safeAreaZones('tiktok', { width: 540, height: 960 })).toContainEqual({ x: 458, y: 0, width: 82, height: 960 });
    expect(safeAreaZones('none', VERTICAL)).toEqual([]);
  });
});

describe('getJobOutputs and downloadRendition', () => {
  it('404 for an unknown job; links null until the job succeeded; then every rendition and the poster, each its own bytes', async () => {
    const client = await clientFor();
    const notFound = await apiError(client.getJobOutputs(randomUUID()));
    expect({ status: notFound.status, code: notFound.code }).toEqual({ status: 404, code: 'not_found' });

    const job = await client.createJob({
      videoUrl: VIDEO_URL,
      templateId: 'karaoke',
      safeArea: 'reels',
      outputs: [{ resolution: VERTICAL, reframe: 'subject' }, { resolution: WIDE }, { resolution: SQUARE, format: 'webm' }],
      poster: { at: 1.5 },
      subtitles: 'track',
    });
    const early: JobOutputs = await client.getJobOutputs(job.id);
    expect(early).toMatchObject({ jobId: job.id, safeArea: 'reels', placement: 'fixed', subtitles: 'track', poster: null });
    expect(early.outputs.map((o) => [o.index, o.format, o.reframe, o.requestedResolution, o.resolution, o.downloadUrl])).toEqual([
      [0, 'mp4', 'subject', VERTICAL, null, null],
      [1, 'mp4', 'center', WIDE, null, null],
      [2, 'webm', 'center', SQUARE, null, null],
    ]);
    const notYet = await client.downloadRendition(early, 1, path.join(dir, 'early.mp4')).catch((e: unknown) => e);
    expect(notYet).toBeInstanceOf(CaptionfarmError);
    expect((notYet as CaptionfarmError).code).toBe('no_output');

    const leased = await succeedWithRenditions(job.id);
    // The lease carries every rendition (the first the job's own), the poster's time and the modes.
    expect(leased).toMatchObject({
      format: 'mp4',
      resolution: VERTICAL,
      outputs: [
        { resolution: VERTICAL, format: 'mp4', reframe: 'subject' },
        { resolution: WIDE, format: 'mp4', reframe: 'center' },
        { resolution: SQUARE, format: 'webm', reframe: 'center' },
      ],
      safeArea: 'reels',
      placement: 'fixed',
      poster: { at: 1.5 },
      subtitles: 'track',
    });

    const done = await client.getJob(job.id);
    // Charged once, on the source's 3 s, however many renditions.
    expect(done).toMatchObject({ status: 'succeeded', quotedSeconds: 3, format: 'mp4', resolution: VERTICAL });
    const outputs = await client.getJobOutputs(job.id);
    expect(outputs.outputs.map((o) => [o.index, o.resolution, o.sizeBytes])).toEqual([
      [0, VERTICAL, renditionBytes(0).length],
      [1, WIDE, renditionBytes(1).length],
      [2, SQUARE, renditionBytes(2).length],
    ]);
    for (const o of outputs.outputs) expect(Date.parse(o.outputExpiresAt ?? '')).toBeGreaterThan(Date.now());
    expect(new Set(outputs.outputs.map((o) => o.downloadUrl)).size).toBe(3);
    expect(outputs.poster).toMatchObject({ at: 1.5, ...VERTICAL, sizeBytes: POSTER_BYTES.length });

    for (const o of outputs.outputs) {
      const file = path.join(dir, `talk.${o.index}.${o.format}`);
      const progress: number[] = [];
      expect(await client.downloadRendition(outputs, o.index, file, { onProgress: (p) => progress.push(p.bytes) })).toEqual({
        path: file,
        bytes: renditionBytes(o.index).length,
      });
      expect(await readFile(file)).toEqual(renditionBytes(o.index));
      expect(progress.at(-1)).toBe(renditionBytes(o.index).length);
    }
    // Rendition 0 is the job record's own output.
    await client.downloadOutput(done, path.join(dir, 'record.mp4'));
    expect(await readFile(path.join(dir, 'record.mp4'))).toEqual(renditionBytes(0));
    await client.downloadRendition(outputs, 'poster', path.join(dir, 'talk.poster.jpg'));
    expect(await readFile(path.join(dir, 'talk.poster.jpg'))).toEqual(POSTER_BYTES);

    const missing = await client.downloadRendition(outputs, 3, path.join(dir, 'none.mp4')).catch((e: unknown) => e);
    expect((missing as CaptionfarmError).code).toBe('no_output');
    expect((missing as Error).message).toMatch(/has no rendition 3 \(its renditions are 0, 1, 2\)/);
  });

  it('a job without outputs has one rendition, its own, and no poster', async () => {
    const client = await clientFor();
    const job = await client.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke', resolution: VERTICAL });
    await succeedWithRenditions(job.id);
    const outputs = await client.getJobOutputs(job.id);
    expect(outputs).toMatchObject({ safeArea: 'none', placement: 'fixed', subtitles: 'burn', poster: null });
    expect(outputs.outputs).toHaveLength(1);
    expect(outputs.outputs[0]).toMatchObject({ index: 0, format: 'mp4', reframe: 'center', resolution: VERTICAL });
    const noPoster = await client.downloadRendition(outputs, 'poster', path.join(dir, 'none.jpg')).catch((e: unknown) => e);
    expect((noPoster as CaptionfarmError).code).toBe('no_output');
  });
});

describe('the outputs answer the SDK checks', () => {
  it('refuses one that is not the contract, keeps what a newer service adds', async () => {
    let body: unknown;
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k', maxRetries: 0 });
      const rendition = {
        index: 0,
        format: 'mp4',
        reframe: 'center',
        requestedResolution: null,
        resolution: null,
        sizeBytes: null,
        downloadUrl: null,
        outputExpiresAt: null,
      };
      const good = { jobId: randomUUID(), safeArea: 'none', placement: 'fixed', subtitles: 'burn', outputs: [rendition], poster: null };
      // A newer service: a format and a safe area this SDK does not know, and a new field.
      body = { ...good, safeArea: 'snapchat', outputs: [{ ...rendition, format: 'mkv', hdr: true }] };
      const newer = await client.getJobOutputs(good.jobId);
      expect([newer.safeArea, newer.outputs[0]?.format]).toEqual(['snapchat', 'mkv']);
      body = { ...good, outputs: [] };
      const wrong = await client.getJobOutputs(good.jobId).catch((e: unknown) => e);
      expect(wrong).toBeInstanceOf(InvalidResponseError);
      expect((wrong as Error).message).toContain('outputs');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
