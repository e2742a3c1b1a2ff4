import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { ffmpegPaths } from '@captionfarm/process/tools';
import type { Word } from '@captionfarm/contracts';
import { getBuiltinTemplate } from '@captionfarm/captions';
import { createBandPainter } from '../src/paint/index.ts';
import { renderPoster } from '../src/poster.ts';
import { ffmpeg, ffprobeJson, tempDir } from './helpers/media.ts';

// Issue 43: the poster is the exact frame on screen at a time, as a JPEG with the right levels,
// with the caption band over it when the captions were not burned in.

const FPS = 25;
let dir: string;
let cleanup: () => Promise<void>;
let video: string;

/** testsrc (its counter and moving gradient) with a white bar jumping 24 px each frame: neighbouring frames differ a lot. */
async function makeClip(name: string, width: number, height: number): Promise<string> {
  const out = join(dir, name);
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `testsrc=s=${width}x${height}:r=${FPS}:d=4`,
    '-f',
    'lavfi',
    '-i',
    `color=c=white:s=40x160:r=${FPS}`,
    '-filter_complex',
    `[0:v][1:v]overlay=x='mod(n*24,${width - 40})':y=20:shortest=1`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '12',
    '-pix_fmt',
    'yuv420p',
    out,
  ]);
  return out;
}

/** A frame as RGB24 bytes, decoded by ffmpeg: frame number `n` of a video, or the only picture of an image. */
async function rgb(path: string, n?: number): Promise<Buffer> {
  const select = n === undefined ? [] : ['-vf', `select=eq(n\\,${n})`];
  const { stdout } = await execa(ffmpegPaths().ffmpeg, ['-v', 'error', '-i', path, ...select, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], {
    encoding: 'buffer',
  });
  return Buffer.from(stdout);
}

/** PSNR (dB) of two RGB24 images of `width` pixels a row, over the rows [y0, y1) (default all). */
function psnr(a: Buffer, b: Buffer, width: number, rows?: { y0: number; y1: number }): number {
  const from = rows ? rows.y0 * width * 3 : 0;
  const to = rows ? rows.y1 * width * 3 : a.length;
  expect(a.length).toBe(b.length);
  let se = 0;
  for (let i = from; i < to; i++) se += (a[i]! - b[i]!) ** 2;
  const mse = se / (to - from);
  return mse === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255) / mse);
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  video = await makeClip('clip.mp4', 640, 360);
});
afterAll(() => cleanup());

