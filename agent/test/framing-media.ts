import path from 'node:path';
import { runToEnd } from '@captionfarm/process';
import type { Box } from '@captionfarm/contracts';
import type { Clip } from '../../packages/framing/test/clips.ts';
import { ASTRONAUT_FACE, ASTRONAUT_SIZE, photo } from '../../packages/framing/test/photos.ts';

/**
 * Issue 43's end-to-end media and the checks that read the outputs back, independently of our
 * face detector. The clips are packages/framing's (test/clips.ts): a real photograph of a face
 * (scikit-image's astronaut.png, Eileen Collins, NASA, public domain) laid with ffmpeg over a
 * blurred real photograph, shot by shot, sliding within a shot, so the face's box in every source
 * frame is known by construction (ASTRONAUT_FACE, measured by eye on the still, times the scale,
 * plus the position); here they get a voice (espeak-ng) so there are captions. The outputs are
 * read back with ffmpeg and the face is found in each output frame by normalized cross-correlation
 * of the still's face patch scaled as the output shows it: the reframe is not graded by the
 * detector that planned it.
 */

/**
 * `clip` (packages/framing's test clip: pictures only) with `speech` read by espeak-ng (en-us,
 * 160 words a minute, padded with silence to the clip's end) as its AAC track, the video copied.
 */
export async function withSpeech(clip: Clip, name: string, speech: string): Promise<Clip> {
  const file = path.join(path.dirname(clip.file), name);
  const wav = `${file}.wav`;
  await runToEnd('espeak-ng', { args: ['-v', 'en-us', '-s', '160', '-w', wav, speech] });
  const args = ['-y', '-v', 'error', '-i', clip.file, '-i', wav, '-map', '0:v', '-map', '1:a', '-c:v', 'copy'];
  args.push('-af', 'apad', '-t', clip.durationSeconds.toFixed(6), '-c:a', 'aac', '-ar', '48000', file);
  await runToEnd('ffmpeg', { args });
  return { ...clip, file };
}

