import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CropPath } from '@captionfarm/contracts';
import { RenderError } from '../src/errors.ts';
import { renderRenditions, shareThreads } from '../src/render-renditions.ts';
import type { RenderResult } from '../src/render-video.ts';
import { blockPainter, ffmpeg, ffprobeJson, frameAt, GREEN, near, RED, tempDir } from './helpers/media.ts';

// One source for every check: a grey 1280x720 25 fps 4 s frame with a white 16x16 marker moving
// right at 200 px/s from x=100 (y=300), and a 440 Hz tone. Grey makes the caption blocks (red,
// green) and their absence unambiguous; the marker tells where a crop window was.
const FPS = 25;
const GREY: [number, number, number] = [128, 128, 128];
const markerAt = (s: number) => ({ x: 100 + 200 * s + 8, y: 300 + 8 });

let dir: string;
let cleanup: () => Promise<void>;
let source: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  source = join(dir, 'marker.mp4');
  await ffmpeg([
    '-v',
    'error',
    ...['-f', 'lavfi', '-i', `color=c=gray:s=1280x720:r=${FPS}:d=4`, '-f', 'lavfi', '-i', `color=c=white:s=16x16:r=${FPS}:d=4`],
    ...['-f', 'lavfi', '-i', 'sine=f=440:d=4'],
    ...['-filter_complex', "[0:v][1:v]overlay=x='100+200*t':y=300:eval=frame[v]", '-map', '[v]', '-map', '2:a'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '12', '-pix_fmt', 'yuv420p', '-c:a', 'aac', source],
  ]);
});
afterAll(() => (process.env.KEEP_RENDITIONS ? console.log(dir) : cleanup()));

/** A pan over the first 2.6 s, then a cut to a window further right that holds (source seconds and pixels). */
const pan: CropPath = {
  width: 360,
  height: 640,
  keyframes: [
    { t: 0, x: 0, y: 0 },
    { t: 2.6, x: 400, y: 80 },
    { t: 2.6, x: 500, y: 40 },
  ],
};
const panAt = (s: number) => (s < 2.6 ? { x: (400 * s) / 2.6, y: (80 * s) / 2.6 } : { x: 500, y: 40 });
/** Two keep-ranges, frame-aligned: output 0-1.2 s is source 0-1.2 s, output 1.2-2.8 s is source 1.8-3.4 s. */
const edit = {
  keep: [
    { start: 0, end: 1.2 },
    { start: 1.8, end: 3.4 },
  ],
  zooms: [],
  bleeps: [],
};
const sourceTime = (t: number) => (t < 1.2 - 1e-6 ? t : t + 0.6);

const cues = [
  { start: 0.5, end: 1.25, text: 'first words' },
  { start: 1.5, end: 2.625, text: 'second words' },
];
const vtt = (list: typeof cues) => `WEBVTT\n\n${list.map((c) => `${stamp(c.start)} --> ${stamp(c.end)}\n${c.text}\n`).join('\n')}`;
function stamp(s: number): string {
  const ms = Math.round(s * 1000);
  return `00:00:${String(Math.floor(ms / 1000)).padStart(2, '0')}.${String(ms % 1000).padStart(3, '0')}`;
}

/** Cues read back from a WebVTT file ffmpeg wrote. */
function parseVtt(text: string): { start: number; end: number; text: string }[] {
  const seconds = (t: string) => t.split(':').reduce((acc, part) => acc * 60 + Number(part), 0);
  return [...text.matchAll(/([\d:.]+) --> ([\d:.]+)[^\n]*\n([^\n]+)/g)].map((m) => ({ start: seconds(m[1]!), end: seconds(m[2]!), text: m[3]! }));
}

