import type { CropPath } from '@captionfarm/contracts';
import { describe, expect, it } from 'vitest';
import { cropAt } from '@captionfarm/contracts';
import { centerCrop, cropWindow, panStepLimit, planCrop } from '../src/plan/index.ts';
import { analysis, centreOf, face, HD, jitter, VERTICAL } from './plan-fixtures.ts';

const PORTRAIT = { width: 1080, height: 1920 };
const LANDSCAPE = { width: 1920, height: 1080 };

/** The window's position at every 30 fps frame of [from, to). */
function frames(path: CropPath, from: number, to: number): { t: number; x: number; y: number }[] {
  const out = [];
  for (let k = Math.ceil(from * 30); k / 30 < to - 1e-9; k++) out.push({ t: k / 30, ...cropAt(path, k / 30) });
  return out;
}

/** The largest move between consecutive frames inside each shot (a cut is not a move). */
function maxStep(path: CropPath, seconds: number, shots: number[] = []): number {
  const bounds = [0, ...shots, seconds];
  let max = 0;
  for (let s = 0; s + 1 < bounds.length; s++) {
    const f = frames(path, bounds[s]!, bounds[s + 1]!);
    for (let i = 1; i < f.length; i++) max = Math.max(max, Math.hypot(f[i]!.x - f[i - 1]!.x, f[i]!.y - f[i - 1]!.y));
  }
  return max;
}

/** Where a source point falls across the window at t, as a fraction of the window (0..1 each way). */
function inWindow(path: CropPath, t: number, p: { x: number; y: number }): { fx: number; fy: number } {
  const at = cropAt(path, t);
  return { fx: (p.x - at.x) / path.width, fy: (p.y - at.y) / path.height };
}

function expectInsideSource(path: CropPath, source: { width: number; height: number }): void {
  for (const k of path.keyframes) {
    expect(k.x).toBeGreaterThanOrEqual(0);
    expect(k.y).toBeGreaterThanOrEqual(0);
    expect(k.x + path.width).toBeLessThanOrEqual(source.width);
    expect(k.y + path.height).toBeLessThanOrEqual(source.height);
  }
}

describe('centerCrop', () => {
  it("takes the window today's cover-then-centre crop takes", () => {
    expect(centerCrop(HD, PORTRAIT)).toEqual({ width: 608, height: 1080, keyframes: [{ t: 0, x: 656, y: 0 }] });
    expect(centerCrop(VERTICAL, LANDSCAPE)).toEqual({ width: 1080, height: 608, keyframes: [{ t: 0, x: 0, y: 656 }] });
    expect(centerCrop(HD, { width: 1280, height: 720 })).toEqual({ width: 1920, height: 1080, keyframes: [{ t: 0, x: 0, y: 0 }] });
    // 1:1 from 1920x1080; an odd source loses its last column as the renderer's crop does.
    expect(centerCrop(HD, { width: 720, height: 720 })).toEqual({ width: 1080, height: 1080, keyframes: [{ t: 0, x: 420, y: 0 }] });
    expect(centerCrop({ width: 1921, height: 1081 }, PORTRAIT).height).toBe(1080);
  });
});

describe('cropAt', () => {
  const path: CropPath = {
    width: 608,
    height: 1080,
    keyframes: [
      { t: 1, x: 100, y: 0 },
      { t: 3, x: 300, y: 0 },
      { t: 5, x: 300, y: 0 },
      { t: 5, x: 1000, y: 0 },
      { t: 6, x: 1100, y: 20 },
    ],
  };
  it('holds the first before it and the last after it, and moves linearly between keyframes', () => {
    expect(cropAt(path, 0)).toEqual({ x: 100, y: 0 });
    expect(cropAt(path, 2)).toEqual({ x: 200, y: 0 });
    expect(cropAt(path, 2.5)).toEqual({ x: 250, y: 0 });
    expect(cropAt(path, 4)).toEqual({ x: 300, y: 0 });
    expect(cropAt(path, 5.5)).toEqual({ x: 1050, y: 10 });
    expect(cropAt(path, 60)).toEqual({ x: 1100, y: 20 });
  });
  it('cuts at two keyframes with the same time: the second holds from that time, no pan before it', () => {
    expect(cropAt(path, 5)).toEqual({ x: 1000, y: 0 });
    expect(cropAt(path, 4.999).x).toBeCloseTo(300, 6);
  });
  it('an empty path is the origin', () => {
    expect(cropAt({ width: 2, height: 2, keyframes: [] }, 1)).toEqual({ x: 0, y: 0 });
  });
});

