import { describe, expect, it } from 'vitest';
import { createSampler } from '../src/sampler.ts';

// The detection policy on its own: frames are 8x8 RGB whose first byte is the frame's index, and a
// scripted detector says where "the face" is in each (the real detector is analyze.test.ts's).
const SIZE = { width: 8, height: 8 };
const frame = (i: number) => {
  const rgb = new Uint8Array(8 * 8 * 3).fill(40);
  rgb[0] = i;
  return rgb;
};

function run(frames: number, faceAt: (i: number) => { x: number; y: number } | null) {
  const seen: number[] = [];
  const sampler = createSampler(
    (rgb) => {
      const i = rgb[0]!;
      seen.push(i);
      const f = faceAt(i);
      return f ? [{ ...f, width: 4, height: 4, score: 0.9 }] : [];
    },
    SIZE,
    { width: 80, height: 80 },
    4,
  );
  for (let i = 0; i < frames; i++) sampler.onFrame(frame(i));
  return { samples: sampler.finish(), seen };
}

describe('createSampler', () => {
  it('detects one sample in sixteen and interpolates the faces between two that agree', () => {
    // The 4 px face moves 1/16 px a sample: each detection overlaps the one before by IoU 0.6.
    const { samples, seen } = run(33, (i) => ({ x: 2 + i / 16, y: 3 }));
    expect(seen).toEqual([0, 16, 32]);
    expect(samples.map((s) => s.t).slice(0, 5)).toEqual([0, 0.25, 0.5, 0.75, 1]);
    // Source pixels (10x the sampled frame), linear between the detections.
    expect(samples.map((s) => s.faces[0]!.x)).toEqual(Array.from({ length: 33 }, (_, i) => 20 + i * 0.625));
    expect(samples.every((s) => s.salient === null)).toBe(true);
  });

  it('finds where two detections that disagree part by halving (a cut: the face jumped at sample 6)', () => {
    const { samples, seen } = run(17, (i) => (i < 6 ? { x: 1, y: 1 } : { x: 5, y: 5 }));
    // 0 and 16 disagree: 8 (agrees with 16: 9-15 interpolated), 4 (agrees with 0), 6 (agrees with 8), then 5.
    expect(seen).toEqual([0, 16, 8, 4, 6, 5]);
    expect(samples.map((s) => s.faces[0]!.x)).toEqual(Array.from({ length: 17 }, (_, i) => (i < 6 ? 10 : 50)));
  });

  it('detects between a face and nobody, and gives the samples without a face a salient region (or none on a flat frame)', () => {
    const { samples, seen } = run(5, (i) => (i < 2 ? { x: 1, y: 1 } : null));
    // The stream ends at 4 (detected), 0 and 4 disagree: 2 (nobody), then 1 (the face); 3 is between two without.
    expect(seen).toEqual([0, 4, 2, 1]);
    expect(samples.map((s) => s.faces.length)).toEqual([1, 1, 0, 0, 0]);
    // These frames are flat (all 40 but one byte): no salient region.
    expect(samples.map((s) => s.salient)).toEqual([null, null, null, null, null]);
  });

  it('detects the last sample when the stream ends between two strides, and resolves the rest against it', () => {
    const { samples, seen } = run(7, () => ({ x: 3, y: 3 }));
    expect(seen).toEqual([0, 6]);
    expect(samples).toHaveLength(7);
    expect(samples.every((s) => s.faces.length === 1)).toBe(true);
  });
});
