import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MATROSKA_FRAME_PREFIX_MAX, matroskaFramePrefix, matroskaHeader } from '../src/matroska-stream.ts';
import { ffmpeg, ffprobeJson, tempDir } from './helpers/media.ts';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir()));
afterAll(() => cleanup());

it('is read by ffmpeg as RGBA rawvideo with exact microsecond timestamps and pixels', async () => {
  const [w, h] = [6, 4];
  const times = [0, 400_000, 1_234_567, 30_000_001];
  const parts = [matroskaHeader({ width: w, height: h })];
  times.forEach((t, i) => {
    const px = Buffer.alloc(w * h * 4);
    for (let p = 0; p < w * h; p++) px.set([i * 60, 255 - i * 60, p, 128 + i], p * 4);
    parts.push(matroskaFramePrefix(t, px.length), px);
  });
  const file = join(dir, 'captions.mkv');
  await writeFile(file, Buffer.concat(parts));

  const probe = await ffprobeJson(file, ['-show_streams', '-show_entries', 'frame=pts_time']);
  expect(probe.streams[0]).toMatchObject({ codec_name: 'rawvideo', pix_fmt: 'rgba', width: w, height: h });
  expect(probe.frames.map((f: any) => Number(f.pts_time))).toEqual(times.map((t) => t / 1e6));

  const raw = join(dir, 'frames.rgba');
  await ffmpeg(['-v', 'error', '-f', 'matroska', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgba', '-fps_mode', 'passthrough', raw]);
  const bytes = await readFile(raw);
  expect(bytes.length).toBe(times.length * w * h * 4);
  expect([...bytes.subarray(w * h * 4 * 2 + 5 * 4, w * h * 4 * 2 + 6 * 4)]).toEqual([120, 135, 5, 130]);
});

it('is read by ffmpeg as yuva420p rawvideo, plane for plane, when the track says so', async () => {
  const [w, h] = [6, 4];
  const px = Buffer.from(Array.from({ length: (w * h * 5) / 2 }, (_, i) => (i * 7 + 3) & 255));
  const file = join(dir, 'yuva.mkv');
  await writeFile(file, Buffer.concat([matroskaHeader({ width: w, height: h, pixelFormat: 'yuva420p' }), matroskaFramePrefix(0, px.length), px]));
  const probe = await ffprobeJson(file, ['-show_streams']);
  expect(probe.streams[0]).toMatchObject({ codec_name: 'rawvideo', pix_fmt: 'yuva420p', width: w, height: h });
  const raw = join(dir, 'frame.yuva');
  await ffmpeg(['-v', 'error', '-f', 'matroska', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'yuva420p', raw]);
  expect((await readFile(raw)).equals(px)).toBe(true);
});

it('frame prefixes fit the room the render pools for them, up to the longest timestamp', () => {
  // The render copies each prefix and image into one pooled buffer sized with MATROSKA_FRAME_PREFIX_MAX.
  for (const t of [0, 255, 65_536, 3_600_000_000, 2 ** 53 - 1]) {
    expect(matroskaFramePrefix(t, 1_000_000).length, `t=${t}`).toBeLessThanOrEqual(MATROSKA_FRAME_PREFIX_MAX);
  }
  expect(matroskaFramePrefix(2 ** 53 - 1, 1).length).toBe(MATROSKA_FRAME_PREFIX_MAX);
});
