import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegPaths } from '@captionfarm/process/tools';
import type { BandPainter } from '../src/paint/types.ts';
import { renderVideo, type RenderVideoOptions } from '../src/render-video.ts';
import { blockPainter, ffmpeg, ffprobeJson, frameAt, near, psnr, RED, tempDir } from './helpers/media.ts';

// renderVideo with an edit (issue 42): cuts, eased zooms, bleeps and the hook title image, through
// the real ffmpeg on sources made here with lavfi.

const RATE = 48000;
const FRAME = 0.04; // 25 fps
const KEEP = [
  { start: 0.2, end: 1.0 },
  { start: 2.0, end: 3.0 },
  { start: 4.4, end: 5.6 },
];

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir()));
afterAll(() => cleanup());

/** A lavfi source as H.264 + AAC mp4 (no audio when `audio` is null). */
async function source(name: string, o: { video: string; vf?: string; audio: string | null; seconds: number }): Promise<string> {
  const out = join(dir, name);
  await ffmpeg([
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `${o.video}:d=${o.seconds}`,
    ...(o.audio ? ['-f', 'lavfi', '-i', `${o.audio}:s=${RATE}:d=${o.seconds}`] : []),
    ...(o.vf ? ['-vf', o.vf] : []),
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '12', '-pix_fmt', 'yuv420p'],
    ...(o.audio ? ['-c:a', 'aac', '-b:a', '192k'] : []),
    out,
  ]);
  return out;
}

const render = (o: Partial<RenderVideoOptions> & Pick<RenderVideoOptions, 'input' | 'output'>) =>
  renderVideo({ painter: blockPainter({ width: 320, height: 240 }), format: 'mp4', quality: 'high', encoder: 'cpu', ...o });

/** The first audio track decoded to mono float samples at RATE. */
async function pcm(path: string): Promise<Float32Array> {
  const { stdout } = await execa(ffmpegPaths().ffmpeg, ['-v', 'error', '-i', path, '-map', '0:a:0', '-ac', '1', '-ar', String(RATE), '-f', 'f32le', '-'], {
    encoding: 'buffer',
  });
  const buf = Buffer.from(stdout);
  return new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
}

/** Each video frame's time and mean luma, in presentation order. */
async function lumaByFrame(path: string): Promise<{ t: number; luma: number }[]> {
  const times = (await ffprobeJson(path, ['-select_streams', 'v:0', '-show_entries', 'frame=pts_time'])).frames.map((f: any) => Number(f.pts_time));
  const { stdout } = await execa(ffmpegPaths().ffmpeg, ['-v', 'error', '-i', path, '-fps_mode', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'gray', '-'], {
    encoding: 'buffer',
  });
  const buf = Buffer.from(stdout);
  const size = buf.length / times.length;
  return times.map((t: number, i: number) => {
    let sum = 0;
    for (let p = i * size; p < (i + 1) * size; p++) sum += buf[p]!;
    return { t, luma: sum / size };
  });
}

async function streamDurations(path: string): Promise<Record<string, number>> {
  const probe = await ffprobeJson(path);
  return Object.fromEntries(probe.streams.map((s: any) => [s.codec_type, Number(s.duration)]));
}

/** Power of `hz` in samples [from, to) (Goertzel), as a share of the window's total power. */
function toneShare(x: Float32Array, from: number, to: number, hz: number): { share: number; rms: number } {
  const w = (2 * Math.PI * hz) / RATE;
  const c = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (let i = from; i < to; i++) {
    const s0 = x[i]! + c * s1 - s2;
    s2 = s1;
    s1 = s0;
    energy += x[i]! * x[i]!;
  }
  const n = to - from;
  const power = (s1 * s1 + s2 * s2 - c * s1 * s2) / ((n * n) / 2);
  const mean = energy / n;
  return { share: mean > 0 ? power / mean : 0, rms: Math.sqrt(mean) };
}

/** The largest step between two consecutive samples in [from, to). */
function maxStep(x: Float32Array, from: number, to: number): number {
  let max = 0;
  for (let i = Math.max(1, from); i < Math.min(to, x.length); i++) max = Math.max(max, Math.abs(x[i]! - x[i - 1]!));
  return max;
}

