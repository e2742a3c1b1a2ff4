import { readdir, readFile, writeFile } from 'node:fs/promises';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nvencAvailable } from '../src/detect-nvenc.ts';
import { RenderError } from '../src/errors.ts';
import { probeMedia } from '../src/probe-media.ts';
import { reencodeVideo, renderVideo } from '../src/render-video.ts';
import { blockPainter, ffmpeg, ffprobeJson, frameAt, GREEN, makeVideo, near, psnr, RED, tempDir } from './helpers/media.ts';

let dir: string;
let cleanup: () => Promise<void>;
let speech: string; // 320x240, 25 fps, 2 s, AAC speech

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  speech = await makeVideo(dir, 'speech.mp4', { width: 320, height: 240, fps: 25, seconds: 2, audio: true });
});
afterAll(() => cleanup());

describe('renderVideo mp4', () => {
  let out: string;
  let plain: string;
  const progress: number[] = [];
  const painter = blockPainter({ width: 320, height: 240 });

  beforeAll(async () => {
    out = join(dir, 'speech-captioned.mp4');
    const result = await renderVideo({
      input: speech,
      output: out,
      painter,
      format: 'mp4',
      quality: 'high',
      encoder: 'cpu',
      onProgress: (p) => progress.push(p),
    });
    expect(result).toMatchObject({ width: 320, height: 240, encoder: 'cpu' });
    // The same encode without captions, to compare everything outside the band against.
    plain = join(dir, 'speech-plain.mp4');
    await reencodeVideo({ input: speech, output: plain, format: 'mp4', quality: 'high', encoder: 'cpu' });
  });

  it('is valid H.264 + AAC that keeps the duration, frame rate and audio', async () => {
    const probe = await ffprobeJson(out);
    const video = probe.streams.find((s: any) => s.codec_type === 'video');
    const audio = probe.streams.find((s: any) => s.codec_type === 'audio');
    expect(video).toMatchObject({ codec_name: 'h264', width: 320, height: 240, pix_fmt: 'yuv420p', avg_frame_rate: '25/1' });
    expect(Number(video.nb_frames)).toBe(50);
    expect(audio).toMatchObject({ codec_name: 'aac' });
    const source = await probeMedia(speech);
    expect(Number(probe.format.duration)).toBeCloseTo(source.durationSeconds, 1);
  });

  it('shows each caption image from the exact frame it starts on', async () => {
    const { band } = painter;
    const cx = band.x + band.width / 2;
    const cy = band.y + band.height / 2;
    // 25 fps: frame 9 (0.36 s) is before the red caption, frame 10 (0.40 s, exactly redAt) shows
    // it; frame 24 (0.96 s) is the last red one, frame 25 (1.00 s = greenAt) is green.
    const before = await frameAt(out, 0.34);
    const source = await frameAt(speech, 0.34);
    expect(near(before.rgb(cx, cy), source.rgb(cx, cy), 20)).toBe(true);
    expect(near(before.rgb(cx, cy), RED)).toBe(false);
    expect(near((await frameAt(out, 0.38)).rgb(cx, cy), RED)).toBe(true);
    expect(near((await frameAt(out, 0.94)).rgb(cx, cy), RED)).toBe(true);
    expect(near((await frameAt(out, 0.98)).rgb(cx, cy), GREEN)).toBe(true);
    expect(near((await frameAt(out, 1.9)).rgb(cx, cy), GREEN)).toBe(true);
  });

  it('paints only the images that change, not every frame', () => {
    expect(painter.painted).toEqual([0, 0.4, 1]);
  });

  it('changes nothing outside the band', async () => {
    const { band } = painter;
    const above = { x: 0, y: 0, width: 320, height: band.y };
    const below = { x: 0, y: band.y + band.height, width: 320, height: 240 - band.y - band.height };
    expect(await psnr(out, plain, above)).toBeGreaterThan(40);
    expect(await psnr(out, plain, below)).toBeGreaterThan(40);
    // Nor inside it while the band is transparent (a wrong alpha mode would tint it).
    expect(await psnr(out, plain, band, { from: 0, to: 0.36 })).toBeGreaterThan(40);
    // ...while the caption itself does change it.
    expect(await psnr(out, plain, band, { from: 0.5, to: 0.9 })).toBeLessThan(25);
  });

  it('reports whole percents that only grow and end at 100', () => {
    expect(progress.at(-1)).toBe(100);
    expect(progress.length).toBeGreaterThan(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThan(progress[i - 1]!);
    expect(progress.every((p) => Number.isInteger(p) && p >= 0 && p <= 100)).toBe(true);
  });
});

describe('renderVideo', () => {
  it('writes VP9 + Opus webm', async () => {
    const out = join(dir, 'speech.webm');
    const painter = blockPainter({ width: 320, height: 240 });
    const result = await renderVideo({ input: speech, output: out, painter, format: 'webm', quality: 'medium' });
    expect(result).toMatchObject({ width: 320, height: 240, encoder: 'cpu' });
    const probe = await ffprobeJson(out);
    expect(probe.format.format_name).toContain('webm');
    expect(probe.streams.map((s: any) => s.codec_name).sort()).toEqual(['opus', 'vp9']);
    expect(Number(probe.format.duration)).toBeCloseTo(2, 0);
    const f = await frameAt(out, 0.7);
    expect(near(f.rgb(160, painter.band.y + painter.band.height / 2), RED)).toBe(true);
  });

  it('crops an odd-sized source without audio to even and keeps it silent', async () => {
    const input = await makeVideo(dir, 'odd.mp4', { width: 321, height: 241, fps: 30, seconds: 1.2 });
    const out = join(dir, 'odd-captioned.mp4');
    const sizes: unknown[] = [];
    const result = await renderVideo({
      input,
      output: out,
      format: 'mp4',
      quality: 'low',
      painter: (frame) => {
        sizes.push(frame);
        return blockPainter(frame, { redAt: 0.5, greenAt: 5 });
      },
    });
    expect(sizes).toEqual([{ width: 320, height: 240, fps: 30 }]);
    expect(result).toMatchObject({ width: 320, height: 240 });
    const probe = await ffprobeJson(out);
    expect(probe.streams.map((s: any) => s.codec_type)).toEqual(['video']);
    expect(near((await frameAt(out, 0.7)).rgb(160, 180), RED)).toBe(true);
  });

  it('applies rotation metadata once: a 160x90 + 90 degree phone clip becomes 90x160 with no rotation left', async () => {
    const input = await makeVideo(dir, 'rotated.mp4', { width: 160, height: 90, fps: 25, seconds: 1, rotate: 90 });
    expect(await probeMedia(input)).toMatchObject({ width: 90, height: 160, rotation: 90 });
    const out = join(dir, 'rotated-captioned.mp4');
    const painter = blockPainter({ width: 90, height: 160 });
    expect(await renderVideo({ input, output: out, painter, format: 'mp4', quality: 'high' })).toMatchObject({ width: 90, height: 160 });
    expect(await probeMedia(out)).toMatchObject({ width: 90, height: 160, rotation: 0 });
    // Above the band the picture equals ffmpeg's own rotated decode of the source.
    const rotatedPlain = join(dir, 'rotated-plain.mp4');
    await ffmpeg(['-v', 'error', '-i', input, '-c:v', 'libx264', '-crf', '12', rotatedPlain]);
    expect(await psnr(out, rotatedPlain, { x: 0, y: 0, width: 90, height: painter.band.y })).toBeGreaterThan(35);
  });

  it('keeps the timestamps of a variable-frame-rate source', async () => {
    const input = await makeVideo(dir, 'vfr.mp4', { width: 160, height: 120, fps: 30, seconds: 1.5, vfr: true });
    const out = join(dir, 'vfr-captioned.mp4');
    await renderVideo({ input, output: out, painter: blockPainter({ width: 160, height: 120 }), format: 'mp4', quality: 'medium' });
    const times = async (f: string): Promise<number[]> =>
      (await ffprobeJson(f, ['-select_streams', 'v:0', '-show_entries', 'frame=pts_time'])).frames.map((fr: any) => Number(fr.pts_time));
    const [src, dst] = [await times(input), await times(out)];
    expect(dst.length).toBe(src.length);
    for (const [i, t] of dst.entries()) expect(t).toBeCloseTo(src[i]!, 2);
    // Irregular spacing really is there (not resampled to a constant rate).
    const gaps = new Set(dst.slice(1).map((t, i) => Math.round((t - dst[i]!) * 1000)));
    expect(gaps.size).toBeGreaterThan(1);
  });

  it('scales to a requested resolution and to the frame budget', async () => {
    const a = join(dir, 'res.mp4');
    const sizes: unknown[] = [];
    const painter = (size: { width: number; height: number }) => {
      sizes.push(size);
      return blockPainter(size);
    };
    expect(await renderVideo({ input: speech, output: a, painter, format: 'mp4', quality: 'low', resolution: { width: 160, height: 120 } })).toMatchObject({
      width: 160,
      height: 120,
    });
    const b = join(dir, 'budget.mp4');
    expect(await renderVideo({ input: speech, output: b, painter, format: 'mp4', quality: 'low', maxPixels: 200 * 150 })).toMatchObject({
      width: 200,
      height: 150,
    });
    expect(sizes).toEqual([
      { width: 160, height: 120, fps: 25 },
      { width: 200, height: 150, fps: 25 },
    ]);
  });

  it('refuses to upscale with output-larger-than-source and writes nothing', async () => {
    const out = join(dir, 'upscaled.mp4');
    const err = await renderVideo({
      input: speech,
      output: out,
      painter: blockPainter({ width: 640, height: 480 }),
      format: 'mp4',
      quality: 'high',
      resolution: { width: 640, height: 480 },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).code).toBe('output-larger-than-source');
    expect((await readdir(dir)).some((f) => f.includes('upscaled'))).toBe(false);
  });

  it('fails with source-unreadable for a file that is not media', async () => {
    const input = join(dir, 'notes.mp4');
    await writeFile(input, 'this is not a video\n');
    const err = await renderVideo({
      input,
      output: join(dir, 'never.mp4'),
      painter: blockPainter({ width: 320, height: 240 }),
      format: 'mp4',
      quality: 'high',
    }).catch((e: unknown) => e);
    expect((err as RenderError).code).toBe('source-unreadable');
  });

  it('fails with render-failed, ffmpeg stopped and no partial file, when the painter throws', async () => {
    const work = await tempDir();
    const painter = blockPainter({ width: 320, height: 240 });
    const broken = {
      ...painter,
      paint: (_ctx: unknown, t: number) => {
        if (t > 0.5) throw new Error('font missing');
      },
    };
    const err = await renderVideo({ input: speech, output: join(work.dir, 'broken.mp4'), painter: broken, format: 'mp4', quality: 'high' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).code).toBe('render-failed');
    expect((err as Error).message).toContain('font missing');
    expect(await readdir(work.dir)).toEqual([]);
    await work.cleanup();
  });

  it('fails with render-failed when the painter factory throws or the band is outside the frame', async () => {
    const boom = await renderVideo({
      input: speech,
      output: join(dir, 'x.mp4'),
      painter: () => {
        throw new Error('unknown template');
      },
      format: 'mp4',
      quality: 'high',
    }).catch((e: unknown) => e);
    expect(boom).toMatchObject({ code: 'render-failed', message: expect.stringContaining('unknown template') });
    const outside = { ...blockPainter({ width: 320, height: 240 }), band: { x: 0, y: 200, width: 320, height: 60 } };
    const err = await renderVideo({ input: speech, output: join(dir, 'x.mp4'), painter: outside, format: 'mp4', quality: 'high' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'render-failed', message: expect.stringContaining('inside the 320x240 frame') });
  });

  it('puts ffmpeg stderr in render-failed errors', async () => {
    const err = await renderVideo({
      input: speech,
      output: join(dir, 'no-such-dir', 'x.mp4'),
      painter: blockPainter({ width: 320, height: 240 }),
      format: 'mp4',
      quality: 'high',
    }).catch((e: unknown) => e);
    expect((err as RenderError).code).toBe('render-failed');
    expect((err as RenderError).stderrTail).toMatch(/No such file or directory/);
  });

  it('on abort kills ffmpeg, removes temp files and rejects with AbortError', async () => {
    const { work, controller, rendering } = await startLongRender();
    const ours = await ffmpegProcessesIn(work.dir);
    expect(ours.length).toBe(1);
    controller.abort();
    // An AbortError (not a finished render) proves the abort stopped the encode; how fast it stops
    // is not a unit test's business on a loaded machine.
    const err = await rendering;
    expect((err as Error).name).toBe('AbortError');
    expect(await ffmpegProcessesIn(work.dir)).toEqual([]);
    expect(await readdir(work.dir)).toEqual(['long.mp4']);
    await work.cleanup();
  });

  it('encodes at niceness 10 above ours, every ffmpeg thread, so a transcription beside it goes first', async () => {
    const { work, controller, rendering } = await startLongRender();
    const [pid] = await ffmpegProcessesIn(work.dir);
    // nice and setpriv exec'd into ffmpeg: one pid, ffmpeg's own command line.
    expect((await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0')[0]).toMatch(/ffmpeg$/);
    const threads = await readdir(`/proc/${pid}/task`);
    expect(threads.length).toBeGreaterThan(1);
    const nices = await Promise.all(threads.map(async (tid) => niceOf(await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8'))));
    expect(new Set(nices)).toEqual(new Set([Math.min(19, getPriority() + 10)]));
    expect(getPriority()).toBe(niceOf(await readFile('/proc/self/stat', 'utf8')));
    controller.abort();
    expect(((await rendering) as Error).name).toBe('AbortError');
    await work.cleanup();
  });

  it('uses NVENC only where it works: auto follows the trial encode, and forced nvenc fails where it does not work', async () => {
    // Both branches assert: on a machine with a working NVENC encoder, auto picks it and forcing it
    // renders; elsewhere (this machine, and H100/H200, which have no NVENC) auto picks the CPU and
    // forcing NVENC is a render-failed error, not a crash.
    const works = await nvencAvailable();
    const painter = blockPainter({ width: 320, height: 240 });
    const forced = await renderVideo({ input: speech, output: join(dir, 'nvenc.mp4'), painter, format: 'mp4', quality: 'high', encoder: 'nvenc' }).catch(
      (e: unknown) => e,
    );
    if (works) expect(forced).toMatchObject({ encoder: 'nvenc' });
    else expect((forced as RenderError).code).toBe('render-failed');
    const auto = await renderVideo({ input: speech, output: join(dir, 'auto.mp4'), painter, format: 'mp4', quality: 'high', encoder: 'auto' });
    expect(auto.encoder).toBe(works ? 'nvenc' : 'cpu');
  });
});

/** A 20 s render into a fresh temp dir, once ffmpeg has reported progress; `rendering` settles with its result or error. */
async function startLongRender() {
  const work = await tempDir();
  const input = await makeVideo(work.dir, 'long.mp4', { width: 640, height: 360, fps: 30, seconds: 20 });
  const controller = new AbortController();
  let firstProgress!: () => void;
  const started = new Promise<void>((resolve) => (firstProgress = resolve));
  const rendering = renderVideo({
    input,
    output: join(work.dir, 'long-captioned.mp4'),
    painter: blockPainter({ width: 640, height: 360 }),
    format: 'mp4',
    quality: 'high',
    encoder: 'cpu',
    signal: controller.signal,
    onProgress: (p) => p > 0 && firstProgress(),
  }).catch((e: unknown) => e);
  await started;
  return { work, controller, rendering };
}

/** The niceness in a /proc stat line: field 19, counted after the command name's closing parenthesis. */
function niceOf(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** Live processes whose command line mentions `dir` (our ffmpeg writes its partial output there). */
async function ffmpegProcessesIn(dir: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(dir) && cmd.includes('pipe:3')) found.push(Number(pid));
  }
  return found;
}
