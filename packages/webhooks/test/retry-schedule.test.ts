import { describe, expect, it } from 'vitest';
import { classifyResponse, MAX_ATTEMPTS, nextAttemptAt, RETRY_OFFSETS_MS, retryJitterBoundMs } from '../src/retry-schedule.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const first = Date.UTC(2025, 0, 1);

describe('nextAttemptAt', () => {
  it('follows 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h from the first attempt', () => {
    expect(RETRY_OFFSETS_MS).toEqual([0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 24 * H]);
    expect(MAX_ATTEMPTS).toBe(8);
    const times: number[] = [first];
    for (let n = 1; n < MAX_ATTEMPTS; n += 1) {
      const now = times[n - 1]! + 200; // the failed attempt took 200 ms
      const next = nextAttemptAt({ firstAttemptAt: first, attemptNumber: n, now, random: () => 0 });
      expect(next).not.toBeNull();
      times.push(next!);
    }
    expect(times.map((t) => t - first)).toEqual(RETRY_OFFSETS_MS);
    expect(nextAttemptAt({ firstAttemptAt: first, attemptNumber: 8, now: first + 24 * H, random: () => 0 })).toBeNull();
    expect(nextAttemptAt({ firstAttemptAt: first, attemptNumber: 9, now: first + 24 * H })).toBeNull();
  });

  it('jitter only moves attempts earlier, by at most min(10% of the gap, 5 min)', () => {
    expect([2, 3, 4, 5, 6, 7, 8].map(retryJitterBoundMs)).toEqual([500, 29_500, 150_000, 300_000, 300_000, 300_000, 300_000]);
    for (let n = 1; n < MAX_ATTEMPTS; n += 1) {
      const nominal = first + RETRY_OFFSETS_MS[n]!;
      const earliest = nominal - retryJitterBoundMs(n + 1);
      const at = (r: number): number => nextAttemptAt({ firstAttemptAt: first, attemptNumber: n, now: first, random: () => r })!;
      expect(at(0)).toBe(nominal);
      expect(at(0.999999)).toBeGreaterThanOrEqual(earliest);
      expect(at(0.999999)).toBeLessThan(earliest + 2);
      for (let i = 0; i < 200; i += 1) {
        const t = at(Math.random());
        expect(t).toBeGreaterThanOrEqual(earliest);
        expect(t).toBeLessThanOrEqual(nominal);
        // Order is kept: never before the previous slot.
        expect(t).toBeGreaterThan(first + RETRY_OFFSETS_MS[n - 1]!);
      }
    }
    // Out-of-range random values are clamped.
    expect(nextAttemptAt({ firstAttemptAt: first, attemptNumber: 1, now: first, random: () => 7 })).toBe(first + 4500);
    expect(nextAttemptAt({ firstAttemptAt: first, attemptNumber: 1, now: first, random: () => -1 })).toBe(first + 5000);
  });

  it('never returns a time before now: overdue attempts run at once, none skipped', () => {
    // Attempt 1 timed out after 10 s: the 5 s slot is overdue.
    expect(nextAttemptAt({ firstAttemptAt: first, attemptNumber: 1, now: first + 10 * S, random: () => 0 })).toBe(first + 10 * S);
    // Dispatcher down for 6 h after attempt 3: attempt 4 (30 min) runs at once, then 5 (2 h) ...
    const back = first + 6 * H;
    expect(nextAttemptAt({ firstAttemptAt: first, attemptNumber: 3, now: back, random: () => 0 })).toBe(back);
    expect(nextAttemptAt({ firstAttemptAt: first, attemptNumber: 4, now: back + S, random: () => 0 })).toBe(back + S);
    expect(nextAttemptAt({ firstAttemptAt: first, attemptNumber: 6, now: back + 3 * S, random: () => 0 })).toBe(first + 10 * H);
  });

  it('rejects a nonsense attempt number', () => {
    expect(() => nextAttemptAt({ firstAttemptAt: first, attemptNumber: 0, now: first })).toThrow(RangeError);
    expect(() => nextAttemptAt({ firstAttemptAt: first, attemptNumber: 1.5, now: first })).toThrow(RangeError);
  });
});

describe('classifyResponse', () => {
  it.each([
    [200, 'success'],
    [201, 'success'],
    [202, 'success'],
    [204, 'success'],
    [299, 'success'],
    [410, 'gone'],
    [100, 'retry'],
    [199, 'retry'],
    [300, 'retry'],
    [301, 'retry'],
    [302, 'retry'],
    [303, 'retry'],
    [304, 'retry'],
    [307, 'retry'],
    [308, 'retry'],
    [400, 'retry'],
    [401, 'retry'],
    [404, 'retry'],
    [409, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
  ] as const)('%i -> %s', (status, expected) => {
    expect(classifyResponse(status)).toBe(expected);
  });
});
