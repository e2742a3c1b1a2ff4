import type { CropKeyframe, CropPath } from '@captionfarm/contracts';
import { centerCrop, cropWindow } from './crop-path.ts';
import { FOLLOW_FPS, followAxis, frameTimes, keyframesOf, median } from './follow.ts';
import { cx, cy, shotSubject } from './subject.ts';
import type { FrameSample, FramingAnalysis, Size } from './types.ts';

export interface PlanCropOptions {
  /** The most the window moves from one frame to the next at 30 fps, in source pixels; default panStepLimit(source). */
  maxStepPerFrame?: number;
  /** The middle part of the window (a fraction of its width and of its height) the subject moves in without the window moving; default 0.3. */
  deadBand?: number;
}

/**
 * The bound on the crop's motion: 6 source pixels per frame at 30 fps for a 1080-line source
 * (180 px/s: a 608 px window's width in 3.4 s, about 11 output pixels a frame on a 1080x1920
 * rendition of a 1920x1080 source), in proportion to the source's short side for other sizes.
 * 5 px (the first choice) let a face walking at 150 px/s drift to the window's outer fifth.
 */
export function panStepLimit(source: Size): number {
  return (6 * Math.min(source.width, source.height)) / 1080;
}

/** Where a face is held in a window shorter than the source: its centre at 40% of the window's height (headroom). */
const FACE_HEADROOM = 0.1;
/** A pan reaches full speed in this many seconds (eased in and out). */
const RAMP_SECONDS = 0.4;
/**
 * The crop moves this much (pixels a frame) below the bound: keyframes are whole pixels at least
 * 4 frames apart, so rounding adds at most 1 px over 4 frames to a chord's speed.
 */
const ROUNDING_MARGIN = 0.3;

/**
 * A crop path that follows the subject of each shot (the largest, most persistent face; else the
 * salient region; else the centre) with a window of the output's aspect as large as the source
 * allows (centerCrop's size). Within a shot the window holds while the subject stays in the
 * middle `deadBand` of it and otherwise pans with eased, speed-bounded motion; at each shot change
 * it cuts (two keyframes at the shot's time) and never pans across it. Both axes follow: a
 * 16:9 window in a 9:16 source moves vertically. Keyframes: at most about 4 a second in a pan,
 * two per hold, two per cut.
 */
export function planCrop(analysis: FramingAnalysis, out: Size, opts: PlanCropOptions = {}): CropPath {
  const limit = opts.maxStepPerFrame ?? panStepLimit(analysis);
  const band = (opts.deadBand ?? 0.3) / 2;
  if (!(limit > 0 && Number.isFinite(limit))) throw new RangeError(`planCrop: maxStepPerFrame must be a positive number of pixels, not ${limit}`);
  if (!(band >= 0 && band <= 0.5)) throw new RangeError(`planCrop: deadBand must be a fraction of the window from 0 to 1, not ${opts.deadBand}`);
  const maxSpeed = Math.max(limit / 2, limit - ROUNDING_MARGIN) * FOLLOW_FPS;
  const win = cropWindow(analysis, out);
  const centred = centerCrop(analysis, out);
  const sw = Math.max(2, Math.floor(analysis.width / 2) * 2);
  const sh = Math.max(2, Math.floor(analysis.height / 2) * 2);
  if (win.width === sw && win.height === sh) return centred;
  const samples = [...analysis.samples].sort((a, b) => a.t - b.t);
  const duration = analysis.durationSeconds > 0 ? analysis.durationSeconds : (samples.at(-1)?.t ?? 0) + 1 / FOLLOW_FPS;
  const cuts = [...new Set(analysis.shots)].filter((s) => s > 0 && s < duration).sort((a, b) => a - b);
  const bounds = [0, ...cuts, duration];
  const keyframes: CropKeyframe[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const start = bounds[k]!;
    const end = bounds[k + 1]!;
    const last = k + 2 === bounds.length;
    let inShot = samples.filter((s) => s.t >= start && (s.t < end || last));
    // A shot shorter than the sampling interval: the nearest sample tells where its subject is.
    if (inShot.length === 0 && samples.length > 0) inShot = [nearest(samples, (start + end) / 2)];
    const wanted = wantedCentres(inShot, win, { width: sw, height: sh });
    const axis = { times: inShot.map((s) => s.t), start, end, maxSpeed, accel: maxSpeed / RAMP_SECONDS };
    const xs = followAxis({ ...axis, wanted: wanted.x, lo: win.width / 2, hi: sw - win.width / 2, band: band * win.width, settle: 0.05 * win.width });
    const ys = followAxis({ ...axis, wanted: wanted.y, lo: win.height / 2, hi: sh - win.height / 2, band: band * win.height, settle: 0.05 * win.height });
    const times = frameTimes(start, end);
    for (const i of keyframesOf(times, xs, ys)) {
      keyframes.push({ t: times[i]!, x: Math.round(xs[i]! - win.width / 2), y: Math.round(ys[i]! - win.height / 2) });
    }
  }
  return { ...win, keyframes: compact(keyframes) };
}

/** The window centre each sample asks for (a median of three against single-frame outliers). */
function wantedCentres(samples: readonly FrameSample[], win: Size, source: Size): { x: number[]; y: number[] } {
  const subject = shotSubject(samples);
  if (!subject) return { x: samples.map(() => source.width / 2), y: samples.map(() => source.height / 2) };
  const headroom = subject.kind === 'face' ? FACE_HEADROOM * win.height : 0;
  return { x: median3(subject.boxes.map(cx)), y: median3(subject.boxes.map((b) => cy(b) + headroom)) };
}

function median3(values: readonly number[]): number[] {
  return values.map((v, i) => (i === 0 || i === values.length - 1 ? v : median(values.slice(i - 1, i + 2))!));
}

function nearest(samples: readonly FrameSample[], t: number): FrameSample {
  return samples.reduce((best, s) => (Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best));
}

/**
 * Drops keyframes that change nothing: the second of two equal ones at the same time (a shot
 * change where the window stays), the middle of three equal positions, a first (or last) one
 * equal to its neighbour (the first and last hold anyway).
 */
function compact(kfs: readonly CropKeyframe[]): CropKeyframe[] {
  const same = (a: CropKeyframe, b: CropKeyframe) => a.x === b.x && a.y === b.y;
  const dedup = kfs.filter((k, i) => i === 0 || !(k.t === kfs[i - 1]!.t && same(k, kfs[i - 1]!)));
  const out = dedup.filter((k, i) => i === 0 || i === dedup.length - 1 || !(same(dedup[i - 1]!, k) && same(k, dedup[i + 1]!)));
  while (out.length > 1 && same(out[0]!, out[1]!)) out.shift();
  while (out.length > 1 && same(out.at(-1)!, out.at(-2)!)) out.pop();
  if (out.length === 1) return [{ ...out[0]!, t: 0 }];
  return out;
}
