// Time ranges: complements, frame alignment, millisecond rounding.
import { EDIT_MAX_RANGES, EDIT_MIN_RANGE_SECONDS } from '@captionfarm/contracts';

export interface Span {
  start: number;
  end: number;
}

const EPS = 1e-9;

/** Rounded to the millisecond, downwards (a tolerance absorbs binary noise: 0.12000000000000001 stays 0.12). */
const floorMs = (t: number) => Math.floor(t * 1000 + 1e-6) / 1000;
/** Rounded to the millisecond, upwards. */
const ceilMs = (t: number) => Math.ceil(t * 1000 - 1e-6) / 1000;
export const roundMs = (t: number) => Math.round(t * 1000) / 1000;

/** The parts of [0, total] that no span covers (spans ascending or not, overlapping or not). */
export function complement(spans: readonly Span[], total: number): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const out: Span[] = [];
  let pos = 0;
  for (const s of sorted) {
    if (s.start > pos + EPS) out.push({ start: pos, end: Math.min(s.start, total) });
    pos = Math.max(pos, s.end);
    if (pos >= total) break;
  }
  if (pos < total - EPS) out.push({ start: pos, end: total });
  return out.filter((s) => s.end > s.start + EPS);
}

/** A keep-range before alignment; the optional fields let an edge round inwards (see withEdges in plan.ts). */
export interface KeepEdge extends Span {
  /** The kept words' span in the range: an inward edge never passes it. */
  hardStart?: number;
  hardEnd?: number;
  /** The edge meets a cut sound (filler, repeat, voiced blob): round inwards where the words allow. */
  inwardStart?: boolean;
  inwardEnd?: boolean;
}

/** Ascending spans with the overlapping and touching ones joined. */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const out: Span[] = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const last = out.at(-1);
    if (last && s.start <= last.end + EPS) last.end = Math.max(last.end, s.end);
    else out.push({ start: s.start, end: s.end });
  }
  return out;
}

/**
 * Keep-ranges on the source's frame grid, as the plan gives them: each start floored and each end
 * ceiled to a frame boundary k/fps (so audio and video cut at the same instant and a kept word
 * only gains), except an edge meeting a cut sound, which rounds inwards when the kept words
 * (hardStart/hardEnd) allow, so that no frame of an "um" comes back; clamped to the source, then rounded to the millisecond outwards (start down, end
 * up: the rounding never clips either; the renderer takes round(t × fps) as the frame). Ranges
 * that touch are joined; one shorter than EDIT_MIN_RANGE_SECONDS grows by whole frames; past
 * EDIT_MAX_RANGES the shortest cuts are given up. With `snap` (a job's own ranges), a time within
 * 1 ms of a frame boundary is taken as that boundary, so that alignment is idempotent on its own
 * output.
 */
export function alignKeep(keep: readonly KeepEdge[], fps: number, sourceSeconds: number, options: { snap?: boolean } = {}): Span[] {
  const frame = 1 / fps;
  const source = roundMs(sourceSeconds);
  // With `snap` (a job's own ranges), a time within 1 ms of a frame boundary is that boundary: the
  // plan's own ranges (boundaries rounded to the ms) sent back come out the same, not a frame wider.
  const near = (t: number) => (options.snap && Math.abs(t - Math.round(t * fps) / fps) <= 0.001 + 1e-9 ? Math.round(t * fps) : null);
  const startOf = (r: KeepEdge) => {
    const inward = Math.ceil(r.start * fps - 1e-7);
    if (r.inwardStart && inward / fps <= (r.hardStart ?? Number.POSITIVE_INFINITY) + 1e-9 && inward / fps < r.end) return inward;
    return near(r.start) ?? Math.floor(r.start * fps + 1e-7);
  };
  const endOf = (r: KeepEdge) => {
    const inward = Math.floor(r.end * fps + 1e-7);
    if (r.inwardEnd && inward / fps >= (r.hardEnd ?? Number.NEGATIVE_INFINITY) - 1e-9 && inward / fps > r.start) return inward;
    return near(r.end) ?? Math.ceil(r.end * fps - 1e-7);
  };
  const grid = keep.map((r) => ({ start: Math.max(0, startOf(r) / fps), end: Math.min(sourceSeconds, endOf(r) / fps) }));
  for (const r of grid) {
    while (r.end - r.start < EDIT_MIN_RANGE_SECONDS - EPS && r.end < sourceSeconds - EPS) r.end = Math.min(sourceSeconds, r.end + frame);
    while (r.end - r.start < EDIT_MIN_RANGE_SECONDS - EPS && r.start > EPS) r.start = Math.max(0, r.start - frame);
  }
  const rounded = grid
    .map((r) => ({ start: floorMs(r.start), end: Math.min(source, ceilMs(r.end)) }))
    .filter((r) => r.end > r.start + EPS)
    .sort((a, b) => a.start - b.start);
  const out: Span[] = [];
  for (const r of rounded) {
    const last = out.at(-1);
    if (last && r.start <= last.end + 0.0005) last.end = Math.max(last.end, r.end);
    else out.push(r);
  }
  return limitRanges(out);
}

/** At most EDIT_MAX_RANGES ranges: the shortest cuts between them are given up (kept) first. */
function limitRanges(keep: Span[]): Span[] {
  if (keep.length <= EDIT_MAX_RANGES) return keep;
  const gaps = keep.slice(1).map((r, i) => ({ i: i + 1, length: r.start - keep[i]!.end }));
  gaps.sort((a, b) => a.length - b.length || a.i - b.i);
  const join = new Set(gaps.slice(0, keep.length - EDIT_MAX_RANGES).map((g) => g.i));
  const out: Span[] = [];
  keep.forEach((r, i) => {
    const last = out.at(-1);
    if (last && join.has(i)) last.end = r.end;
    else out.push({ ...r });
  });
  return out;
}

/**
 * wordOnOutput of @captionfarm/contracts for many words over one keep list, in O(log n) per word
 * instead of O(n) (an hour of talk has ~10,000 words and up to 2,000 ranges): the same sums, so
 * the same numbers. A word of no length maps to its point (wordOnOutput gives null).
 */
export function outputMapper(keep: readonly Span[]): (start: number, end: number) => Span | null {
  const before: number[] = [];
  let sum = 0;
  for (const r of keep) {
    before.push(sum);
    sum += r.end - r.start;
  }
  return (start, end) => {
    if (end <= start + EPS) {
      // A word of no length: the point, if a range keeps it.
      const at = keep.findIndex((r) => r.start - EPS <= start && start <= r.end + EPS);
      const r = keep[at];
      return r ? { start: before[at]! + (start - r.start), end: before[at]! + (start - r.start) } : null;
    }
    let lo = 0;
    let hi = keep.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keep[mid]!.end <= start + EPS) lo = mid + 1;
      else hi = mid;
    }
    let first: number | null = null;
    let last: number | null = null;
    for (let i = lo; i < keep.length && keep[i]!.start < end - EPS; i++) {
      const r = keep[i]!;
      const a = Math.max(start, r.start);
      const b = Math.min(end, r.end);
      if (b > a + EPS) {
        first ??= before[i]! + (a - r.start);
        last = before[i]! + (b - r.start);
      }
    }
    return first === null || last === null ? null : { start: first, end: last };
  };
}
