import type { Box } from '@captionfarm/contracts';
import type { FrameSample, FramingAnalysis, ScoredBox } from '../src/plan/index.ts';

// Constructed analyses for the planners' tests: what analyzeFraming would report of a clip whose
// faces sit where each test says. The planners are pure; the real-photo tests are analyze's.

export const HD = { width: 1920, height: 1080 };
export const VERTICAL = { width: 1080, height: 1920 };

/** A face box of height `h` (width 0.8 h) centred at (x, y). */
export function face(x: number, y: number, h = 220, score = 0.9): ScoredBox {
  return { x: x - 0.4 * h, y: y - h / 2, width: 0.8 * h, height: h, score };
}

export function centreOf(b: Box): { x: number; y: number } {
  return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
}

/** An analysis sampled at `fps` for `seconds`, each sample's faces (and salient box, motion) from `at(t)`. */
export function analysis(o: {
  seconds: number;
  fps?: number;
  size?: { width: number; height: number };
  shots?: number[];
  at: (t: number, i: number) => { faces?: ScoredBox[]; salient?: Box | null; motion?: number };
}): FramingAnalysis {
  const fps = o.fps ?? 4;
  const samples: FrameSample[] = [];
  for (let i = 0; i / fps < o.seconds - 1e-9; i++) {
    const t = i / fps;
    const s = o.at(t, i);
    samples.push({ t, faces: s.faces ?? [], salient: s.salient ?? null, motion: s.motion ?? 0.05 });
  }
  const size = o.size ?? HD;
  return { ...size, durationSeconds: o.seconds, sampleFps: fps, samples, shots: o.shots ?? [] };
}

/** A deterministic pseudo-random sequence in [-1, 1] (a linear congruential generator). */
export function jitter(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  };
}
