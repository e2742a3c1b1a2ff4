import { randomUUID } from 'node:crypto';
import { rm, stat, writeFile } from 'node:fs/promises';
import { runFf } from './call-ff.ts';
import { RenderError } from './errors.ts';
import { createCanvas } from './paint/canvas.ts';
import type { BandPainter } from './paint/types.ts';
import { probeMedia, toFileUrl } from './probe-media.ts';

// Issue 43: the poster, a JPEG of the rendered video at a time, with the caption band laid over it
// when the captions were not burned into the video (subtitles 'track').

export interface PosterOptions {
  /** The rendered video (the job's first rendition). */
  video: string;
  /** Seconds of `video`: the frame on screen then (the last one starting at or before it). Past the end: the last frame. */
  at: number;
  /** Where the JPEG goes (written whole by ffmpeg; replaced if it exists). */
  output: string;
  /** The rendition's caption painter, when its captions are not in the pixels: its band at `at` is laid over the frame. */
  painter?: BandPainter | null | undefined;
  signal?: AbortSignal | undefined;
}

export interface PosterResult {
  width: number;
  height: number;
  bytes: number;
  /** The time the frame (and the band) was taken at: `at`, or the last frame's start when `at` is past it. */
  at: number;
}

/**
 * Writes the poster: the frame of `video` on screen at `at` seconds (exact: ffmpeg seeks a little
 * before it, decodes, and keeps the last frame starting at or before `at`), with the painter's band
 * at that time over it, as a baseline JPEG at quality 2 (full-range YUV 4:2:0, the JFIF range:
 * the frame goes through RGB, so a limited-range video keeps its blacks and whites).
 */
export async function renderPoster(o: PosterOptions): Promise<PosterResult> {
  const info = await probeMedia(o.video, { signal: o.signal });
  const frame = 1 / info.fps;
  const at = Math.min(Math.max(0, o.at), Math.max(0, info.durationSeconds - frame));
  const band = o.painter?.band;
  if (band && (band.x < 0 || band.y < 0 || band.x + band.width > info.width || band.y + band.height > info.height)) {
    throw new RenderError(
      'render-failed',
      `The caption band ${JSON.stringify(band)} is not inside the ${info.width}x${info.height} video; paint it at the video's size`,
    );
  }
  const bandPng = o.painter && band ? `${o.output}.band-${randomUUID()}.png` : null;
  // A poster left from an earlier try must not pass for this one's.
  await rm(o.output, { force: true });
  try {
    if (o.painter && band && bandPng) {
      const canvas = createCanvas(band.width, band.height);
      o.painter.paint(canvas.getContext('2d'), at);
      await writeFile(bandPng, await canvas.encode('png'));
    }
    const args = posterArgs({ video: o.video, at, frameSeconds: frame, output: o.output, band: band && bandPng ? { ...band, png: bandPng } : null });
    const result = await runFf({ bin: 'ffmpeg', args, signal: o.signal }).done;
    if (result.exitCode !== 0) {
      throw new RenderError('render-failed', `ffmpeg could not write the poster (${result.exitSignal ?? `exit ${result.exitCode}`})`, {
        stderrTail: result.stderrTail,
      });
    }
    const { size } = await stat(o.output).catch((cause: unknown) => {
      throw new RenderError('render-failed', 'ffmpeg wrote no poster (no frame decoded at that time); retry the job', { stderrTail: result.stderrTail, cause });
    });
    return { width: info.width, height: info.height, bytes: size, at };
  } finally {
    if (bandPng) await rm(bandPng, { force: true });
  }
}

/**
 * ffmpeg's arguments for the poster. The input is seeked (accurately: decoded from the keyframe
 * before, frames before the seek point dropped) to a little before `at`, so timestamps start there;
 * `select` keeps the first frame and every frame starting by `at`, and the image muxer
 * (`-update 1`) keeps overwriting one file, so the last kept frame is what remains. Reading stops
 * shortly after `at`. The band, an RGBA PNG with straight alpha, is laid over in RGB.
 */
function posterArgs(o: { video: string; at: number; frameSeconds: number; output: string; band: { x: number; y: number; png: string } | null }): string[] {
  const lead = Math.max(0.5, 2 * o.frameSeconds);
  const from = Math.max(0, o.at - lead);
  const until = o.at - from;
  // A microsecond of slack: a frame starting exactly at `at` (timestamps in whole time-base ticks) is on screen then.
  const pick = `select='lte(t\\,${(until + 1e-6).toFixed(6)})+eq(n\\,0)',format=rgb24`;
  const inputs = ['-ss', from.toFixed(6), '-t', (until + lead).toFixed(6), '-i', toFileUrl(o.video)];
  const graph = o.band
    ? [
        '-i',
        toFileUrl(o.band.png),
        '-filter_complex',
        `[0:v]${pick}[f];[1:v]format=rgba[b];[f][b]overlay=x=${o.band.x}:y=${o.band.y}:format=rgb,format=yuvj420p[v]`,
        '-map',
        '[v]',
      ]
    : ['-vf', `${pick},format=yuvj420p`, '-map', '0:v:0'];
  return [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-loglevel',
    'error',
    ...inputs,
    ...graph,
    '-an',
    '-sn',
    '-dn',
    '-c:v',
    'mjpeg',
    '-q:v',
    '2',
    '-update',
    '1',
    '-f',
    'image2',
    toFileUrl(o.output),
  ];
}
