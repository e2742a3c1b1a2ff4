import { emphasisOf, type Template, type Color } from './template.ts';
import type { CaptionLayout, CaptionPage } from './layout-types.ts';
import { graphemes } from './text.ts';
import {
  BOUNCE_EM,
  BOUNCE_SPAN,
  RISE_EM,
  SLIDE_EM,
  TYPE_SECONDS_PER_LETTER,
  activePopScale,
  bounceLift,
  easeOutCubic,
  pagePopScale,
  wordPopScale,
  clamp01,
} from './animation.ts';

export type WordState = 'upcoming' | 'active' | 'spoken';

/** How one unit looks in one frame. Everything the painter needs besides the layout and template. */
export interface WordFrame {
  unit: number;
  state: WordState;
  /** Text to draw: the whole unit, or its first letters while a typewriter reveals it. */
  text: string;
  /** Graphemes shown, or null for the whole unit. */
  visible: number | null;
  color: Color;
  outlineColor: Color | null;
  opacity: number;
  /** Scale around the unit's centre. */
  scale: number;
  /** Vertical offset, pixels (negative = up). */
  dy: number;
  box: Template['active']['box'];
  glow: Template['glow'];
}

export interface CaptionFrame {
  /** Page index, or -1 when nothing is on screen. */
  page: number;
  opacity: number;
  scale: number;
  dy: number;
  words: WordFrame[];
  /** The page's emoji once its word is spoken (it pops in like a word), or null. */
  emoji: { opacity: number; scale: number } | null;
  /** Equal keys <=> equal images. */
  key: string;
}

export interface FrameOptions {
  /** Output frame rate; animations are sampled on this grid (at most 30 steps per second). */
  fps: number;
}

const EMPTY: CaptionFrame = { page: -1, opacity: 1, scale: 1, dy: 0, words: [], emoji: null, key: '-' };

/**
 * The animation grid: the output frame rate divided down to at most 30 Hz (60 -> 30, 50 -> 25),
 * so a 0.14 s pop is 4-5 distinct images whatever the output rate.
 */
export function animationRate(fps: number): number {
  if (!(fps > 0)) return 30;
  return fps / Math.ceil(fps / 30 - 1e-9);
}

/** Time snapped down to the animation grid. */
export function quantizeTime(t: number, fps: number): number {
  const r = animationRate(fps);
  return Math.floor(t * r + 1e-6) / r;
}

