/**
 * Word onsets refined by TTS-based forced alignment (the method of aeneas): the words whisper
 * recognized are spoken again by espeak-ng in the same language, each word's start in that
 * synthetic read is known exactly, and dynamic time warping over MFCC frames of both signals
 * maps those starts onto the source audio. A refined start is kept within a bounded window
 * around whisper's own (DTW) time and never goes before the previous word's start.
 *
 * Why: whisper's cross-attention DTW gives a word's start to within a frame or two of 20 ms
 * most of the time, but places some single words 130-200 ms early or late; it aligns tokens,
 * not sounds. The synthetic read carries the sounds of the words, so the warping finds where
 * each word's sounds begin. See README "Word onsets: what was tried" for the figures.
 *
 * - Synthesis: one espeak-ng run per group of up to 30 words (SSML, 400 ms breaks between the
 *   words, so each word's audio is found between silences); a group whose synthetic words cannot
 *   be told apart, or a language espeak-ng has no voice for, keeps whisper's times.
 * - Features: 13 MFCCs per 10 ms frame (25 ms Hamming window, 26 mel bands 60-7600 Hz),
 *   normalized per signal (mean and variance), which takes out most of the voice and channel.
 * - Alignment: global DTW between the group's source audio and the synthetic words joined by
 *   short silences (longer after punctuation, where a speaker pauses).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Word } from '@captionfarm/contracts';
import { parseWavHeader, readSpanPcm, WHISPER_SAMPLE_RATE } from './audio.ts';
import { runProcess } from '@captionfarm/process';

const RATE = WHISPER_SAMPLE_RATE;
/** 10 ms frames of 25 ms. */
const HOP = 160;
const WIN = 400;
const NFFT = 512;
const MEL_BANDS = 26;
const CEPSTRA = 13;
/** The break espeak-ng puts between the words, and the silence that tells them apart (frames). */
const BREAK_MS = 400;
const WORD_GAP_FRAMES = 25;
/** Words and seconds per synthesized group: bounds DTW's cost (frames^2) and memory. */
const GROUP_WORDS = 30;
const GROUP_SECONDS = 15;

export interface OnsetWindow {
  /** Seconds a start may move earlier than whisper's time. */
  before: number;
  /** Seconds a start may move later than whisper's time. */
  after: number;
}

const DEFAULT_ONSET_WINDOW: OnsetWindow = { before: 0.3, after: 0.3 };

// ---- signal processing (pure) ----

/**
 * The twiddle factors of each stage of a radix-2 FFT of NFFT points, computed once: per frame,
 * the cos and sin of every butterfly were 200 us of a 210 us MFCC frame (an hour of speech is
 * 360,000 frames). The same expressions as before, so the same values to the bit.
 */
const TWIDDLES: { cos: Float64Array; sin: Float64Array }[] = (() => {
  const stages = [];
  for (let len = 2; len <= NFFT; len <<= 1) {
    const angle = (-2 * Math.PI) / len;
    const cos = new Float64Array(len / 2);
    const sin = new Float64Array(len / 2);
    for (let j = 0; j < len / 2; j++) {
      cos[j] = Math.cos(angle * j);
      sin[j] = Math.sin(angle * j);
    }
    stages.push({ cos, sin });
  }
  return stages;
})();

/** In-place radix-2 FFT of NFFT points. */
function fftInPlace(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      const r = re[i]!;
      re[i] = re[j]!;
      re[j] = r;
      const m = im[i]!;
      im[i] = im[j]!;
      im[j] = m;
    }
  }
  for (let len = 2, stage = 0; len <= n; len <<= 1, stage++) {
    const half = len / 2;
    const { cos, sin } = TWIDDLES[stage]!;
    for (let i = 0; i < n; i += len) {
      for (let j = 0; j < half; j++) {
        const cr = cos[j]!;
        const ci = sin[j]!;
        const a = i + j;
        const b = a + half;
        const vr = re[b]! * cr - im[b]! * ci;
        const vi = re[b]! * ci + im[b]! * cr;
        re[b] = re[a]! - vr;
        im[b] = im[a]! - vi;
        re[a] = re[a]! + vr;
        im[a] = im[a]! + vi;
      }
    }
  }
}

const toMel = (f: number) => 2595 * Math.log10(1 + f / 700);
const fromMel = (m: number) => 700 * (10 ** (m / 2595) - 1);

