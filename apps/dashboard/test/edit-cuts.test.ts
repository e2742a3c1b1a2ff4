import { KeepRangesSchema } from '@captionfarm/contracts';
import { describe, expect, it } from 'vitest';
import { clock, keepWithRestored, keptSeconds } from '../src/edit-cuts.ts';

// The job page's "Keep this": the keep-ranges with the chosen cuts put back must be what the API
// takes as edit.keep (ascending, not overlapping), and last as long as the page says.

const KEEP = [
  { start: 0, end: 1.2 },
  { start: 2.0, end: 3.0 },
  { start: 3.4, end: 5.5 },
];
const CUTS = [
  { start: 1.2, end: 2.0 },
  { start: 3.0, end: 3.4 },
  { start: 5.5, end: 6.0 },
];

describe('keepWithRestored', () => {
  it.each([
    ['no cut kept: the plan as it was', [], KEEP],
    [
      'the middle cut kept: its two neighbours become one range',
      [CUTS[1]!],
      [
        { start: 0, end: 1.2 },
        { start: 2.0, end: 5.5 },
      ],
    ],
    ['every cut kept: the whole source', CUTS, [{ start: 0, end: 6.0 }]],
    [
      'the tail kept: the last range reaches the end',
      [CUTS[2]!],
      [
        { start: 0, end: 1.2 },
        { start: 2.0, end: 3.0 },
        { start: 3.4, end: 6.0 },
      ],
    ],
  ])('%s', (_name, restored, want) => {
    const got = keepWithRestored(KEEP, restored);
    expect(got).toEqual(want);
    expect(KeepRangesSchema.safeParse(got).success).toBe(true);
  });

  it('merges ranges that touch within float noise of frame-aligned times, and leaves the input alone', () => {
    const keep = [
      { start: 0, end: 0.1 + 0.2 },
      { start: 1, end: 2 },
    ];
    const got = keepWithRestored(keep, [{ start: 0.3, end: 1 }]);
    expect(got).toEqual([{ start: 0, end: 2 }]);
    expect(keep[0]).toEqual({ start: 0, end: 0.1 + 0.2 });
  });

  it('sums the kept length: the output the page announces', () => {
    expect(keptSeconds(KEEP)).toBeCloseTo(4.3, 9);
    expect(keptSeconds(keepWithRestored(KEEP, [CUTS[1]!]))).toBeCloseTo(4.7, 9);
  });
});

describe('clock', () => {
  it.each([
    [0, '0:00.00'],
    [3.4, '0:03.40'],
    [59.999, '1:00.00'],
    [727, '12:07.00'],
  ])('%s s is %s', (s, want) => {
    expect(clock(s)).toBe(want);
  });
});
