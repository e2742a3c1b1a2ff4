// The cut list as the pages show and change it (issue 42): keep-ranges with some cuts put back,
// their summed length, and times as a video editor writes them. Plain functions of data, so the
// job page's "keep this" toggles and the new-job form's preview agree on every number.

import type { CutReason } from '@captionfarm/contracts';

/** How the pages name a cut's reason. */
export const REASON_LABEL: Record<CutReason, string> = {
  silence: 'Silence',
  filler: 'Filler',
  repeat: 'Repeat',
  'voiced-gap': 'Unrecognized sound',
  client: 'Your cut',
};

interface Range {
  start: number;
  end: number;
}

/** Two ranges closer than this (seconds) touch: float noise in the plan's frame-aligned times. */
const TOUCH = 1e-6;

/**
 * The keep-ranges with the `restored` spans (cuts the user keeps after all) added: ascending, and
 * ranges that touch or overlap merged into one, as the API's `edit.keep` wants them.
 */
export function keepWithRestored(keep: readonly Range[], restored: readonly Range[]): Range[] {
  const all = [...keep, ...restored].filter((r) => r.end > r.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Range[] = [];
  for (const r of all) {
    const last = out.at(-1);
    if (last && r.start <= last.end + TOUCH) last.end = Math.max(last.end, r.end);
    else out.push({ start: r.start, end: r.end });
  }
  return out;
}

/** The output's length: the keep-ranges' summed length. */
export function keptSeconds(keep: readonly Range[]): number {
  return keep.reduce((sum, r) => sum + (r.end - r.start), 0);
}

/** A time as m:ss.ss (0:03.40, 12:07.00): a cut is a fraction of a second, so the hundredths count. */
export function clock(seconds: number): string {
  const hundredths = Math.round(seconds * 100);
  const m = Math.floor(hundredths / 6000);
  const s = (hundredths % 6000) / 100;
  return `${m}:${s.toFixed(2).padStart(5, '0')}`;
}

/** A length in seconds with two decimals: 0.40 s, 12.00 s. */
export function span(seconds: number): string {
  return `${seconds.toFixed(2)} s`;
}