const MEL_FILTERS: Float64Array[] = (() => {
  const lo = toMel(60);
  const hi = toMel(7600);
  const bins = Array.from({ length: MEL_BANDS + 2 }, (_, i) => (fromMel(lo + ((hi - lo) * i) / (MEL_BANDS + 1)) * NFFT) / RATE);
  return Array.from({ length: MEL_BANDS }, (_, m) => {
    const [left, centre, right] = [bins[m]!, bins[m + 1]!, bins[m + 2]!];
    return Float64Array.from({ length: NFFT / 2 + 1 }, (_, k) =>
      k <= left || k >= right ? 0 : k <= centre ? (k - left) / (centre - left) : (right - k) / (right - centre),
    );
  });
})();

/** Each filter's non-zero span (the rest of its weights are 0 and add nothing). */
const MEL_SPANS = MEL_FILTERS.map((w) => {
  const from = w.findIndex((v) => v !== 0);
  return from < 0 ? { from: 0, to: 0 } : { from, to: w.findLastIndex((v) => v !== 0) + 1 };
});

/** The DCT-II's cosines (cepstrum n, band m), computed once. */
const DCT = Array.from({ length: CEPSTRA }, (_, n) => Float64Array.from({ length: MEL_BANDS }, (_, m) => Math.cos((Math.PI * n * (m + 0.5)) / MEL_BANDS)));

const HAMMING = Float64Array.from({ length: WIN }, (_, i) => 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (WIN - 1)));

/** MFCC frames (c0..c12, 10 ms apart) of 16 kHz audio, each coefficient normalized to mean 0 and variance 1 over the signal. */
export function mfccFrames(x: Float32Array): Float64Array[] {
  const count = Math.max(0, Math.floor((x.length - WIN) / HOP) + 1);
  const frames: Float64Array[] = [];
  const re = new Float64Array(NFFT);
  const im = new Float64Array(NFFT);
  const power = new Float64Array(NFFT / 2 + 1);
  const logMel = new Float64Array(MEL_BANDS);
  for (let f = 0; f < count; f++) {
    re.fill(0);
    im.fill(0);
    const at = f * HOP;
    for (let i = 0; i < WIN; i++) re[i] = (x[at + i]! - 0.97 * (at + i > 0 ? x[at + i - 1]! : 0)) * HAMMING[i]!;
    fftInPlace(re, im);
    for (let k = 0; k <= NFFT / 2; k++) power[k] = re[k]! ** 2 + im[k]! ** 2;
    for (let m = 0; m < MEL_BANDS; m++) {
      const w = MEL_FILTERS[m]!;
      const { from, to } = MEL_SPANS[m]!;
      let s = 0;
      for (let k = from; k < to; k++) s += w[k]! * power[k]!;
      logMel[m] = Math.log(s + 1e-8);
    }
    const c = new Float64Array(CEPSTRA);
    for (let n = 0; n < CEPSTRA; n++) {
      const cos = DCT[n]!;
      let s = 0;
      for (let m = 0; m < MEL_BANDS; m++) s += logMel[m]! * cos[m]!;
      c[n] = s;
    }
    frames.push(c);
  }
  if (frames.length === 0) return frames;
  for (let n = 0; n < CEPSTRA; n++) {
    let mean = 0;
    for (const c of frames) mean += c[n]! / frames.length;
    let variance = 0;
    for (const c of frames) variance += (c[n]! - mean) ** 2 / frames.length;
    const sd = Math.sqrt(variance + 1e-8);
    for (const c of frames) c[n] = (c[n]! - mean) / sd;
  }
  return frames;
}

/**
 * Global DTW between two frame sequences (Euclidean distance, steps (1,0), (0,1), (1,1));
 * returns, for each frame of `b`, the first frame of `a` the warping path pairs it with.
 */
