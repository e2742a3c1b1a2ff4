import type { CropPath } from '@captionfarm/contracts';
import { describe, expect, it } from 'vitest';
import { choosePosterTime } from '../src/plan/index.ts';
import { analysis, face } from './plan-fixtures.ts';

/**
 * 12 s at 4 fps: a large face in the middle of the frame throughout, the picture moving (0.3)
 * except around `still` (0.02: sharp); decoys: a large face near the edge at 3 s that is just as
 * still, a small central face at 10 s with no motion at all.
 */
function scene(o: { still: number; shots?: number[] }) {
  return analysis({
    seconds: 12,
    shots: o.shots ?? [],
    at: (t) => {
      // A sample's motion is its change since the previous one: the frame at `still` is still on both sides.
      const sharp = (t >= o.still && t < o.still + 0.3) || (t >= 3 && t < 3.3);
      if (Math.abs(t - 10) < 0.01) return { faces: [face(960, 540, 60)], motion: 0 };
      return { faces: [Math.abs(t - 3) < 0.3 ? face(150, 540, 320) : face(960, 540, 320)], motion: sharp ? 0.02 : 0.3 };
    },
  });
}

describe('choosePosterTime', () => {
  it('picks the frame with a large central face where the picture is still (sharp)', () => {
    expect(choosePosterTime({ analysis: scene({ still: 7 }), outputSeconds: 12 })).toBe(7);
  });

  it("weighs stillness against the clip's own motion: a talking head's pause beats a slightly larger face mid-word", () => {
    // Mean luma changes as analyzeFraming measures them on a talking head: 0.03 speaking, 0.004 in the pause at 5 s.
    const a = analysis({
      seconds: 10,
      at: (t) => (t === 5 || t === 5.25 ? { faces: [face(960, 540, 280)], motion: 0.004 } : { faces: [face(960, 540, 320)], motion: 0.03 }),
    });
    expect(choosePosterTime({ analysis: a, outputSeconds: 10 })).toBe(5);
  });

  it('is deterministic: the same answer twice, the earlier of equal frames', () => {
    const a = analysis({ seconds: 6, at: () => ({ faces: [face(960, 540, 320)], motion: 0.1 }) });
    // Every frame alike: the earliest past the opening half-second (a fade in is no poster).
    expect(choosePosterTime({ analysis: a, outputSeconds: 6 })).toBe(0.5);
    expect(choosePosterTime({ analysis: a, outputSeconds: 6 })).toBe(0.5);
  });

  it('avoids a frame at a shot change', () => {
    const t = choosePosterTime({ analysis: scene({ still: 7, shots: [7] }), outputSeconds: 12 });
    expect(Math.abs(t - 7)).toBeGreaterThanOrEqual(0.5);
  });

  it('takes a frame with a caption on screen when captions are given', () => {
    const t = choosePosterTime({ analysis: scene({ still: 7 }), outputSeconds: 12, captions: [{ start: 8.6, end: 9.9 }] });
    expect(t).toBeGreaterThanOrEqual(8.6);
    expect(t).toBeLessThan(9.9);
    // Captions that no sample falls in are not a reason to give up the best frame.
    expect(choosePosterTime({ analysis: scene({ still: 7 }), outputSeconds: 12, captions: [{ start: 20, end: 21 }] })).toBe(7);
  });

  it('answers in output seconds through an edit, never a frame the edit cut', () => {
    const cut2to4 = (t: number) => (t < 2 ? t : t < 4 ? null : t - 2);
    // The decoy at 3 s is cut; the sharp frame at 7 s of the source is 5 s into the output.
    expect(choosePosterTime({ analysis: scene({ still: 7 }), toOutput: cut2to4, outputSeconds: 10 })).toBe(5);
    // The sharpest frame (3 s) is cut: the next sharpest (6 s of the source, 4 s of the output).
    const a = analysis({ seconds: 10, at: (t) => ({ faces: [face(960, 540, 320)], motion: t === 3 || t === 3.25 ? 0 : t === 6 || t === 6.25 ? 0.1 : 0.4 }) });
    expect(choosePosterTime({ analysis: a, outputSeconds: 10 })).toBe(3);
    expect(choosePosterTime({ analysis: a, toOutput: cut2to4, outputSeconds: 8 })).toBe(4);
  });

  it("judges centrality in the rendition's crop window when given", () => {
    // A face at x 500 at 2 s, another at the frame's centre at 8 s, equally large and still.
    const a = analysis({
      seconds: 10,
      at: (t) => ({ faces: [Math.abs(t - 2) < 0.01 ? face(500, 540, 320) : Math.abs(t - 8) < 0.01 ? face(960, 540, 320) : face(960, 540, 80)], motion: 0.1 }),
    });
    expect(choosePosterTime({ analysis: a, outputSeconds: 10 })).toBe(8);
    // A 608 px window centred on x 500: the first face is central there, the second outside.
    const crop: CropPath = { width: 608, height: 1080, keyframes: [{ t: 0, x: 196, y: 0 }] };
    expect(choosePosterTime({ analysis: a, outputSeconds: 10, crop })).toBe(2);
  });

  it('without faces, the stillest frame of the middle third', () => {
    const a = analysis({ seconds: 12, at: (t) => ({ motion: t === 1 ? 0.01 : t === 6 || t === 6.25 ? 0.1 : 0.5 }) });
    expect(choosePosterTime({ analysis: a, outputSeconds: 12 })).toBe(6);
    expect(choosePosterTime({ analysis: { ...a, samples: [] }, outputSeconds: 12 })).toBe(6);
  });
});
