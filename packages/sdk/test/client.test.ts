import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { JobRecordSchema, UploadRecordSchema } from '@captionfarm/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../../../apps/control-plane/test/harness.ts';
import {
  CaptionfarmApiError,
  CaptionfarmError,
  CaptionfarmNetworkError,
  InvalidResponseError,
  UploadRejectedError,
  createClient,
  isApiError,
  type CaptionStyle,
  type CaptionfarmClient,
  type CreateJobRequest,
} from '../src/index.ts';

let h: Harness;
let dir: string;
beforeAll(async () => {
  h = await startHarness();
  dir = await mkdtemp(path.join(tmpdir(), 'cf-sdk-'));
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

/** A client over a fetch that records every request it sends (URL, method, headers). */
async function clientFor(plan: 'free' | 'starter' | 'pro' = 'pro', extra: { maxRetries?: number } = {}) {
  const account = await h.account(plan);
  const sent: { url: string; method: string; headers: Headers }[] = [];
  const recordingFetch: typeof fetch = (input, init) => {
    sent.push({ url: String(input), method: init?.method ?? 'GET', headers: new Headers(init?.headers) });
    return fetch(input, init);
  };
  const client = createClient({ baseUrl: h.url, apiKey: account.key, fetch: recordingFetch, ...extra });
  return { ...account, client, sent };
}

async function expectApiError(p: Promise<unknown>, status: number, code: string): Promise<CaptionfarmApiError> {
  const err = await p.then(
    () => {
      throw new Error(`expected ${status} ${code}, got a success`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CaptionfarmApiError);
  const e = err as CaptionfarmApiError;
  expect({ status: e.status, code: e.code }).toEqual({ status, code });
  expect(e.requestId).toMatch(/^req_/);
  expect(e.message.length).toBeGreaterThan(10);
  return e;
}

const VIDEO_URL = 'https://cdn.example.com/talk.mp4';

describe('upload flow (real presigned PUT to the built-in store)', () => {
  it('uploads a file with exact Content-Length, no Authorization header, and creates a job from it', async () => {
    const { client, sent } = await clientFor();
    const file = path.join(dir, 'talk.mp4');
    const bytes = Buffer.alloc(300_000 + 17, 7);
    await writeFile(file, bytes);
    const progress: number[] = [];
    const upload = await client.uploadFile(file, { onProgress: (p) => progress.push(p.bytes) });
    expect(UploadRecordSchema.parse(upload)).toMatchObject({ contentType: 'video/mp4', sizeBytes: bytes.length });
    expect(progress.at(-1)).toBe(bytes.length);
    expect(progress.length).toBeGreaterThan(2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));

    const put = sent.find((r) => r.method === 'PUT')!;
    expect(put.url).toBe(upload.uploadUrl);
    expect(put.headers.get('authorization')).toBeNull();
    expect(put.headers.get('content-length')).toBe(String(bytes.length));
    expect(put.headers.get('content-type')).toBe('video/mp4');
    expect(sent.filter((r) => r.method !== 'PUT').every((r) => r.headers.get('authorization')?.startsWith('Bearer cf_live_'))).toBe(true);
    // The store holds exactly the bytes (not a multipart envelope).
    expect((await h.cp.store.head(`uploads/${upload.uploadId}.mp4`))?.sizeBytes).toBe(bytes.length);

    const job = await client.createJob({ uploadId: upload.uploadId, templateId: 'karaoke' });
    expect(JobRecordSchema.parse(job)).toMatchObject({
      status: 'queued',
      phase: 'queued',
      format: 'mp4',
      quality: 'high',
      quotedSeconds: null,
      downloadUrl: null,
    });
    await expectApiError(client.createJob({ uploadId: upload.uploadId, templateId: 'karaoke' }), 409, 'upload_already_used');
  });

  it('streams a large file through bounded memory (the body is never held whole)', async () => {
    const { client } = await clientFor();
    // 256 MB, sparse: made at once, read as zeros.
    const file = path.join(dir, 'long-talk.mp4');
    await writeFile(file, '');
    await truncate(file, 256 << 20);
    let peak = 0;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 5);
    try {
      const upload = await client.uploadFile(file);
      expect(await h.cp.store.head(`uploads/${upload.uploadId}.mp4`)).toMatchObject({ sizeBytes: 256 << 20 });
    } finally {
      clearInterval(sample);
      await rm(file);
    }
    // fetch's default redirect mode kept the whole body: a 300 MB upload peaked at 289 MB of buffers.
    expect(peak / 2 ** 20).toBeLessThan(96);
  });

  it('gets a real 403 from the store when the body is not the signed size', async () => {
    const { client } = await clientFor();
    for (const actual of [999, 1001]) {
      const upload = await client.createUpload({ fileName: 'clip.webm', sizeBytes: 1000 });
      expect(upload.contentType).toBe('video/webm');
      const err = await client.putUpload(upload, new Uint8Array(actual)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UploadRejectedError);
      expect(err).toMatchObject({ code: 'upload_rejected', status: 403 });
      expect((err as Error).message).toContain(`the body is ${actual} bytes but the URL is signed for exactly 1000`);
      // Nothing was stored, so the upload cannot become a job.
      await expectApiError(client.createJob({ uploadId: upload.uploadId, templateId: 'karaoke' }), 409, 'upload_not_completed');
    }
  });

  it('refuses to send a stream that is shorter or longer than sizeBytes', async () => {
    const { client } = await clientFor();
    const upload = await client.createUpload({ fileName: 'a.mov', sizeBytes: 100 });
    async function* gen(n: number) {
      yield new Uint8Array(n);
    }
    for (const n of [50, 150]) {
      const err = await client.putUpload(upload, gen(n)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CaptionfarmError);
      expect((err as CaptionfarmError).code).toBe('upload_size_mismatch');
    }
    await client.putUpload(upload, gen(100));
    expect((await client.createJob({ uploadId: upload.uploadId, templateId: 'karaoke' })).status).toBe('queued');
  });

  it('aborts an upload with the signal', async () => {
    const { client } = await clientFor();
    const upload = await client.createUpload({ fileName: 'slow.mp4', sizeBytes: 10_000_000 });
    const ac = new AbortController();
    async function* slow() {
      yield new Uint8Array(1000);
      ac.abort(new Error('user pressed Ctrl-C'));
      // The rest never comes: only the abort can end this upload, so it cannot race one that finishes.
      await new Promise<never>(() => undefined);
    }
    await expect(client.putUpload(upload, slow(), { signal: ac.signal })).rejects.toThrow('user pressed Ctrl-C');
    expect(await h.cp.store.head(`uploads/${upload.uploadId}.mp4`)).toBeNull();
  });

  it('downloads an object through a presigned GET to a file, never leaving a partial one', async () => {
    const { client } = await clientFor();
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 251));
    const upload = await client.createUpload({ fileName: 'out.mp4', sizeBytes: bytes.length });
    await client.putUpload(upload, bytes);
    const downloadUrl = await h.cp.store.presignGet({ key: `uploads/${upload.uploadId}.mp4`, expiresInSeconds: 60 });
    const target = path.join(dir, 'downloaded.mp4');
    const seen: (number | null)[] = [];
    const res = await client.downloadOutput({ id: 'j1', status: 'succeeded', downloadUrl }, target, { onProgress: (p) => seen.push(p.totalBytes) });
    expect(res.bytes).toBe(bytes.length);
    expect(Buffer.compare(await readFile(target), bytes)).toBe(0);
    expect(seen.every((t) => t === bytes.length)).toBe(true);

    const tampered = downloadUrl.replace(/X-Amz-Signature=[0-9a-f]/, (m) => m.slice(0, -1) + (m.endsWith('0') ? '1' : '0'));
    const err = await client.downloadOutput({ id: 'j2', status: 'succeeded', downloadUrl: tampered }, path.join(dir, 'bad.mp4')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'download_failed' });
    await expect(readFile(path.join(dir, 'bad.mp4'))).rejects.toThrow();
    await expect(readFile(path.join(dir, 'bad.mp4.part'))).rejects.toThrow();
    await expect(client.downloadOutput({ id: 'j3', status: 'queued', downloadUrl: null }, target)).rejects.toMatchObject({ code: 'no_output' });
    // A local problem is reported as such, not as a network error.
    const local = await client.downloadOutput({ id: 'j4', status: 'succeeded', downloadUrl }, path.join(dir, 'no-such-dir', 'x.mp4')).catch((e: unknown) => e);
    expect(local).not.toBeInstanceOf(CaptionfarmError);
    expect(local).toMatchObject({ code: 'ENOENT' });
  });
});