export function dtwFirstMatch(a: Float64Array[], b: Float64Array[]): Int32Array {
  const n = a.length;
  const m = b.length;
  const first = new Int32Array(m).fill(0);
  if (n === 0 || m === 0) return first;
  const cost = new Float32Array(n * m);
  // b's frames side by side in one array: the inner loop reads them in order (a third of the
  // time of reading m separate arrays); the same sums in the same order, so the same path.
  const dims = b[0]!.length;
  const flat = new Float64Array(m * dims);
  for (let j = 0; j < m; j++) flat.set(b[j]!, j * dims);
  for (let i = 0; i < n; i++) {
    const ai = a[i]!;
    const row = i * m;
    for (let j = 0; j < m; j++) {
      let d = 0;
      for (let k = 0, o = j * dims; k < dims; k++, o++) d += (ai[k]! - flat[o]!) ** 2;
      d = Math.sqrt(d);
      if (i === 0) cost[j] = j === 0 ? d : d + cost[j - 1]!;
      else if (j === 0) cost[row] = d + cost[row - m]!;
      else {
        const up = cost[row - m + j]!;
        const left = cost[row + j - 1]!;
        const diagonal = cost[row - m + j - 1]!;
        cost[row + j] = d + Math.min(up, left, diagonal);
      }
    }
  }
  let i = n - 1;
  let j = m - 1;
  for (;;) {
    first[j] = i; // walking back, the last write for a column is its first match
    if (i === 0 && j === 0) break;
    if (i === 0) j--;
    else if (j === 0) i--;
    else {
      const diagonal = cost[(i - 1) * m + j - 1]!;
      const up = cost[(i - 1) * m + j]!;
      const left = cost[i * m + j - 1]!;
      if (diagonal <= up && diagonal <= left) {
        i--;
        j--;
      } else if (up <= left) i--;
      else j--;
    }
  }
  return first;
}

/** Linear resampling (for espeak-ng's 22,050 Hz to 16 kHz; MFCCs above 7.6 kHz are not used). */
function resampleLinear(x: Float32Array, from: number, to: number): Float32Array {
  if (from === to) return x;
  const y = new Float32Array(Math.floor((x.length * to) / from));
  for (let i = 0; i < y.length; i++) {
    const p = (i * from) / to;
    const k = Math.floor(p);
    const f = p - k;
    y[i] = x[k]! * (1 - f) + (k + 1 < x.length ? x[k + 1]! : 0) * f;
  }
  return y;
}

/**
 * The sounding stretches of a synthetic read, in frames [start, end): runs of frames above
 * -55 dBFS, split where at least `WORD_GAP_FRAMES` quiet frames follow (espeak-ng's breaks).
 */
export function soundingRuns(x: Float32Array): [number, number][] {
  const frames = Math.floor(x.length / HOP);
  const loud = Array.from({ length: frames }, (_, f) => {
    let e = 0;
    for (let i = 0; i < HOP; i++) e += x[f * HOP + i]! ** 2;
    return 10 * Math.log10(e / HOP + 1e-12) > -55;
  });
  const runs: [number, number][] = [];
  let f = 0;
  while (f < frames) {
    if (!loud[f]) {
      f++;
      continue;
    }
    let last = f;
    for (let g = f; g < frames && g - last <= WORD_GAP_FRAMES; g++) if (loud[g]) last = g;
    runs.push([f, last + 1]);
    f = last + 1;
  }
  return runs;
}

const ENDS_PHRASE = /[.,;:!?…。，、]["'”’»)]*$/u;

/**
 * The synthetic words joined into one read: 100 ms of silence around it, 10 ms between words,
 * 150 ms after a word ending in punctuation. Returns the audio and each word's start (frames).
 */
export function joinSyntheticWords(x: Float32Array, runs: [number, number][], texts: string[]): { audio: Float32Array; starts: number[] } {
  const pieces: Float32Array[] = [new Float32Array(10 * HOP)];
  const starts: number[] = [];
  let frames = 10;
  runs.forEach(([a, b], k) => {
    starts.push(frames);
    pieces.push(x.subarray(a * HOP, b * HOP));
    const gap = ENDS_PHRASE.test(texts[k]!) ? 15 : 1;
    pieces.push(new Float32Array(gap * HOP));
    frames += b - a + gap;
  });
  pieces.push(new Float32Array(10 * HOP));
  const audio = new Float32Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    audio.set(p, at);
    at += p.length;
  }
  return { audio, starts };
}

/** Groups of consecutive word indexes, each of at most GROUP_WORDS words and GROUP_SECONDS (pure). */
export function wordGroups(words: readonly { start: number }[]): number[][] {
  const groups: number[][] = [];
  words.forEach((w, i) => {
    const current = groups.at(-1);
    if (current && current.length < GROUP_WORDS && w.start - words[current[0]!]!.start < GROUP_SECONDS) current.push(i);
    else groups.push([i]);
  });
  return groups;
}

