import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeClip, run, startFarm, submitUpload, type Farm } from '../../../agent/test/e2e-harness.ts';
import { apiFor, type Api } from '../../control-plane/test/harness.ts';
import { startReceiver, type Receiver } from '../../../packages/net/test/helpers/receiver.ts';
import { launchBrowser } from './browser.ts';
import { ensureDashboardBuilt } from './build.ts';

// The dashboard in Debian's chromium (installed by scripts/setup), against a real control plane
// with a real agent (whisper base, ffmpeg). One browser, few pages: two shared cores.
// CAPTIONFARM_SCREENSHOTS=1 writes the README's screenshots into docs/screenshots; otherwise they go
// to the farm's temp dir, so a test run never dirties the checkout.
const SHOTS = process.env.CAPTIONFARM_SCREENSHOTS === '1';
const repoRoot = path.resolve(import.meta.dirname, '../../..');
const cli = path.join(repoRoot, 'apps/cli/src/main.ts');
const tsx = path.join(repoRoot, 'node_modules/.bin/tsx');

let farm: Farm;
let browser: Browser;
let receiver: Receiver;
let shotDir: string;
let clip: Buffer;
/** Console errors, page errors, failed requests and HTTP errors seen on any page, unless expected. */
const problems: string[] = [];

beforeAll(async () => {
  await ensureDashboardBuilt();
  farm = await startFarm({ opts: { signInLimits: { perAccount: 3, perIp: 1000 } } });
  await farm.startAgent({ name: 'agent-1' });
  receiver = await startReceiver(farm.certs, (_req, res) => res.writeHead(200).end('ok'));
  shotDir = SHOTS ? path.join(repoRoot, 'docs/screenshots') : path.join(farm.dir, 'shots');
  await mkdir(shotDir, { recursive: true });
  clip = await readFile(await makeClip(farm.dir, 'talk.mp4', { width: 360, height: 640, seconds: 3, speech: 'Captions make every video easier to follow.' }));
  browser = await launchBrowser();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await farm?.close();
});