describe('jobs: create, get, cancel, list', () => {
  let c: CaptionfarmClient;
  let accountId: string;
  beforeAll(async () => {
    const a = await clientFor('pro');
    c = a.client;
    accountId = a.accountId;
  });

  it('creates from a URL with options, gets and cancels idempotently (minutes refunded)', async () => {
    const before = (await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance as number;
    const job = await c.createJob({
      videoUrl: VIDEO_URL,
      templateId: 'karaoke',
      format: 'webm',
      quality: 'medium',
      resolution: { width: 720, height: 1280 },
      language: 'EN',
    });
    expect(job).toMatchObject({ status: 'queued', phase: 'queued', format: 'webm', quality: 'medium', resolution: null, percent: null, failureCode: null });
    expect((await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance).toBe(before - 10);
    expect(await c.getJob(job.id)).toEqual(job);

    const cancelled = await c.cancelJob(job.id);
    expect(cancelled).toMatchObject({ id: job.id, status: 'cancelled', phase: 'cancelled' });
    expect(await c.cancelJob(job.id)).toEqual(cancelled);
    expect((await h.admin('GET', `/accounts/${accountId}/minutes`)).body.balance).toBe(before);
  });

  it('answers 409 job_not_cancellable for a failed job', async () => {
    const { client, accountId: id } = await clientFor('free');
    await h.admin('POST', `/accounts/${id}/minutes`, { minutes: -30 });
    const created = await client.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke' });
    expect(created).toMatchObject({ status: 'queued' });
    const job = await client.getJob(created.id);
    expect(job).toMatchObject({ status: 'failed', failureCode: 'automation-minutes-exhausted' });
    expect(job.failureReason).toMatch(/minutes/);
    await expectApiError(client.cancelJob(job.id), 409, 'job_not_cancellable');
  });

  it('creates a job with a transcript; getTranscript answers 409 transcript_not_available until it succeeded, 400 for a bad transcript', async () => {
    const words = [{ text: 'Captionfarm', start: 0.2, end: 0.8 }];
    const job = await c.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke', transcript: { words } });
    expect(job).toMatchObject({ status: 'queued' });
    for (const format of ['json', 'srt', 'vtt'] as const) {
      const err = await expectApiError(c.getTranscript(job.id, { format }), 409, 'transcript_not_available');
      expect(err.message).toMatch(/once it has succeeded/);
    }
    await expectApiError(c.getTranscript(crypto.randomUUID()), 404, 'not_found');
    const bad = await expectApiError(
      c.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke', transcript: { words: [{ text: 'x', start: 1, end: 1 }] } }),
      400,
      'invalid_request',
    );
    expect(bad.details).toEqual([expect.objectContaining({ path: 'transcript.words.0.end' })]);
    await c.cancelJob(job.id);
  });

  it('iterates every job newest first over pages, and pages by hand', async () => {
    const { client } = await clientFor('pro');
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await client.createJob({ videoUrl: `${VIDEO_URL}?n=${i}`, templateId: 'karaoke' })).id);
    const seen: string[] = [];
    for await (const job of client.listJobs({ pageSize: 7 })) seen.push(job.id);
    expect(seen).toEqual([...ids].reverse());

    const first = await client.listJobsPage();
    expect(first.jobs).toHaveLength(20);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listJobsPage({ cursor: first.nextCursor! });
    expect(second.jobs.map((j) => j.id)).toEqual([...ids].reverse().slice(20));
    expect(second.nextCursor).toBeNull();

    // Stopping early fetches no further page.
    let n = 0;
    for await (const _ of client.listJobs({ pageSize: 5 })) if (++n === 3) break;
    expect(n).toBe(3);
  });
});