// ---- I/O ----

/** Samples [from, to) seconds of a 16 kHz mono s16 WAV, as floats. */
async function readSpan(wavPath: string, from: number, to: number): Promise<Float32Array> {
  const buf = await readSpanPcm(wavPath, from, to);
  const x = new Float32Array(buf.length / 2);
  for (let i = 0; i < x.length; i++) x[i] = buf.readInt16LE(i * 2) / 32768;
  return x;
}

/** A mono s16 WAV of any rate (espeak-ng's), resampled to 16 kHz; null when it is not one. */
async function readSynthetic(path: string): Promise<Float32Array | null> {
  const buf = await readFile(path);
  const info = parseWavHeader(buf.subarray(0, 4096));
  if (info?.channels !== 1 || info.bitsPerSample !== 16) return null;
  // A header whose data size runs past the file (a streamed write) is read up to the file end.
  const count = Math.floor(Math.min(info.dataBytes, buf.length - info.dataOffset) / 2);
  const x = new Float32Array(count);
  for (let i = 0; i < count; i++) x[i] = buf.readInt16LE(info.dataOffset + i * 2) / 32768;
  return resampleLinear(x, info.sampleRate, RATE);
}

/** espeak-ng args (pure): SSML input, one break between words, written to `out`. */
export function espeakArgs(opts: { voice: string; texts: string[]; out: string }): string[] {
  const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const ssml = `<speak>${opts.texts.map(escapeXml).join(`<break time="${BREAK_MS}ms"/>`)}</speak>`;
  return ['-m', '-v', opts.voice, '-w', opts.out, '--', ssml];
}

interface RefineOnsetsOptions {
  /** Words on the source timeline, starts ascending. */
  words: Word[];
  /** The 16 kHz mono WAV the times refer to. */
  wavPath: string;
  /** espeak-ng voice: the language code whisper uses ('en', 'de', 'es'...). */
  voice: string;
  espeakPath: string;
  /** Where the synthetic reads are written. */
  workDir: string;
  window?: OnsetWindow;
  signal?: AbortSignal | undefined;
}

/**
 * The words with their starts refined by TTS alignment (see the file comment); ends are kept
 * (never before the new start). Words of a group that cannot be aligned keep their times.
 */
export async function refineOnsets(opts: RefineOnsetsOptions): Promise<Word[]> {
  const window = opts.window ?? DEFAULT_ONSET_WINDOW;
  const words = opts.words.map((w) => ({ ...w }));
  const groups = wordGroups(words);
  for (const [g, group] of groups.entries()) {
    opts.signal?.throwIfAborted();
    const texts = group.map((i) => words[i]!.text);
    const out = join(opts.workDir, `onsets-${g}.wav`);
    const run = await runProcess(opts.espeakPath, { args: espeakArgs({ voice: opts.voice, texts, out }), signal: opts.signal, stdout: 'ignore' }).done;
    // No voice for this language (or no espeak-ng): whisper's times stand.
    if (run.exitCode !== 0) return opts.words;
    const synthetic = await readSynthetic(out);
    if (!synthetic) continue;
    const runs = soundingRuns(synthetic);
    if (runs.length !== texts.length) continue;
    const joined = joinSyntheticWords(synthetic, runs, texts);
    const first = words[group[0]!]!;
    const nextGroup = groups[g + 1];
    const from = Math.max(0, first.start - window.before - 0.1);
    const to = nextGroup ? words[nextGroup[0]!]!.start + 0.1 : words[group.at(-1)!]!.end + window.after + 0.2;
    const source = await readSpan(opts.wavPath, from, to);
    const match = dtwFirstMatch(mfccFrames(source), mfccFrames(joined.audio));
    group.forEach((i, k) => {
      const w = words[i]!;
      const frame = Math.min(match.length - 1, joined.starts[k]!);
      const aligned = from + (match[frame]! * HOP) / RATE;
      w.start = Math.min(w.start + window.after, Math.max(w.start - window.before, aligned));
    });
  }
  let previous = 0;
  return words.map((w) => {
    const start = Math.round(Math.max(w.start, previous) * 1000) / 1000;
    previous = start;
    return { ...w, start, end: Math.max(w.end, start) };
  });
}