/** A grey picture: `width` x `height` bytes, row by row. */
export interface Gray {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Every frame of `video` (or those `select` picks, by frame index n), scaled by `factor`, as grey pictures. */
export async function grayFrames(video: string, o: { width: number; height: number; factor: number; every?: number }): Promise<Gray[]> {
  const width = Math.round(o.width * o.factor);
  const height = Math.round(o.height * o.factor);
  const select = o.every && o.every > 1 ? `select='not(mod(n\\,${o.every}))',` : '';
  const args = ['-v', 'error', '-i', video, '-map', '0:v:0', '-vf', `${select}scale=${width}:${height}:flags=area,format=gray`];
  args.push('-vsync', '0', '-f', 'rawvideo', '-');
  const raw = (await runToEnd('ffmpeg', { args, encoding: 'buffer' })).stdout as Buffer;
  const size = width * height;
  const out: Gray[] = [];
  for (let i = 0; i + size <= raw.length; i += size) out.push({ width, height, data: new Uint8Array(raw.subarray(i, i + size)) });
  return out;
}

/** Frames of `video` as rgb24 (3 bytes a pixel), every `every`-th by index (0, every, 2 * every ...). */
export async function rgbFrames(video: string, o: { width: number; height: number; every: number }): Promise<Buffer[]> {
  const args = ['-v', 'error', '-i', video, '-map', '0:v:0', '-vf', `select='not(mod(n\\,${o.every}))',format=rgb24`];
  args.push('-vsync', '0', '-f', 'rawvideo', '-');
  const raw = (await runToEnd('ffmpeg', { args, encoding: 'buffer' })).stdout as Buffer;
  const size = o.width * o.height * 3;
  const out: Buffer[] = [];
  for (let i = 0; i + size <= raw.length; i += size) out.push(raw.subarray(i, i + size));
  return out;
}

/** One picture file (PNG, JPEG) decoded as rgb24, at its own size or scaled to `size`. */
export async function rgbImage(file: string, size?: { width: number; height: number }): Promise<Buffer> {
  const vf = size ? `scale=${size.width}:${size.height}:flags=bicubic,format=rgb24` : 'format=rgb24';
  const args = ['-v', 'error', '-i', file, '-frames:v', '1', '-vf', vf, '-f', 'rawvideo', '-'];
  return (await runToEnd('ffmpeg', { args, encoding: 'buffer' })).stdout as Buffer;
}

/**
 * The astronaut's face patch (ASTRONAUT_FACE of the still) as it appears at `scale` times the
 * still's size, grey, cut from the still scaled whole (so its edges are resampled as the clip's).
 */
export async function facePatch(scale: number): Promise<Gray> {
  const side = Math.round(ASTRONAUT_SIZE * scale);
  const x = Math.round(ASTRONAUT_FACE.x * scale);
  const y = Math.round(ASTRONAUT_FACE.y * scale);
  const width = Math.round(ASTRONAUT_FACE.width * scale);
  const height = Math.round(ASTRONAUT_FACE.height * scale);
  const vf = `scale=${side}:${side}:flags=area,crop=${width}:${height}:${x}:${y},format=gray`;
  const args = ['-v', 'error', '-i', photo('astronaut.png'), '-frames:v', '1', '-vf', vf, '-f', 'rawvideo', '-'];
  const data = new Uint8Array((await runToEnd('ffmpeg', { args, encoding: 'buffer' })).stdout as Buffer);
  return { width, height, data };
}

/** A match of a patch in a picture: its top-left corner (sub-pixel in x) and the normalized cross-correlation there (-1..1). */
export interface Match {
  x: number;
  y: number;
  score: number;
}

/**
 * Where `patch` best matches `frame` by normalized cross-correlation, searching corners x in
 * [x0, x1] and y in [y0, y1] (clamped to the frame); x refined to a sub-pixel by a parabola
 * through the scores either side of the best.
 */
function findPatch(frame: Gray, patch: Gray, area: { x0?: number; x1?: number; y0?: number; y1?: number } = {}): Match {
  const { width: pw, height: ph } = patch;
  const n = pw * ph;
  let pMean = 0;
  for (let i = 0; i < n; i++) pMean += patch.data[i]!;
  pMean /= n;
  const pz = new Float64Array(n);
  let pVar = 0;
  for (let i = 0; i < n; i++) {
    pz[i] = patch.data[i]! - pMean;
    pVar += pz[i]! * pz[i]!;
  }
  const xs = [Math.max(0, Math.ceil(area.x0 ?? 0)), Math.min(frame.width - pw, Math.floor(area.x1 ?? frame.width))];
  const ys = [Math.max(0, Math.ceil(area.y0 ?? 0)), Math.min(frame.height - ph, Math.floor(area.y1 ?? frame.height))];
  const score = (x: number, y: number): number => {
    let s = 0;
    let ss = 0;
    let cross = 0;
    for (let r = 0; r < ph; r++) {
      const row = (y + r) * frame.width + x;
      const prow = r * pw;
      for (let c = 0; c < pw; c++) {
        const v = frame.data[row + c]!;
        s += v;
        ss += v * v;
        cross += v * pz[prow + c]!;
      }
    }
    const fVar = ss - (s * s) / n;
    return fVar <= 0 || pVar <= 0 ? 0 : cross / Math.sqrt(fVar * pVar);
  };
  let best: Match = { x: xs[0]!, y: ys[0]!, score: -2 };
  for (let y = ys[0]!; y <= ys[1]!; y++) {
    for (let x = xs[0]!; x <= xs[1]!; x++) {
      const v = score(x, y);
      if (v > best.score) best = { x, y, score: v };
    }
  }
  if (best.x > xs[0]! && best.x < xs[1]!) {
    const l = score(best.x - 1, best.y);
    const r = score(best.x + 1, best.y);
    const d = l - 2 * best.score + r;
    if (d < 0) best = { ...best, x: best.x + (0.5 * (l - r)) / d };
  }
  return best;
}

/**
 * `patch` found in each of `frames` with its corner's y in [y0, y1]: near the previous frame's x
 * first (within `near` pixels), across the whole width when that scores under `rescan` (the first
 * frame, a cut, a face lost).
 */
export function trackPatch(frames: Gray[], patch: Gray, o: { y0: number; y1: number; near?: number; rescan?: number }): Match[] {
  const near = o.near ?? 12;
  const out: Match[] = [];
  for (const f of frames) {
    const prev = out.at(-1);
    let m = prev ? findPatch(f, patch, { x0: Math.floor(prev.x) - near, x1: Math.ceil(prev.x) + near, y0: o.y0, y1: o.y1 }) : null;
    if (!m || m.score < (o.rescan ?? 0.85)) {
      const wide = findPatch(f, patch, { y0: o.y0, y1: o.y1 });
      if (!m || wide.score > m.score) m = wide;
    }
    out.push(m);
  }
  return out;
}

/**
 * Caption pixels of `burned` against `clean` (the same rendition of the same job with its captions
 * not burned: the same crop, the same picture), both rgb24 `width` x `height`: a pixel whose
 * largest channel difference is over `threshold` (the text's fill, outline and the dense part of
 * its shadow; the two encodes differ by a few levels elsewhere).
 */
export function captionMask(burned: Buffer, clean: Buffer, width: number, height: number, threshold = 48): Uint8Array {
  const mask = new Uint8Array(width * height);
  for (let i = 0; i < width * height; i++) {
    const j = i * 3;
    const d = Math.max(Math.abs(burned[j]! - clean[j]!), Math.abs(burned[j + 1]! - clean[j + 1]!), Math.abs(burned[j + 2]! - clean[j + 2]!));
    if (d > threshold) mask[i] = 1;
  }
  return mask;
}

/** The set pixels of `mask` (`width` wide) inside `box` (rounded outward, clamped to the frame). */
export function countIn(mask: Uint8Array, width: number, box: Box): number {
  const height = mask.length / width;
  let n = 0;
  for (let y = Math.max(0, Math.floor(box.y)); y < Math.min(height, Math.ceil(box.y + box.height)); y++) {
    for (let x = Math.max(0, Math.floor(box.x)); x < Math.min(width, Math.ceil(box.x + box.width)); x++) n += mask[y * width + x]!;
  }
  return n;
}

/** The bounding box of the set pixels of `mask`, or null. */
export function maskBounds(mask: Uint8Array, width: number): Box | null {
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = -1;
  let y1 = -1;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    const x = i % width;
    const y = (i - x) / width;
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  }
  return x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** One subtitle cue: seconds and text (tags stripped, lines joined by a newline). */
export interface Cue {
  start: number;
  end: number;
  text: string;
}

/** The cues of a WebVTT or SRT document. */
export function parseCues(doc: string): Cue[] {
  const stamp = (s: string) => {
    const m = /(?:(\d+):)?(\d+):(\d+)[.,](\d+)/.exec(s.trim())!;
    return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(`0.${m[4]}`);
  };
  const cues: Cue[] = [];
  for (const block of doc.replace(/\r/g, '').split(/\n\n+/)) {
    const lines = block.split('\n');
    const at = lines.findIndex((l) => l.includes('-->'));
    if (at < 0) continue;
    const [a, b] = lines[at]!.split('-->');
    const text = lines
      .slice(at + 1)
      .join('\n')
      .replace(/<[^>]*>/g, '')
      .replace(/\u200b/g, '')
      .trim();
    cues.push({ start: stamp(a!), end: stamp(b!.trim().split(/\s+/)[0]!), text });
  }
  return cues;
}

/** A media file's streams as ffprobe reports them (codec type and name, size) and its format name. */
export async function probeStreams(file: string): Promise<{
  format: string;
  streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
}> {
  const args = ['-v', 'error', '-show_entries', 'format=format_name:stream=codec_type,codec_name,width,height', '-of', 'json', file];
  const j = JSON.parse((await runToEnd('ffprobe', { args })).stdout);
  return { format: j.format.format_name, streams: j.streams };
}

/**
 * The cues of `file`'s first subtitle track on its picture's timeline: each packet's time less the
 * video's start (a WebM with Opus starts its video a few ms after 0, its audio before it: a player
 * shows a cue at that distance from the first frame), its text as ffmpeg reads it; mov_text's
 * empty samples (the gaps between cues, 2 bytes) left out.
 */
export async function subtitleCues(file: string): Promise<Cue[]> {
  const probe = async (args: string[]) => JSON.parse((await runToEnd('ffprobe', { args: ['-v', 'error', '-of', 'json', ...args, file] })).stdout);
  const video = await probe(['-select_streams', 'v:0', '-show_entries', 'stream=start_time']);
  const start = Number(video.streams[0].start_time);
  const packets = (await probe(['-select_streams', 's:0', '-show_entries', 'packet=pts_time,duration_time,size'])).packets as {
    pts_time: string;
    duration_time: string;
    size: string;
  }[];
  const vtt = (await runToEnd('ffmpeg', { args: ['-v', 'error', '-i', file, '-map', '0:s:0', '-f', 'webvtt', '-'] })).stdout as string;
  const texts = parseCues(vtt).map((c) => c.text);
  const timed = packets.filter((p) => Number(p.size) > 2);
  if (timed.length !== texts.length) throw new Error(`${file}: ${timed.length} subtitle packets with text, ${texts.length} cues`);
  return timed.map((p, i) => ({ start: Number(p.pts_time) - start, end: Number(p.pts_time) + Number(p.duration_time) - start, text: texts[i]! }));
}
