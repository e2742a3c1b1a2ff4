import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runToEnd } from '@captionfarm/process';

/**
 * Issue 42's test media and signal checks. A clip is built at test time from espeak-ng words and
 * silences laid end to end, so the source time of every spoken piece (word, filler, repeat) is
 * known to the sample; a white flash frame and a 1 kHz beep can be placed at the same instant. The
 * checks read the rendered output back with ffmpeg: a source piece found in the output audio by
 * normalized cross-correlation, the largest sample step near a join, each frame's mean luma (the
 * flash), and the share of a window's energy at 1 kHz (Goertzel: the sync beep and the bleeps).
 */

/** The rate every analysis runs at (the rate whisper hears). */
export const RATE = 16_000;
/** The sync beep's and the bleep's frequency. */
const TONE_HZ = 1000;

/** One item of a clip's script: a spoken piece, or a silence in place of the gap between pieces. */
export type ScriptItem = { say: string; kind?: PieceKind } | { pause: number };
/** `word`: a reference word that an edit must keep; `filler` and `repeat`: pieces that `fillers: safe` cuts. */
type PieceKind = 'word' | 'filler' | 'repeat' | 'profane';

export interface Piece {
  text: string;
  kind: PieceKind;
  /** Audible bounds in source seconds (espeak's own leading and trailing silence trimmed). */
  start: number;
  end: number;
  /** The piece's samples at RATE, as laid into the track (before the beep is mixed in). */
  samples: Float32Array;
}

export interface EditClip {
  file: string;
  seconds: number;
  fps: number;
  width: number;
  height: number;
  pieces: Piece[];
  /** The pauses as laid: from the end of one piece to the start of the next. */
  pauses: { start: number; end: number }[];
  /** The white frame and the beep that starts with it (source seconds), when asked for. */
  sync: { frame: number; time: number; beepEnd: number } | null;
  /** The track as laid, at RATE (beep included). */
  track: Float32Array;
}

/** A tool run to its end through the process module; stdout as a Buffer. */
async function tool(binary: string, args: string[]): Promise<Buffer> {
  return (await runToEnd(binary, { args, encoding: 'buffer' })).stdout as Buffer;
}

/** Any media file's first audio track as mono float samples at `rate` (ffmpeg's resampler). */
export async function decodePcm(file: string, rate = RATE): Promise<Float32Array> {
  const out = await tool('ffmpeg', ['-v', 'error', '-i', file, '-map', '0:a:0', '-f', 'f32le', '-ac', '1', '-ar', String(rate), '-']);
  const copy = new Uint8Array(out.byteLength);
  copy.set(out);
  return new Float32Array(copy.buffer);
}

/** The quietest sample that counts as sound when trimming espeak's silence (about -50 dBFS). */
const TRIM_LEVEL = 0.003;

/** espeak-ng's reading of `text` at RATE, its leading and trailing silence cut off. */
async function speak(dir: string, text: string, wpm: number, voice: string): Promise<Float32Array> {
  const wav = path.join(dir, `say-${text.replace(/[^\p{L}\p{N}]+/gu, '_')}-${voice}-${wpm}.wav`);
  await runToEnd('espeak-ng', { args: ['-v', voice, '-s', String(wpm), '-w', wav, text] });
  const pcm = await decodePcm(wav);
  let a = 0;
  while (a < pcm.length && Math.abs(pcm[a]!) < TRIM_LEVEL) a++;
  let b = pcm.length;
  while (b > a && Math.abs(pcm[b - 1]!) < TRIM_LEVEL) b--;
  if (b - a < RATE * 0.05) throw new Error(`espeak-ng said nothing audible for "${text}"`);
  return pcm.slice(a, b);
}

