import { describe, expect, it } from 'vitest';
import { exponentialBackoffMs } from '../src/index.ts';

describe('exponentialBackoffMs', () => {
  it('doubles baseMs each attempt from attempt 0', () => {
    expect([0, 1, 2, 3, 4, 5].map((a) => exponentialBackoffMs(a, { baseMs: 250 }))).toEqual([250, 500, 1000, 2000, 4000, 8000]);
    expect([0, 1, 2, 3].map((a) => exponentialBackoffMs(a, { baseMs: 500 }))).toEqual([500, 1000, 2000, 4000]);
  });

  it('never waits longer than maxMs', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 30].map((a) => exponentialBackoffMs(a, { baseMs: 250, maxMs: 5000 }))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
    // An attempt so large that 2^attempt overflows is still the cap.
    expect(exponentialBackoffMs(2000, { baseMs: 250, maxMs: 5000 })).toBe(5000);
    // The cap bounds the jittered delay too.
    expect(exponentialBackoffMs(10, { baseMs: 250, maxMs: 5000, jitter: 0.25, random: () => 0.999 })).toBe(5000);
  });

  it('spreads the delay by +-jitter around the nominal one', () => {
    const at = (r: number) => exponentialBackoffMs(2, { baseMs: 500, jitter: 0.25, random: () => r });
    expect(at(0)).toBe(1500); // 2000 * 0.75
    expect(at(0.5)).toBe(2000);
    expect(at(0.999_999)).toBe(2500); // just under 2000 * 1.25, rounded
    for (let i = 0; i < 1000; i++) {
      const ms = exponentialBackoffMs(3, { baseMs: 500, jitter: 0.25 });
      expect(ms).toBeGreaterThanOrEqual(3000);
      expect(ms).toBeLessThanOrEqual(5000);
    }
  });

  it('is the SDK formula it replaced, to the bit: round(500 * 2^a * (0.75 + r * 0.5))', () => {
    for (const r of [0, 0.1, 0.123456789, 0.5, 0.77, 0.999_999_999]) {
      for (let a = 0; a < 8; a++) {
        expect(exponentialBackoffMs(a, { baseMs: 500, jitter: 0.25, random: () => r })).toBe(Math.round(500 * 2 ** a * (0.75 + r * 0.5)));
      }
    }
  });

  it('has whole-ms delays and no jitter unless asked', () => {
    expect(exponentialBackoffMs(0, { baseMs: 0.4 })).toBe(0);
    expect(exponentialBackoffMs(1, { baseMs: 250, random: () => 0 })).toBe(500);
  });
});