/** A browser context at the given width that records every problem except `expected` HTTP errors. */
async function open(o: { width?: number; expected?: RegExp[] } = {}): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await browser.newContext({ viewport: { width: o.width ?? 1280, height: 860 }, baseURL: farm.url });
  const page = await ctx.newPage();
  const expected = o.expected ?? [];
  const isExpected = (url: string, status: number) => expected.some((e) => e.test(`${status} ${new URL(url).pathname}`));
  const expectedConsole = (text: string) => expected.length > 0 && /Failed to load resource: the server responded with a status of (4\d\d)/.test(text);
  page.on('console', (m) => {
    if (m.type() === 'error' && !expectedConsole(m.text())) problems.push(`console error on ${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e.message}`));
  page.on('requestfailed', (r) => {
    // A navigation or the media element cancelling its own range request is not a failure.
    if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !isExpected(r.url(), r.status())) problems.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}`);
  });
  page.on('dialog', (d) => void d.accept());
  return { ctx, page };
}

async function invite(email: string, o: { accountId?: string; admin?: boolean }): Promise<string> {
  const r = await farm.admin('POST', '/admin/v1/users/invites', { email, accountId: o.accountId ?? null, admin: o.admin ?? false });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.link as string;
}

async function acceptInvite(page: Page, link: string, password: string): Promise<void> {
  await page.goto(link);
  await page.getByLabel('New password').fill(password);
  await page.getByLabel('Repeat the password').fill(password);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/**
 * Polls a page expression until it is truthy. Page code is passed as a string (this file is
 * type-checked against Node's types, not the DOM's) and evaluated through the devtools protocol:
 * waitForFunction would compile it with eval inside the page, which the CSP rightly forbids.
 */
async function waitInPage(page: Page, expression: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > end) throw new Error(`still false after ${timeoutMs} ms on ${page.url()}: ${expression}`);
    await page.waitForTimeout(100);
  }
}

/** No horizontal scrolling at this width. */
async function fitsWidth(page: Page): Promise<void> {
  const { scroll, client } = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })')) as {
    scroll: number;
    client: number;
  };
  expect(scroll, `page ${page.url()} scrolls sideways`).toBeLessThanOrEqual(client);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(shotDir, `${name}.png`), scale: 'css' });
}

describe('dashboard in chromium', () => {
  let accountId: string;
  let ownerPage: Page;
  let apiJobId: string;
  let newSecret: string;

  it('invite, set the password, sign in, create a key, rotate the secret; a job made with the key moves to succeeded, plays, and its signed webhook verifies', {
    timeout: 540_000,
  }, async () => {
    accountId = (await farm.admin('POST', '/admin/v1/accounts', { name: 'Acme Studio', plan: 'starter' })).body.id;
    const { page } = await open();
    ownerPage = page;
    await acceptInvite(page, await invite('owner@acme.example', { accountId }), 'owner password 123');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect(page.getByTestId('balance').textContent()).resolves.toBe('300');

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('ci pipeline');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent())!;
    expect(key).toMatch(/^cf_live_/);
    await page.locator('tr', { hasText: 'ci pipeline' }).waitFor();
    // Nothing about the key or the session is kept in the browser's storage.
    expect(await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })')).toBe('{}{}');

    await page.getByRole('link', { name: 'Webhook secret' }).click();
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const oldSecret = (await page.getByTestId('webhook-secret').textContent())!;
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByTestId('previous-secret').waitFor();
    newSecret = (await page.getByTestId('webhook-secret').textContent())!;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    await expect(page.getByTestId('previous-secret').textContent()).resolves.toMatch(/until/);

    // The test is the customer's code: the key from the page, through the public API.
    const api: Api = apiFor(farm.url, key);
    const job = await submitUpload(api, clip, { webhookUrl: `https://127.0.0.1:${receiver.port}/hook` });
    apiJobId = job.id;

    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    const badge = page.locator(`tr[data-job-id="${job.id}"] .badge`);
    const seen: string[] = [];
    const deadline = Date.now() + 420_000;
    for (;;) {
      const text = (await badge.textContent()) ?? '';
      if (seen.at(-1) !== text) seen.push(text);
      if (/Succeeded|Failed|Cancelled/.test(text) || Date.now() > deadline) break;
      await page.waitForTimeout(150);
    }
    expect(seen.at(-1)).toBe('Succeeded');
    // The list updated by itself through the phases (no reload).
    expect(
      seen.some((s) => /Running · (ingesting|transcribing|rendering)/.test(s)),
      seen.join(' -> '),
    ).toBe(true);
    await shot(page, 'jobs-list');

    await page.locator(`tr[data-job-id="${job.id}"] a`).click();
    const video = page.getByTestId('output-video');
    await waitInPage(page, '(() => { const v = document.querySelector("video"); return v !== null && v.readyState >= 2 && v.duration > 0; })()');
    expect(await video.evaluate((v) => (v as unknown as { duration: number }).duration)).toBeGreaterThan(2);
    await expect(page.getByRole('link', { name: /Download MP4/ }).getAttribute('href')).resolves.toMatch(/\/s3\//);
    await expect(page.getByTestId('transcript').textContent()).resolves.toMatch(/00:00:0\d,\d{3} --> 00:00:0\d,\d{3}\n\S+/);
    const vtt = await page.request.get((await page.getByRole('link', { name: 'Transcript (VTT)' }).getAttribute('href'))!);
    expect(vtt.status()).toBe(200);
    expect(await vtt.text()).toMatch(/^WEBVTT/);

    // The webhook, signed with the rotated secret, verifies with the one the page showed.
    const [hook] = await receiver.waitForRequests(1, 30_000);
    const headers = Object.fromEntries(Object.entries(hook!.headers).map(([k, v]) => [k, String(v)]));
    expect(() => new Webhook(newSecret).verify(hook!.body, headers)).not.toThrow();
    await page.locator('.deliveries .badge', { hasText: 'delivered' }).waitFor({ timeout: 15_000 });
    // A frame with captions on it for the README's screenshot.
    await page.evaluate('(() => { const v = document.querySelector("video"); v.currentTime = 1.6; })()');
    await waitInPage(page, '(() => { const v = document.querySelector("video"); return !v.seeking && v.readyState >= 2; })()');
    await shot(page, 'job-page');

    // Revoking the key gives 401 at once.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.locator('tr', { hasText: 'ci pipeline' }).getByRole('button', { name: 'Revoke' }).click();
    await page
      .locator('tr', { hasText: 'ci pipeline' })
      .getByText(/Revoked/)
      .waitFor();
    expect((await api('GET', '/v1/automation-jobs')).status).toBe(401);
  });

  it('a drag-and-drop upload goes to the presigned URL and reaches succeeded', { timeout: 420_000 }, async () => {
    const page = ownerPage;
    const puts: number[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'PUT' && new URL(r.url()).pathname.startsWith('/s3/')) puts.push(r.status());
    });
    await page.getByRole('link', { name: 'New job' }).first().click();
    await page.locator('.tile', { hasText: 'Word Pop' }).click();
    // A real drop event carrying a File, as a drag from the desktop delivers it.
    await page.evaluate(`(() => {
      const bytes = Uint8Array.from(atob(${JSON.stringify(clip.toString('base64'))}), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'dropped.mp4', { type: 'video/mp4' }));
      const zone = document.querySelector('[data-testid="dropzone"]');
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    })()`);
    await page.getByText('dropped.mp4').waitFor();
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    expect(puts).toEqual([200]);
    await page.locator('.badge[data-status="succeeded"]').first().waitFor({ timeout: 360_000 });
    await expect(page.locator('.record').textContent()).resolves.toContain('word-pop');
    await page.setViewportSize({ width: 375, height: 800 });
    await fitsWidth(page);
    await page.goto('/jobs');
    await page.locator('tr[data-job-id]').first().waitFor();
    await fitsWidth(page);
    await page.setViewportSize({ width: 1440, height: 900 });
    await fitsWidth(page);
  });

  it('the template editor previews live and saves a custom template', async () => {
    const page = ownerPage;
    await page.goto('/templates/new?from=karaoke');
    const preview = page.getByTestId('live-preview');
    await preview.waitFor();
    const first = await preview.getAttribute('src');
    await page.getByLabel('Words per line').fill('2');
    await waitInPage(page, `document.querySelector('[data-testid="live-preview"]')?.getAttribute('src') !== ${JSON.stringify(first)}`);
    await page.getByLabel('Name', { exact: true }).fill('Acme look');
    await page.getByLabel('Id', { exact: true }).fill('acme-look');
    await shot(page, 'template-editor');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('heading', { name: 'Templates', exact: true }).waitFor();
    await page.locator('article.tile', { hasText: 'Acme look' }).waitFor();
  });

  it("another account's member sees none of this account's jobs, keys or secret, in the pages and the JSON routes", async () => {
    const otherId = (await farm.admin('POST', '/admin/v1/accounts', { name: 'Other Co', plan: 'free' })).body.id;
    const { page, ctx } = await open({ expected: [/^404 \/app\/api\/v1\/automation-jobs\//] });
    await acceptInvite(page, await invite('eve@other.example', { accountId: otherId }), 'eve password 123');
    await page.goto('/jobs');
    await page.getByText('No jobs yet').waitFor();
    await page.goto(`/jobs/${apiJobId}`);
    await page.getByText(`No job ${apiJobId} in this account`).waitFor();
    const req = ctx.request;
    expect((await req.get(`/app/api/v1/automation-jobs/${apiJobId}`)).status()).toBe(404);
    expect(((await (await req.get('/app/api/jobs')).json()) as { jobs: unknown[] }).jobs).toEqual([]);
    const keys = JSON.stringify(await (await req.get('/app/api/keys')).json());
    const ownerKeys = (await farm.admin('GET', `/admin/v1/accounts/${accountId}/keys`)).body.keys as { prefix: string }[];
    for (const k of ownerKeys) expect(keys).not.toContain(k.prefix);
    const secret = (await (await req.get('/app/api/webhook-secret')).json()) as { secret: string; previous: string | null };
    expect([secret.secret, secret.previous]).not.toContain(newSecret);

    // CSRF: a POST from another origin is refused even with this user's cookie and token.
    const session = (await (await req.get('/app/api/session')).json()) as { csrfToken: string };
    const forged = await req.post('/app/api/keys', { data: { name: 'evil' }, headers: { origin: 'https://evil.example', 'x-csrf-token': session.csrfToken } });
    expect(forged.status()).toBe(403);
    const noToken = await req.post('/app/api/keys', { data: { name: 'evil' }, headers: { origin: farm.url } });
    expect(noToken.status()).toBe(403);
    expect(((await (await req.get('/app/api/keys')).json()) as { keys: unknown[] }).keys).toEqual([]);

    // Every account page at 375 px: no sideways scrolling, the menu behind its button.
    await page.setViewportSize({ width: 375, height: 800 });
    for (const [path, heading] of [
      ['/overview', 'Overview'],
      ['/keys', 'API keys'],
      ['/webhooks', 'Webhook signing secret'],
      ['/jobs/new', 'New job'],
      ['/templates', 'Templates'],
      ['/templates/new', 'New template'],
    ] as const) {
      await page.goto(path);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      await fitsWidth(page);
    }
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByText('No jobs yet').waitFor();
    await ctx.close();
  });

  it('rate-limits sign-in attempts per account', async () => {
    const { page, ctx } = await open({ expected: [/^(401|429) \/app\/api\/sign-in$/] });
    await page.goto('/');
    for (let i = 0; i < 3; i++) {
      await page.getByLabel('Email').fill('owner@acme.example');
      await page.getByLabel('Password').fill(`wrong guess ${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('The email or password is wrong.').waitFor();
    }
    await page.getByLabel('Password').fill('owner password 123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Too many sign-in attempts').waitFor();
    await ctx.close();
  });

  it('an administrator signs in from the keyboard and drains a node; the page and `captionfarm admin nodes list` show it', async () => {
    const { page, ctx } = await open();
    const link = await invite('ops@farm.example', { admin: true });
    await acceptInvite(page, link, 'operator password 1');
    await page.getByRole('button', { name: 'Sign out' }).click();
    // Keyboard only: Tab to each field, Enter submits.
    await page.getByLabel('Email').waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.type('ops@farm.example');
    await page.keyboard.press('Tab');
    await page.keyboard.type('operator password 1');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Nodes' }).waitFor();
    const row = page.locator('tr[data-node="agent-1"]');
    await expect(row.getByTestId('node-state').textContent()).resolves.toBe('online');
    await row.getByRole('button', { name: 'Drain' }).click();
    await row.getByTestId('node-state').getByText('draining').waitFor();
    const listed = await run(tsx, [cli, 'admin', 'nodes', 'list', '--json'], {
      env: { ...process.env, CAPTIONFARM_URL: farm.url, CAPTIONFARM_DATA_DIR: path.join(farm.dir, 'data'), CAPTIONFARM_ADMIN_TOKEN: '' },
    });
    expect((JSON.parse(listed.stdout) as { name: string; state: string }[]).find((n) => n.name === 'agent-1')?.state).toBe('draining');
    await row.getByRole('button', { name: 'Undrain' }).click();
    await row.getByTestId('node-state').getByText('online').waitFor();
    await page.getByRole('link', { name: 'Queue' }).click();
    await page.getByRole('heading', { name: 'Webhook backlog' }).waitFor();
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.locator('tr', { hasText: 'Acme Studio' }).waitFor();
    await page.setViewportSize({ width: 375, height: 800 });
    await fitsWidth(page);
    await ctx.close();
  });

  it('no console errors and no failed requests on any page', () => {
    expect(problems).toEqual([]);
  });
});
