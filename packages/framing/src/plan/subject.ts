import type { Box } from '@captionfarm/contracts';
import type { FrameSample, ScoredBox } from './types.ts';

/**
 * The subject of one shot, as a box at each of its samples (gaps filled), or null when the shot
 * has neither a face nor a salient region (the crop then stays centred).
 *
 * The subject is ONE face track for the whole shot, the one with the most height x confidence
 * summed over its detections (the largest and most persistent face), so two people talking in turn
 * do not pull the crop back and forth. A track seen in fewer than a quarter of the shot's samples
 * is taken for a false detection; without a track, the salient box of each sample is followed.
 */
export function shotSubject(samples: readonly FrameSample[]): { kind: 'face' | 'salient'; boxes: Box[] } | null {
  const track = bestTrack(samples);
  if (track) return { kind: 'face', boxes: fillGaps(samples.map((_, i) => track.boxes.get(i) ?? null)) };
  if (samples.some((s) => s.salient)) return { kind: 'salient', boxes: fillGaps(samples.map((s) => s.salient)) };
  return null;
}

interface Track {
  boxes: Map<number, ScoredBox>;
  last: ScoredBox;
  lastIndex: number;
  weight: number;
}

/** A track not seen for this many samples ends (a face seen again later starts a new one). */
const MAX_GAP_SAMPLES = 8;

function bestTrack(samples: readonly FrameSample[]): Track | null {
  const tracks: Track[] = [];
  samples.forEach((sample, i) => {
    const live = tracks.filter((tr) => i - tr.lastIndex <= MAX_GAP_SAMPLES);
    // Greedy nearest matching: a face joins the track whose last box is nearest, within a gate of
    // one face size per sample elapsed (a face moves less than its own width between samples).
    const pairs: { tr: Track; face: ScoredBox; d: number }[] = [];
    for (const face of sample.faces) {
      for (const tr of live) {
        const d = Math.hypot(cx(face) - cx(tr.last), cy(face) - cy(tr.last));
        if (d <= Math.max(tr.last.width, tr.last.height) * (i - tr.lastIndex)) pairs.push({ tr, face, d });
      }
    }
    pairs.sort((a, b) => a.d - b.d);
    const usedTracks = new Set<Track>();
    const usedFaces = new Set<ScoredBox>();
    for (const { tr, face } of pairs) {
      if (usedTracks.has(tr) || usedFaces.has(face)) continue;
      usedTracks.add(tr);
      usedFaces.add(face);
      extend(tr, face, i);
    }
    for (const face of sample.faces) {
      if (!usedFaces.has(face)) tracks.push({ boxes: new Map([[i, face]]), last: face, lastIndex: i, weight: face.height * face.score });
    }
  });
  const minDetections = Math.max(1, Math.ceil(samples.length / 4));
  let best: Track | null = null;
  // Ties keep the earlier track: deterministic.
  for (const tr of tracks) if (tr.boxes.size >= minDetections && (!best || tr.weight > best.weight)) best = tr;
  return best;
}

function extend(tr: Track, face: ScoredBox, i: number): void {
  tr.boxes.set(i, face);
  tr.last = face;
  tr.lastIndex = i;
  tr.weight += face.height * face.score;
}

/** Boxes at every index: linear between known ones, the nearest known one before the first and after the last. */
function fillGaps(boxes: readonly (Box | null)[]): Box[] {
  const known = boxes.flatMap((b, i) => (b ? [i] : []));
  return boxes.map((b, i) => {
    if (b) return b;
    const after = known.find((k) => k > i);
    const before = known.findLast((k) => k < i);
    if (before === undefined) return boxes[after!]!;
    if (after === undefined) return boxes[before]!;
    const a = boxes[before]!;
    const z = boxes[after]!;
    const f = (i - before) / (after - before);
    return {
      x: a.x + (z.x - a.x) * f,
      y: a.y + (z.y - a.y) * f,
      width: a.width + (z.width - a.width) * f,
      height: a.height + (z.height - a.height) * f,
    };
  });
}

export function cx(b: Box): number {
  return b.x + b.width / 2;
}

export function cy(b: Box): number {
  return b.y + b.height / 2;
}
