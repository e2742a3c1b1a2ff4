import { randomUUID } from 'node:crypto';
import type { EditPlan, LeasedJob } from '@captionfarm/contracts';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFarm, type Farm } from '../../../agent/test/e2e-harness.ts';
import { agentClient, until, type Api } from '../../control-plane/test/harness.ts';
import { launchBrowser, signedInMember } from './browser.ts';
import { ensureDashboardBuilt } from './build.ts';

// Issue 42 in the dashboard, in Debian's chromium, against a real control plane: the new-job
// form's "Edit for shorts", the job page's cut list with "Keep this" and "Render again with these
// cuts", and the account's profanity words. The agent is this test, over the real agent protocol:
// what the page sent is read back from the lease the control plane hands an agent, and a job is
// finished with the words and edit plan an agent reports (`transcribed` with `edit`).

let farm: Farm;
let browser: Browser;
let page: Page;
let api: Api;
let agent: ReturnType<typeof agentClient>['agent'];
let closeAgent: () => void;
let nodeId: string;

beforeAll(async () => {
  await ensureDashboardBuilt();
  farm = await startFarm({ opts: { agentTimings: { leaseMs: 120_000 } } });
  browser = await launchBrowser();
  ({ page, api } = await signedInMember(farm, browser, { account: 'Shorts Co', email: 'shorts@shorts.example' }));
  const c = agentClient(farm.url, await farm.agentToken());
  agent = c.agent;
  closeAgent = c.close;
  nodeId = (
    await agent.register.mutate({
      nodeName: 'dashboard-edit',
      capabilities: { gpu: false, nvenc: false, cudaWhisper: false, models: [], maxConcurrentJobs: 4 },
    })
  ).nodeId;
}, 240_000);

afterAll(async () => {
  closeAgent?.();
  await browser?.close();
  await farm?.close();
});

/** Leases the job `jobId` (each test cancels or finishes its jobs, so it is the only one queued). */
async function lease(jobId: string): Promise<LeasedJob> {
  const job = await until(async () => (await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() }))[0], 15_000, `a lease of ${jobId}`);
  expect(job.jobId).toBe(jobId);
  return job as LeasedJob;
}

