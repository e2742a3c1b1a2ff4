import { describe, expect, it } from 'vitest';
import { RenderError } from '../src/errors.ts';
import { planOutputSize, sizeFilters } from '../src/plan-output-size.ts';

const src = (width: number, height: number) => ({ width, height });

describe('planOutputSize', () => {
  it.each([
    ['keeps the source', src(1080, 1920), undefined, undefined, src(1080, 1920)],
    ['keeps it when under budget', src(1280, 720), undefined, 1280 * 720, src(1280, 720)],
    ['rounds odd sources down to even', src(321, 241), undefined, undefined, src(320, 240)],
    ['downscales to the free budget, aspect kept', src(1920, 1080), undefined, 921_600, src(1280, 720)],
    ['downscales portrait 4K to the starter budget', src(2160, 3840), undefined, 2_073_600, src(1080, 1920)],
    ['takes a requested size', src(1920, 1080), src(1280, 720), undefined, src(1280, 720)],
    ['rounds a requested odd size down to even', src(1920, 1080), src(641, 361), undefined, src(640, 360)],
    ['allows the exact source size', src(1920, 1080), src(1920, 1080), undefined, src(1920, 1080)],
  ])('%s', (_name, source, resolution, maxPixels, expected) => {
    expect(planOutputSize({ source, resolution, maxPixels })).toEqual(expected);
  });

  it('never exceeds the budget', () => {
    for (const [w, h] of [
      [1919, 1081],
      [3840, 2160],
      [1001, 999],
      [4000, 3],
    ]) {
      const out = planOutputSize({ source: src(w!, h!), maxPixels: 921_600 });
      expect(out.width * out.height).toBeLessThanOrEqual(921_600);
      expect((out.width % 2) + (out.height % 2)).toBe(0);
    }
  });

  it.each([
    [src(1920, 1080), src(1080, 1920)], // issue 43: the Shorts rendition of 16:9 footage, the same pixels turned
    [src(1080, 1920), src(1920, 1080)], // a landscape request from a portrait source
    [src(1920, 1080), src(1080, 1350)],
    [src(1280, 720), src(720, 720)],
  ])('takes %o -> %o: no more pixels and no longer side than the source', (source, resolution) => {
    expect(planOutputSize({ source, resolution })).toEqual(resolution);
  });

  it.each([
    [src(1280, 720), src(1920, 1080)],
    [src(1280, 720), src(1280, 722)],
    [src(1280, 720), src(800, 1280)], // turned, but more pixels
    [src(1920, 1080), src(2000, 1000)], // fewer pixels, but a longer side
  ])('rejects %o -> %o with output-larger-than-source', (source, resolution) => {
    expect(() => planOutputSize({ source, resolution })).toThrow(expect.objectContaining({ code: 'output-larger-than-source' }));
    expect(() => planOutputSize({ source, resolution })).toThrow(RenderError);
  });
});

describe('sizeFilters', () => {
  it.each([
    [src(1280, 720), src(1280, 720), []],
    [src(321, 241), src(320, 240), ['crop=320:240:0:0']],
    [src(1920, 1080), src(1280, 720), ['scale=1280:720:flags=bicubic']],
    // Other aspect: fill, then centre-crop.
    [src(1920, 1080), src(720, 720), ['scale=1280:720:flags=bicubic', 'crop=720:720']],
    [src(1080, 1920), src(1080, 1080), ['crop=1080:1080']],
  ])('%o -> %o', (source, out, filters) => {
    expect(sizeFilters(source, out)).toEqual(filters);
  });
});