describe('typed errors carry the API error code', () => {
  it('400 invalid_request with details', async () => {
    const { client } = await clientFor();
    const both = await expectApiError(client.createJob({ videoUrl: VIDEO_URL, uploadId: crypto.randomUUID(), templateId: 'karaoke' }), 400, 'invalid_request');
    expect(both.details).toEqual([expect.objectContaining({ path: 'uploadId' })]);
    const tpl = await expectApiError(client.createJob({ videoUrl: VIDEO_URL, templateId: 'no-such-template' }), 400, 'invalid_request');
    expect(tpl.details).toEqual([{ path: 'templateId', message: 'unknown template' }]);
    const hook = await expectApiError(
      client.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke', webhookUrl: 'http://127.0.0.1/hook' }),
      400,
      'invalid_request',
    );
    expect(hook.details).toEqual([expect.objectContaining({ path: 'webhookUrl' })]);
    await expectApiError(client.listJobsPage({ cursor: 'forged' }), 400, 'invalid_request');
    expect(isApiError(both, 'invalid_request')).toBe(true);
    expect(isApiError(both, 'not_found')).toBe(false);
  });

  it('401 unauthenticated', async () => {
    const client = createClient({ baseUrl: h.url, apiKey: 'cf_live_nope' });
    await expectApiError(client.listJobsPage(), 401, 'unauthenticated');
  });

  it("404 not_found: unknown job, another account's job, unknown upload, unknown template", async () => {
    const a = await clientFor();
    const b = await clientFor();
    const job = await a.client.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke' });
    await expectApiError(b.client.getJob(job.id), 404, 'not_found');
    await expectApiError(b.client.cancelJob(job.id), 404, 'not_found');
    await expectApiError(a.client.getJob(crypto.randomUUID()), 404, 'not_found');
    await expectApiError(a.client.createJob({ uploadId: crypto.randomUUID(), templateId: 'karaoke' }), 404, 'not_found');
    await expectApiError(a.client.getTemplate('no-such-template'), 404, 'not_found');
  });

  it('409 upload_not_completed before the PUT', async () => {
    const { client } = await clientFor();
    const upload = await client.createUpload({ fileName: 'x.mkv', sizeBytes: 10 });
    await expectApiError(client.createJob({ uploadId: upload.uploadId, templateId: 'karaoke' }), 409, 'upload_not_completed');
  });

  it('415 unsupported_media_type and 422 limit_exceeded', async () => {
    const { client } = await clientFor('free');
    await expectApiError(client.createUpload({ fileName: 'notes.txt', sizeBytes: 10 }), 415, 'unsupported_media_type');
    await expectApiError(client.createUpload({ fileName: 'big.mp4', sizeBytes: 500_000_001 }), 422, 'limit_exceeded');
    const res = await expectApiError(
      client.createJob({ videoUrl: VIDEO_URL, templateId: 'karaoke', resolution: { width: 1920, height: 1080 } }),
      422,
      'limit_exceeded',
    );
    expect(res.details).toEqual([expect.objectContaining({ path: 'resolution' })]);
  });

  it('429 rate_limited and quota_exceeded with Retry-After, not retried when retries are off', async () => {
    const { client } = await clientFor('free', { maxRetries: 0 });
    for (let i = 0; i < 10; i++) await client.createUpload({ fileName: `v${i}.mp4`, sizeBytes: 10 });
    const quota = await expectApiError(client.createUpload({ fileName: 'v11.mp4', sizeBytes: 10 }), 429, 'quota_exceeded');
    expect(quota.retryAfterSeconds).toBeGreaterThan(0);
    expect(quota.retryAfterSeconds).toBeLessThanOrEqual(86_400);
    // The free plan allows 60 requests a minute; 200 tries reach the limit even if the one-minute
    // window rolls over once during the loop (which a fixed 70 did not).
    let limited: CaptionfarmApiError | undefined;
    for (let i = 0; i < 200 && !limited; i++) {
      limited = await client.listJobsPage().then(
        () => undefined,
        (e: unknown) => e as CaptionfarmApiError,
      );
    }
    expect(limited).toBeDefined();
    expect(limited).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(limited!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(limited!.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it('network errors and non-API answers are typed too', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', maxRetries: 0 });
    const err = await down.listJobsPage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CaptionfarmNetworkError);
    expect(err).toMatchObject({ code: 'network_error' });
    expect((err as Error).message).toContain('ECONNREFUSED');

    // A base URL that points at something else: a page that is not the API, a proxy's 502.
    const other = createServer((req, res) => {
      if (req.url?.startsWith('/v1/templates')) res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>');
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<html>welcome</html>');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    try {
      const wrong = createClient({ baseUrl: `http://127.0.0.1:${(other.address() as AddressInfo).port}`, apiKey: 'k', maxRetries: 0 });
      const notApi = await wrong.listJobsPage().catch((e: unknown) => e);
      expect(notApi).toBeInstanceOf(InvalidResponseError);
      expect(notApi).toMatchObject({ code: 'invalid_response', status: 200 });
      const gateway = await wrong.listTemplates().catch((e: unknown) => e);
      expect(gateway).toBeInstanceOf(CaptionfarmApiError);
      expect(gateway).toMatchObject({ code: 'http_502', status: 502 });
    } finally {
      await new Promise((r) => other.close(r));
    }
  });
});

describe('templates', () => {
  it('lists and shows templates', async () => {
    const { client } = await clientFor();
    const list = await client.listTemplates();
    expect(list.length).toBeGreaterThanOrEqual(1);
    const karaoke = list.find((t) => t.id === 'karaoke');
    expect(karaoke).toMatchObject({ builtin: true, createdAt: null });
    const shown = await client.getTemplate('karaoke');
    expect(shown).toMatchObject({ id: 'karaoke', builtin: true });
    expect(typeof shown.template).toBe('object');
  });
});

describe('brand: fonts, per-job style, overlay', () => {
  const BRAND_TTF = '/usr/share/fonts/truetype/noto/NotoSerif-Regular.ttf';

  it('uploads a font from a file, lists it, styles a job and a preview with it, and deletes it', async () => {
    const { client } = await clientFor();
    const font = await client.uploadFont(BRAND_TTF, { fileName: 'Brand.ttf' });
    expect(font).toMatchObject({ status: 'ready', fileName: 'Brand.ttf', format: 'ttf', family: 'Noto Serif', weight: 400 });
    expect((await client.listFonts()).map((f) => f.id)).toEqual([font.id]);
    expect((await client.getFont(font.id)).sha256).toBe(font.sha256);

    const style: CaptionStyle = { font: { fontId: font.id, size: 8 }, active: { color: '#FF0000' }, emoji: 'auto', keywords: ['launch'] };
    const job = await client.createJob({ videoUrl: 'https://v.example.com/a.mp4', templateId: 'karaoke', format: 'mov', overlay: true, style });
    expect(job.format).toBe('mov');
    const effective = await client.getJobStyle(job.id);
    expect(effective).toMatchObject({ jobId: job.id, templateId: 'karaoke', overlay: true, override: style });
    expect(effective.style).toMatchObject({
      font: { fontId: font.id, size: 8, family: 'Montserrat' },
      active: { color: '#FF0000' },
      emoji: 'auto',
      keywords: ['launch'],
    });

    const preview = await client.previewTemplate('karaoke', { width: 320, height: 180, text: 'Brand launch', style });
    expect(preview.kind).toBe('binary');

    await client.deleteFont(font.id);
    expect(await client.listFonts()).toEqual([]);
    const gone = await client.getFont(font.id).catch((e: unknown) => e);
    expect(isApiError(gone, 'not_found')).toBe(true);
  });

  it('a damaged font is refused with 422 invalid_font; a bad style with 400 and the path of the problem', async () => {
    const { client } = await clientFor();
    const damaged = path.join(dir, 'damaged.ttf');
    await writeFile(damaged, (await readFile(BRAND_TTF)).subarray(0, 5000));
    const err = await client.uploadFont(damaged).catch((e: unknown) => e);
    expect(isApiError(err, 'invalid_font')).toBe(true);
    expect((err as CaptionfarmApiError).status).toBe(422);
    expect(await client.listFonts()).toEqual([]);
    const bad = await client.createJob({ videoUrl: 'https://v.example.com/a.mp4', templateId: 'karaoke', style: { fill: 'red' } }).catch((e: unknown) => e);
    expect(isApiError(bad, 'invalid_request')).toBe(true);
    expect((bad as CaptionfarmApiError).details).toEqual([expect.objectContaining({ path: 'style.fill' })]);
    const mp4Overlay = await client.createJob({ videoUrl: 'https://v.example.com/a.mp4', templateId: 'karaoke', overlay: true }).catch((e: unknown) => e);
    expect(isApiError(mp4Overlay, 'invalid_request')).toBe(true);
  });
});

describe('the words the speaker meant: vocabulary and replacements', () => {
  it('are create options, read back with getJobStyle, typed, and checked by the service', async () => {
    const { client } = await clientFor();
    const req: CreateJobRequest = {
      videoUrl: 'https://v.example.com/a.mp4',
      templateId: 'karaoke',
      vocabulary: ['Captionfarm', 'Kubernetes'],
      replacements: [{ from: 'caption farm', to: 'Captionfarm' }],
    };
    const job = await client.createJob(req);
    expect(await client.getJobStyle(job.id)).toMatchObject({ vocabulary: req.vocabulary, replacements: req.replacements });
    // @ts-expect-error a replacement needs its `to` (empty to remove the words)
    const missingTo: CreateJobRequest = { ...req, replacements: [{ from: 'um' }] };
    // @ts-expect-error vocabulary is a list of terms, not one comma-separated string
    const oneString: CreateJobRequest = { ...req, vocabulary: 'Captionfarm,Kubernetes' };
    for (const bad of [missingTo, oneString]) {
      const err = await client.createJob(bad).catch((e: unknown) => e);
      expect(isApiError(err, 'invalid_request')).toBe(true);
    }
    const dup = await client
      .createJob({
        ...req,
        replacements: [
          { from: 'UM', to: '' },
          { from: 'um', to: 'uh' },
        ],
      })
      .catch((e: unknown) => e);
    expect((dup as CaptionfarmApiError).details).toEqual([expect.objectContaining({ path: 'replacements.1.from' })]);
  });
});
