import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFarm, type Farm } from '../../../agent/test/e2e-harness.ts';
import type { Api } from '../../control-plane/test/harness.ts';
import { launchBrowser, signedInMember } from './browser.ts';
import { ensureDashboardBuilt } from './build.ts';

// Issue 39 item 5 in the dashboard, in Debian's chromium: the new-job form's vocabulary (one term
// a line) and replacements (`from => to` a line) reach the API as lists, and the API's refusals
// are shown at the line they come from. No agent: the jobs stay queued; what is checked is what
// the page sends (read back with GET .../style).

let farm: Farm;
let browser: Browser;
let page: Page;
let api: Api;

beforeAll(async () => {
  await ensureDashboardBuilt();
  farm = await startFarm();
  browser = await launchBrowser();
  ({ page, api } = await signedInMember(farm, browser, { account: 'Words Co', email: 'words@words.example' }));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await farm?.close();
});

async function newJobFromUrl(url: string) {
  await page.goto('/jobs/new');
  await page.locator('label', { hasText: 'From a URL' }).click();
  await page.getByLabel('Video URL').fill(url);
}

describe('the words the speaker meant, in the new-job form', () => {
  it('sends the vocabulary and the replacements as the lists the API takes', { timeout: 120_000 }, async () => {
    await newJobFromUrl('https://v.example.com/words.mp4');
    await page.getByLabel('Vocabulary').fill('Captionfarm\n\n  Kubernetes  \n');
    await page.getByLabel('Replacements').fill('caption farm => Captionfarm\num =>\nk8s=>Kubernetes');
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.waitForURL(/\/jobs\/[0-9a-f-]{36}$/);
    const style = await api('GET', `/v1/automation-jobs/${page.url().split('/').pop()}/style`);
    expect(style.body).toMatchObject({
      vocabulary: ['Captionfarm', 'Kubernetes'],
      replacements: [
        { from: 'caption farm', to: 'Captionfarm' },
        { from: 'um', to: '' },
        { from: 'k8s', to: 'Kubernetes' },
      ],
    });
  });

  it('shows a refusal at the line it comes from, and a line without => before sending', { timeout: 120_000 }, async () => {
    await newJobFromUrl('https://v.example.com/refused.mp4');
    await page.getByLabel('Vocabulary').fill(`Captionfarm\n\n${'x'.repeat(51)}`);
    await page.getByLabel('Replacements').fill('um =>\nUM => uh');
    await page.getByRole('button', { name: 'Create job' }).click();
    await expect(page.locator('.field', { hasText: 'Vocabulary' }).locator('.field-error').textContent()).resolves.toBe(
      'Line 3: a term is at most 50 characters',
    );
    // The duplicate is checked once every item is valid: fix the term and send again.
    await page.getByLabel('Vocabulary').fill('Captionfarm');
    await page.getByRole('button', { name: 'Create job' }).click();
    await expect(page.locator('.field', { hasText: 'Replacements' }).locator('.field-error').textContent()).resolves.toBe(
      'Line 2: the same words as replacements[0].from (compared case-insensitively)',
    );
    await page.getByLabel('Replacements').fill('caption farm Captionfarm');
    await page.getByRole('button', { name: 'Create job' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Line 1: write "from => to"/);
    expect(page.url()).toMatch(/\/jobs\/new$/);
    expect((await api('GET', '/v1/automation-jobs')).body.jobs).toHaveLength(1);
  });

  it('the template editor saves an account default vocabulary and replacements that a job uses', { timeout: 180_000 }, async () => {
    await page.goto('/templates/new?from=karaoke');
    await page.getByTestId('live-preview').waitFor();
    await page.getByLabel('Vocabulary').fill('Captionfarm\nZorblax');
    await page.getByLabel('Replacements').fill('caption farm => Captionfarm');
    await page.getByLabel('Name', { exact: true }).fill('Brand words');
    await page.getByLabel('Id', { exact: true }).fill('brand-words');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByRole('heading', { name: 'Templates', exact: true }).waitFor();
    const saved = await api('GET', '/v1/templates/brand-words');
    expect(saved.body.template).toMatchObject({ vocabulary: ['Captionfarm', 'Zorblax'], replacements: [{ from: 'caption farm', to: 'Captionfarm' }] });
    // A job made with the template takes them as its own.
    const job = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/t.mp4', templateId: 'brand-words' });
    expect(job.status).toBe(202);
    expect((await api('GET', `/v1/automation-jobs/${job.body.id}/style`)).body).toMatchObject({
      vocabulary: ['Captionfarm', 'Zorblax'],
      replacements: [{ from: 'caption farm', to: 'Captionfarm' }],
    });
    // Opened again, the editor shows them as typed.
    await page.goto('/templates/brand-words/edit');
    await expect(page.getByLabel('Vocabulary').inputValue()).resolves.toBe('Captionfarm\nZorblax');
    await expect(page.getByLabel('Replacements').inputValue()).resolves.toBe('caption farm => Captionfarm');
  });
});
