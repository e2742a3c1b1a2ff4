import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentClient, startHarness, until, TEST_AGENT_CAPABILITIES, type Harness } from '../../control-plane/test/harness.ts';
import { launchBrowser } from './browser.ts';
import { ensureDashboardBuilt } from './build.ts';

// Issue 40 item 4 in the operator console, in Debian's chromium: an administrator revokes an agent
// token on the Nodes page; the agent using it (played over the real websocket protocol) is
// disconnected and its job goes back to the queue.

let h: Harness;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await ensureDashboardBuilt();
  h = await startHarness({}, { agentTimings: { leaseMs: 60_000, disconnectGraceMs: 60_000 } });
  browser = await launchBrowser();
  const link = (await h.admin('POST', '/users/invites', { email: 'ops@tokens.example', accountId: null, admin: true })).body.link as string;
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: h.url })).newPage();
  page.on('dialog', (d) => void d.accept());
  await page.goto(link);
  await page.getByLabel('New password').fill('operator password 1');
  await page.getByLabel('Repeat the password').fill('operator password 1');
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Nodes' }).waitFor();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('agent tokens in the operator console', () => {
  it('revoking a token on the Nodes page disconnects its agent and queues its job again', { timeout: 120_000 }, async () => {
    const { api } = await h.account('pro', 'console-co');
    const template = (await api('GET', '/v1/templates')).body.templates[0].id as string;
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/console.mp4', templateId: template })).body as { id: string };
    const made = (await h.admin('POST', '/agents/tokens', { name: 'rack-console' })).body as { id: string; token: string };
    const closes: (number | undefined)[] = [];
    const ws = agentClient(h.url, made.token, { onClose: (code) => closes.push(code) });
    try {
      const { agent } = ws;
      const { nodeId } = await agent.register.mutate({ nodeName: 'gpu-console', capabilities: TEST_AGENT_CAPABILITIES });
      expect((await agent.lease.mutate({ nodeId, slots: 1, requestId: randomUUID() })).map((l) => l.jobId)).toEqual([job.id]);

      await page.reload();
      const row = page.locator(`tr[data-token-prefix="${made.token.slice(0, 13)}"]`);
      await row.getByText('gpu-console').waitFor();
      expect(await page.content()).not.toContain(made.token);
      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByTestId('token-revoked').waitFor();
      expect(await row.getByRole('button', { name: 'Revoke' }).count()).toBe(0);

      await until(async () => closes.length > 0, 5_000, "the agent's socket to close");
      expect((await api('GET', `/v1/automation-jobs/${job.id}`)).body).toMatchObject({ status: 'queued' });
      const listed = (await h.admin('GET', '/agents/tokens')).body.tokens.find((t: { id: string }) => t.id === made.id);
      expect(listed.revokedAt).toEqual(expect.any(String));
      await page.locator('tr[data-node="gpu-console"]').getByTestId('node-state').getByText('offline').waitFor();
    } finally {
      ws.close();
    }
  });
});
