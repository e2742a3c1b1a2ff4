// What the audio itself says about where sounds start and stop: the planner's cut edges go into
// the quiet between sounds, never inside one, because recognized word times are not good enough
// for that on real speech (whisper + onset alignment: onsets p90 210 ms off, ends worse, a filler
// often given no length at all).
import type { Span } from './ranges.ts';
import type { VoiceEnvelope } from './voiced.ts';

/** A frame is sound when the envelope stands this far over the noise floor (voicedRegions' own off-threshold). */
const SOUND_ABOVE_FLOOR = 3;
/** Sounds closer than this are one sound (two 10 ms frames: a dip of 30 ms or more splits them). */
const JOIN_GAP = 0.02;
/** A sound shorter than this is a click, not speech. */
const MIN_SOUND = 0.03;

export interface Evidence {
  /** Stretches of sound in either band, ascending, disjoint (seconds): what a kept word keeps. */
  sounds: Span[];
  /** Stretches of sound in the speech band: what a filler ("um", "uh": voiced, no hiss) may take. */
  voiced: Span[];
  /** The time of the quietest point in [lo, hi] (the centre of its 10 ms frame, the louder band, smoothed over 30 ms), or null when no frame lies there. */
  quietest(lo: number, hi: number): number | null;
}

/** The sounds and the quiet of an envelope (voiceEnvelope). */
export function evidenceOf(envelope: VoiceEnvelope): Evidence {
  const { hopSeconds: hop, db, hiss } = envelope;
  const level = Float32Array.from(db, (v, i) => Math.max(v, hiss[i] ?? v));
  const smooth = Float32Array.from(level, (v, i) => (v + (level[i - 1] ?? v) + (level[i + 1] ?? v)) / 3);
  return {
    sounds: soundsOf(level, hop),
    voiced: soundsOf(db, hop),
    quietest(lo, hi) {
      const first = Math.max(0, Math.ceil(lo / hop - 0.5 - 1e-9));
      const last = Math.min(smooth.length - 1, Math.floor(hi / hop - 0.5 + 1e-9));
      if (last < first) return null;
      let best = first;
      for (let i = first + 1; i <= last; i++) if (smooth[i]! < smooth[best]!) best = i;
      return (best + 0.5) * hop;
    },
  };
}

/** Runs of frames SOUND_ABOVE_FLOOR over the floor, those JOIN_GAP apart joined, those under MIN_SOUND dropped. */
function soundsOf(level: Float32Array, hop: number): Span[] {
  const sounds: Span[] = [];
  for (let i = 0; i < level.length; i++) {
    if (level[i]! < SOUND_ABOVE_FLOOR) continue;
    let j = i;
    while (j + 1 < level.length && level[j + 1]! >= SOUND_ABOVE_FLOOR) j++;
    const span = { start: i * hop, end: (j + 1) * hop };
    const last = sounds.at(-1);
    if (last && span.start - last.end <= JOIN_GAP + 1e-9) last.end = span.end;
    else sounds.push(span);
    i = j;
  }
  return sounds.filter((s) => s.end - s.start >= MIN_SOUND - 1e-9);
}
