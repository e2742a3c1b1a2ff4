import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAFE_AREA_REFERENCE, SAFE_AREA_ZONES, type LeasedJob } from '@captionfarm/contracts';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, startFarm, type Farm } from '../../../agent/test/e2e-harness.ts';
import { agentClient, putBytes, until, type Api } from '../../control-plane/test/harness.ts';
import { launchBrowser, signedInMember } from './browser.ts';
import { ensureDashboardBuilt } from './build.ts';

// Issue 43 in the dashboard, in Debian's chromium, against a real control plane: the new-job
// form's "Framing and renditions" (what it sends is read back from the lease an agent gets and
// from GET .../outputs), its limits and the API's refusals at their fields, and the job page's
// renditions and poster. The agent is this test, over the real agent protocol: it uploads small
// lavfi-made videos and a JPEG to the presigned URLs and completes with every rendition.

let farm: Farm;
let browser: Browser;
let page: Page;
let api: Api;
let agent: ReturnType<typeof agentClient>['agent'];
let closeAgent: () => void;
let nodeId: string;
let dir: string;

beforeAll(async () => {
  await ensureDashboardBuilt();
  dir = await mkdtemp(path.join(tmpdir(), 'cf-framing-ui-'));
  farm = await startFarm({ opts: { agentTimings: { leaseMs: 120_000 } } });
  browser = await launchBrowser();
  ({ page, api } = await signedInMember(farm, browser, { account: 'Framed Co', email: 'framed@framed.example' }));
  const c = agentClient(farm.url, await farm.agentToken());
  agent = c.agent;
  closeAgent = c.close;
  nodeId = (
    await agent.register.mutate({
      nodeName: 'dashboard-framing',
      capabilities: { gpu: false, nvenc: false, cudaWhisper: false, models: [], maxConcurrentJobs: 4 },
    })
  ).nodeId;
}, 240_000);

afterAll(async () => {
  closeAgent?.();
  await browser?.close();
  await farm?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Leases the job `jobId` (each test cancels or finishes its jobs, so it is the only one queued). */
async function lease(jobId: string): Promise<LeasedJob> {
  const job = await until(async () => (await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() }))[0], 15_000, `a lease of ${jobId}`);
  expect(job.jobId).toBe(jobId);
  return job as LeasedJob;
}

/** A 1 s test-pattern video at `size` (WxH) in `format`, playable in chromium (4:2:0). */
async function lavfiVideo(size: string, format: 'mp4' | 'webm'): Promise<Buffer> {
  const file = path.join(dir, `${size}.${format}`);
  const codec = format === 'mp4' ? ['-c:v', 'libx264', '-preset', 'ultrafast'] : ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8'];
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=10:d=1`, ...codec, '-pix_fmt', 'yuv420p', file]);
  return readFile(file);
}

async function lavfiJpeg(size: string): Promise<Buffer> {
  const file = path.join(dir, `poster-${size}.jpg`);
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=1:d=1`, '-frames:v', '1', file]);
  return readFile(file);
}

async function createFromUrl(url: string): Promise<string> {
  await page.locator('label', { hasText: 'From a URL' }).click();
  await page.getByLabel('Video URL').fill(url);
  await page.getByRole('button', { name: 'Create job' }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  return page.url().split('/').pop() as string;
}

/** No sideways scrolling on a phone (375 px), then back to the desktop width. */
async function fitsPhone(): Promise<void> {
  await page.setViewportSize({ width: 375, height: 800 });
  const { scroll, client } = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })')) as {
    scroll: number;
    client: number;
  };
  await page.setViewportSize({ width: 1280, height: 900 });
  expect(scroll, `${page.url()} scrolls sideways at 375 px`).toBeLessThanOrEqual(client);
}