/** A 16-bit mono PCM WAV file of `samples` at RATE. */
function wavBytes(samples: Float32Array): Buffer {
  const data = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) data.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767), i * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(RATE, 24);
  h.writeUInt32LE(RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

export interface EditClipOptions {
  script: ScriptItem[];
  width: number;
  height: number;
  fps?: number;
  /** espeak-ng words a minute and voice (default 150, en-us). */
  wpm?: number;
  voice?: string;
  /** Silence between two pieces with no pause between them, before the first and after the last. */
  gapSeconds?: number;
  leadSeconds?: number;
  tailSeconds?: number;
  /** A white frame and a 40 ms 1 kHz beep at the frame start nearest the middle of piece `syncPiece` (an index into the pieces). */
  syncPiece?: number;
  /** RMS of a faint white noise under the whole track, as a room has (default 0.001, -60 dBFS; 0 for digital silence). */
  noise?: number;
  /** The picture: default a moving test pattern in grey, dimmed so that luma stays under about 120 (captions and titles are brighter). */
  video?: (seconds: number) => string;
}

/** The pieces of `script` laid end to end at RATE: their bounds, the pauses, and the track. */
async function layPieces(dir: string, o: EditClipOptions): Promise<{ pieces: Piece[]; pauses: { start: number; end: number }[]; length: number }> {
  const gap = o.gapSeconds ?? 0.08;
  const spoken = await Promise.all(o.script.map((item) => ('say' in item ? speak(dir, item.say, o.wpm ?? 150, o.voice ?? 'en-us') : Promise.resolve(null))));
  const pieces: Piece[] = [];
  const pauses: { start: number; end: number }[] = [];
  let cursor = o.leadSeconds ?? 0.5;
  let pending: number | null = null;
  o.script.forEach((item, i) => {
    if ('pause' in item) {
      pending = (pending ?? 0) + item.pause;
      return;
    }
    const samples = spoken[i]!;
    if (pieces.length > 0) {
      const before = cursor;
      cursor += pending ?? gap;
      if (pending !== null) pauses.push({ start: before, end: cursor });
    }
    pending = null;
    // Pieces start on a whole sample, so that start * RATE indexes the track exactly.
    const start = Math.round(cursor * RATE) / RATE;
    pieces.push({ text: item.say, kind: item.kind ?? 'word', start, end: start + samples.length / RATE, samples });
    cursor = start + samples.length / RATE;
  });
  return { pieces, pauses, length: cursor + (o.tailSeconds ?? 0.6) };
}

/** Adds white noise of RMS `rms` (uniform, from a fixed seed: the same clip every run). */
function addNoise(track: Float32Array, rms: number): void {
  let seed = 42;
  const amplitude = rms * Math.sqrt(3);
  for (let i = 0; i < track.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    track[i] = track[i]! + amplitude * ((seed / 2 ** 32) * 2 - 1);
  }
}

/** Adds a 40 ms beep at `time` (seconds) into `track`, 2 ms raised-cosine ramps, peak 0.5. */
function mixBeep(track: Float32Array, time: number): number {
  const n = Math.round(0.04 * RATE);
  const ramp = Math.round(0.002 * RATE);
  const at = Math.round(time * RATE);
  for (let i = 0; i < n && at + i < track.length; i++) {
    const g = Math.min(1, i / ramp, (n - 1 - i) / ramp);
    const env = 0.5 - 0.5 * Math.cos(Math.PI * Math.max(0, g));
    track[at + i] = track[at + i]! + 0.5 * env * Math.sin((2 * Math.PI * TONE_HZ * i) / RATE);
  }
  return time + n / RATE;
}

/**
 * An mp4 (H.264 + AAC) of `o.script` spoken by espeak-ng over a picture, every piece's source
 * bounds known; with `syncPiece`, a white frame and a beep at the same instant inside that piece.
 */
export async function makeEditClip(dir: string, name: string, o: EditClipOptions): Promise<EditClip> {
  await mkdir(dir, { recursive: true });
  const fps = o.fps ?? 25;
  const { pieces, pauses, length } = await layPieces(dir, o);
  const seconds = Math.ceil(length * fps) / fps;
  const track = new Float32Array(Math.round(seconds * RATE));
  for (const p of pieces) track.set(p.samples, Math.round(p.start * RATE));
  addNoise(track, o.noise ?? 0.001);
  let sync: EditClip['sync'] = null;
  if (o.syncPiece !== undefined) {
    const p = pieces[o.syncPiece]!;
    const frame = Math.round(((p.start + p.end) / 2) * fps);
    const beepEnd = mixBeep(track, frame / fps);
    sync = { frame, time: frame / fps, beepEnd };
  }
  const wav = path.join(dir, `${name}.wav`);
  await writeFile(wav, wavBytes(track));
  const picture = o.video?.(seconds) ?? `testsrc2=s=${o.width}x${o.height}:r=${fps}:d=${seconds},hue=s=0,lutyuv=y=val*0.45:u=128:v=128`;
  const flash = sync ? `,drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='eq(n\\,${sync.frame})'` : '';
  const file = path.join(dir, name);
  // One sample rate for the whole chain (AAC at RATE) so that what is checked is the edit, not a resampler.
  await tool('ffmpeg', [
    ...['-y', '-v', 'error', '-f', 'lavfi', '-i', `${picture}${flash}`, '-i', wav, '-map', '0:v', '-map', '1:a'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-t', String(seconds), file],
  ]);
  return { file, seconds, fps, width: o.width, height: o.height, pieces, pauses, sync, track };
}

export interface Probe {
  formatSeconds: number;
  videoSeconds: number;
  audioSeconds: number;
  frames: number;
  width: number;
  height: number;
}

/** ffprobe's durations (container, video stream from its frame count, audio stream) and size. */
export async function probeMedia(file: string): Promise<Probe> {
  const args = [
    '-v',
    'error',
    '-count_frames',
    '-show_entries',
    'stream=codec_type,width,height,duration,nb_read_frames,r_frame_rate:format=duration',
    '-of',
    'json',
    file,
  ];
  const info = JSON.parse((await tool('ffprobe', args)).toString()) as {
    streams: { codec_type: string; width?: number; height?: number; duration?: string; nb_read_frames?: string; r_frame_rate?: string }[];
    format: { duration: string };
  };
  const v = info.streams.find((s) => s.codec_type === 'video')!;
  const a = info.streams.find((s) => s.codec_type === 'audio')!;
  const [num, den] = (v.r_frame_rate ?? '25/1').split('/').map(Number) as [number, number];
  const frames = Number(v.nb_read_frames);
  return {
    formatSeconds: Number(info.format.duration),
    videoSeconds: frames / (num / den),
    audioSeconds: Number(a.duration),
    frames,
    width: v.width!,
    height: v.height!,
  };
}

/**
 * Where `ref` is in `pcm` near sample `expected`: the lag (within +-`radius` samples) with the
 * highest normalized cross-correlation, as seconds from `expected`, and that correlation (1: the
 * same waveform; a word replaced by a tone or by another word scores far lower).
 */
export function findPiece(pcm: Float32Array, ref: Float32Array, expected: number, radius = Math.round(0.15 * RATE)): { offset: number; score: number } {
  let refNorm = 0;
  for (const x of ref) refNorm += x * x;
  let best = { lag: 0, score: -1 };
  for (let lag = -radius; lag <= radius; lag++) {
    const at = expected + lag;
    if (at < 0 || at + ref.length > pcm.length) continue;
    let dot = 0;
    let norm = 0;
    for (let i = 0; i < ref.length; i++) {
      const y = pcm[at + i]!;
      dot += ref[i]! * y;
      norm += y * y;
    }
    const score = norm > 0 ? dot / Math.sqrt(refNorm * norm) : 0;
    if (score > best.score) best = { lag, score };
  }
  return { offset: best.lag / RATE, score: best.score };
}

/** The largest |x[i] - x[i-1]| within `radius` seconds of `t` (a click at a join is a step). */
export function maxStepNear(pcm: Float32Array, rate: number, t: number, radius = 0.005): number {
  const a = Math.max(1, Math.floor((t - radius) * rate));
  const b = Math.min(pcm.length, Math.ceil((t + radius) * rate));
  let m = 0;
  for (let i = a; i < b; i++) m = Math.max(m, Math.abs(pcm[i]! - pcm[i - 1]!));
  return m;
}

/** The `q` quantile (0..1) of the sample steps of `pcm` where there is sound (|x| over TRIM_LEVEL): the clip's own typical step. */
export function stepQuantile(pcm: Float32Array, q: number): number {
  const steps: number[] = [];
  for (let i = 1; i < pcm.length; i++) if (Math.abs(pcm[i]!) > TRIM_LEVEL || Math.abs(pcm[i - 1]!) > TRIM_LEVEL) steps.push(Math.abs(pcm[i]! - pcm[i - 1]!));
  if (steps.length === 0) return 0;
  steps.sort((x, y) => x - y);
  return steps[Math.min(steps.length - 1, Math.floor(q * steps.length))]!;
}

/**
 * The share of a window's energy at `hz` (Goertzel): about 1 for a pure tone filling the window,
 * near 0 for speech or silence. Windows of 10 ms hold a whole number of 1 kHz periods.
 */
function toneShare(pcm: Float32Array, rate: number, start: number, n: number, hz = TONE_HZ): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / rate);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (let i = start; i < start + n && i < pcm.length; i++) {
    const x = i >= 0 ? pcm[i]! : 0;
    energy += x * x;
    const s0 = x + k * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  if (energy < 1e-9) return 0;
  const power = s1 * s1 + s2 * s2 - k * s1 * s2;
  return (2 * power) / (n * energy);
}

const WINDOW = 0.01;

/** The fraction of 10 ms windows (hop 5 ms) between `from` and `to` seconds in which the tone holds at least `share` of the energy. */
export function toneFraction(pcm: Float32Array, rate: number, from: number, to: number, share = 0.5): number {
  const n = Math.round(WINDOW * rate);
  let all = 0;
  let tone = 0;
  for (let t = from; t + WINDOW <= to + 1e-9; t += WINDOW / 2) {
    all++;
    if (toneShare(pcm, rate, Math.round(t * rate), n) >= share) tone++;
  }
  return all === 0 ? 0 : tone / all;
}

/**
 * When the tone starts between `from` and `to` seconds: the centre of the first 10 ms window
 * (1 ms hop) in which it holds half the energy (a tone that fills half a window holds about half
 * of it when it dominates the sound), or null when it never does.
 */
export function toneOnset(pcm: Float32Array, rate: number, from: number, to: number): number | null {
  const n = Math.round(WINDOW * rate);
  const hop = Math.round(0.001 * rate);
  for (let i = Math.round(from * rate); i + n <= Math.round(to * rate); i += hop) {
    if (toneShare(pcm, rate, i, n) >= 0.5) return (i + n / 2) / rate;
  }
  return null;
}

/** Each decoded frame's presentation time and mean luma (ffmpeg signalstats YAVG, 0..255). */
export async function frameLumas(video: string): Promise<{ t: number; luma: number }[]> {
  const out = await tool('ffmpeg', [
    '-v',
    'error',
    '-i',
    video,
    '-map',
    '0:v:0',
    '-vf',
    'signalstats,metadata=mode=print:key=lavfi.signalstats.YAVG:file=-',
    '-f',
    'null',
    '-',
  ]);
  const frames: { t: number; luma: number }[] = [];
  let t: number | null = null;
  for (const line of out.toString().split('\n')) {
    const pts = /pts_time:([-\d.]+)/.exec(line);
    if (pts) t = Number(pts[1]);
    const y = /lavfi\.signalstats\.YAVG=([\d.]+)/.exec(line);
    if (y && t !== null) frames.push({ t, luma: Number(y[1]) });
  }
  return frames;
}
