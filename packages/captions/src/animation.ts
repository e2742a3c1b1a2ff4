import { emphasisOf, type Template } from './template.ts';

// Animation curves. Every transition is a function of progress p in [0, 1]; the timeline samples
// them on a frame grid, so the number of distinct caption images stays small.

const C1 = 1.70158;
const C3 = C1 + 1;

export const clamp01 = (p: number) => (p < 0 ? 0 : Math.min(p, 1));
export const easeOutCubic = (p: number) => 1 - (1 - clamp01(p)) ** 3;
/** Overshoots to about 1.10 at p = 0.58, then settles at 1. */
const easeOutBack = (p: number) => {
  const q = clamp01(p) - 1;
  return 1 + C3 * q ** 3 + C1 * q ** 2;
};
const BACK_PEAK = 1.0999;

/** A word popping in: from 55% to full size with a small overshoot. */
const WORD_POP_FROM = 0.55;
export const wordPopScale = (p: number) => WORD_POP_FROM + (1 - WORD_POP_FROM) * easeOutBack(p);
/** Rising words start this far below (em). */
export const RISE_EM = 0.35;
/** Bouncing active words jump this high (em). */
export const BOUNCE_EM = 0.22;
/** A bounce lasts this many transition durations. */
export const BOUNCE_SPAN = 1.5;
/** A page popping in starts at 80% size. */
const PAGE_POP_FROM = 0.8;
export const pagePopScale = (p: number) => PAGE_POP_FROM + (1 - PAGE_POP_FROM) * easeOutBack(p);
/** Pages sliding up start this far below (em). */
export const SLIDE_EM = 0.45;
/** Typewriter: a word is typed at this many seconds per letter, or faster when it is spoken faster. */
export const TYPE_SECONDS_PER_LETTER = 0.045;

/** Jump height as a fraction of BOUNCE_EM for progress p over the bounce span: a parabola. */
export const bounceLift = (p: number) => {
  const q = clamp01(p);
  return 4 * q * (1 - q);
};

/** Active word scale during its 'pop' transition. */
export const activePopScale = (target: number, p: number) => 1 + (target - 1) * easeOutBack(p);

/** The largest scale a word of this template ever reaches (for sizing the band). */
export function maxWordScale(t: Template): number {
  let active = t.active.scale;
  if (t.animation.active === 'pop') active = 1 + (t.active.scale - 1) * BACK_PEAK;
  let enter = 1;
  if (t.animation.word === 'pop') enter = WORD_POP_FROM + (1 - WORD_POP_FROM) * BACK_PEAK;
  const emph = emphasisOf(t)?.scale ?? 1;
  return Math.max(active, enter, 1) * emph;
}

/** The largest page scale (page 'pop' overshoot). */
export function maxPageScale(t: Template): number {
  return t.animation.page === 'pop' ? PAGE_POP_FROM + (1 - PAGE_POP_FROM) * BACK_PEAK : 1;
}