describe('cuts', () => {
  let input: string;
  let out: string;
  const progress: number[] = [];
  beforeAll(async () => {
    input = await source('tone.mp4', { video: 'testsrc2=s=320x240:r=25', audio: "aevalsrc='0.125*sin(2*PI*440*t)'", seconds: 6 });
    out = join(dir, 'cut.mp4');
    const result = await render({ input, output: out, edit: { keep: KEEP, zooms: [], bleeps: [] }, onProgress: (p) => progress.push(p) });
    expect(result.durationSeconds).toBeCloseTo(3, 1);
  });

  it('makes the output as long as the keep-ranges, video and audio alike, to within a frame', async () => {
    const d = await streamDurations(out);
    expect(Math.abs(d.video! - 3)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(d.audio! - 3)).toBeLessThanOrEqual(FRAME);
    expect(Number((await ffprobeJson(out)).streams[0].nb_frames)).toBe(75);
  });

  it('shows the frames of each range in order: testsrc2 frame 50 (2.0 s) is output frame 20 (0.8 s)', async () => {
    // testsrc2 draws its own clock; compare with the source's frame rather than read it.
    expect(await psnr(out, input, { x: 0, y: 0, width: 320, height: 100 }, { from: 0, to: 0.04 })).toBeLessThan(40);
    const a = await frameAt(out, 0.82);
    const b = await frameAt(input, 2.02);
    let diff = 0;
    for (let x = 0; x < 320; x += 8) for (let y = 0; y < 120; y += 8) diff += Math.abs(a.rgb(x, y)[0] - b.rgb(x, y)[0]);
    expect(diff / (40 * 15)).toBeLessThan(8);
  });

  it('reports percents of the output duration, up to 99 before the file is in place, then 100', () => {
    expect(progress.at(-1)).toBe(100);
    expect(progress.at(-2)).toBe(99);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThan(progress[i - 1]!);
  });

  it('cuts a source without audio', async () => {
    const silent = await source('silent.mp4', { video: 'testsrc2=s=320x240:r=25', audio: null, seconds: 6 });
    const o = join(dir, 'silent-cut.mp4');
    await render({ input: silent, output: o, edit: { keep: KEEP, zooms: [], bleeps: [{ start: 0.5, end: 0.7 }] } });
    const d = await streamDurations(o);
    expect(Object.keys(d)).toEqual(['video']);
    expect(Math.abs(d.video! - 3)).toBeLessThanOrEqual(FRAME);
  });

  it('keeps a flash and a beep made together within one frame of each other', async () => {
    // A white frame at 5.00 s and a 1 kHz beep from 5.00 s, inside the third range: output 2.40 s.
    const sync = await source('sync.mp4', {
      video: 'color=c=black:s=320x240:r=25',
      vf: "drawbox=w=iw:h=ih:color=white:t=fill:enable='eq(n,125)'",
      audio: "aevalsrc='0.5*sin(2*PI*1000*t)*between(t,5,5.1)'",
      seconds: 6,
    });
    const o = join(dir, 'sync-cut.mp4');
    await render({ input: sync, output: o, edit: { keep: KEEP, zooms: [], bleeps: [] } });
    const frames = await lumaByFrame(o);
    const flash = frames.filter((f) => f.luma > 128);
    expect(flash.length).toBe(1);
    const samples = await pcm(o);
    const onset = samples.findIndex((v) => Math.abs(v) > 0.1) / RATE;
    expect(Math.abs(flash[0]!.t - 2.4)).toBeLessThan(FRAME / 2);
    expect(Math.abs(onset - flash[0]!.t)).toBeLessThan(FRAME);
  });
});