describe('framing and renditions in the dashboard', () => {
  it("the form sends three renditions, a poster, the reframe, safe area, placement and subtitles; TikTok's zones are drawn over the preview", {
    timeout: 120_000,
  }, async () => {
    await page.goto('/jobs/new');
    await page.getByLabel('Reframe', { exact: true }).selectOption('subject');
    await page.getByLabel('Safe area').selectOption('tiktok');
    await page.getByLabel('Caption placement').selectOption('auto');
    await page.getByLabel('Subtitles').selectOption('both');
    await page.getByLabel('Poster', { exact: true }).selectOption('chosen');

    // The zones, scaled with the 9:16 preview: the bottom block starts at 1570 of 1920.
    const preview = page.getByTestId('safe-area-preview');
    const zones = preview.getByTestId('safe-zone');
    await expect(zones.count()).resolves.toBe(SAFE_AREA_ZONES.tiktok.length);
    const frame = await preview.locator('.safe-area-frame').boundingBox();
    const bottom = SAFE_AREA_ZONES.tiktok[1]!;
    const box = await zones.nth(1).boundingBox();
    expect(frame && box).toBeTruthy();
    if (!frame || !box) return;
    // Within a pixel (the zones' outline adds a fraction of one on each side).
    const near = (got: number, want: number) => expect(Math.abs(got - want), `${got} vs ${want}`).toBeLessThanOrEqual(1);
    near(box.y - frame.y, (bottom.y / SAFE_AREA_REFERENCE.height) * frame.height);
    near(box.height, (bottom.height / SAFE_AREA_REFERENCE.height) * frame.height);
    const right = await zones.nth(2).boundingBox();
    near((right?.x ?? 0) - frame.x, (SAFE_AREA_ZONES.tiktok[2]!.x / SAFE_AREA_REFERENCE.width) * frame.width);

    await page.getByLabel('Rendition 1 size').selectOption('1080x1920');
    await page.getByRole('button', { name: 'Add a rendition' }).click();
    await page.getByRole('button', { name: 'Add a rendition' }).click();
    // The rows added take the presets no row has: 1920x1080, then 1080x1080.
    await expect(page.getByLabel('Rendition 2 size').inputValue()).resolves.toBe('1920x1080');
    await page.getByLabel('Rendition 2 reframe').selectOption('center');
    await page.getByLabel('Rendition 3 size').selectOption('custom');
    await page.getByLabel('Rendition 3 width').fill('720');
    await page.getByLabel('Rendition 3 height').fill('900');
    await page.getByLabel('Rendition 3 format').selectOption('webm');
    await fitsPhone();
    const id = await createFromUrl('https://v.example.com/framed.mp4');

    const leased = await lease(id);
    expect(leased.outputs).toEqual([
      { resolution: { width: 1080, height: 1920 }, format: 'mp4', reframe: 'subject' },
      { resolution: { width: 1920, height: 1080 }, format: 'mp4', reframe: 'center' },
      { resolution: { width: 720, height: 900 }, format: 'webm', reframe: 'subject' },
    ]);
    expect(leased).toMatchObject({ safeArea: 'tiktok', placement: 'auto', poster: { at: null }, subtitles: 'both', format: 'mp4' });
    // GET .../outputs lists all three as asked for, nothing made yet (the record's resolution is null until it succeeds).
    const outputs = await api('GET', `/v1/automation-jobs/${id}/outputs`);
    expect(outputs.status).toBe(200);
    expect(outputs.body).toMatchObject({ safeArea: 'tiktok', placement: 'auto', subtitles: 'both', poster: null });
    expect(outputs.body.outputs.map((o: { requestedResolution: unknown; downloadUrl: unknown }) => [o.requestedResolution, o.downloadUrl])).toEqual([
      [{ width: 1080, height: 1920 }, null],
      [{ width: 1920, height: 1080 }, null],
      [{ width: 720, height: 900 }, null],
    ]);
    expect((await api('POST', `/v1/automation-jobs/${id}/cancel`)).status).toBe(200);
  });

  it('refuses a fifth rendition in the form, and a poster at a time goes as { at }', { timeout: 120_000 }, async () => {
    await page.goto('/jobs/new');
    const add = page.getByRole('button', { name: 'Add a rendition' });
    for (let i = 0; i < 3; i++) await add.click();
    await expect(page.getByTestId('rendition').count()).resolves.toBe(4);
    await expect(add.isDisabled()).resolves.toBe(true);
    await expect(page.getByText('At most 4 renditions a job.').isVisible()).resolves.toBe(true);
    await add.click({ force: true });
    await expect(page.getByTestId('rendition').count()).resolves.toBe(4);
    // Removing one allows one again.
    await page.getByRole('button', { name: 'Remove rendition 4' }).click();
    await expect(add.isDisabled()).resolves.toBe(false);

    await page.getByLabel('Poster', { exact: true }).selectOption('at');
    await page.getByLabel('Poster at (seconds)').fill('1.5');
    const id = await createFromUrl('https://v.example.com/four.mp4');
    const leased = await lease(id);
    expect(leased.outputs).toHaveLength(3);
    expect(leased.poster).toEqual({ at: 1.5 });
    expect((await api('POST', `/v1/automation-jobs/${id}/cancel`)).status).toBe(200);
  });

  it("shows the API's refusal next to its field: an odd width at its rendition, subject without a size at the reframe", { timeout: 120_000 }, async () => {
    await page.goto('/jobs/new');
    await page.getByRole('button', { name: 'Add a rendition' }).click();
    await page.getByLabel('Rendition 2 size').selectOption('custom');
    await page.getByLabel('Rendition 2 width').fill('1081');
    await page.getByLabel('Rendition 2 height').fill('1920');
    await page.locator('label', { hasText: 'From a URL' }).click();
    await page.getByLabel('Video URL').fill('https://v.example.com/odd.mp4');
    await page.getByRole('button', { name: 'Create job' }).click();
    const rows = page.getByTestId('rendition');
    await expect(rows.nth(1).locator('.field-error').textContent()).resolves.toMatch(/even number of pixels/);
    await expect(rows.nth(0).locator('.field-error').count()).resolves.toBe(0);
    // Said once, at the row; the width is marked, not the row's other fields.
    await expect(page.locator('.field-error', { hasText: 'even number of pixels' }).count()).resolves.toBe(1);
    await expect(page.getByLabel('Rendition 2 width').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByLabel('Rendition 2 format').getAttribute('aria-invalid')).resolves.toBeNull();
    await expect(page.getByLabel('Rendition 2 width').getAttribute('aria-describedby')).resolves.toBeTruthy();
    expect(page.url()).toMatch(/\/jobs\/new$/);

    await page.getByRole('button', { name: 'Remove rendition 2' }).click();
    await page.getByLabel('Reframe', { exact: true }).selectOption('subject');
    await page.getByRole('button', { name: 'Create job' }).click();
    await expect(page.locator('.field', { hasText: 'Reframe' }).first().locator('.field-error').textContent()).resolves.toMatch(/needs a resolution/);
    expect(page.url()).toMatch(/\/jobs\/new$/);
  });

  it('the job page shows every rendition, playable and downloadable, and the poster; nothing of them before the job succeeds', {
    timeout: 180_000,
  }, async () => {
    const sizes = [
      { resolution: { width: 360, height: 640 }, format: 'mp4' as const },
      { resolution: { width: 640, height: 360 }, format: 'mp4' as const, reframe: 'center' as const },
      { resolution: { width: 360, height: 360 }, format: 'webm' as const },
    ];
    const created = await api('POST', '/v1/automation-jobs', {
      videoUrl: 'https://v.example.com/three.mp4',
      templateId: 'karaoke',
      reframe: 'subject',
      safeArea: 'reels',
      outputs: sizes,
      poster: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const job = await lease(created.body.id);
    const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
    expect(await agent.ingested.mutate({ ...ref, durationSeconds: 1, width: 1280, height: 720 })).toEqual({ ok: true });
    await agent.progress.mutate({ ...ref, phase: 'transcribing', percent: null });
    const words = [{ text: 'Framed', start: 0.1, end: 0.6 }];
    expect(await agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: 0.9, words })).toEqual({ ok: true });
    await agent.progress.mutate({ ...ref, phase: 'rendering', percent: 10 });

    // Running: the page shows no renditions yet.
    const asked: string[] = [];
    const onRequest = (r: { url: () => string }) => {
      if (r.url().endsWith('/outputs')) asked.push(r.url());
    };
    page.on('request', onRequest);
    await page.goto(`/jobs/${job.jobId}`);
    await page.locator('[data-status="running"]').waitFor();
    // The page's other queries have answered (the deliveries card), and it never asked for the renditions.
    await page.getByText('Sent when the job ends').waitFor();
    await expect(page.getByRole('heading', { name: 'Renditions' }).count()).resolves.toBe(0);
    expect(asked).toEqual([]);
    page.off('request', onRequest);

    const files = await Promise.all(sizes.map((s) => lavfiVideo(`${s.resolution.width}x${s.resolution.height}`, s.format)));
    for (const [index, bytes] of files.entries()) {
      const up = await agent.outputUploadUrl.mutate({ ...ref, sizeBytes: bytes.length, output: index, target: 'video' });
      if (!up.ok) throw new Error(`no upload url for rendition ${index}`);
      expect(await putBytes(up.url, bytes)).toBe(200);
    }
    const poster = await lavfiJpeg('360x640');
    const upPoster = await agent.outputUploadUrl.mutate({ ...ref, sizeBytes: poster.length, output: 0, target: 'poster' });
    if (!upPoster.ok) throw new Error('no upload url for the poster');
    expect(await putBytes(upPoster.url, poster)).toBe(200);
    const outputs = sizes.map((s, index) => ({ index, resolution: s.resolution, outputBytes: files[index]!.length }));
    const done = await agent.complete.mutate({
      ...ref,
      resolution: sizes[0]!.resolution,
      outputBytes: files[0]!.length,
      outputs,
      poster: { at: 0.4, width: 360, height: 640, bytes: poster.length },
    });
    expect(done).toEqual({ ok: true });
    // The job record is the first rendition's.
    expect((await api('GET', `/v1/automation-jobs/${job.jobId}`)).body).toMatchObject({ status: 'succeeded', format: 'mp4', resolution: sizes[0]!.resolution });

    await page.locator('[data-status="succeeded"]').waitFor({ timeout: 15_000 });
    await expect(page.getByTestId('framing-summary').textContent()).resolves.toMatch(/^3 renditions; safe area Instagram Reels;/);
    const cards = page.getByTestId('rendition-output');
    await expect(cards.count()).resolves.toBe(3);
    const expected = [
      ['360×640', 'MP4', 'follows the speaker'],
      ['640×360', 'MP4', 'centre crop'],
      ['360×360', 'WEBM', 'follows the speaker'],
    ];
    for (const [i, [size, format, reframe]] of expected.entries()) {
      const card = cards.nth(i);
      const text = (await card.locator('figcaption').textContent()) ?? '';
      expect(text).toContain(`${size} · ${format} · ${reframe}`);
      // The player loads the rendition: its frames are the uploaded file's size.
      const video = card.locator('video');
      await page.waitForFunction((v) => (v as unknown as { readyState: number }).readyState >= 1, await video.elementHandle(), { timeout: 15_000 });
      const [w, h] = size!.split('×').map(Number);
      await expect(
        video.evaluate((v) => {
          const e = v as unknown as { videoWidth: number; videoHeight: number };
          return [e.videoWidth, e.videoHeight];
        }),
      ).resolves.toEqual([w, h]);
      // The download link serves exactly the uploaded bytes.
      const href = await card.getByRole('link', { name: `Download ${size} ${format}` }).getAttribute('href');
      const got = await page.request.get(href as string);
      expect(got.status()).toBe(200);
      expect(Buffer.from(await got.body()).equals(files[i]!)).toBe(true);
    }
    const img = page.getByTestId('poster').locator('img');
    await page.waitForFunction((el) => (el as unknown as { naturalWidth: number }).naturalWidth > 0, await img.elementHandle(), {
      timeout: 15_000,
    });
    await expect(
      img.evaluate((el) => {
        const e = el as unknown as { naturalWidth: number; naturalHeight: number };
        return [e.naturalWidth, e.naturalHeight];
      }),
    ).resolves.toEqual([360, 640]);
    const posterHref = await page.getByRole('link', { name: 'Download poster' }).getAttribute('href');
    const gotPoster = await page.request.get(posterHref as string);
    expect(Buffer.from(await gotPoster.body()).equals(poster)).toBe(true);
    await fitsPhone();

    // "Edit and render again": the form comes back framed as this job was, and the new job asks the
    // agent for the same renditions (custom sizes, each reframe), safe area and a poster.
    await page.getByRole('button', { name: 'Edit and render again' }).click();
    await page.waitForURL(/\/jobs\/new$/);
    await expect(page.getByLabel('Safe area').inputValue()).resolves.toBe('reels');
    await expect(page.getByLabel('Poster', { exact: true }).inputValue()).resolves.toBe('chosen');
    await expect(page.getByLabel('Rendition 1 width').inputValue()).resolves.toBe('360');
    await expect(page.getByLabel('Rendition 1 height').inputValue()).resolves.toBe('640');
    await expect(page.getByLabel('Rendition 2 reframe').inputValue()).resolves.toBe('center');
    await expect(page.getByLabel('Rendition 3 format').inputValue()).resolves.toBe('webm');
    const again = await lease(await createFromUrl('https://v.example.com/three-again.mp4'));
    expect(again.outputs).toEqual(job.outputs);
    expect(again).toMatchObject({ safeArea: 'reels', placement: 'fixed', subtitles: 'burn', poster: { at: null } });
    expect((await api('POST', `/v1/automation-jobs/${again.jobId}/cancel`)).status).toBe(200);
  });
});
