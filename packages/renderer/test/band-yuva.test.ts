import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { YuvaBand } from '../src/band-yuva.ts';
import { ffmpeg, tempDir } from './helpers/media.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir()));
afterAll(() => cleanup());

/** An RGBA image of w x h filled by `px(x, y)`. */
function rgbaOf(w: number, h: number, px: (x: number, y: number) => [number, number, number, number]): Uint8Array {
  const out = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) out.set(px(x, y), (y * w + x) * 4);
  return out;
}

/** The band's planes as views: Y, U, V, A. */
function planes(band: YuvaBand) {
  const { width: w, height: h, image } = band;
  const l = w * h;
  const c = l / 4;
  return { y: image.subarray(0, l), u: image.subarray(l, l + c), v: image.subarray(l + c, l + 2 * c), a: image.subarray(l + 2 * c) };
}

describe('YuvaBand', () => {
  it('starts transparent and converts to BT.601 limited range: white 235, black 16, red (81, 90, 240)', () => {
    const band = new YuvaBand(4, 2);
    expect([...planes(band).a]).toEqual(new Array(8).fill(0));
    const colours: [number, number, number][] = [
      [255, 255, 255],
      [0, 0, 0],
    ];
    band.patch(
      rgbaOf(4, 2, (x) => [...colours[x >> 1]!, 255]),
      { x: 0, y: 0, width: 4, height: 2 },
    );
    const p = planes(band);
    expect([...p.y]).toEqual([235, 235, 16, 16, 235, 235, 16, 16]);
    expect([...p.u, ...p.v]).toEqual([128, 128, 128, 128]);
    expect([...p.a]).toEqual(new Array(8).fill(255));
    band.patch(
      rgbaOf(2, 2, () => [255, 0, 0, 255]),
      { x: 2, y: 0, width: 2, height: 2 },
    );
    expect([p.y[2], p.u[1], p.v[1]]).toEqual([81, 90, 240]);
    // The part patched before is untouched.
    expect([p.y[0], p.u[0], p.v[0]]).toEqual([235, 128, 128]);
  });

  it("gives a glyph edge its own colour: chroma is the alpha-weighted mean, not pulled towards the transparent pixels' black", () => {
    const band = new YuvaBand(2, 2);
    // Half the block opaque yellow, half transparent (straight alpha: (0, 0, 0, 0)).
    band.patch(
      rgbaOf(2, 2, (x) => (x === 0 ? [255, 255, 0, 255] : [0, 0, 0, 0])),
      { x: 0, y: 0, width: 2, height: 2 },
    );
    const yellow = new YuvaBand(2, 2);
    yellow.patch(
      rgbaOf(2, 2, () => [255, 255, 0, 255]),
      { x: 0, y: 0, width: 2, height: 2 },
    );
    expect([planes(band).u[0], planes(band).v[0]]).toEqual([planes(yellow).u[0], planes(yellow).v[0]]);
    expect([...planes(band).a]).toEqual([255, 0, 255, 0]);
  });

  it('converts a block of one colour (its shortcut) as it converts the same colour beside transparent pixels, for every alpha', () => {
    for (const alpha of [0, 1, 37, 128, 200, 254, 255]) {
      for (const rgb of [
        [255, 255, 255],
        [60, 255, 107],
        [255, 43, 214],
        [7, 9, 250],
      ] as [number, number, number][]) {
        // Two blocks: one colour, then the same colour at the left and transparency at the right.
        const band = new YuvaBand(4, 2);
        band.patch(
          rgbaOf(4, 2, (x) => (x < 2 || x === 2 ? [...rgb, alpha] : [0, 0, 0, 0])),
          { x: 0, y: 0, width: 4, height: 2 },
        );
        const p = planes(band);
        expect([p.y[0], p.y[1], p.y[4], p.y[5]], `${rgb} at ${alpha}`).toEqual([p.y[2], p.y[2], p.y[6], p.y[6]]);
        expect([p.a[0], p.a[1], p.a[4], p.a[5]]).toEqual([alpha, alpha, alpha, alpha]);
        if (alpha > 0) expect([p.u[0], p.v[0]], `${rgb} at ${alpha}`).toEqual([p.u[1], p.v[1]]);
        // A transparent colour is what swscale writes for (0, 0, 0, 0), whatever its RGB.
        else expect([p.y[0], p.u[0], p.v[0], p.y[2], p.u[1], p.v[1]]).toEqual([16, 128, 128, 16, 128, 128]);
      }
    }
  });

  it("matches ffmpeg's own conversion of the same pixels (swscale, BT.601): Y and A within 1 level everywhere, U and V within 1 inside areas of one colour", async () => {
    const [w, h] = [64, 32];
    // Deterministic colours, one per 16x16 square, some half transparent: swscale's bicubic
    // chroma filter reaches two samples into the next square, so chroma is compared away from the
    // squares' edges.
    const colourAt = (x: number, y: number): [number, number, number, number] => {
      const k = (x >> 4) * 7 + (y >> 4) * 131;
      return [(k * 37) & 255, (k * 91) & 255, (k * 53) & 255, k % 5 === 0 ? 128 : 255];
    };
    const band = new YuvaBand(w, h);
    band.patch(rgbaOf(w, h, colourAt), { x: 0, y: 0, width: w, height: h });
    const src = join(dir, 'in.rgba');
    const out = join(dir, 'out.yuva');
    await writeFile(src, rgbaOf(w, h, colourAt));
    await ffmpeg([
      '-v',
      'error',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgba',
      '-s',
      `${w}x${h}`,
      '-i',
      src,
      '-vf',
      'scale=flags=bicubic+full_chroma_inp,format=yuva420p',
      '-f',
      'rawvideo',
      out,
    ]);
    const theirs = await readFile(out);
    expect(theirs.length).toBe(band.image.length);
    const ours = planes(band);
    const l = w * h;
    const c = l / 4;
    const worst = (a: Uint8Array, b: Uint8Array, keep: (i: number) => boolean = () => true) =>
      Math.max(...[...a].map((v, i) => (keep(i) ? Math.abs(v - b[i]!) : 0)));
    expect(worst(ours.y, theirs.subarray(0, l))).toBeLessThanOrEqual(1);
    expect(worst(ours.a, theirs.subarray(l + 2 * c))).toBeLessThanOrEqual(1);
    // Chroma samples are 2x2 pixels, 8x8 to a square: its middle 4x4, two samples from its edges.
    const inner = (i: number) => [i % (w / 2), Math.floor(i / (w / 2))].every((v) => v % 8 >= 2 && v % 8 <= 5);
    expect(worst(ours.u, theirs.subarray(l, l + c), inner)).toBeLessThanOrEqual(1);
    expect(worst(ours.v, theirs.subarray(l + c, l + 2 * c), inner)).toBeLessThanOrEqual(1);
  });

  it('refuses an odd size or a part that is not even-aligned inside the band', () => {
    expect(() => new YuvaBand(3, 2)).toThrow(RangeError);
    const band = new YuvaBand(4, 4);
    expect(() => band.patch(new Uint8Array(4 * 2 * 2), { x: 1, y: 0, width: 2, height: 2 })).toThrow(RangeError);
    expect(() => band.patch(new Uint8Array(4 * 2 * 2), { x: 4, y: 0, width: 2, height: 2 })).toThrow(RangeError);
  });
});