describe('renderPoster', () => {
  it('is the frame on screen at `at`: between two frames, and on a frame boundary', async () => {
    for (const [at, n] of [
      [2.53, 63],
      [2.52, 63],
      [0, 0],
      [1.999, 49],
    ] as const) {
      const output = join(dir, `poster-${at}.jpg`);
      const r = await renderPoster({ video, at, output });
      expect(r).toMatchObject({ width: 640, height: 360, at });
      expect(r.bytes).toBe((await stat(output)).size);
      const got = await rgb(output);
      const want = psnr(got, await rgb(video, n), 640);
      expect(want, `at ${at}`).toBeGreaterThan(35);
      // The neighbours are far off (the bar moved 24 px): the frame is exact, not just near.
      for (const other of [n - 1, n + 1].filter((m) => m >= 0))
        expect(psnr(got, await rgb(video, other), 640), `at ${at} vs frame ${other}`).toBeLessThan(want - 10);
    }
  });

  it('a WebM rendition (VP9) too', async () => {
    const webm = join(dir, 'clip.webm');
    await ffmpeg(['-i', video, '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-crf', '20', '-b:v', '0', webm]);
    const output = join(dir, 'webm.jpg');
    await renderPoster({ video: webm, at: 2.53, output });
    const got = await rgb(output);
    const want = psnr(got, await rgb(webm, 63), 640);
    expect(want).toBeGreaterThan(35);
    expect(psnr(got, await rgb(webm, 64), 640)).toBeLessThan(want - 10);
  });

  it('a JPEG (JFIF, full range), its levels right: black stays black and white white', async () => {
    const output = join(dir, 'levels.jpg');
    await renderPoster({ video, at: 1, output });
    const bytes = await readFile(output);
    expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    const probe = await ffprobeJson(output);
    expect(probe.streams[0]).toMatchObject({ codec_name: 'mjpeg', width: 640, height: 360, pix_fmt: 'yuvj420p' });
    // The brightest and the darkest pixels of frame 25 (the white bar, testsrc's black): a limited-range
    // frame written as limited-range JPEG would turn them grey (16 and 235 read as 0-255).
    const got = await rgb(output);
    const ref = await rgb(video, 25);
    let white = 0;
    let black = 0;
    const lum = (buf: Buffer, i: number) => (buf[i]! + buf[i + 1]! + buf[i + 2]!) / 3;
    for (let i = 0; i < ref.length; i += 3) {
      if (lum(ref, i) > lum(ref, white)) white = i;
      if (lum(ref, i) < lum(ref, black)) black = i;
    }
    expect(lum(ref, white)).toBeGreaterThan(250);
    expect(lum(ref, black)).toBeLessThan(5);
    expect(lum(got, white)).toBeGreaterThan(245);
    expect(lum(got, black)).toBeLessThan(10);
  });

  it('`at` past the end: the last frame (clamped, and says so in `at`)', async () => {
    const output = join(dir, 'late.jpg');
    const r = await renderPoster({ video, at: 60, output });
    expect(r.at).toBeCloseTo(4 - 1 / FPS, 6);
    expect(psnr(await rgb(output), await rgb(video, 99), 640)).toBeGreaterThan(35);
  });

  it("with a painter: the band's captions at `at` over the frame, the rest of the frame untouched", async () => {
    const portrait = await makeClip('portrait.mp4', 360, 640);
    const words: Word[] = 'Captions on the poster when the video has them on a track'
      .split(' ')
      .map((text, i) => ({ text, start: i * 0.3, end: i * 0.3 + 0.27, confidence: 1 }));
    const painter = createBandPainter({ words, template: getBuiltinTemplate('karaoke')!, width: 360, height: 640, fps: FPS });
    const plain = join(dir, 'plain.jpg');
    const captioned = join(dir, 'captioned.jpg');
    await renderPoster({ video: portrait, at: 1.1, output: plain });
    const r = await renderPoster({ video: portrait, at: 1.1, output: captioned, painter });
    expect(r).toMatchObject({ width: 360, height: 640 });
    const a = await rgb(plain);
    const b = await rgb(captioned);
    const { band } = painter;
    let changed = 0;
    for (let y = band.y; y < band.y + band.height; y++) {
      for (let x = band.x; x < band.x + band.width; x++) {
        const i = (y * 360 + x) * 3;
        if (Math.abs(a[i]! - b[i]!) + Math.abs(a[i + 1]! - b[i + 1]!) + Math.abs(a[i + 2]! - b[i + 2]!) > 90) changed++;
      }
    }
    // Karaoke's white and yellow words with their black outline: a good share of the band.
    expect(changed).toBeGreaterThan(0.05 * band.width * band.height);
    // Above the band (JPEG blocks of 16 rows aside) the two posters are the same picture.
    expect(psnr(a, b, 360, { y0: 0, y1: Math.max(0, band.y - 16) })).toBeGreaterThan(40);
  });

  it('refuses a band that is not inside the video (a painter of another size)', async () => {
    const painter = createBandPainter({
      words: [{ text: 'Hello', start: 0, end: 1, confidence: 1 }],
      template: getBuiltinTemplate('karaoke')!,
      width: 1080,
      height: 1920,
    });
    await expect(renderPoster({ video, at: 0.5, output: join(dir, 'bad.jpg'), painter })).rejects.toMatchObject({ code: 'render-failed' });
  });
});
