import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../../../apps/control-plane/test/harness.ts';
import { createClient } from '../src/index.ts';

let h: Harness;
let shift = 0;
beforeAll(async () => {
  h = await startHarness({}, { now: () => new Date(Date.now() + shift) });
});

/** Shifts the control plane's clock so that its one-minute rate-limit window ends `ms` from now. */
function windowEndsIn(ms: number): void {
  const t = Date.now() + shift;
  const windowEnd = Math.floor(t / 60_000) * 60_000 + 60_000;
  shift += windowEnd - (t + ms);
}
afterAll(() => h.close());

describe('automatic retry after 429 rate_limited', () => {
  it('waits out Retry-After and succeeds in the next window', async () => {
    const { key } = await h.account('free');
    const client = createClient({ baseUrl: h.url, apiKey: key, maxRetries: 1 });
    windowEndsIn(3_000);
    // Use up the window's 60 requests.
    for (let i = 0; i < 60; i++) await client.listJobsPage();
    const t = Date.now();
    const page = await client.listJobsPage();
    expect(page.jobs).toEqual([]);
    const waited = Date.now() - t;
    expect(waited).toBeGreaterThanOrEqual(500);
    expect(waited).toBeLessThan(5_000);
  });

  it('does not wait longer than maxRetryDelayMs: the error is thrown at once', async () => {
    const { key } = await h.account('free');
    const client = createClient({ baseUrl: h.url, apiKey: key, maxRetries: 3, maxRetryDelayMs: 100 });
    windowEndsIn(50_000);
    for (let i = 0; i < 60; i++) await client.listJobsPage();
    const t = Date.now();
    await expect(client.listJobsPage()).rejects.toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Date.now() - t).toBeLessThan(500);
  });
});