describe('audio joins', () => {
  // A continuous 440 Hz sine at -6 dBFS cut at 5 joins whose phases do not match.
  const keep = [0, 1, 2, 3, 4, 5].map((k) => ({ start: k, end: k + 0.52 }));
  let input: string;
  beforeAll(async () => {
    input = await source('sine.mp4', { video: 'color=c=gray:s=160x120:r=25', audio: "aevalsrc='0.5*sin(2*PI*440*t)'", seconds: 6 });
  });

  it('have no click: no sample step near a join above what the sine itself steps, where a hard cut steps far more', async () => {
    const o = join(dir, 'sine-cut.mp4');
    await renderVideo({
      input,
      output: o,
      painter: blockPainter({ width: 160, height: 120 }),
      format: 'mp4',
      quality: 'high',
      encoder: 'cpu',
      edit: { keep, zooms: [], bleeps: [] },
    });
    // The same cut without fades: atrim + concat, encoded alike.
    const hard = join(dir, 'sine-hard.mp4');
    const parts = keep.map((r, i) => `[0:a]atrim=start=${r.start}:end=${r.end},asetpts=PTS-STARTPTS[a${i}]`);
    const split = `[0:a]asplit=${keep.length}${keep.map((_r, i) => `[i${i}]`).join('')}`;
    const graph = [
      split,
      ...parts.map((p, i) => p.replace('[0:a]', `[i${i}]`)),
      `${keep.map((_r, i) => `[a${i}]`).join('')}concat=n=${keep.length}:v=0:a=1[a]`,
    ].join(';');
    await ffmpeg(['-v', 'error', '-i', input, '-filter_complex', graph, '-map', '[a]', '-c:a', 'aac', '-b:a', '160k', hard]);
    const ours = await pcm(o);
    const theirs = await pcm(hard);
    // The sine's own largest step: 0.5 * 2 * PI * 440 / 48000 = 0.029.
    const own = maxStep(ours, RATE * 0.1, RATE * 0.4);
    const joins = [1, 2, 3, 4, 5].map((k) => Math.round(k * 0.52 * RATE));
    const near = (x: Float32Array) => Math.max(...joins.map((j) => maxStep(x, j - 960, j + 960)));
    const fadedStep = near(ours);
    const hardStep = near(theirs);
    console.log(`largest sample step within 20 ms of a join: faded ${fadedStep.toFixed(4)}, hard cut ${hardStep.toFixed(4)}, the sine's own ${own.toFixed(4)}`);
    // Threshold 0.045 of full scale: 1.5 x the sine's own step (AAC's noise rides on it).
    expect(own).toBeLessThan(0.035);
    expect(fadedStep).toBeLessThan(0.045);
    expect(hardStep).toBeGreaterThan(0.1);
  });
});

describe('bleeps', () => {
  it('replace exactly the bleeped span with a 1 kHz tone at -12 dBFS and leave the rest as it was', async () => {
    // Silence, then speech-like pink noise from 0.5 s to 2.5 s, then silence.
    const input = await source('noise.mp4', {
      video: 'color=c=gray:s=160x120:r=25',
      audio: "aevalsrc='0.3*(random(0)-0.5)*between(t,0.5,2.5)'",
      seconds: 3,
    });
    const o = join(dir, 'bleeped.mp4');
    await renderVideo({
      input,
      output: o,
      painter: blockPainter({ width: 160, height: 120 }),
      format: 'mp4',
      quality: 'high',
      encoder: 'cpu',
      edit: { keep: [{ start: 0, end: 3 }], zooms: [], bleeps: [{ start: 1.0, end: 1.5 }] },
    });
    const [src, out] = [await pcm(input), await pcm(o)];
    const at = (t: number) => Math.round(t * RATE);
    const inside = toneShare(out, at(1.01), at(1.49), 1000);
    expect(inside.share).toBeGreaterThan(0.95);
    // -12 dBFS peak is an RMS of 0.178.
    expect(inside.rms).toBeGreaterThan(0.16);
    expect(inside.rms).toBeLessThan(0.2);
    // Right up to the edges (AAC smears a few ms), and not past them.
    expect(toneShare(out, at(1.003), at(1.01), 1000).share).toBeGreaterThan(0.8);
    expect(toneShare(out, at(1.49), at(1.497), 1000).share).toBeGreaterThan(0.8);
    for (const [a, b] of [
      [0.6, 0.99],
      [1.51, 2.4],
    ] as const) {
      expect(toneShare(out, at(a), at(b), 1000).share).toBeLessThan(0.05);
      // Outside, the speech is the source's: the difference is the codec's, far below the signal.
      let diff = 0;
      let energy = 0;
      for (let i = at(a); i < at(b); i++) {
        diff += (out[i]! - src[i]!) ** 2;
        energy += src[i]! ** 2;
      }
      expect(diff / energy).toBeLessThan(0.05);
    }
  });
});

