import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFarm, type Farm } from '../../../agent/test/e2e-harness.ts';
import type { Api } from '../../control-plane/test/harness.ts';
import { BRAND_OTF, BRAND_OTF_FAMILY } from '../../../packages/renderer/test/helpers/fonts.ts';
import { launchBrowser, signedInMember } from './browser.ts';
import { ensureDashboardBuilt } from './build.ts';

// Issue 16 in the dashboard, in Debian's chromium: the new-job form and the template editor set an
// uploaded font, emoji, keywords and the overlay output, and the API sees exactly that. No agent:
// the jobs stay queued, what is checked is what the pages send.

let farm: Farm;
let browser: Browser;
let page: Page;
let api: Api;

beforeAll(async () => {
  await ensureDashboardBuilt();
  farm = await startFarm();
  browser = await launchBrowser();
  ({ page, api } = await signedInMember(farm, browser, { account: 'Brand Co', email: 'brand@brand.example' }));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await farm?.close();
});

/** Polls until the element's value is non-empty (a select that picks what was just uploaded). */
async function valueWhenSet(selector: string, timeoutMs = 60_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await page.locator(selector).inputValue();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${selector} still empty`);
    await page.waitForTimeout(100);
  }
}

describe('brand options in the dashboard', () => {
  let fontId: string;

  it('new job: uploads a font (checked), picks it, sets emoji, keywords and a mov overlay; the job carries exactly that', { timeout: 240_000 }, async () => {
    await page.goto('/jobs/new');
    await page.locator('label', { hasText: 'From a URL' }).click();
    await page.getByLabel('Video URL').fill('https://v.example.com/launch.mp4');

    // A file that is not a font: refused with the service's reason, nothing selected.
    await page.getByTestId('font-file').setInputFiles({ name: 'broken.ttf', mimeType: 'font/ttf', buffer: Buffer.alloc(3000, 7) });
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/The font was refused: not a font file/);
    expect(await page.locator('.font-picker select').inputValue()).toBe('');

    await page.getByTestId('font-file').setInputFiles(BRAND_OTF);
    fontId = await valueWhenSet('.font-picker select');
    await expect(page.locator('.font-picker select option:checked').textContent()).resolves.toBe(BRAND_OTF_FAMILY);
    await page.getByLabel('Keywords').fill('launch, free trial');
    await page.getByRole('checkbox', { name: /Emoji/ }).check();
    await page.getByRole('checkbox', { name: /Transparent overlay/ }).check();
    // An overlay has alpha: the format moves from mp4 to mov, and mp4 cannot be picked.
    expect(await page.getByLabel('Rendition 1 format').inputValue()).toBe('mov');
    expect(await page.locator('option[value="mp4"]').isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    const jobId = page.url().split('/').pop()!;

    const job = await api('GET', `/v1/automation-jobs/${jobId}`);
    expect(job.body).toMatchObject({ format: 'mov', templateId: 'karaoke', status: 'queued' });
    const style = await api('GET', `/v1/automation-jobs/${jobId}/style`);
    expect(style.body).toMatchObject({ overlay: true, override: { font: { fontId }, emoji: 'auto', keywords: ['launch', 'free trial'] } });
    expect(style.body.style).toMatchObject({ font: { fontId }, emoji: 'auto', keywords: ['launch', 'free trial'] });
    expect((await api('GET', '/v1/fonts')).body.fonts.map((f: { id: string }) => f.id)).toEqual([fontId]);
  });

  it('new job: without the overlay, mov cannot be picked and no style is sent', { timeout: 120_000 }, async () => {
    await page.goto('/jobs/new');
    await page.locator('label', { hasText: 'From a URL' }).click();
    await page.getByLabel('Video URL').fill('https://v.example.com/plain.mp4');
    expect(await page.locator('option[value="mov"]').isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    const style = await api('GET', `/v1/automation-jobs/${page.url().split('/').pop()}/style`);
    expect(style.body).toMatchObject({ overlay: false, override: null });
  });

  it('template editor: the uploaded font changes the live preview; emoji and keywords are saved with the template', { timeout: 180_000 }, async () => {
    await page.goto('/templates/new?from=karaoke');
    const preview = page.getByTestId('live-preview');
    await preview.waitFor();
    const before = await preview.getAttribute('src');
    await page.getByLabel('Uploaded font').selectOption(fontId);
    const end = Date.now() + 60_000;
    while ((await preview.getAttribute('src')) === before) {
      if (Date.now() > end) throw new Error('the preview did not change with the font');
      await page.waitForTimeout(100);
    }
    await expect(page.getByText('The last change is not valid').count()).resolves.toBe(0);
    await page.getByLabel('Keywords').fill('launch, Brand');
    await page.getByRole('checkbox', { name: /Emoji/ }).check();
    await page.getByLabel('Name', { exact: true }).fill('Brand look');
    await page.getByLabel('Id', { exact: true }).fill('brand-look');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('heading', { name: 'Templates', exact: true }).waitFor();
    const saved = await api('GET', '/v1/templates/brand-look');
    expect(saved.status).toBe(200);
    expect(saved.body.template).toMatchObject({ name: 'Brand look', font: { fontId }, emoji: 'auto', keywords: ['launch', 'Brand'] });
  });
});
