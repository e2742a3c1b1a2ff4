import { chromium, type Browser, type Page } from 'playwright-core';
import { apiFor, type Api } from '../../control-plane/test/harness.ts';

/** Debian's chromium (scripts/setup installs it), or CAPTIONFARM_CHROMIUM; headless, no GPU, no network of its own. */
export function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CAPTIONFARM_CHROMIUM ?? '/usr/bin/chromium';
  return chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-gpu'] });
}

/**
 * A member of a new `plan` account signed in to the dashboard of `farm` through an invite (a
 * password set on the invite page): the page, and the account's API as its key sees it.
 */
export async function signedInMember(
  farm: { url: string; admin: (method: string, path: string, body?: unknown) => Promise<{ body: any }> },
  browser: Browser,
  o: { account: string; email: string; plan?: 'free' | 'starter' | 'pro' },
): Promise<{ page: Page; api: Api }> {
  const accountId = (await farm.admin('POST', '/admin/v1/accounts', { name: o.account, plan: o.plan ?? 'pro' })).body.id;
  const api = apiFor(farm.url, (await farm.admin('POST', `/admin/v1/accounts/${accountId}/keys`)).body.key);
  const link = (await farm.admin('POST', '/admin/v1/users/invites', { email: o.email, accountId, admin: false })).body.link as string;
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: farm.url });
  const page = await ctx.newPage();
  await page.goto(link);
  await page.getByLabel('New password').fill(`${o.account} password 123`);
  await page.getByLabel('Repeat the password').fill(`${o.account} password 123`);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  return { page, api };
}
