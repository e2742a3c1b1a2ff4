import type { HookTitle, SafeAreaName } from '@captionfarm/contracts';
import {
  captionArea,
  fontFaceFor,
  graphemes,
  hasNoSpaceScript,
  hasRtl,
  nearestWeight,
  safeArea,
  type CustomFontFace,
  type FontSpec,
  type Rect,
  type Template,
} from '@captionfarm/captions';
import { createCanvas, type SKRSContext2D } from './canvas.ts';
import { registerCaptionFonts } from './fonts.ts';
import { setFont } from './measurer.ts';

// Issue 42: the hook title, a headline over the first seconds of a short (Submagic's hookTitle,
// Klap's intro_title, Vizard's headline). Drawn once as a PNG the renderer overlays: a big bold
// centred headline near the top in the template's font, on a rounded box in the template's
// highlight colour, never where the captions go.

export interface HookTitleOptions {
  hook: HookTitle;
  /** The job's effective template: font, text colour, highlight colour. */
  template: Template;
  /** The job's uploaded fonts registered with `registerCustomFont`, by font id (for `template.font.fontId`). */
  fonts?: ReadonlyMap<string, CustomFontFace> | undefined;
  /** The output frame, pixels. */
  width: number;
  height: number;
  /** Where the captions go (the band painter's band): the title never overlaps it. */
  band: Rect;
  /**
   * `tiktok`, `reels`, `shorts`: the title (its whole image: box, halo and shadow) keeps out of
   * that app's interface zones too, centred between its side zones; default `none`.
   */
  safeArea?: SafeAreaName | undefined;
}

