import { describe, expect, it } from 'vitest';
import { cropAt, safeAreaZones, SAFE_AREA_ZONES } from '../src/framing.ts';

describe('safeAreaZones', () => {
  it('is the reference zones at 1080x1920 and none for none', () => {
    expect(safeAreaZones('tiktok', { width: 1080, height: 1920 })).toEqual(SAFE_AREA_ZONES.tiktok);
    expect(safeAreaZones('none', { width: 1080, height: 1920 })).toEqual([]);
  });

  it('scales to the output and rounds outward, so a zone never shrinks', () => {
    const zones = safeAreaZones('tiktok', { width: 720, height: 1280 });
    // The bottom bar: 350 of 1920 -> at least 350 * 1280 / 1920 = 233.3 px, reaching the bottom edge.
    const bottom = zones[1]!;
    expect(bottom.y).toBe(1046);
    expect(bottom.y + bottom.height).toBe(1280);
    // The right column: from 916 * 720 / 1080 = 610.67 down to 610.
    expect(zones[2]!.x).toBe(610);
    expect(zones[2]!.x + zones[2]!.width).toBe(720);
  });
});

describe('cropAt', () => {
  const path = {
    width: 608,
    height: 1080,
    keyframes: [
      { t: 1, x: 100, y: 0 },
      { t: 2, x: 200, y: 0 },
      { t: 2, x: 900, y: 0 }, // a cut at 2 s
      { t: 3, x: 1000, y: 40 },
    ],
  };

  it('holds the first before it, moves linearly between keyframes, holds the last after it', () => {
    expect(cropAt(path, 0)).toEqual({ x: 100, y: 0 });
    expect(cropAt(path, 1.5)).toEqual({ x: 150, y: 0 });
    expect(cropAt(path, 2.5)).toEqual({ x: 950, y: 20 });
    expect(cropAt(path, 9)).toEqual({ x: 1000, y: 40 });
  });

  it('cuts at two keyframes with one time: the second from that time on, the first just before (before = true)', () => {
    expect(cropAt(path, 2)).toEqual({ x: 900, y: 0 });
    expect(cropAt(path, 2, true)).toEqual({ x: 200, y: 0 });
    expect(cropAt(path, 1.999).x).toBeCloseTo(199.9, 6);
  });
});