describe('planCrop', () => {
  it('keeps a face at a third of a 1920x1080 frame in the middle 60% of a 1080x1920 window at every sample, where the centre crop loses it', () => {
    const rnd = jitter(7);
    const a = analysis({ seconds: 20, at: () => ({ faces: [face(640 + 6 * rnd(), 420 + 6 * rnd())] }) });
    const path = planCrop(a, PORTRAIT);
    const centre = centerCrop(a, PORTRAIT);
    expect(path.width).toBe(centre.width);
    expect(path.height).toBe(centre.height);
    for (const s of a.samples) {
      const { fx } = inWindow(path, s.t, centreOf(s.faces[0]!));
      expect(fx).toBeGreaterThan(0.2);
      expect(fx).toBeLessThan(0.8);
      expect(inWindow(centre, s.t, centreOf(s.faces[0]!)).fx).toBeLessThan(0);
    }
    expectInsideSource(path, a);
  });

  it('cuts at the shot change when the face moves between shots (a keyframe pair at the shot time, no pan across it)', () => {
    const a = analysis({ seconds: 10, shots: [5], at: (t) => ({ faces: [face(t < 5 ? 500 : 1400, 500)] }) });
    const path = planCrop(a, PORTRAIT);
    const pair = path.keyframes.filter((k) => k.t === 5);
    expect(pair).toHaveLength(2);
    expect(pair[0]!.x).toBeCloseTo(500 - 304, -1);
    expect(pair[1]!.x).toBeCloseTo(1400 - 304, -1);
    // Held still up to the cut and from it on: the crop never pans across it.
    expect(cropAt(path, 4.99)).toEqual(cropAt(path, 0));
    expect(cropAt(path, 5)).toEqual(cropAt(path, 9.99));
    expect(maxStep(path, 10, [5])).toBe(0);
    // Cuts only at shot changes.
    const times = path.keyframes.map((k) => k.t);
    expect(times.filter((t, i) => times.indexOf(t) !== i)).toEqual([5]);
  });

  it('puts the cut exactly at a shot time that is no round number (the frame at the shot change is already the new window)', () => {
    const shot = 16 / 3;
    const a = analysis({ seconds: 10, shots: [shot], at: (t) => ({ faces: [face(t < shot ? 500 : 1400, 500)] }) });
    const path = planCrop(a, PORTRAIT);
    expect(path.keyframes.filter((k) => k.t === shot)).toHaveLength(2);
    expect(cropAt(path, shot).x + 304).toBeCloseTo(1400, -1);
    expect(cropAt(path, shot - 1 / 30).x + 304).toBeCloseTo(500, -1);
  });

  it('does not move for detections jittering by +-10 px (the dead band)', () => {
    const rnd = jitter(43);
    const a = analysis({ seconds: 30, fps: 5, at: () => ({ faces: [face(900 + 10 * rnd(), 500 + 10 * rnd(), 200 + 8 * rnd())] }) });
    const path = planCrop(a, PORTRAIT);
    expect(path.keyframes).toHaveLength(1);
    expect(maxStep(path, 30)).toBe(0);
  });

  it(`follows a walk across the frame with no frame's step over the bound (${panStepLimit(HD)} source px per 30 fps frame at 1080 lines; 3 px for 540 lines)`, () => {
    const limit = panStepLimit(HD);
    expect(limit).toBe(6);
    expect(panStepLimit({ width: 960, height: 540 })).toBe(3);
    // 120 px/s, left third to right third in 8 s, then standing.
    const a = analysis({ seconds: 14, at: (t) => ({ faces: [face(Math.min(1500, 540 + 120 * t), 480)] }) });
    const path = planCrop(a, PORTRAIT);
    expect(maxStep(path, 14)).toBeLessThanOrEqual(limit);
    for (const s of a.samples) {
      const { fx } = inWindow(path, s.t, centreOf(s.faces[0]!));
      expect(fx).toBeGreaterThan(0.2);
      expect(fx).toBeLessThan(0.8);
    }
    // It ends centred on where the walker stopped, and the keyframes fit an ffmpeg expression.
    expect(Math.abs(cropAt(path, 14).x + 304 - 1500)).toBeLessThanOrEqual(0.05 * 608);
    // One way only: no overshoot and back when the walker stops.
    const xs = frames(path, 0, 14).map((f) => f.x);
    expect(xs.every((x, i) => i === 0 || x >= xs[i - 1]!)).toBe(true);
    expect(path.keyframes.length).toBeLessThanOrEqual(4 * 14);
    expectInsideSource(path, a);
  });

  it.each([100, 150])('settles where a walker at %i px/s stops without passing the spot and coming back', (speed) => {
    const a = analysis({ seconds: 16, at: (t) => ({ faces: [face(Math.min(1400, 500 + speed * Math.max(0, t - 2)), 420)] }) });
    const xs = frames(planCrop(a, PORTRAIT), 0, 16).map((f) => f.x);
    expect(xs.every((x, i) => i === 0 || x >= xs[i - 1]!)).toBe(true);
    expect(xs.at(-1)! > xs[0]!).toBe(true);
  });

  it('keeps within the bound however fast the subject runs, and eases in (no step from rest to full speed)', () => {
    // 650 px/s from the left edge to the right third between 2 s and 4 s: faster than the crop may pan.
    const a = analysis({ seconds: 16, at: (t) => ({ faces: [face(300 + 650 * Math.min(2, Math.max(0, t - 2)), 480)] }) });
    const path = planCrop(a, PORTRAIT);
    expect(maxStep(path, 16)).toBeLessThanOrEqual(panStepLimit(HD));
    const f = frames(path, 0, 16);
    const firstMove = f.findIndex((p, i) => i > 0 && p.x !== f[i - 1]!.x);
    expect(firstMove).toBeGreaterThan(0);
    // The first frames of the pan move less than the pan's top speed.
    expect(Math.abs(f[firstMove]!.x - f[firstMove - 1]!.x)).toBeLessThan(panStepLimit(HD) / 2);
    // 1300 px at 171 px/s at most: it catches up within 16 s.
    // It settles with the face within 5% of the window's centre (braking from the chase's speed).
    expect(Math.abs(cropAt(path, 16).x + 304 - 1600)).toBeLessThanOrEqual(0.05 * 608);
  });

  it('a slower bound and a wider dead band are options', () => {
    const a = analysis({ seconds: 8, at: (t) => ({ faces: [face(t < 2 ? 600 : 900, 480)] }) });
    expect(maxStep(planCrop(a, PORTRAIT, { maxStepPerFrame: 2 }), 8)).toBeLessThanOrEqual(2);
    // 300 px is inside the middle 100% of a 608 px window: no move at all.
    expect(planCrop(a, PORTRAIT, { deadBand: 1 }).keyframes).toHaveLength(1);
    expect(() => planCrop(a, PORTRAIT, { maxStepPerFrame: 0 })).toThrow(RangeError);
    expect(() => planCrop(a, PORTRAIT, { deadBand: 1.5 })).toThrow(/deadBand/);
  });

  it('stays on one face within a shot when two take turns being detected', () => {
    // Two people; the detector sees one or the other, the left one more often and larger.
    const a = analysis({
      seconds: 12,
      at: (_t, i) => ({ faces: i % 5 < 3 ? [face(450, 450, 240)] : [face(1450, 450, 220)] }),
    });
    const path = planCrop(a, PORTRAIT);
    expect(path.keyframes).toHaveLength(1);
    expect(path.keyframes[0]!.x + 304).toBeCloseTo(450, -1);
    // Both seen in every frame: the larger one.
    const both = analysis({ seconds: 6, at: () => ({ faces: [face(400, 450, 180), face(1450, 450, 260)] }) });
    expect(planCrop(both, PORTRAIT).keyframes[0]!.x + 304).toBeCloseTo(1450, -1);
  });

  it('ignores a face seen in one sample of a shot (a false detection)', () => {
    const a = analysis({ seconds: 10, at: (_t, i) => ({ faces: i === 7 ? [face(1700, 300)] : [], salient: { x: 300, y: 200, width: 300, height: 400 } }) });
    expect(planCrop(a, PORTRAIT).keyframes).toEqual([{ t: 0, x: 450 - 304, y: 0 }]);
  });

  it('follows the salient region without faces, and stays centred with neither', () => {
    const salient = analysis({ seconds: 6, at: () => ({ salient: { x: 1400, y: 300, width: 300, height: 300 } }) });
    expect(planCrop(salient, PORTRAIT).keyframes).toEqual([{ t: 0, x: 1550 - 304, y: 0 }]);
    const nothing = analysis({ seconds: 6, at: () => ({}) });
    expect(planCrop(nothing, PORTRAIT)).toEqual(centerCrop(nothing, PORTRAIT));
    const noSamples = { ...nothing, samples: [] };
    expect(planCrop(noSamples, PORTRAIT)).toEqual(centerCrop(nothing, PORTRAIT));
  });

  it('clamps the window inside the source for a face at the edge', () => {
    const a = analysis({ seconds: 5, at: () => ({ faces: [face(60, 500)] }) });
    expect(planCrop(a, PORTRAIT).keyframes).toEqual([{ t: 0, x: 0, y: 0 }]);
    const b = analysis({ seconds: 5, at: () => ({ faces: [face(1900, 500)] }) });
    expect(planCrop(b, PORTRAIT).keyframes).toEqual([{ t: 0, x: 1920 - 608, y: 0 }]);
  });

  it('moves vertically when the output is wider than the source (9:16 source to 16:9), with headroom above the face', () => {
    const a = analysis({ seconds: 10, size: VERTICAL, shots: [5], at: (t) => ({ faces: [face(540, t < 5 ? 1300 : 500)] }) });
    const path = planCrop(a, LANDSCAPE);
    expect(path).toMatchObject({ width: 1080, height: 608 });
    for (const s of a.samples) {
      const { fx, fy } = inWindow(path, s.t, centreOf(s.faces[0]!));
      expect(fx).toBeCloseTo(0.5, 2);
      expect(fy).toBeGreaterThan(0.35);
      expect(fy).toBeLessThan(0.45);
    }
    expect(path.keyframes.filter((k) => k.t === 5)).toHaveLength(2);
    expectInsideSource(path, a);
  });

  it('the same aspect as the source: the whole frame, one keyframe', () => {
    const a = analysis({ seconds: 5, at: (t) => ({ faces: [face(300 + 100 * t, 500)] }) });
    expect(planCrop(a, { width: 1280, height: 720 })).toEqual({ width: 1920, height: 1080, keyframes: [{ t: 0, x: 0, y: 0 }] });
  });

  it('a shot shorter than the sampling interval takes the nearest sample', () => {
    // Samples at 3.0 and 3.5 s; the shot from 3.2 to 3.4 s has none, the one at 3.5 s is nearer.
    const a = analysis({ seconds: 6, fps: 2, shots: [3.2, 3.4], at: (t) => ({ faces: [face(t < 3.2 ? 500 : 1400, 500)] }) });
    const path = planCrop(a, PORTRAIT);
    expect(cropAt(path, 3.3).x + 304).toBeCloseTo(1400, -1);
    expect(cropAt(path, 3.19).x + 304).toBeCloseTo(500, -1);
    expect(maxStep(path, 6, [3.2, 3.4])).toBe(0);
  });

  it('is deterministic, sorted, and about 4 keyframes a second at most on a subject that never stops', () => {
    const rnd = jitter(3);
    const a = analysis({ seconds: 30, shots: [10, 20], at: (t) => ({ faces: [face(960 + 600 * Math.sin(t / 1.5) + 5 * rnd(), 500)] }) });
    const path = planCrop(a, PORTRAIT);
    expect(planCrop(a, PORTRAIT)).toEqual(path);
    const times = path.keyframes.map((k) => k.t);
    expect([...times].sort((p, q) => p - q)).toEqual(times);
    expect(path.keyframes.length).toBeLessThanOrEqual(4 * 30 + 2 * 3);
    expect(maxStep(path, 30, [10, 20])).toBeLessThanOrEqual(panStepLimit(HD));
    expectInsideSource(path, a);
  });

  it('keeps its promises on 40 random clips (faces that come, go and jump, dropouts, salient boxes, shots): inside the source, sorted, within the bound, cuts only at shot changes', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = jitter(seed);
      const u = () => (rnd() + 1) / 2;
      const seconds = 5 + Math.floor(u() * 40);
      const shots = [...new Set(Array.from({ length: Math.floor(u() * 5) }, () => Math.round(u() * seconds * 30) / 30))]
        .filter((t) => t > 0)
        .sort((p, q) => p - q);
      const size = u() < 0.3 ? VERTICAL : HD;
      const out = size === HD ? PORTRAIT : LANDSCAPE;
      const people = Array.from({ length: Math.floor(u() * 3) }, () => ({
        x: u() * size.width,
        y: u() * size.height,
        v: (u() - 0.5) * 400,
        h: 60 + u() * 300,
      }));
      const a = analysis({
        seconds,
        size,
        shots,
        fps: [2, 4, 5][Math.floor(u() * 3)]!,
        at: (t) => ({
          faces: people.filter(() => u() < 0.8).map((p) => face(Math.min(size.width - 1, Math.max(1, p.x + p.v * t + 15 * rnd())), p.y, p.h, 0.7 + 0.3 * u())),
          salient: u() < 0.5 ? { x: u() * (size.width - 300), y: u() * (size.height - 300), width: 300, height: 300 } : null,
          motion: u() * 0.1,
        }),
      });
      const path = planCrop(a, out);
      expect(path).toMatchObject(cropWindow(size, out));
      expectInsideSource(path, size);
      const times = path.keyframes.map((k) => k.t);
      expect([...times].sort((p, q) => p - q)).toEqual(times);
      for (const t of times.filter((t, i) => times.indexOf(t) !== i)) expect(shots).toContain(t);
      expect(maxStep(path, seconds, shots)).toBeLessThanOrEqual(panStepLimit(size));
      expect(path.keyframes.length).toBeLessThanOrEqual(4 * seconds + 2 * (shots.length + 1));
    }
  });
});