/** The title as an RGBA PNG (straight alpha) tight around its box, and where it goes in the frame (even pixels). */
export interface HookTitleImage {
  png: Buffer;
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Font size, percent of the frame's shorter side (54, 70 and 86 px on a 1080x1920 frame): `medium`
 * is a little above the built-in templates' captions (4.6-12.5, most 6-9) seen from a distance,
 * as the peers' hook titles are; `large` fills about two thirds of a portrait frame's width with
 * a 12-letter word.
 */
const SIZE_PERCENT: Readonly<Record<HookTitle['style']['size'], number>> = { small: 5, medium: 6.5, large: 8 };
/** The box may use this share of the frame's width. */
const MAX_WIDTH = 0.86;
const MAX_LINES = 3;
/**
 * A long title shrinks to fit MAX_LINES down to this size (percent of the shorter side, 32 px at
 * 1080), then ends with an ellipsis as a last resort. At this size a title of the most characters
 * allowed (120), in capitals too, fits on 3 lines of a 9:16 frame in every built-in template
 * (at 3.5 the capitals of word-pop and neon did not).
 */
const MIN_SIZE_PERCENT = 3;
/** When even that leaves no room outside the band, the title shrinks further, down to this share of the smallest size. */
const LAST_RESORT_SHRINK = 0.3;
// Box geometry in em (multiples of the font size).
const PAD_X = 0.5;
const PAD_Y = 0.3;
const RADIUS = 0.3;
/** The gap kept between the title and the caption band, share of the frame's shorter side. */
const BAND_GAP = 0.02;
/** The title's top below the safe area's top (the platform's tabs), share of the frame's height. */
const TOP_OFFSET = 0.04;
/** In the lower part, the title's bottom stays above the bottom 20% of the frame (and its safe area). */
const BOTTOM_KEEP_OUT = 0.2;
/** Used when the template has no colour of its own to highlight with. */
const DARK_BOX = '#000000B3';

interface Look {
  text: string;
  box: string | null;
  /** Outline and shadow colour when there is no box. */
  halo: string;
  haloWidthEm: number;
}

interface TitleLayout {
  spec: FontSpec;
  lines: string[];
  widths: number[];
  lineHeight: number;
  capHeight: number;
  descender: number;
  /** The box (or, without one, the area the text and its halo keep to), pixels. */
  width: number;
  height: number;
  /** Extra pixels on every side for the halo when there is no box. */
  margin: number;
}

/** Paints the hook title: its PNG and its place in the frame, outside the caption band. */
export function paintHookTitle(o: HookTitleOptions): HookTitleImage {
  registerCaptionFonts();
  const look = lookOf(o.hook, o.template);
  const face = fontFaceFor(o.template.font, o.fonts);
  const weight = o.template.font.fontId ? face.weight : nearestWeight(o.template.font.family, Math.max(700, o.template.font.weight));
  const side = Math.min(o.width, o.height);
  const basePx = (SIZE_PERCENT[o.hook.style.size] * side) / 100;
  const text = caseOf(o.hook.text, o.template.text.case);
  const ctx = createCanvas(8, 8).getContext('2d');
  const specAt = (sizePx: number): FontSpec => ({ family: face.family, weight, sizePx, letterSpacingPx: o.template.font.letterSpacing * sizePx });
  const minPx = (MIN_SIZE_PERCENT * side) / 100;
  const maxWidth = maxTitleWidth(o);
  let sizePx = basePx;
  let layout = layoutTitle(ctx, text, specAt(sizePx), look, maxWidth, { truncate: false });
  while (!layout && sizePx > minPx) {
    sizePx = Math.max(minPx, sizePx * 0.95);
    layout = layoutTitle(ctx, text, specAt(sizePx), look, maxWidth, { truncate: sizePx <= minPx });
  }
  layout ??= layoutTitle(ctx, text, specAt(sizePx), look, maxWidth, { truncate: true })!;
  let at = placeTitle(o, layout);
  // Only a band covering most of the frame gets here: a smaller title where one fits.
  while (!at && sizePx > minPx * LAST_RESORT_SHRINK) {
    sizePx *= 0.9;
    layout = layoutTitle(ctx, text, specAt(sizePx), look, maxWidth, { truncate: true })!;
    at = placeTitle(o, layout);
  }
  if (!at) throw new Error(`No room for the hook title outside the caption band ${JSON.stringify(o.band)} in a ${o.width}x${o.height} frame`);
  return { png: drawTitle(layout, look), ...at };
}

/**
 * The widest the title's image may be: MAX_WIDTH of the frame, and with an app's zones no wider
 * than the caption area between its side zones, less 4 px for the rounding to even pixels
 * (placeTitle centres it on even pixels).
 */
function maxTitleWidth(o: HookTitleOptions): number {
  const app = o.safeArea ?? 'none';
  if (app === 'none') return o.width * MAX_WIDTH;
  return Math.min(o.width * MAX_WIDTH, captionArea(o.width, o.height, app).width - 4);
}

/** The colours: the style's, else the template's text colour on its highlight colour, readable either way. */
function lookOf(hook: HookTitle, t: Template): Look {
  const box = hook.style.boxColor === undefined ? highlightOf(t) : hook.style.boxColor;
  let text = hook.style.textColor ?? t.fill;
  if (box && !hook.style.textColor && contrast(text, box) < 3) {
    // White on the karaoke yellow is unreadable: the template's outline colour, else black or white.
    const options = [t.outline?.color, '#000000', '#FFFFFF'].filter((c): c is string => !!c);
    text = options.find((c) => contrast(c, box) >= 4.5) ?? options.reduce((a, b) => (contrast(a, box) >= contrast(b, box) ? a : b));
  }
  const halo = t.outline?.color ?? (luminance(text) > 0.4 ? '#000000' : '#FFFFFF');
  return { text, box, halo: halo.slice(0, 7), haloWidthEm: Math.max(t.outline?.width ?? 0, 0.08) };
}

/**
 * The template's highlight colour: the first of the active word's box, colour and glow, the
 * emphasis and spoken colours, the background and the glow that differs from the text colour;
 * a dark translucent box when none does.
 */
function highlightOf(t: Template): string {
  const candidates = [t.active.box?.color, t.active.color, t.active.glow?.color, t.emphasis?.color, t.spoken.color, t.background?.color, t.glow?.color];
  return candidates.find((c): c is string => !!c && distinct(c, t.fill)) ?? DARK_BOX;
}

/** Two colours a viewer tells apart (yellow from white, though their luminances are close): a channel 64 levels apart. */
function distinct(a: string, b: string): boolean {
  return [1, 3, 5].some((i) => Math.abs(Number.parseInt(a.slice(i, i + 2), 16) - Number.parseInt(b.slice(i, i + 2), 16)) >= 64);
}

function caseOf(text: string, c: Template['text']['case']): string {
  if (c === 'upper') return text.toLocaleUpperCase();
  if (c === 'lower') return text.toLocaleLowerCase();
  return text;
}

/**
 * The title's lines at font `spec`, balanced (the narrowest width that needs no more lines than
 * the widest), its image within `maxWidth` (maxTitleWidth); null when it needs more than
 * MAX_LINES, unless `truncate`, which cuts the third line with an ellipsis.
 */
function layoutTitle(ctx: SKRSContext2D, text: string, spec: FontSpec, look: Look, maxWidth: number, o: { truncate: boolean }): TitleLayout | null {
  const px = spec.sizePx;
  const measure = (s: string) => {
    setFont(ctx, spec, s);
    // Canvas adds the letter spacing after the last letter too.
    return Math.max(0, ctx.measureText(s).width - Math.max(spec.letterSpacingPx, 0));
  };
  const margin = look.box ? 0 : Math.ceil(px * (look.haloWidthEm + 0.2));
  const maxText = maxWidth - 2 * PAD_X * px - 2 * margin;
  const tokens = tokensOf(text, maxText, measure);
  let lines = wrap(tokens, maxText, measure);
  if (lines.length > MAX_LINES) {
    if (!o.truncate) return null;
    lines = [...lines.slice(0, MAX_LINES - 1), ellipsize(lines.slice(MAX_LINES - 1).join(' '), maxText, measure)];
  } else if (lines.length > 1) {
    lines = balance(tokens, lines.length, maxText, measure);
  }
  const widths = lines.map(measure);
  setFont(ctx, spec, 'H');
  const capHeight = ctx.measureText('H').actualBoundingBoxAscent;
  const descender = ctx.measureText('gjpqy').actualBoundingBoxDescent;
  const lineHeight = px * 1.15;
  const boxHeight = 2 * PAD_Y * px + capHeight + (lines.length - 1) * lineHeight + descender * 0.45;
  return {
    spec,
    lines,
    widths,
    lineHeight,
    capHeight,
    descender,
    width: Math.max(...widths) + 2 * PAD_X * px,
    height: boxHeight,
    margin,
  };
}

interface Token {
  text: string;
  /** A space before it when it does not start a line (none between the characters of Chinese or Japanese). */
  space: boolean;
}

/** Words, and characters of scripts written without spaces and of words too wide for a line. */
function tokensOf(text: string, maxWidth: number, measure: (s: string) => number): Token[] {
  const out: Token[] = [];
  for (const word of text.split(/\s+/u).filter(Boolean)) {
    if (!hasNoSpaceScript(word) && measure(word) <= maxWidth) {
      out.push({ text: word, space: true });
      continue;
    }
    graphemes(word).forEach((g, i) => {
      out.push({ text: g, space: i === 0 });
    });
  }
  return out;
}

/** Greedy: as many tokens on each line as fit in `maxWidth`. */
function wrap(tokens: Token[], maxWidth: number, measure: (s: string) => number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const t of tokens) {
    const next = line === '' ? t.text : `${line}${t.space ? ' ' : ''}${t.text}`;
    if (line !== '' && measure(next) > maxWidth) {
      lines.push(line);
      line = t.text;
    } else line = next;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** The lines at the narrowest width that still needs only `count` lines (a headline's lines of even length). */
function balance(tokens: Token[], count: number, maxWidth: number, measure: (s: string) => number): string[] {
  let lo = maxWidth / count;
  let hi = maxWidth;
  for (let i = 0; i < 12 && hi - lo > 1; i++) {
    const mid = (lo + hi) / 2;
    if (wrap(tokens, mid, measure).length <= count) hi = mid;
    else lo = mid;
  }
  return wrap(tokens, hi, measure);
}

function ellipsize(text: string, maxWidth: number, measure: (s: string) => number): string {
  const g = graphemes(text);
  while (g.length > 0 && measure(`${g.join('').trimEnd()}…`) > maxWidth) g.pop();
  return `${g.join('').trimEnd()}…`;
}

/**
 * Where the title goes, even pixels: centred, near the top of the safe area (under the platform's
 * tabs) when the captions are in the lower half, else above the bottom 20%; moved off the band
 * (to the nearest side of it with room) when it would overlap it; with an app's zones, between
 * its top bar and its bottom block. Null when no place has room.
 */
function placeTitle(o: HookTitleOptions, l: TitleLayout): Omit<HookTitleImage, 'png'> | null {
  const { width: W, height: H, band } = o;
  const app = o.safeArea ?? 'none';
  const w = even(Math.ceil(l.width + 2 * l.margin));
  const h = even(Math.ceil(l.height + 2 * l.margin));
  if (w > W || h > H) return null;
  const x = even(Math.floor((W - w) / 2));
  const safe = safeArea(W, H, app);
  const [minY, maxY] = app === 'none' ? [0, H] : [safe.y, safe.y + safe.height];
  const bandOnTop = band.y + band.height / 2 < H / 2;
  const preferred = bandOnTop ? Math.min(H * (1 - BOTTOM_KEEP_OUT), safe.y + safe.height) - h : safe.y + TOP_OFFSET * H;
  const gap = BAND_GAP * Math.min(W, H);
  const overlapsX = band.x < x + w + gap && x - gap < band.x + band.width;
  const free: [number, number][] = overlapsX
    ? [
        [minY, band.y - gap],
        [band.y + band.height + gap, maxY],
      ]
    : [[minY, maxY]];
  let best: number | null = null;
  for (const [lo0, hi] of free) {
    const lo = Math.max(lo0, minY);
    const top = even(Math.ceil(lo));
    const last = Math.floor(Math.min(hi, maxY)) - h;
    if (last < top) continue;
    const y = Math.min(Math.max(even(Math.round(preferred)), top), last - (last % 2));
    if (best === null || Math.abs(y - preferred) < Math.abs(best - preferred)) best = y;
  }
  return best === null ? null : { x, y: best, width: w, height: h };
}

const even = (v: number) => v + (v % 2);

/** The PNG: the box (or nothing, with an outline and a shadow), the lines centred on it. */
function drawTitle(l: TitleLayout, look: Look): Buffer {
  const w = even(Math.ceil(l.width + 2 * l.margin));
  const h = even(Math.ceil(l.height + 2 * l.margin));
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  const px = l.spec.sizePx;
  // The box fills the whole image (rounded up to even pixels); the text is centred in it.
  const dx = (w - l.width - 2 * l.margin) / 2 + l.margin;
  const dy = (h - l.height - 2 * l.margin) / 2 + l.margin;
  if (look.box) {
    ctx.fillStyle = look.box;
    ctx.beginPath();
    ctx.roundRect(0, 0, w, h, Math.min(RADIUS * px, h / 2));
    ctx.fill();
  }
  l.lines.forEach((line, i) => {
    const rtl = hasRtl(line);
    const lineWidth = l.widths[i]!;
    const x = dx + (l.width - lineWidth) / 2 + (rtl ? lineWidth : 0);
    const y = dy + PAD_Y * px + l.capHeight + i * l.lineHeight;
    setFont(ctx, l.spec, line);
    if (rtl) ctx.textAlign = 'right';
    if (!look.box) paintHalo(ctx, line, x, y, px, look);
    ctx.fillStyle = look.text;
    ctx.fillText(line, x, y);
  });
  return canvas.encodeSync('png');
}

/** Without a box: a soft shadow and an outline in the template's outline colour keep the title readable on any video. */
function paintHalo(ctx: SKRSContext2D, line: string, x: number, y: number, px: number, look: Look): void {
  ctx.save();
  ctx.shadowColor = `${look.halo}A0`;
  ctx.shadowBlur = 0.12 * px;
  ctx.shadowOffsetY = 0.04 * px;
  ctx.strokeStyle = look.halo;
  // The stroke is centred on the glyph edge; the fill covers the inner half.
  ctx.lineWidth = 2 * look.haloWidthEm * px;
  ctx.lineJoin = 'round';
  ctx.miterLimit = 2;
  ctx.strokeText(line, x, y);
  ctx.restore();
}

/** WCAG contrast ratio of two colours, a translucent one as seen over mid grey. */
function contrast(a: string, b: string): number {
  const la = luminance(a);
  const lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** WCAG relative luminance of #RRGGBB or #RRGGBBAA (alpha blended over #808080). */
function luminance(hex: string): number {
  const alpha = hex.length === 9 ? Number.parseInt(hex.slice(7, 9), 16) / 255 : 1;
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = (Number.parseInt(hex.slice(i, i + 2), 16) / 255) * alpha + (128 / 255) * (1 - alpha);
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