describe('zoom', () => {
  /** A band painted solid over its whole rect: what the zoom must leave exactly alone. */
  const solidBand = (): BandPainter => ({
    band: { x: 0, y: 160, width: 320, height: 60 },
    keyAt: () => 'solid',
    paint(ctx) {
      ctx.fillStyle = 'rgb(30,160,220)';
      ctx.fillRect(0, 0, 320, 60);
    },
  });
  let input: string;
  let zoomed: string;
  let flat: string;
  beforeAll(async () => {
    input = await source('zoom-src.mp4', { video: 'testsrc2=s=320x240:r=25', audio: "aevalsrc='0.125*sin(2*PI*440*t)'", seconds: 6 });
    zoomed = join(dir, 'zoomed.mp4');
    flat = join(dir, 'unzoomed.mp4');
    const zooms = [{ start: 0.6, end: 1.6, scale: 1.15 }];
    await render({ input, output: zoomed, painter: solidBand(), edit: { keep: KEEP, zooms, bleeps: [] } });
    await render({ input, output: flat, painter: solidBand(), edit: { keep: KEEP, zooms: [], bleeps: [] } });
  });

  it('punches in on the picture during the zoom and nowhere else', async () => {
    const above = { x: 0, y: 0, width: 320, height: 160 };
    expect(await psnr(zoomed, flat, above, { from: 0.9, to: 1.3 })).toBeLessThan(22);
    // Outside the zoom the frames went in identical (edit-graph.test.ts checks them bit for bit):
    // what differs here is the encoder's choices around the zoomed frames.
    expect(await psnr(zoomed, flat, above, { from: 0, to: 0.5 })).toBeGreaterThan(40);
    expect(await psnr(zoomed, flat, above, { from: 1.8, to: 3 })).toBeGreaterThan(40);
  });

  it('never scales or moves the captions', async () => {
    expect(await psnr(zoomed, flat, { x: 0, y: 160, width: 320, height: 60 }, { from: 0.9, to: 1.3 })).toBeGreaterThan(45);
  });
});

describe('many ranges', () => {
  it.each([200, 2000])(
    'renders %i keep-ranges in sync (2,000 is the most a job may send, its graph read from a file), leaving no file behind',
    async (n) => {
      // 0.04 s kept of every 0.08 s: one frame of each two.
      const seconds = n * 0.08;
      const input = await source(`long-${n}.mp4`, { video: 'testsrc2=s=64x48:r=25', audio: "aevalsrc='0.125*sin(2*PI*440*t)'", seconds });
      const keep = Array.from({ length: n }, (_v, k) => ({ start: Number((k * 0.08).toFixed(2)), end: Number((k * 0.08 + 0.04).toFixed(2)) }));
      const work = await tempDir();
      const o = join(work.dir, 'many.mp4');
      const progress: number[] = [];
      await renderVideo({
        input,
        output: o,
        painter: blockPainter({ width: 64, height: 48 }),
        format: 'mp4',
        quality: 'low',
        encoder: 'cpu',
        edit: { keep, zooms: [], bleeps: [] },
        onProgress: (p) => progress.push(p),
      });
      const d = await streamDurations(o);
      expect(Math.abs(d.video! - seconds / 2)).toBeLessThanOrEqual(FRAME);
      expect(Math.abs(d.audio! - seconds / 2)).toBeLessThanOrEqual(FRAME);
      expect(Number((await ffprobeJson(o)).streams[0].nb_frames)).toBe(n);
      expect(progress.slice(-2)).toEqual([99, 100]);
      expect(await readdir(work.dir)).toEqual(['many.mp4']);
      await work.cleanup();
    },
    180_000,
  );
});

