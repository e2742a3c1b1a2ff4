import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeFraming } from '../src/index.ts';
import { type Clip, makeClip } from './clips.ts';
import { iou } from './photos.ts';

// Real ffmpeg, the real model (BlazeFace from @vladmandic/human) and real photographs
// (scripts/face-photos.sh): clips where the face's box in every frame is known by construction.

const FPS = 30;
/** The astronaut at 1.40625x (720 px): her face is 127x129 px in the 1920x1080 clip, 17 px wide in the 256 px sample. */
const SCALE = 1.40625;
let dir: string;
// Before the model is first loaded in this process (the first test loads it).
const listenersBefore = { uncaught: process.listeners('uncaughtException'), unhandled: process.listeners('unhandledRejection') };
let oneFace: Clip;
let twoShots: Clip;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'framing-test-'));
  [oneFace, twoShots] = await Promise.all([
    // A third of the width, drifting 40 px right and 20 px down over 4 s (a speaker who moves a little).
    makeClip(dir, 'one-face.mp4', {
      width: 1920,
      height: 1080,
      fps: FPS,
      scale: SCALE,
      shots: [{ frames: 120, background: 'coffee.png', face: { from: { x: 640, y: 420 }, to: { x: 680, y: 440 } } }],
    }),
    // Shot 1: face at a third of the width over the blurred coffee; shot 2 from frame 75: at two thirds, over the blurred rocket.
    makeClip(dir, 'two-shots.mp4', {
      width: 1920,
      height: 1080,
      fps: FPS,
      scale: SCALE,
      shots: [
        { frames: 75, background: 'coffee.png', face: { from: { x: 640, y: 420 }, to: { x: 640, y: 420 } } },
        { frames: 75, background: 'rocket.jpg', face: { from: { x: 1300, y: 500 }, to: { x: 1300, y: 500 } } },
      ],
    }),
  ]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sourceOf = (c: Clip) => ({ width: c.width, height: c.height, durationSeconds: c.durationSeconds, fps: c.fps });

describe('analyzeFraming', () => {
  it('finds the face at a third of the width in at least 90% of the samples, its box over the known face (IoU >= 0.5)', async () => {
    const a = await analyzeFraming({ input: oneFace.file, source: sourceOf(oneFace) });
    expect(a).toMatchObject({ width: 1920, height: 1080, sampleFps: 4, shots: [] });
    expect(a.samples.length).toBeGreaterThanOrEqual(15);
    expect(a.samples.length).toBeLessThanOrEqual(17);
    const hits = a.samples.filter((s) => {
      const truth = oneFace.faceAt(Math.min(119, Math.round(s.t * FPS)))!;
      return s.faces[0] !== undefined && iou(s.faces[0], truth) >= 0.5;
    });
    expect(hits.length / a.samples.length).toBeGreaterThanOrEqual(0.9);
    // One face, and a face is not a "salient region" too.
    for (const s of a.samples) expect(s.faces.length).toBeLessThanOrEqual(1);
    for (const s of a.samples.filter((x) => x.faces.length)) expect(s.salient).toBeNull();
    expect(a.samples.map((s) => s.t).slice(0, 3)).toEqual([0, 0.25, 0.5]);
    // The photo drifts 1/3 px a frame: little motion, but some; none for the first sample.
    expect(a.samples[0]!.motion).toBe(0);
    expect(Math.max(...a.samples.map((s) => s.motion))).toBeLessThan(0.05);
  });

  it('finds the shot change within one frame of the cut, and the face on each side of it', async () => {
    const a = await analyzeFraming({ input: twoShots.file, source: sourceOf(twoShots) });
    const cut = twoShots.shotFrames[1]! / FPS;
    expect(a.shots).toHaveLength(1);
    expect(Math.abs(a.shots[0]! - cut)).toBeLessThanOrEqual(1 / FPS + 1e-6);
    const centreX = (b: { x: number; width: number }) => b.x + b.width / 2;
    const before = a.samples.filter((s) => s.t < cut - 0.1);
    const after = a.samples.filter((s) => s.t > cut + 0.1);
    expect(before.filter((s) => s.faces[0] && Math.abs(centreX(s.faces[0]) - 640) < 60).length).toBeGreaterThanOrEqual(0.9 * before.length);
    expect(after.filter((s) => s.faces[0] && Math.abs(centreX(s.faces[0]) - 1300) < 60).length).toBeGreaterThanOrEqual(0.9 * after.length);
    // The sample across the cut sees the whole picture change.
    const across = a.samples.find((s) => s.t >= cut)!;
    expect(across.motion).toBeGreaterThan(0.05);
  });

  // coffee.png: no face anywhere, the salient region sits on the cup. chelsea.png: the cat's face
  // scores 0.67 (under the 0.7 threshold), so no face either.
  it.each(['coffee.png', 'chelsea.png'] as const)('reports no face on a clip of %s (nobody in it), and a salient region instead', async (background) => {
    const clip = await makeClip(dir, `nobody-${background}.mp4`, {
      width: 1280,
      height: 720,
      fps: 25,
      scale: 1,
      shots: [{ frames: 50, background, face: null }],
    });
    // Not blurred: the photograph itself is the picture here.
    const sharp = await makeSharpClip(clip, background);
    const a = await analyzeFraming({ input: sharp, source: sourceOf(clip) });
    expect(a.samples.length).toBeGreaterThanOrEqual(7);
    expect(a.samples.flatMap((s) => s.faces)).toEqual([]);
    for (const s of a.samples) {
      expect(s.salient).not.toBeNull();
      expect(s.salient!.x).toBeGreaterThanOrEqual(0);
      expect(s.salient!.x + s.salient!.width).toBeLessThanOrEqual(1280 + 1e-6);
      expect(s.salient!.y + s.salient!.height).toBeLessThanOrEqual(720 + 1e-6);
    }
  });

  it('rejects with an AbortError when the signal fires before ffmpeg starts, and leaves no temp folder behind', async () => {
    const before = (await readdir(tmpdir())).filter((n) => n.startsWith('captionfarm-framing-'));
    const controller = new AbortController();
    const run = analyzeFraming({ input: twoShots.file, source: sourceOf(twoShots), signal: controller.signal });
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    const after = (await readdir(tmpdir())).filter((n) => n.startsWith('captionfarm-framing-'));
    expect(after.filter((n) => !before.includes(n))).toEqual([]);
  });

  it('kills its running ffmpeg when the signal fires, and rejects with an AbortError', async () => {
    const controller = new AbortController();
    // 30 samples a second: the run lasts long enough to be caught running.
    const run = analyzeFraming({ input: twoShots.file, source: sourceOf(twoShots), signal: controller.signal, sampleFps: 30 });
    const outcome = run.then(
      () => 'finished',
      (err: unknown) => err,
    );
    const pid = await ffmpegOn(twoShots.file, outcome);
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });

  it("leaves the process's uncaughtException and unhandledRejection listeners as they were (the wasm module adds its own)", () => {
    expect(process.listeners('uncaughtException')).toEqual(listenersBefore.uncaught);
    expect(process.listeners('unhandledRejection')).toEqual(listenersBefore.unhandled);
  });

  it("rejects with ffmpeg's message on a file that is not a video", async () => {
    await expect(analyzeFraming({ input: join(dir, 'missing.mp4'), source: { width: 1920, height: 1080, durationSeconds: 1, fps: 30 } })).rejects.toThrow(
      /ffmpeg exited.*missing\.mp4/s,
    );
  });
});

/** The pid of the ffmpeg analysing `file` (found in /proc), polled until `ended` settles. */
async function ffmpegOn(file: string, ended: Promise<unknown>): Promise<number> {
  let done = false;
  void ended.then(() => {
    done = true;
  });
  while (!done) {
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmd.includes(file) && cmd.includes('scdet')) return Number(pid);
    }
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('the analysis ended before its ffmpeg was seen running');
}

/** The background photo unblurred, as a clip the size of `clip`. */
async function makeSharpClip(clip: Clip, background: 'coffee.png' | 'chelsea.png'): Promise<string> {
  const { runToEnd } = await import('@captionfarm/process');
  const { ffmpegPaths } = await import('@captionfarm/process/tools');
  const { photo } = await import('./photos.ts');
  const out = join(dir, `sharp-${background}.mp4`);
  await runToEnd(ffmpegPaths().ffmpeg, {
    args: [
      '-y',
      '-hide_banner',
      '-loglevel',
      'error',
      '-loop',
      '1',
      '-framerate',
      String(clip.fps),
      '-t',
      String(clip.durationSeconds),
      '-i',
      photo(background),
      '-vf',
      `scale=${clip.width}:${clip.height},format=yuv420p`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      out,
    ],
  });
  return out;
}
