import { describe, expect, it } from 'vitest';
import { planCaptionFrames } from '../src/plan-caption-frames.ts';

describe('planCaptionFrames', () => {
  it('emits one frame at 0 and one per change, at the exact change time', () => {
    const keyAt = (t: number) => (t < 0.4 ? 'a' : t < 1 ? 'b' : 'c');
    expect(planCaptionFrames({ keyAt, durationSeconds: 2, fps: 25 })).toEqual([
      { start: 0, paintAt: 0, key: 'a' },
      { start: 0.4, paintAt: 0.4, key: 'b' },
      { start: 1, paintAt: 1, key: 'c' },
    ]);
  });

  it('finds changes between frame times and paints them at the next frame', () => {
    const keyAt = (t: number) => (t < 0.123456 ? 'a' : 'b');
    const [, second] = planCaptionFrames({ keyAt, durationSeconds: 1, fps: 10 });
    expect(second!.key).toBe('b');
    expect(second!.paintAt).toBeCloseTo(0.2, 12);
    // Never after the change (a frame at the change would miss it), and no more than 1 ns before.
    expect(keyAt(second!.start)).toBe('b');
    expect(0.123456 - second!.start).toBeLessThan(1e-9);
  });

  it('sends nothing more when the key never changes', () => {
    expect(planCaptionFrames({ keyAt: () => 'same', durationSeconds: 30, fps: 30 })).toHaveLength(1);
  });

  it('samples up to the duration, including a change in the last partial frame', () => {
    const frames = planCaptionFrames({ keyAt: (t) => (t < 1.01 ? 'a' : 'b'), durationSeconds: 1.02, fps: 10 });
    expect(frames.map((f) => f.key)).toEqual(['a', 'b']);
    expect(frames[1]!.paintAt).toBe(1.02);
  });

  it('sees at most one change per frame interval: a video cannot show more', () => {
    const keyAt = (t: number) => String(Math.floor(t * 1000)); // a new key every ms
    const frames = planCaptionFrames({ keyAt, durationSeconds: 1, fps: 30 });
    expect(frames).toHaveLength(31);
    for (const f of frames) expect(keyAt(f.paintAt)).toBe(f.key);
  });

  it('samples at most 120 times a second, whatever rate a file claims', () => {
    let calls = 0;
    planCaptionFrames({
      keyAt: () => {
        calls++;
        return 'x';
      },
      durationSeconds: 10,
      fps: 90_000,
    });
    expect(calls).toBeLessThanOrEqual(1202);
  });

  it('falls back to 30 fps when the rate is unknown', () => {
    expect(planCaptionFrames({ keyAt: (t) => String(Math.floor(t * 100)), durationSeconds: 1, fps: 0 })).toHaveLength(31);
  });
});
