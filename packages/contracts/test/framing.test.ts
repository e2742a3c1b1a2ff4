import { describe, expect, it } from 'vitest';
import { safeAreaZones, SAFE_AREA_ZONES } from '../src/framing.ts';

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
