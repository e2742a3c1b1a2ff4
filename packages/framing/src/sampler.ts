/**
 * Turns the sampled frames, in order, into FrameSamples. The face detector is the analysis's main
 * cost (about 60 CPU-ms a sample, against a few ms for the rest), so it does not run on every
 * sample: it runs on every DETECT_STRIDE-th (every 4 s at 4 samples a second), and the samples between two detections get the
 * faces interpolated between them where the two agree (the same number of faces, each pair
 * overlapping by IoU >= AGREE_IOU: the same people, moved a little); where they do not (a cut, a
 * face that came or went, a quick move) the sample halfway is detected and each half is resolved
 * the same way, down to single samples. The frames between
 * two detections are kept until the second (at most DETECT_STRIDE - 1 small RGB frames).
 * README "Cost" has the measurements.
 */
import type { Box } from '@captionfarm/contracts';
import type { DetectFaces } from './detect.ts';
import type { FrameSample, ScoredBox } from './plan/types.ts';
import { lumaOf, meanAbsDiff, salientBox } from './salient.ts';

/** The detector runs on one sample in this many (and on those between where its results disagree). */
const DETECT_STRIDE = 16;
/** Two detections agree when each face of one overlaps one of the other by at least this IoU. */
const AGREE_IOU = 0.4;

interface Pending {
  sample: FrameSample;
  rgb: Uint8Array;
  luma: Uint8Array;
  previous: Uint8Array | null;
}

function iou(a: Box, b: Box): number {
  const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const inter = ix * iy;
  return inter / (a.width * a.height + b.width * b.height - inter);
}

/** Each face of `a` paired with the face of `b` it overlaps most, or null when the two do not agree. */
function pairFaces(a: ScoredBox[], b: ScoredBox[]): [ScoredBox, ScoredBox][] | null {
  if (a.length !== b.length) return null;
  const pairs: [ScoredBox, ScoredBox][] = [];
  const used = new Set<number>();
  for (const fa of a) {
    let best = -1;
    let bestIou = AGREE_IOU;
    b.forEach((fb, j) => {
      const o = iou(fa, fb);
      if (!used.has(j) && o >= bestIou) {
        best = j;
        bestIou = o;
      }
    });
    if (best < 0) return null;
    used.add(best);
    pairs.push([fa, b[best]!]);
  }
  return pairs;
}

const lerp = (a: number, b: number, k: number) => a + (b - a) * k;

export interface Sampler {
  onFrame(rgb: Uint8Array): void;
  /** Resolves the samples still waiting for a detection after them; call once the stream has ended. */
  finish(): FrameSample[];
}

/** A sampler of `size` frames (the sampled size) at `sampleFps`, its boxes scaled to `source` pixels. */
export function createSampler(
  detect: DetectFaces,
  size: { width: number; height: number },
  source: { width: number; height: number },
  sampleFps: number,
): Sampler {
  const pixels = size.width * size.height;
  const sx = source.width / size.width;
  const sy = source.height / size.height;
  const samples: FrameSample[] = [];
  let previous: Uint8Array | null = null;
  let last: FrameSample | null = null;
  let pending: Pending[] = [];

  const detectOn = (rgb: Uint8Array): ScoredBox[] =>
    detect(rgb, size.width, size.height).map((f) => ({ x: f.x * sx, y: f.y * sy, width: f.width * sx, height: f.height * sy, score: f.score }));
  /** Faces are known: the salient region where there are none. */
  const settle = (p: { sample: FrameSample; luma: Uint8Array; previous: Uint8Array | null }, faces: ScoredBox[]) => {
    p.sample.faces = faces;
    const s = faces.length ? null : salientBox(p.luma, p.previous, size.width, size.height);
    p.sample.salient = s && { x: s.x * sx, y: s.y * sy, width: s.width * sx, height: s.height * sy };
  };
  /**
   * The samples between two detected ones: interpolated where the two agree, else the middle one
   * is detected and each half resolved the same way (a cut among 7 samples costs 3 detections, not 7).
   */
  const resolveBetween = (left: FrameSample, right: FrameSample, between: Pending[]): void => {
    if (!between.length) return;
    const pairs = pairFaces(left.faces, right.faces);
    if (!pairs) {
      const m = Math.floor(between.length / 2);
      const mid = between[m]!;
      settle(mid, detectOn(mid.rgb));
      resolveBetween(left, mid.sample, between.slice(0, m));
      resolveBetween(mid.sample, right, between.slice(m + 1));
      return;
    }
    for (const p of between) {
      const k = (p.sample.t - left.t) / (right.t - left.t);
      const faces = pairs.map(([a, b]) => ({
        x: lerp(a.x, b.x, k),
        y: lerp(a.y, b.y, k),
        width: lerp(a.width, b.width, k),
        height: lerp(a.height, b.height, k),
        score: Math.min(a.score, b.score),
      }));
      settle(p, faces);
    }
  };
  const resolve = (next: FrameSample) => {
    if (last) resolveBetween(last, next, pending);
    pending = [];
  };

  return {
    onFrame(rgb) {
      const i = samples.length;
      const luma = lumaOf(rgb, pixels);
      const sample: FrameSample = { t: i / sampleFps, faces: [], salient: null, motion: previous ? meanAbsDiff(luma, previous) : 0 };
      samples.push(sample);
      if (i % DETECT_STRIDE === 0) {
        settle({ sample, luma, previous }, detectOn(rgb));
        resolve(sample);
        last = sample;
      } else pending.push({ sample, rgb: rgb.slice(), luma, previous });
      previous = luma;
    },
    finish() {
      // The samples after the last detection: the last of them is detected, then the rest resolved as above.
      const tail = pending.pop();
      if (tail) {
        settle(tail, detectOn(tail.rgb));
        resolve(tail.sample);
      }
      return samples;
    },
  };
}
