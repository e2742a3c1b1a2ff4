import { describe, expect, it } from 'vitest';
import type { CropPath } from '@captionfarm/contracts';
import { cropFilters, cropPathOnOutput } from '../src/crop-path.ts';
import { RenderError } from '../src/errors.ts';

const path: CropPath = {
  width: 360,
  height: 640,
  keyframes: [
    { t: 1, x: 100, y: 0 },
    { t: 2, x: 300, y: 40 },
    { t: 2, x: 800, y: 10 },
    { t: 3, x: 900, y: 10 },
  ],
};

describe('cropPathOnOutput', () => {
  it('moves each keep-range onto the output timeline and joins ranges with a cut', () => {
    // Output 0-1.5 is source 0-1.5; output 1.5-2.5 is source 1.8-2.8 (the path's own cut at 2.0 -> 1.7).
    const out = cropPathOnOutput(path, [
      { start: 0, end: 1.5 },
      { start: 1.8, end: 2.8 },
    ]);
    const round = (k: { t: number; x: number; y: number }) => ({ t: Number(k.t.toFixed(6)), x: Number(k.x.toFixed(6)), y: Number(k.y.toFixed(6)) });
    expect(out.map(round)).toEqual([
      { t: 0, x: 100, y: 0 },
      { t: 1, x: 100, y: 0 },
      { t: 1.5, x: 200, y: 20 },
      { t: 1.5, x: 260, y: 32 }, // the join: source 1.8 follows source 1.5 at once
      { t: 1.7, x: 300, y: 40 },
      { t: 1.7, x: 800, y: 10 }, // the path's cut, 0.3 s earlier on the output
      { t: 2.5, x: 880, y: 10 },
    ]);
  });
});

describe('cropFilters', () => {
  const source = { width: 1920, height: 1080 };

  it('crops the window with its corner as a piecewise-linear expression of t, then scales it to the output', () => {
    const [crop, ...scale] = cropFilters({ width: 608, height: 1080, keyframes: [{ t: 0, x: 10, y: 0 }] }, source, { width: 304, height: 540 });
    expect(crop).toBe("crop=w=608:h=1080:x='round(10)':y='round(0)':exact=1");
    expect(scale).toEqual(['scale=304:540:flags=bicubic']);
    const [moving] = cropFilters(path, source, { width: 360, height: 640 });
    // A balanced tree over hold, pan, pan, hold; pieces start 0.1 ms early, so a frame exactly at
    // a cut takes the new position; a hold the same as the piece before it is merged into it.
    expect(moving).toBe(
      "crop=w=360:h=640:x='round(if(lt(t,1.9999),if(lt(t,0.9999),100,100+200*(t-1)),if(lt(t,2.9999),800+100*(t-2),900)))'" +
        ":y='round(if(lt(t,0.9999),0,if(lt(t,1.9999),0+40*(t-1),10)))':exact=1",
    );
  });

  it('clamps the window inside the source', () => {
    const [crop] = cropFilters({ width: 608, height: 1080, keyframes: [{ t: 0, x: 1500, y: -5 }] }, source, { width: 608, height: 1080 });
    expect(crop).toBe("crop=w=608:h=1080:x='round(1312)':y='round(0)':exact=1");
  });

  it('refuses a window larger than the source and keyframes out of order', () => {
    expect(() => cropFilters({ width: 2000, height: 1080, keyframes: [{ t: 0, x: 0, y: 0 }] }, source, { width: 608, height: 1080 })).toThrow(RenderError);
    const backwards = {
      width: 608,
      height: 1080,
      keyframes: [
        { t: 1, x: 0, y: 0 },
        { t: 0.5, x: 0, y: 0 },
      ],
    };
    expect(() => cropFilters(backwards, source, { width: 608, height: 1080 })).toThrow(TypeError);
    expect(() => cropFilters({ width: 608, height: 1080, keyframes: [] }, source, { width: 608, height: 1080 })).toThrow(TypeError);
  });
});