/** The page on screen at time t (binary search), or -1. */
export function pageAt(layout: CaptionLayout, t: number): number {
  const pages = layout.pages;
  let lo = 0;
  let hi = pages.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (pages[mid]!.start <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found < 0) return -1;
  return t < pages[found]!.end ? found : -1;
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

/**
 * Every scale a word frame has once its animation is over, as wordFrame rounds it: 1, the
 * emphasis scale, the active scale, and both. A painter keeps a word painted at one of these
 * (its look comes back), not one caught mid-animation.
 */
export function restWordScales(tpl: Template): ReadonlySet<number> {
  const emphasis = emphasisOf(tpl)?.scale ?? 1;
  return new Set([1, emphasis, tpl.active.scale, emphasis * tpl.active.scale].map(r3));
}
const r2 = (v: number) => Math.round(v * 100) / 100;

// Typewriter frames split each shown word into graphemes on every keyAt call, and a render plans
// tens of thousands of them (bisecting each change): splitting once per text made the
// typewriter's planning about 10x cheaper (840 -> 64-110 ms for 30 s). Bounded: cleared when it grows past a long video's words.
const GRAPHEMES_OF = new Map<string, string[]>();
function unitGraphemes(text: string): string[] {
  let gs = GRAPHEMES_OF.get(text);
  if (!gs) {
    if (GRAPHEMES_OF.size >= 10_000) GRAPHEMES_OF.clear();
    gs = graphemes(text);
    GRAPHEMES_OF.set(text, gs);
  }
  return gs;
}

/** What the caption band shows at time t. Pure: same inputs, same frame. */
export function captionFrameAt(layout: CaptionLayout, template: Template, t: number, opts: FrameOptions): CaptionFrame {
  const tq = quantizeTime(t, opts.fps);
  const pi = pageAt(layout, tq);
  if (pi < 0) return EMPTY;
  const page = layout.pages[pi]!;
  const anim = template.animation;
  const dur = anim.duration;
  const fontPx = layout.font.sizePx;

  let opacity = 1;
  let scale = 1;
  let dy = 0;
  const pp = clamp01((tq - page.start) / dur);
  if (anim.page === 'fade') opacity = easeOutCubic(pp);
  else if (anim.page === 'pop') {
    scale = pagePopScale(pp);
    opacity = clamp01(pp * 2.5);
  } else if (anim.page === 'slide-up') {
    dy = (1 - easeOutCubic(pp)) * SLIDE_EM * fontPx;
    opacity = easeOutCubic(pp);
  }

  const active = activeUnit(layout, page, tq);
  const words: WordFrame[] = [];
  for (const ui of page.units) {
    const u = layout.units[ui]!;
    const state: WordState = ui === active ? 'active' : tq < u.start ? 'upcoming' : 'spoken';
    const w = wordFrame(template, ui, u.text, u.start, u.end, state, u.emphasized, tq, fontPx);
    if (w) words.push(w);
  }
  let emoji: CaptionFrame['emoji'] = null;
  if (page.emoji) {
    const since = tq - layout.units[page.emoji.unit]!.start;
    if (since >= 0) {
      const p = clamp01(since / dur);
      emoji = { opacity: r2(clamp01(p * 3)), scale: r3(wordPopScale(p)) };
    }
  }
  const frame: CaptionFrame = { page: pi, opacity: r2(opacity), scale: r3(scale), dy: Math.round(dy), words, emoji, key: '' };
  frame.key = frameKey(frame, template);
  return frame;
}

/** The unit being spoken: the last one that has started (it stays active through short gaps). */
function activeUnit(layout: CaptionLayout, page: CaptionPage, t: number): number {
  let active = -1;
  for (const ui of page.units) {
    if (layout.units[ui]!.start <= t) active = ui;
    else break;
  }
  return active;
}

function wordFrame(
  tpl: Template,
  unit: number,
  text: string,
  start: number,
  end: number,
  state: WordState,
  emphasized: boolean,
  t: number,
  fontPx: number,
): WordFrame | null {
  const anim = tpl.animation;
  if (state === 'upcoming' && anim.word !== 'none') return null;
  const since = t - start;
  const p = clamp01(since / anim.duration);
  let opacity = state === 'upcoming' ? tpl.upcoming.opacity : state === 'spoken' ? tpl.spoken.opacity : 1;
  const emphasis = emphasized ? emphasisOf(tpl) : null;
  let scale = emphasis ? emphasis.scale : 1;
  let dy = 0;
  let visible: number | null = null;
  let shown = text;

  if (state !== 'upcoming') {
    switch (anim.word) {
      case 'pop':
        scale *= wordPopScale(p);
        opacity *= clamp01(p * 3);
        break;
      case 'fade':
        opacity *= easeOutCubic(p);
        break;
      case 'rise':
        dy += (1 - easeOutCubic(p)) * RISE_EM * fontPx;
        opacity *= easeOutCubic(p);
        break;
      case 'typewriter': {
        const gs = unitGraphemes(text);
        const reveal = Math.min(Math.max(end - start, 0.01), gs.length * TYPE_SECONDS_PER_LETTER);
        const n = Math.min(gs.length, Math.max(1, Math.ceil((since / reveal) * gs.length + 1e-9)));
        if (n < gs.length) {
          visible = n;
          shown = gs.slice(0, n).join('');
        }
        break;
      }
      default:
        break;
    }
  }
  if (state === 'active') {
    if (anim.active === 'pop') scale *= activePopScale(tpl.active.scale, p);
    else scale *= tpl.active.scale;
    if (anim.active === 'bounce') dy -= bounceLift(since / (anim.duration * BOUNCE_SPAN)) * BOUNCE_EM * fontPx;
  }

  const stateColor = state === 'upcoming' ? tpl.upcoming.color : state === 'spoken' ? tpl.spoken.color : tpl.spoken.color;
  let color: Color = stateColor ?? tpl.fill;
  if (emphasis) color = emphasis.color;
  if (state === 'active' && tpl.active.color) color = tpl.active.color;

  return {
    unit,
    state,
    text: shown,
    visible,
    color,
    outlineColor: state === 'active' && tpl.active.outlineColor ? tpl.active.outlineColor : tpl.outline ? tpl.outline.color : null,
    opacity: r2(opacity),
    scale: r3(scale),
    dy: Math.round(dy),
    box: state === 'active' ? tpl.active.box : null,
    glow: state === 'active' && tpl.active.glow ? tpl.active.glow : tpl.glow,
  };
}

/**
 * The key lists what is drawn, not why: a word that changes state without changing its look
 * (a clean subtitle has no active colour) keeps the key, so the compositor sends no new frame.
 */
function frameKey(f: CaptionFrame, tpl: Template): string {
  let k = `${f.page}|${f.opacity}|${f.scale}|${f.dy}`;
  if (f.emoji) k += `|e${f.emoji.scale}o${f.emoji.opacity}`;
  for (const w of f.words) {
    if (w.opacity <= 0) continue;
    const glow = w.glow === null ? '' : w.glow === tpl.glow ? 'g' : 'G';
    k += `|${w.unit}${w.color}${w.outlineColor ?? ''}${w.box ? 'b' : ''}${glow}${w.visible ?? ''}`;
    if (w.scale !== 1) k += `s${w.scale}`;
    if (w.dy !== 0) k += `y${w.dy}`;
    if (w.opacity !== 1) k += `o${w.opacity}`;
  }
  return k;
}
