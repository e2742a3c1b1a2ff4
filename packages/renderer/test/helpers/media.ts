import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SKRSContext2D } from '@napi-rs/canvas';
import { execa } from 'execa';
import { ffmpegPaths } from '@captionfarm/process/tools';
import type { BandPainter } from '../../src/paint/types.ts';

// The tests' tools through execa, like the product's (its output as text, with the final newline).
const run = (file: string, args: string[]) => execa(file, args, { stripFinalNewline: false });

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'captionfarm-renderer-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function ffmpeg(args: string[]): Promise<string> {
  const { stderr } = await run(ffmpegPaths().ffmpeg, ['-hide_banner', '-nostdin', '-y', ...args]);
  return stderr;
}

export async function ffprobeJson(path: string, extra: string[] = ['-show_format', '-show_streams']): Promise<any> {
  const { stdout } = await run(ffmpegPaths().ffprobe, ['-v', 'error', '-print_format', 'json', ...extra, path]);
  return JSON.parse(stdout);
}

export interface TestVideo {
  width: number;
  height: number;
  fps: number;
  seconds: number;
  /** Speech from espeak-ng, muxed as AAC (mp4) */
  audio?: boolean;
  /** Rotation metadata (degrees) written into the container, pixels untouched. */
  rotate?: number;
  /** Drop every 3rd frame and jitter the rest: a variable-frame-rate source. */
  vfr?: boolean;
}

/** A short testsrc2 clip (plus espeak-ng speech) as H.264 in mp4, made at test time. */
export async function makeVideo(dir: string, name: string, v: TestVideo): Promise<string> {
  const out = join(dir, name);
  const inputs = ['-f', 'lavfi', '-i', `testsrc2=s=${v.width}x${v.height}:r=${v.fps}:d=${v.seconds}`];
  if (v.audio) {
    const wav = join(dir, `${name}.wav`);
    await run('espeak-ng', ['-w', wav, 'The north wind and the sun were disputing which was the stronger.']);
    inputs.push('-i', wav);
  }
  const vf = v.vfr ? ['-vf', "select='not(eq(mod(n\\,3)\\,1))',setpts='PTS+0.004*mod(N\\,2)/TB'", '-fps_mode', 'vfr'] : [];
  const encoded = v.rotate ? join(dir, `unrotated-${name}`) : out;
  await ffmpeg([
    ...inputs,
    ...vf,
    '-map',
    '0:v',
    ...(v.audio ? ['-map', '1:a', '-c:a', 'aac', '-af', 'apad', '-t', String(v.seconds)] : []),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '12',
    '-pix_fmt',
    'yuv420p',
    encoded,
  ]);
  if (v.rotate) await ffmpeg(['-i', encoded, '-c', 'copy', '-metadata:s:v:0', `rotate=${v.rotate}`, out]);
  return out;
}

/** The first decoded frame at or after time t, as RGB24 (ask for the middle between two frames to be unambiguous). */
export async function frameAt(path: string, t: number): Promise<{ width: number; height: number; rgb: (x: number, y: number) => [number, number, number] }> {
  const info = await ffprobeJson(path, ['-select_streams', 'v:0', '-show_entries', 'stream=width,height']);
  const { width, height } = info.streams[0];
  const { stdout } = await execa(
    ffmpegPaths().ffmpeg,
    ['-v', 'error', '-ss', String(t), '-i', path, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    { encoding: 'buffer' },
  );
  const buf = Buffer.from(stdout);
  return {
    width,
    height,
    rgb: (x, y) => {
      const i = (y * width + x) * 3;
      return [buf[i]!, buf[i + 1]!, buf[i + 2]!];
    },
  };
}

/** Average PSNR (dB) between the same rectangle of two videos, frame by frame, over [from, to) seconds. */
export async function psnr(
  a: string,
  b: string,
  rect: { x: number; y: number; width: number; height: number },
  range?: { from: number; to: number },
): Promise<number> {
  const crop = `crop=${rect.width}:${rect.height}:${rect.x}:${rect.y}`;
  const trim = range ? `,trim=start=${range.from}:end=${range.to}` : '';
  const stderr = await ffmpeg([
    '-loglevel',
    'info',
    '-i',
    a,
    '-i',
    b,
    '-filter_complex',
    `[0:v]${crop}${trim}[a];[1:v]${crop}${trim}[b];[a][b]psnr`,
    '-f',
    'null',
    '-',
  ]);
  const m = /PSNR .*average:(\S+)/.exec(stderr);
  if (!m) throw new Error(`no PSNR in ffmpeg output:\n${stderr}`);
  return m[1] === 'inf' ? Infinity : Number(m[1]);
}

export const RED: [number, number, number] = [255, 0, 0];
export const GREEN: [number, number, number] = [0, 255, 0];

/**
 * A test painter: a band over the lower part of the frame, transparent until `redAt`, then a
 * solid red rectangle in its middle, green from `greenAt`.
 */
export function blockPainter(size: { width: number; height: number }, times = { redAt: 0.4, greenAt: 1.0 }): BandPainter & { painted: number[] } {
  const even = (n: number): number => Math.floor(n / 2) * 2;
  const band = { x: 0, y: even(size.height * 0.6), width: even(size.width), height: even(size.height * 0.3) };
  const painted: number[] = [];
  return {
    band,
    painted,
    keyAt: (t) => (t < times.redAt ? 'none' : t < times.greenAt ? 'red' : 'green'),
    paint(ctx: SKRSContext2D, t: number) {
      painted.push(t);
      if (t < times.redAt) return;
      ctx.fillStyle = t < times.greenAt ? 'rgb(255,0,0)' : 'rgb(0,255,0)';
      ctx.fillRect(band.width / 4, band.height / 4, band.width / 2, band.height / 2);
    },
  };
}

/** Colour distance that tolerates x264/VP9 and YUV 4:2:0 round trips. */
export function near(actual: [number, number, number], expected: [number, number, number], tolerance = 40): boolean {
  return actual.every((c, i) => Math.abs(c - expected[i]!) <= tolerance);
}

/**
 * Average PSNR of `burned` against `overlay` laid over `base` with ffmpeg's overlay filter (a VP9
 * overlay decoded by libvpx, which keeps its alpha): how close compositing an overlay output comes
 * to the burned render. Also used by the agent's brand e2e.
 */
export async function psnrOfComposite(base: string, overlay: string, burned: string): Promise<number> {
  const alphaDecoder = overlay.endsWith('.webm') ? ['-c:v', 'libvpx-vp9'] : [];
  const stderr = await ffmpeg([
    '-loglevel',
    'info',
    '-i',
    base,
    ...alphaDecoder,
    '-i',
    overlay,
    '-i',
    burned,
    '-filter_complex',
    '[0:v][1:v]overlay=format=yuv420[c];[c][2:v]psnr',
    '-f',
    'null',
    '-',
  ]);
  const m = /PSNR .*average:(\S+)/.exec(stderr);
  if (!m) throw new Error(stderr);
  return m[1] === 'inf' ? Infinity : Number(m[1]);
}
