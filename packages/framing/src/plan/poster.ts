import { cropAt, type CropPath } from '@captionfarm/contracts';
import { median } from './follow.ts';
import { cx, cy } from './subject.ts';
import type { FrameSample, FramingAnalysis, ToOutput } from './types.ts';

/** Samples this close to a shot change (source seconds) or the start are not posters: a blend or a half-settled frame. */
const SHOT_GUARD = 0.5;
/** Below this mean luma change (0..1) frames are all equally still: sensor noise and compression. */
const MOTION_FLOOR = 0.002;

interface Candidate {
  sample: FrameSample;
  /** Output seconds. */
  at: number;
  motion: number;
}

/**
 * The poster's time in OUTPUT seconds: the sampled frame with the best face (large, near the
 * centre of the frame, or of the first rendition's crop window when `crop` is given) weighted by
 * stillness against the clip's own (a frame that barely differs from its neighbours is sharp), away from shot changes,
 * and from the first half-second, with a caption on screen when `captions` (output seconds) are given and some frame has one.
 * Without faces: the stillest frame of the middle third. Ties go to the earlier frame.
 */
export function choosePosterTime(o: {
  analysis: FramingAnalysis;
  toOutput?: ToOutput;
  outputSeconds: number;
  captions?: readonly { start: number; end: number }[];
  crop?: CropPath;
}): number {
  const { analysis, outputSeconds } = o;
  const toOutput: ToOutput = o.toOutput ?? ((t) => t);
  const last = Math.max(0, outputSeconds - 0.05);
  const samples = [...analysis.samples].sort((a, b) => a.t - b.t);
  let pool: Candidate[] = samples.flatMap((sample, i) => {
    const at = toOutput(sample.t);
    if (at === null || at < 0 || at > last) return [];
    // Motion is the change since the previous sample; a sharp frame is still on both sides.
    const motion = (sample.motion + (samples[i + 1]?.motion ?? sample.motion)) / 2;
    return [{ sample, at, motion }];
  });
  if (pool.length === 0) return Math.min(last, outputSeconds / 2);
  // The opening is a shot change too (often a fade in).
  pool = preferring(pool, (c) => c.at >= SHOT_GUARD && !analysis.shots.some((s) => Math.abs(c.sample.t - s) < SHOT_GUARD));
  const captions = o.captions;
  if (captions && captions.length > 0) pool = preferring(pool, (c) => captions.some((cap) => c.at >= cap.start && c.at < cap.end));
  // Stillness is relative to the clip: motion (a mean luma change) is a few hundredths on a talking
  // head and a few tenths on a moving camera; a frame at the clip's median motion counts half.
  const typical = Math.max(MOTION_FLOOR, median(pool.map((c) => c.motion)) ?? 0);
  let best: Candidate | null = null;
  let bestScore = 0;
  for (const c of pool) {
    const score = faceScore(c.sample, analysis, o.crop) / (1 + Math.max(0, c.motion) / typical);
    if (score > bestScore) {
      best = c;
      bestScore = score;
    }
  }
  if (best) return best.at;
  // No face anywhere: the stillest frame of the middle third (of those left, if none is there).
  const middle = preferring(pool, (c) => c.at >= outputSeconds / 3 && c.at <= (2 * outputSeconds) / 3);
  return middle.reduce((a, c) => (c.motion < a.motion ? c : a)).at;
}

/** The candidates that pass `test`, or all of them when none does. */
function preferring(pool: Candidate[], test: (c: Candidate) => boolean): Candidate[] {
  const kept = pool.filter(test);
  return kept.length > 0 ? kept : pool;
}

/**
 * The best face of a sample: its height against the frame's (a head a third of the frame high is
 * as large as it gets) times its nearness to the centre times the detector's confidence; 0 with
 * no face (in the window).
 */
function faceScore(sample: FrameSample, analysis: FramingAnalysis, crop: CropPath | undefined): number {
  const at = crop ? cropAt(crop, sample.t) : { x: 0, y: 0 };
  const frame = crop ? { width: crop.width, height: crop.height } : analysis;
  let best = 0;
  for (const face of sample.faces) {
    const fx = cx(face) - at.x;
    const fy = cy(face) - at.y;
    if (fx < 0 || fy < 0 || fx > frame.width || fy > frame.height) continue;
    const size = Math.min(1, face.height / frame.height / (1 / 3));
    const off = Math.hypot((fx - frame.width / 2) / frame.width, (fy - frame.height / 2) / frame.height) / Math.SQRT1_2;
    best = Math.max(best, size * (1 - Math.min(1, off)) * face.score);
  }
  return best;
}
