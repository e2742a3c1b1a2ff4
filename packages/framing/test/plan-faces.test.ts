import type { CropPath } from '@captionfarm/contracts';
import { describe, expect, it } from 'vitest';
import { cropAt } from '@captionfarm/contracts';
import { centerCrop, facesOnOutput, planCrop } from '../src/plan/index.ts';
import { analysis, face, jitter } from './plan-fixtures.ts';

const PORTRAIT = { width: 1080, height: 1920 };
const box = (x: number, y: number, width: number, height: number, score = 0.9) => ({ x, y, width, height, score });

/** The edit keeps 0-2 s and 4 s to the end: 2-4 s of the source is cut. */
const cut2to4 = (t: number): number | null => (t < 2 ? t : t < 4 ? null : t - 2);

describe('facesOnOutput', () => {
  it("maps a face through the centre crop's window into output pixels, one box for as long as it stays", () => {
    const a = analysis({ seconds: 10, at: () => ({ faces: [box(700, 300, 100, 120)] }) });
    const crop = centerCrop(a, PORTRAIT); // 608x1080 at x 656, scaled 1080/608 across and 1920/1080 down
    expect(facesOnOutput({ analysis: a, crop, out: PORTRAIT })).toEqual([{ start: 0, end: 10, box: { x: 78, y: 533, width: 178, height: 214 } }]);
  });

  it('clips a face half out of the window and drops one wholly outside it', () => {
    const a = analysis({ seconds: 2, at: () => ({ faces: [box(600, 300, 100, 120), box(100, 300, 100, 120), box(1500, 900, 100, 120)] }) });
    const timed = facesOnOutput({ analysis: a, crop: centerCrop(a, PORTRAIT), out: PORTRAIT });
    expect(timed).toEqual([{ start: 0, end: 2, box: { x: 0, y: 533, width: 79, height: 214 } }]);
  });

  it('follows a moving crop and a moving face: each sample its own box until the next sample', () => {
    const crop: CropPath = {
      width: 608,
      height: 1080,
      keyframes: [
        { t: 0, x: 0, y: 0 },
        { t: 4, x: 400, y: 0 },
      ],
    };
    // The face (x 100-200) slides out of the left of a window panning right 100 px/s.
    const a = analysis({ seconds: 4, fps: 2, at: () => ({ faces: [box(100, 300, 100, 120)] }) });
    const timed = facesOnOutput({ analysis: a, crop, out: PORTRAIT });
    expect(timed.map((b) => [b.start, b.end])).toEqual([
      [0, 0.5],
      [0.5, 1],
      [1, 1.5],
      [1.5, 2],
    ]);
    const sx = 1080 / 608;
    // At 0.5 s the window is at x 50: the face 50 px into it.
    expect(timed[1]!.box).toMatchObject({ x: Math.floor(50 * sx), width: Math.ceil(150 * sx) - Math.floor(50 * sx) });
    // At 1.5 s (window at 150) half of it shows; from 2 s none.
    expect(timed[3]!.box).toMatchObject({ x: 0, width: Math.ceil(50 * sx) });
  });

  it("keeps a subject-following crop's face inside the output, near its middle", () => {
    const a = analysis({ seconds: 10, shots: [5], at: (t) => ({ faces: [t < 5 ? face(500, 500) : face(1400, 600)] }) });
    const crop = planCrop(a, PORTRAIT);
    const timed = facesOnOutput({ analysis: a, crop, out: PORTRAIT });
    expect(timed.map((b) => [b.start, b.end])).toEqual([
      [0, 5],
      [5, 10],
    ]);
    for (const { box: b } of timed) expect(b.x + b.width / 2).toBeCloseTo(540, -1);
  });

  it('maps times through an edit: samples the edit cut are dropped, the rest close up', () => {
    const a = analysis({
      seconds: 10,
      at: (t) => ({
        faces: [box(700, 300, 100, 120), ...(t >= 2 && t < 4 ? [box(900, 300, 100, 120)] : []), ...(t >= 3 && t < 6 ? [box(1000, 600, 100, 120)] : [])],
      }),
    });
    const timed = facesOnOutput({ analysis: a, crop: centerCrop(a, PORTRAIT), out: PORTRAIT, toOutput: cut2to4 });
    expect(timed.map((b) => [b.start, b.end, b.box.x])).toEqual([
      // The steady face: one box over the whole 8 s output (its 2 s before the cut joined to what follows it).
      [0, 8, 78],
      // Seen 3-6 s of the source: 2-4 s of the output, its part inside the cut gone.
      [2, 4, Math.floor((1000 - 656) * (1080 / 608))],
    ]);
    // The face seen only inside the cut (2-4 s) never reaches the output.
    expect(timed.some((b) => b.box.x === Math.floor((900 - 656) * (1080 / 608)))).toBe(false);
  });

  it('a sample before a cut ends where the cut starts', () => {
    // Samples at 0 and 1 s; the edit cuts 0.5-1.2 s.
    const a = analysis({ seconds: 2, fps: 1, at: (t) => ({ faces: [box(t < 1 ? 700 : 800, 300, 100, 120)] }) });
    const toOutput = (t: number) => (t < 0.5 ? t : t < 1.2 ? null : t - 0.7);
    const timed = facesOnOutput({ analysis: a, crop: centerCrop(a, PORTRAIT), out: PORTRAIT, toOutput });
    expect(timed).toHaveLength(1);
    expect(timed[0]!.start).toBe(0);
    expect(timed[0]!.end).toBeCloseTo(0.5, 6);
  });

  it('no faces, no boxes', () => {
    const a = analysis({ seconds: 3, at: () => ({}) });
    expect(facesOnOutput({ analysis: a, crop: centerCrop(a, PORTRAIT), out: PORTRAIT })).toEqual([]);
    expect(cropAt(centerCrop(a, PORTRAIT), 1)).toEqual({ x: 656, y: 0 });
  });

  it('on 40 random clips and edits: every box inside the output frame, every span non-empty and inside the edited output', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = jitter(seed);
      const u = () => (rnd() + 1) / 2;
      const seconds = 4 + Math.floor(u() * 20);
      const people = Array.from({ length: 1 + Math.floor(u() * 3) }, () => ({ x: u() * 1920, y: u() * 1080, v: (u() - 0.5) * 300, h: 40 + u() * 300 }));
      const a = analysis({
        seconds,
        fps: 4,
        shots: u() < 0.5 ? [Math.round(u() * seconds * 30) / 30] : [],
        at: (t) => ({ faces: people.filter(() => u() < 0.8).map((p) => face(p.x + p.v * t, p.y, p.h)) }),
      });
      // Keep [0, c1) and [c2, end): the edit cuts [c1, c2).
      const c1 = u() * seconds * 0.6;
      const c2 = c1 + u() * seconds * 0.3;
      const toOutput = (t: number) => (t < c1 ? t : t < c2 ? null : t - (c2 - c1));
      const outputSeconds = seconds - (c2 - c1);
      for (const crop of [planCrop(a, PORTRAIT), centerCrop(a, PORTRAIT)]) {
        for (const { start, end, box: b } of facesOnOutput({ analysis: a, crop, out: PORTRAIT, toOutput })) {
          expect(b.x).toBeGreaterThanOrEqual(0);
          expect(b.y).toBeGreaterThanOrEqual(0);
          expect(b.width).toBeGreaterThan(0);
          expect(b.height).toBeGreaterThan(0);
          expect(b.x + b.width).toBeLessThanOrEqual(PORTRAIT.width);
          expect(b.y + b.height).toBeLessThanOrEqual(PORTRAIT.height);
          expect(start).toBeGreaterThanOrEqual(0);
          expect(end).toBeGreaterThan(start);
          expect(end).toBeLessThanOrEqual(outputSeconds + 1e-6);
        }
      }
    }
  });
});
