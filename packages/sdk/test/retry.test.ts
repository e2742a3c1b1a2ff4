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

/** A fetch that records each answer's status, Retry-After and the time it was sent. */
function recordingFetch() {
  const calls: { at: number; status: number; retryAfter: string | null }[] = [];
  const f: typeof fetch = async (input, init) => {
    const at = Date.now();
    const res = await fetch(input, init);
    calls.push({ at, status: res.status, retryAfter: res.headers.get('retry-after') });
    return res;
  };
  return { calls, fetch: f };
}

describe('automatic retry after 429 rate_limited', () => {
  it('waits out Retry-After and succeeds in the next window', async () => {
    const { key } = await h.account('free');
    const rec = recordingFetch();
    const client = createClient({ baseUrl: h.url, apiKey: key, maxRetries: 1, fetch: rec.fetch });
    // Use up the window's 60 requests with time to spare, then move the clock to 2 s before the
    // window ends: the next request is refused and its retry lands in the next window.
    windowEndsIn(50_000);
    for (let i = 0; i < 60; i++) await client.listJobsPage();
    windowEndsIn(2_000);
    const page = await client.listJobsPage();
    expect(page.jobs).toEqual([]);
    // One 429, then exactly one retry, sent no sooner than the Retry-After it was given.
    const [limited, retried] = rec.calls.slice(60);
    expect(rec.calls).toHaveLength(62);
    expect(limited).toMatchObject({ status: 429 });
    expect(retried).toMatchObject({ status: 200 });
    const retryAfterMs = Number(limited!.retryAfter) * 1000;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(retryAfterMs);
  });

  it('does not wait longer than maxRetryDelayMs: the error is thrown at once', async () => {
    const { key } = await h.account('free');
    const rec = recordingFetch();
    const client = createClient({ baseUrl: h.url, apiKey: key, maxRetries: 3, maxRetryDelayMs: 100, fetch: rec.fetch });
    windowEndsIn(50_000);
    for (let i = 0; i < 60; i++) await client.listJobsPage();
    await expect(client.listJobsPage()).rejects.toMatchObject({ code: 'rate_limited', status: 429 });
    // No retry was attempted: the 429's Retry-After (about 50 s) is over maxRetryDelayMs.
    expect(rec.calls).toHaveLength(61);
    expect(Number(rec.calls[60]!.retryAfter)).toBeGreaterThan(1);
  });
});
