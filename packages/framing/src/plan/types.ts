import type { Box } from '@captionfarm/contracts';

// The shapes the analysis (../analyze.ts) produces and the planners read: one definition, here.

/** A detection in SOURCE pixels with the detector's confidence (0..1). */
export interface ScoredBox extends Box {
  score: number;
}

/** One analysed frame: `t` in source seconds; `motion` 0 (still) .. 1 (everything changed since the previous sample). */
export interface FrameSample {
  t: number;
  faces: ScoredBox[];
  salient: Box | null;
  motion: number;
}

/** What analyzeFraming finds in a source: its size, its sampled frames and its shot changes. */
export interface FramingAnalysis {
  width: number;
  height: number;
  durationSeconds: number;
  sampleFps: number;
  samples: FrameSample[];
  /** Shot starts in source seconds, ascending, excluding 0. */
  shots: number[];
}

/** A frame size in pixels. */
export interface Size {
  width: number;
  height: number;
}

/** Maps a source time (s) to the output's time (s) for an edited job; null where the edit cut it. */
export type ToOutput = (t: number) => number | null;
