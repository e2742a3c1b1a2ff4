import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHarness, type Harness } from '../../../apps/control-plane/test/harness.ts';
import { CaptionfarmApiError, CaptionfarmNetworkError, DEFAULT_POLL_POLICY, createClient, nextPollDelay, type Job, type PollPolicy } from '../src/index.ts';
import { pollUntilTerminal } from '../src/wait.ts';
import { jobRecord } from './job-record.ts';

describe('nextPollDelay (pure)', () => {
  const P: PollPolicy = { initialDelayMs: 1000, maxDelayMs: 10_000, multiplier: 1.5, jitter: 0.2 };
  it.each([
    // unchangedPolls, random, retryAfterMs, expected
    [0, 0, undefined, 1000], // just changed: the initial delay, no jitter drawn
    [0, 0.5, undefined, 900], // jitter removes up to 20%
    [0, 0.999, undefined, 800],
    [1, 0, undefined, 1500],
    [2, 0, undefined, 2250],
    [3, 0, undefined, 3375],
    [5, 0, undefined, 7594],
    [6, 0, undefined, 10_000], // capped
    [50, 0, undefined, 10_000],
    [5000, 0.5, undefined, 9000], // no overflow to Infinity/NaN
    [6, 0.999, undefined, 8002],
    [0, 0, 30_000, 30_000], // Retry-After is a floor
    [6, 0.5, 2_000, 9000], // ...that does not shorten a longer delay
    [-3, 0, undefined, 1000], // nonsense input is clamped
    [0, 7, undefined, 800],
  ])('unchanged=%s random=%s retryAfter=%s -> %s ms', (unchangedPolls, random, retryAfterMs, expected) => {
    expect(nextPollDelay({ unchangedPolls, random, retryAfterMs, policy: P })).toBe(expected);
  });

  it('defaults to DEFAULT_POLL_POLICY, and jitter spreads clients over [80%, 100%] of the delay', () => {
    expect(nextPollDelay({ unchangedPolls: 0, random: 0 })).toBe(DEFAULT_POLL_POLICY.initialDelayMs);
    const delays = Array.from({ length: 200 }, () => nextPollDelay({ unchangedPolls: 10, random: Math.random() }));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(8000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(10_000);
    expect(new Set(delays).size).toBeGreaterThan(50);
  });
});

/**
 * Runs pollUntilTerminal over a script of answers on fake timers and records the gaps between
 * polls: exact virtual milliseconds, so the backoff is checked to the millisecond without a race
 * against a loaded machine.
 */
async function script(answers: (Job | Error)[], opts: { maxConsecutiveErrors?: number } = {}) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const policy = { initialDelayMs: 50, multiplier: 2, maxDelayMs: 400, jitter: 0 };
  const times: number[] = [];
  const updates: Job[] = [];
  let i = 0;
  const result = pollUntilTerminal(
    async () => {
      times.push(Date.now());
      const a = answers[Math.min(i++, answers.length - 1)]!;
      if (a instanceof Error) throw a;
      return a;
    },
    { poll: policy, onUpdate: (j) => updates.push(j), ...opts },
  );
  result.catch(() => undefined); // observed by the test; not an unhandled rejection meanwhile
  await vi.runAllTimersAsync();
  return { result, times, updates, gaps: () => times.slice(1).map((t, k) => t - times[k]!) };
}

describe('pollUntilTerminal (scripted answers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('backs off while nothing changes, resets on progress, returns the terminal record', async () => {
    const queued = jobRecord({});
    const r = (percent: number) => jobRecord({ status: 'running', phase: 'rendering', percent });
    const s = await script([queued, queued, queued, queued, r(10), r(10), r(20), jobRecord({ status: 'succeeded', phase: 'succeeded' })]);
    expect((await s.result).status).toBe('succeeded');
    expect(s.updates.map((u) => u.percent ?? u.phase)).toEqual(['queued', 'queued', 'queued', 'queued', 10, 10, 20, 'succeeded']);
    const g = s.gaps();
    // 50, 100, 200, 400 (unchanged x3, capped), then 50 after a change, 100, 50 after a change.
    const expected = [50, 100, 200, 400, 50, 100, 50];
    expect(g).toEqual(expected);
  });

  it('rides out transient errors (network, 5xx, 429 with Retry-After) and throws others at once', async () => {
    const net = new CaptionfarmNetworkError('network_error', 'ECONNRESET');
    const busy = new CaptionfarmApiError({ status: 429, code: 'rate_limited', message: 'slow down', retryAfterSeconds: 0 });
    const s500 = new CaptionfarmApiError({ status: 500, code: 'internal', message: 'oops' });
    const ok = await script([net, busy, s500, jobRecord({ status: 'cancelled', phase: 'cancelled' })]);
    expect((await ok.result).status).toBe('cancelled');

    const gone = new CaptionfarmApiError({ status: 404, code: 'not_found', message: 'no job' });
    const notFound = await script([jobRecord({}), gone]);
    await expect(notFound.result).rejects.toBe(gone);
    expect(notFound.times).toHaveLength(2);

    const flaky = await script([net, net, net], { maxConsecutiveErrors: 3 });
    await expect(flaky.result).rejects.toBe(net);
    expect(flaky.times).toHaveLength(3);
  });
});

describe('waitForJob against the real control plane', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('is aborted by its signal while the job stays queued (the job is not cancelled)', async () => {
    const { key } = await h.account('pro');
    const client = createClient({ baseUrl: h.url, apiKey: key });
    const created = await client.createJob({ videoUrl: 'https://cdn.example.com/a.mp4', templateId: 'karaoke' });
    const ac = new AbortController();
    const polled: Job[] = [];
    const reason = new Error('stop waiting');
    // The second poll comes 100 ms after the first; the third would come 15 minutes later, so the
    // wait can only end in time if the abort cuts that sleep short (the test would time out).
    const onUpdate = (j: Job) => {
      polled.push(j);
      if (polled.length === 2) setImmediate(() => ac.abort(reason));
    };
    const poll = { initialDelayMs: 100, multiplier: 10_000, maxDelayMs: 15 * 60_000, jitter: 0 };
    await expect(client.waitForJob(created.id, { signal: ac.signal, onUpdate, poll })).rejects.toBe(reason);
    expect(polled.length).toBe(2);
    expect(polled.every((j) => j.status === 'queued')).toBe(true);
    expect((await client.getJob(created.id)).status).toBe('queued');
    await expect(client.waitForJob(created.id, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('returns the terminal record when the job is cancelled meanwhile', async () => {
    const { key } = await h.account('pro');
    const client = createClient({ baseUrl: h.url, apiKey: key });
    const created = await client.createJob({ videoUrl: 'https://cdn.example.com/b.mp4', templateId: 'karaoke' });
    setTimeout(() => void client.cancelJob(created.id), 300);
    const done = await client.waitForJob(created.id, { poll: { initialDelayMs: 100, maxDelayMs: 200 } });
    expect(done).toMatchObject({ id: created.id, status: 'cancelled', phase: 'cancelled' });
  });

  it('throws a non-transient error (401) at once', async () => {
    const client = createClient({ baseUrl: h.url, apiKey: 'cf_live_revoked' });
    await expect(client.waitForJob(crypto.randomUUID())).rejects.toMatchObject({ code: 'unauthenticated', status: 401 });
  });
});