describe('overlay image', () => {
  it('shows the image from the start, fades it out by `until`, and leaves the captions over it', async () => {
    const input = await source('hook-src.mp4', { video: 'color=c=gray:s=320x240:r=25', audio: "aevalsrc='0.125*sin(2*PI*440*t)'", seconds: 3 });
    const canvas = createCanvas(120, 40);
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = 'rgb(0,0,255)';
    ctx.fillRect(0, 0, 120, 40);
    const png = canvas.toBuffer('image/png');
    const frames: unknown[] = [];
    const o = join(dir, 'hook.mp4');
    await render({
      input,
      output: o,
      edit: { keep: [{ start: 0.5, end: 3 }], zooms: [{ start: 0, end: 1, scale: 1.2 }], bleeps: [] },
      overlayImage: (frame) => {
        frames.push(frame);
        return { png, x: 20, y: 20, until: 1.2 };
      },
    });
    expect(frames).toEqual([{ width: 320, height: 240, fps: 25 }]);
    const BLUE: [number, number, number] = [0, 0, 255];
    // Drawn after the zoom: its edges are where the factory put them, mid-zoom too.
    const mid = await frameAt(o, 0.5);
    expect(near(mid.rgb(22, 22), BLUE)).toBe(true);
    expect(near(mid.rgb(137, 57), BLUE)).toBe(true);
    expect(near(mid.rgb(17, 17), BLUE)).toBe(false);
    expect(near(mid.rgb(143, 63), BLUE)).toBe(false);
    // Half faded at 1.1 s, gone from 1.2 s.
    const fading = (await frameAt(o, 1.1)).rgb(80, 40);
    expect(fading[2]).toBeGreaterThan(fading[0] + 30);
    expect(near(fading, BLUE)).toBe(false);
    expect(near((await frameAt(o, 1.3)).rgb(80, 40), [128, 128, 128])).toBe(true);
    // The captions still come out on top (blockPainter: red from 0.4 s in the band's middle).
    expect(near((await frameAt(o, 0.7)).rgb(160, 180), RED)).toBe(true);
  });
});

describe('overlay image elsewhere', () => {
  const png = (): Buffer => {
    const canvas = createCanvas(120, 40);
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = 'rgb(0,0,255)';
    ctx.fillRect(0, 0, 120, 40);
    return canvas.toBuffer('image/png');
  };

  it('goes into a transparent overlay output too, and under a caption stream', async () => {
    const input = await source('hook-plain.mp4', { video: 'color=c=gray:s=320x240:r=25', audio: null, seconds: 2 });
    const overlayImage = () => ({ png: png(), x: 20, y: 20, until: 1 });
    const webm = join(dir, 'hook-overlay.webm');
    await render({ input, output: webm, format: 'webm', overlay: true, overlayImage });
    // Decoded with its alpha: the image is opaque in the overlay at 0.5 s, transparent after 1 s.
    const alphaAt = async (t: number): Promise<number> => {
      const { stdout } = await execa(
        ffmpegPaths().ffmpeg,
        ['-v', 'error', '-c:v', 'libvpx-vp9', '-ss', String(t), '-i', webm, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgba', '-'],
        { encoding: 'buffer' },
      );
      return Buffer.from(stdout)[(40 * 320 + 80) * 4 + 3]!;
    };
    expect(await alphaAt(0.5)).toBeGreaterThan(240);
    expect(await alphaAt(1.5)).toBeLessThan(10);
    const streamed = join(dir, 'hook-streamed.mp4');
    const captionStream = (frame: { width: number; height: number }) => {
      const painter = blockPainter(frame);
      return { band: painter.band, next: async () => ({ painter, until: Infinity }) };
    };
    await renderVideo({ input, output: streamed, captionStream, overlayImage, format: 'mp4', quality: 'high', encoder: 'cpu' });
    expect(near((await frameAt(streamed, 0.5)).rgb(80, 40), [0, 0, 255])).toBe(true);
    expect(near((await frameAt(streamed, 0.7)).rgb(160, 180), RED)).toBe(true);
  });
});

describe('refuses', () => {
  it('an edit with a caption stream or an overlay output', () => {
    const edit = { keep: KEEP, zooms: [], bleeps: [] };
    const base = { input: 'in.mp4', output: 'out.mp4', format: 'webm' as const, quality: 'high' as const, edit };
    const band = { x: 0, y: 0, width: 2, height: 2 };
    expect(() => renderVideo({ ...base, captionStream: () => ({ band, next: () => new Promise(() => undefined) }) })).toThrow(TypeError);
    expect(() => renderVideo({ ...base, overlay: true, painter: blockPainter({ width: 320, height: 240 }) })).toThrow(TypeError);
  });
});