describe('renderRenditions: three renditions from one run', () => {
  const paths = { tall: '', wide: '', square: '' };
  let results: RenderResult[];
  const progress: number[] = [];
  const tallPainter = blockPainter({ width: 180, height: 320 }, { redAt: 0.4, greenAt: 1.6 });
  const widePainter = blockPainter({ width: 320, height: 180 }, { redAt: 1.0, greenAt: 2.2 });

  beforeAll(async () => {
    paths.tall = join(dir, 'tall.mp4');
    paths.wide = join(dir, 'wide.webm');
    paths.square = join(dir, 'square.mp4');
    const subtitles = join(dir, 'captions.vtt');
    await writeFile(subtitles, vtt(cues));
    // The hook image of the square rendition: a blue 40x40 square at (20, 20) until 1 s.
    const blue = join(dir, 'blue.png');
    await ffmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'color=c=blue:s=40x40', '-frames:v', '1', blue]);
    const png = await readFile(blue);
    results = await renderRenditions({
      input: source,
      quality: 'high',
      encoder: 'cpu',
      edit,
      onProgress: (p) => progress.push(p),
      renditions: [
        { output: paths.tall, format: 'mp4', resolution: { width: 180, height: 320 }, crop: pan, painter: tallPainter },
        {
          output: paths.wide,
          format: 'webm',
          resolution: { width: 320, height: 180 },
          painter: () => widePainter,
          subtitles: { path: subtitles, language: 'de' },
        },
        {
          output: paths.square,
          format: 'mp4',
          resolution: { width: 240, height: 240 },
          painter: null,
          overlayImage: () => ({ png, x: 20, y: 20, until: 1 }),
          subtitles: { path: subtitles, language: 'de' },
        },
      ],
    });
  });

  it('gives each rendition its size, the edited duration and audio', async () => {
    expect(results.map((r) => [r.width, r.height, r.encoder])).toEqual([
      [180, 320, 'cpu'],
      [320, 180, 'cpu'],
      [240, 240, 'cpu'],
    ]);
    for (const [path, video, audio] of [
      [paths.tall, 'h264', 'aac'],
      [paths.wide, 'vp9', 'opus'],
      [paths.square, 'h264', 'aac'],
    ] as const) {
      const probe = await ffprobeJson(path);
      expect(probe.streams.find((s: any) => s.codec_type === 'video')).toMatchObject({ codec_name: video });
      expect(probe.streams.find((s: any) => s.codec_type === 'audio')).toMatchObject({ codec_name: audio });
      // 2.8 s kept of 4 s: the edit applies to every rendition.
      expect(Number(probe.format.duration)).toBeGreaterThan(2.75);
      expect(Number(probe.format.duration)).toBeLessThan(2.9);
    }
    expect(progress.at(-1)).toBe(100);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThan(progress[i - 1]!);
  });

  it('burns each rendition its own captions, laid out at its size, and none where the painter is null', async () => {
    const centre = (b: { x: number; y: number; width: number; height: number }) => [b.x + b.width / 2, b.y + b.height / 2] as const;
    const [tx, ty] = centre(tallPainter.band);
    const [wx, wy] = centre(widePainter.band);
    // The square's would-be band: where blockPainter puts one at 240x240.
    const [sx, sy] = centre(blockPainter({ width: 240, height: 240 }).band);
    const at = async (t: number) => [
      (await frameAt(paths.tall, t)).rgb(tx, ty),
      (await frameAt(paths.wide, t)).rgb(wx, wy),
      (await frameAt(paths.square, t)).rgb(sx, sy),
    ];
    const expected: [number, [number, number, number][]][] = [
      [0.22, [GREY, GREY, GREY]],
      [0.62, [RED, GREY, GREY]],
      [1.42, [RED, RED, GREY]],
      [1.82, [GREEN, RED, GREY]],
      [2.42, [GREEN, GREEN, GREY]],
    ];
    for (const [t, colours] of expected) {
      const seen = await at(t);
      expect(
        seen.map((c, i) => near(c, colours[i]!)),
        `at ${t} s: ${JSON.stringify(seen)}`,
      ).toEqual([true, true, true]);
    }
    expect(tallPainter.painted.length).toBe(3);
  });

  it('lays the hook image over its own rendition only, until its time', async () => {
    const BLUE: [number, number, number] = [0, 0, 255];
    expect(near((await frameAt(paths.square, 0.5)).rgb(40, 40), BLUE)).toBe(true);
    expect(near((await frameAt(paths.square, 1.5)).rgb(40, 40), GREY)).toBe(true);
    expect(near((await frameAt(paths.wide, 0.5)).rgb(40, 40), GREY)).toBe(true);
  });

  it('crops the tall rendition where the path says on every frame, through the edit and the path cut', async () => {
    const { stdout } = await execa(ffmpegPaths().ffmpeg, ['-v', 'error', '-i', paths.tall, '-f', 'rawvideo', '-pix_fmt', 'gray', '-'], { encoding: 'buffer' });
    const frame = 180 * 320;
    const frames = Buffer.from(stdout);
    expect(frames.length / frame).toBe(70);
    const misses: string[] = [];
    for (let i = 0; i < 70; i++) {
      // The marker's centroid above the band (bright pixels on grey).
      let n = 0;
      let sx = 0;
      let sy = 0;
      for (let y = 0; y < tallPainter.band.y; y++) {
        for (let x = 0; x < 180; x++) {
          if (frames[i * frame + y * 180 + x]! > 200) {
            n++;
            sx += x + 0.5;
            sy += y + 0.5;
          }
        }
      }
      const s = sourceTime(i / FPS);
      const want = { x: (markerAt(s).x - panAt(s).x) / 2, y: (markerAt(s).y - panAt(s).y) / 2 };
      const got = { x: sx / n, y: sy / n };
      if (n === 0 || Math.abs(got.x - want.x) > 2 || Math.abs(got.y - want.y) > 2)
        misses.push(`frame ${i}: ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
    }
    expect(misses).toEqual([]);
  });

  it('muxes the WebVTT file as a subtitle track: mov_text in MP4, WebVTT in WebM, the language as ISO 639-2, the same cues', async () => {
    const track = async (path: string) => (await ffprobeJson(path, ['-show_streams'])).streams.find((s: any) => s.codec_type === 'subtitle');
    expect(await track(paths.square)).toMatchObject({ codec_name: 'mov_text', tags: { language: 'deu' } });
    expect(await track(paths.wide)).toMatchObject({ codec_name: 'webvtt', tags: { language: 'ger' } });
    expect(await track(paths.tall)).toBeUndefined();
    for (const path of [paths.square, paths.wide]) {
      const back = `${path}.back.vtt`;
      await ffmpeg(['-v', 'error', '-i', path, '-map', '0:s:0', back]);
      const read = parseVtt(await readFile(back, 'utf8'));
      expect(read.map((c) => c.text)).toEqual(cues.map((c) => c.text));
      // On the video's timeline: WebM starts its video 7 ms in (Opus's priming samples come
      // first, at a negative time), and the extraction counts from the file's start.
      const probe = await ffprobeJson(path);
      const offset = Number(probe.streams.find((s: any) => s.codec_type === 'video').start_time) - Number(probe.format.start_time);
      for (const [i, c] of read.entries()) {
        expect(Math.abs(c.start - offset - cues[i]!.start)).toBeLessThanOrEqual(0.0015);
        expect(Math.abs(c.end - offset - cues[i]!.end)).toBeLessThanOrEqual(0.0015);
      }
    }
  });
});

describe("renderRenditions' encoder threads", () => {
  const sizes = [
    { width: 1080, height: 1920 },
    { width: 1920, height: 1080 },
    { width: 1080, height: 1080 },
  ];
  it('shares the cores by pixels, never below 2 a rendition (x264 on 1 thread encodes inside ffmpeg 5.1 main loop: the renditions one after another)', () => {
    expect(shareThreads(2, sizes)).toEqual([2, 2, 2]);
    expect(shareThreads(16, sizes)).toEqual([6, 6, 4]);
    // One rendition: renderVideo's own rule (the threads given, or x264's choice).
    expect(shareThreads(2, sizes.slice(0, 1))).toEqual([2]);
    expect(shareThreads(undefined, sizes.slice(0, 1))).toEqual([undefined]);
  });
});

describe('renderRenditions failures', () => {
  it('fails the whole run with output-larger-than-source when one rendition is larger than the source, writing nothing', async () => {
    const work = join(dir, 'too-large');
    const err = await renderRenditions({
      input: source,
      quality: 'low',
      renditions: [
        { output: `${work}-a.mp4`, format: 'mp4', resolution: { width: 180, height: 320 }, painter: blockPainter({ width: 180, height: 320 }) },
        { output: `${work}-b.mp4`, format: 'mp4', resolution: { width: 1080, height: 1920 }, painter: blockPainter({ width: 1080, height: 1920 }) },
      ],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).code).toBe('output-larger-than-source');
    expect((await readdir(dir)).filter((f) => f.includes('too-large'))).toEqual([]);
  });

  it('on abort kills ffmpeg and removes every temp file of every rendition', async () => {
    const work = await tempDir();
    const controller = new AbortController();
    const painter = blockPainter({ width: 320, height: 180 });
    // Aborts from inside the run: the painter is asked for the image at 1 s only while ffmpeg runs.
    const aborting = { ...painter, paint: (ctx: Parameters<typeof painter.paint>[0], t: number) => (t >= 1 ? controller.abort() : painter.paint(ctx, t)) };
    await ffmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'nullsrc=s=2x2', '-frames:v', '1', join(dir, 'tiny.png')]);
    const png = await readFile(join(dir, 'tiny.png'));
    const err = await renderRenditions({
      input: source,
      quality: 'low',
      signal: controller.signal,
      renditions: [
        { output: join(work.dir, 'a.mp4'), format: 'mp4', resolution: { width: 320, height: 180 }, painter: aborting },
        {
          output: join(work.dir, 'b.webm'),
          format: 'webm',
          resolution: { width: 180, height: 320 },
          crop: pan,
          painter: null,
          overlayImage: () => ({ png, x: 0, y: 0, until: 2 }),
        },
        { output: join(work.dir, 'c.mp4'), format: 'mp4', resolution: { width: 240, height: 240 }, painter: blockPainter({ width: 240, height: 240 }) },
      ],
    }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(await readdir(work.dir)).toEqual([]);
    await work.cleanup();
  });

  it('refuses no renditions, more than four, and two renditions into one file', async () => {
    const r = { output: join(dir, 'x.mp4'), format: 'mp4' as const, painter: null };
    await expect(renderRenditions({ input: source, quality: 'low', renditions: [] })).rejects.toThrow(TypeError);
    await expect(
      renderRenditions({ input: source, quality: 'low', renditions: [1, 2, 3, 4, 5].map((i) => ({ ...r, output: join(dir, `${i}.mp4`) })) }),
    ).rejects.toThrow(TypeError);
    await expect(renderRenditions({ input: source, quality: 'low', renditions: [r, r] })).rejects.toThrow(TypeError);
  });
});