/** ingest -> words and the edit plan -> upload -> complete, as an agent does. */
async function succeed(job: LeasedJob, words: { text: string; start: number; end: number }[], plan?: EditPlan): Promise<void> {
  const ref = { nodeId, jobId: job.jobId, leaseId: job.leaseId };
  expect(await agent.ingested.mutate({ ...ref, durationSeconds: plan?.sourceSeconds ?? 6, width: 360, height: 640 })).toEqual({ ok: true });
  await agent.progress.mutate({ ...ref, phase: 'transcribing', percent: null });
  expect(await agent.transcribed.mutate({ ...ref, language: 'en', languageProbability: 0.9, words, ...(plan ? { edit: plan } : {}) })).toEqual({ ok: true });
  await agent.progress.mutate({ ...ref, phase: 'rendering', percent: 0 });
  const bytes = Buffer.from('the rendered short, as far as this test is concerned');
  const up = await agent.outputUploadUrl.mutate({ ...ref, sizeBytes: bytes.length });
  if (!up.ok) throw new Error('no upload url');
  expect((await fetch(up.url, { method: 'PUT', body: bytes })).status).toBe(200);
  expect(await agent.complete.mutate({ ...ref, resolution: { width: 360, height: 640 }, outputBytes: bytes.length })).toEqual({ ok: true });
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

async function createFromUrl(url: string): Promise<string> {
  await page.locator('label', { hasText: 'From a URL' }).click();
  await page.getByLabel('Video URL').fill(url);
  await page.getByRole('button', { name: 'Create job' }).click();
  await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
  return page.url().split('/').pop() as string;
}

// "So, um, today... we talk sleep": a filler and two long pauses, cut as a `fast` pace would.
const WORDS = [
  { text: 'So', start: 0.3, end: 0.55 },
  { text: 'um', start: 1.0, end: 1.3 },
  { text: 'today', start: 1.4, end: 1.8 },
  { text: 'we', start: 2.9, end: 3.05 },
  { text: 'talk', start: 3.05, end: 3.4 },
  { text: 'sleep', start: 3.45, end: 3.9 },
];
const PLAN: EditPlan = {
  sourceSeconds: 6,
  outputSeconds: 2.6,
  keep: [
    { start: 0.2, end: 0.9 },
    { start: 1.3, end: 2.0 },
    { start: 2.8, end: 4.0 },
  ],
  cuts: [
    { start: 0, end: 0.2, reason: 'silence', text: null },
    { start: 0.9, end: 1.3, reason: 'filler', text: 'um' },
    { start: 2.0, end: 2.8, reason: 'silence', text: null },
    { start: 4.0, end: 6.0, reason: 'silence', text: null },
  ],
  zooms: [{ start: 1.4, end: 1.8, scale: 1.1 }],
  bleeps: [],
};

describe('the edit for shorts in the dashboard', () => {
  it('the new-job form sends silences, fillers, zoom, the hook title and profanity, and nothing of them when left alone', { timeout: 120_000 }, async () => {
    await page.goto('/jobs/new');
    await page.getByLabel('Cut silences').selectOption('fast');
    await page.getByLabel('Cut fillers').selectOption('safe');
    await page.getByLabel(/Punch-in zoom/).check();
    await page.getByLabel('Hook title').fill('Three tips for better sleep');
    await page.getByLabel('Hook seconds').fill('4.5');
    await page.getByLabel('Profanity', { exact: true }).selectOption('bleep');
    const edited = await createFromUrl('https://v.example.com/sleep.mp4');
    const leased = await lease(edited);
    expect(leased.edit).toEqual({ silences: 'fast', fillers: 'safe', zoom: 'emphasis', keep: null });
    expect(leased.hookTitle).toMatchObject({ text: 'Three tips for better sleep', seconds: 4.5 });
    expect(leased.profanity).toBe('bleep');
    expect(leased.transcript).toBeNull();
    expect((await api('POST', `/v1/automation-jobs/${edited}/cancel`)).status).toBe(200);

    await page.goto('/jobs/new');
    const plain = await createFromUrl('https://v.example.com/plain.mp4');
    const leasedPlain = await lease(plain);
    expect(leasedPlain).toMatchObject({ edit: null, hookTitle: null, profanity: 'off' });
    expect((await api('POST', `/v1/automation-jobs/${plain}/cancel`)).status).toBe(200);
  });

  it('shows a refusal of the edit at its field', { timeout: 120_000 }, async () => {
    await page.goto('/jobs/new');
    await page.getByLabel('Hook title').fill('Too long to wait for');
    await page.getByLabel('Hook seconds').fill('12');
    await page.locator('label', { hasText: 'From a URL' }).click();
    await page.getByLabel('Video URL').fill('https://v.example.com/refused.mp4');
    await page.getByRole('button', { name: 'Create job' }).click();
    await expect(page.locator('.field', { hasText: 'Hook seconds' }).locator('.field-error').textContent()).resolves.toMatch(/10/);
    expect(page.url()).toMatch(/\/jobs\/new$/);
  });

  it('the job page lists the cuts; keeping one and rendering again sends the keep-ranges with it put back, and the words', { timeout: 180_000 }, async () => {
    const created = await api('POST', '/v1/automation-jobs', {
      videoUrl: 'https://v.example.com/cut.mp4',
      templateId: 'karaoke',
      edit: { silences: 'fast', fillers: 'safe', zoom: 'emphasis' },
      hookTitle: { text: 'Sleep better', seconds: 2 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    await succeed(await lease(created.body.id), WORDS, PLAN);

    await page.goto(`/jobs/${created.body.id}`);
    const summary = page.getByTestId('edit-summary');
    await expect(summary.textContent()).resolves.toMatch(/Output 2\.60 s of a 6\.00 s source: 4 cuts, 1 zoom, 0 bleeps, hook title "Sleep better" for 2 s\./);
    const rows = page.getByTestId('cut');
    await expect(rows.count()).resolves.toBe(4);
    const filler = rows.filter({ hasText: 'Filler' });
    await expect(filler.textContent()).resolves.toBe('0:00.900.40 sFillerum');
    await fitsPhone();

    await page.getByLabel('Keep the cut at 0:00.90').check();
    await expect(page.getByTestId('edit-changed').textContent()).resolves.toBe('1 cut kept: the output would last 3.00 s.');
    await page.getByRole('button', { name: 'Render again with these cuts' }).click();
    await page.waitForURL(/\/jobs\/new$/);
    await expect(page.getByTestId('render-again').textContent()).resolves.toMatch(/with its 6 words and its cut list \(2 ranges kept\)/);
    // The form carries the job's edit, the pace off (the keep-ranges are the cut).
    await expect(page.getByLabel('Cut silences').isDisabled()).resolves.toBe(true);
    await expect(page.getByLabel(/Punch-in zoom/).isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Hook title').inputValue()).resolves.toBe('Sleep better');
    await expect(page.getByTestId('preview-output').textContent()).resolves.toBe('3.00 s');

    const again = await createFromUrl('https://v.example.com/cut.mp4');
    const leased = await lease(again);
    expect(leased.edit).toEqual({
      silences: 'off',
      fillers: 'off',
      zoom: 'emphasis',
      keep: [
        { start: 0.2, end: 2.0 },
        { start: 2.8, end: 4.0 },
      ],
    });
    // The kept cut's span, 0.9..1.3, lies inside a keep-range now.
    expect(leased.edit?.keep?.some((r) => r.start <= 0.9 && r.end >= 1.3)).toBe(true);
    expect(leased.transcript).toEqual({ language: 'en', words: WORDS });
    expect(leased.hookTitle).toMatchObject({ text: 'Sleep better', seconds: 2 });
    expect((await api('POST', `/v1/automation-jobs/${again}/cancel`)).status).toBe(200);
  });

  it('a job that was not edited renders again with its words, and the form previews the cuts a pace makes of them', { timeout: 180_000 }, async () => {
    const created = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/raw.mp4', templateId: 'karaoke' });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    await succeed(await lease(created.body.id), WORDS);
    await page.goto(`/jobs/${created.body.id}`);
    await page.getByRole('button', { name: 'Edit and render again' }).click();
    await page.waitForURL(/\/jobs\/new$/);
    const preview = page.getByTestId('cut-preview');
    await expect(preview.textContent()).resolves.toMatch(/nothing is cut/);
    await page.getByLabel('Cut silences').selectOption('fast');
    await page.getByLabel('Cut fillers').selectOption('safe');
    const items = preview.locator('li');
    // The pause between "today" and "we" (1.1 s) is over fast's 0.4 s, and "um" is a filler.
    await expect(items.filter({ hasText: 'Filler' }).textContent()).resolves.toMatch(/Filler.*um/);
    await expect(items.filter({ hasText: 'Silence' }).count()).resolves.toBeGreaterThan(0);
    const output = Number((await page.getByTestId('preview-output').textContent())?.replace(' s', ''));
    expect(output).toBeLessThan(6 - 1.1 + 0.4);
    await fitsPhone();
  });

  it('the profanity words page saves the list, shows a refused word at its line, and keeps the saved list', { timeout: 120_000 }, async () => {
    await page.goto('/overview');
    await page.getByRole('link', { name: 'Profanity words' }).click();
    const words = page.getByLabel('Words');
    await expect(words.inputValue()).resolves.toBe('');
    await words.fill('darn\n\n  heck\nfrick on a stick\n');
    await page.getByRole('button', { name: 'Save words' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Saved' }).textContent()).resolves.toBe('Saved: 3 words.');
    expect((await api('GET', '/v1/profanity-words')).body).toEqual({ words: ['darn', 'heck', 'frick on a stick'] });

    await page.reload();
    await expect(page.getByLabel('Words').inputValue()).resolves.toBe('darn\nheck\nfrick on a stick');
    await page.getByLabel('Words').fill('darn\n\n!!!');
    await page.getByRole('button', { name: 'Save words' }).click();
    await expect(page.locator('.field', { hasText: 'Words' }).locator('.field-error').textContent()).resolves.toMatch(/^Line 3: /);
    expect((await api('GET', '/v1/profanity-words')).body).toEqual({ words: ['darn', 'heck', 'frick on a stick'] });
  });
});
