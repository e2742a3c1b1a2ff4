// Where frames may paint: each unit's and page's ink grown by animations and effects, the band
// (their union, even-aligned), the background boxes, and the page that stands for words not known yet.
import { BOUNCE_EM, RISE_EM, SLIDE_EM, maxPageScale, maxWordScale } from './animation.ts';
import type { CaptionLayout, CaptionPage, CaptionUnit } from './layout-types.ts';
import type { LayoutFrame } from './placement.ts';
import { captionArea, unionRect, type Rect } from './safe-area.ts';
import type { Template } from './template.ts';
import type { SafeAreaName } from '@captionfarm/contracts';

export interface InkInput {
  template: Template;
  fontPx: number;
  lineHeightPx: number;
  units: CaptionUnit[];
  pages: CaptionPage[];
}

/** How far (em) a word's effects reach past its glyphs: outline, shadow, glows, the active word's box. */
export function effectsEm(t: Template): number {
  return Math.max(
    t.outline ? t.outline.width : 0,
    t.shadow ? t.shadow.blur * 1.5 + Math.max(Math.abs(t.shadow.offsetX), Math.abs(t.shadow.offsetY)) + (t.outline ? t.outline.width : 0) : 0,
    t.glow ? t.glow.blur * 1.5 : 0,
    t.active.glow ? t.active.glow.blur * 1.5 : 0,
    t.active.box ? Math.max(t.active.box.paddingX, t.active.box.paddingY) : 0,
  );
}

/** Every pixel one unit may paint in any frame: its ink grown by the largest animated scale, jumps, its box and effects. */
function unitInk(a: InkInput, u: CaptionUnit): Rect {
  const { template: t, fontPx } = a;
  const scale = maxWordScale(t);
  const effects = effectsEm(t) * fontPx;
  const up = (t.animation.active === 'bounce' ? BOUNCE_EM : 0) * fontPx;
  const down = (t.animation.word === 'rise' ? RISE_EM : 0) * fontPx + (t.animation.page === 'slide-up' ? SLIDE_EM : 0) * fontPx;
  const cx = u.x + u.width / 2;
  const box = unionRect(u.ink, { x: u.x, y: u.baseline - u.fontPx * 0.75, width: u.width, height: u.fontPx });
  const cy = u.baseline - u.fontPx * 0.35;
  return {
    x: cx - (cx - box.x) * scale - effects,
    y: cy - (cy - box.y) * scale - effects - up,
    width: box.width * scale + 2 * effects,
    height: box.height * scale + 2 * effects + up + down,
  };
}

/** Every pixel one page may paint in any frame: its units, background boxes and emoji, grown by the page's animated scale. */
function pageInk(a: InkInput, p: CaptionPage): Rect | null {
  const t = a.template;
  const down = (t.animation.word === 'rise' ? RISE_EM : 0) * a.fontPx + (t.animation.page === 'slide-up' ? SLIDE_EM : 0) * a.fontPx;
  let pageRect: Rect | null = null;
  for (const ui of p.units) pageRect = unionRect(pageRect, unitInk(a, a.units[ui]!));
  for (const r of backgroundRects(t, p, a.fontPx, a.lineHeightPx)) pageRect = unionRect(pageRect, { ...r, height: r.height + down });
  if (p.emoji) {
    // The emoji pops in (overshooting about 10%) and moves with the page.
    const e = p.emoji.ink;
    const g = 0.12 * Math.max(e.width, e.height);
    pageRect = unionRect(pageRect, { x: e.x - g, y: e.y - g, width: e.width + 2 * g, height: e.height + 2 * g + down });
  }
  if (!pageRect) return null;
  const ps = maxPageScale(t);
  if (ps > 1) {
    const cx = p.box.x + p.box.width / 2;
    const cy = p.box.y + p.box.height / 2;
    const r: Rect = pageRect;
    pageRect = { x: cx - (cx - r.x) * ps, y: cy - (cy - r.y) * ps, width: r.width * ps, height: r.height * ps };
  }
  return pageRect;
}

/**
 * A little slack for antialiasing and for glyphs drawn at a size other than the one measured:
 * `px` (one output pixel, in the units of `r`) plus 2% of the font size.
 */
export function inkSlackPx(fontPx: number, px = 1): number {
  return px + 0.02 * fontPx;
}

function inkSlack(r: Rect, fontPx: number, px = 1): Rect {
  const slack = inkSlackPx(fontPx, px);
  return { x: r.x - slack, y: r.y - slack, width: r.width + 2 * slack, height: r.height + 2 * slack };
}

/** Every pixel each page may paint in any frame, with slack (frame pixels, not clipped to the band); null for a page with nothing to paint. */
export function pageInks(a: InkInput): (Rect | null)[] {
  return a.pages.map((p) => {
    const r = pageInk(a, p);
    return r && inkSlack(r, a.fontPx);
  });
}

/**
 * Where each unit and each page may paint in any frame (frame pixels, not clipped to the band):
 * the parts the band is the union of. A compositor reads back only the rects of what changed
 * between two images (the units whose look changed, or the pages when the page itself moved).
 */
export function inkBounds(layout: CaptionLayout, template: Template): { units: Rect[]; pages: (Rect | null)[] } {
  const a: InkInput = { template, fontPx: layout.font.sizePx, lineHeightPx: layout.lineHeightPx, units: layout.units, pages: layout.pages };
  return {
    units: layout.units.map((u) => inkSlack(unitInk(a, u), a.fontPx)),
    pages: pageInks(a),
  };
}

/** Every pixel any frame may paint: the union of the pages' ink, with slack, even-aligned and inside the frame. */
export function computeBand(a: InkInput & { width: number; height: number; app?: SafeAreaName | undefined }): Rect {
  const { width, height } = a;
  const W = Math.floor(width / 2) * 2;
  const H = Math.floor(height / 2) * 2;
  let band: Rect | null = null;
  for (const p of a.pages) {
    const r = pageInk(a, p);
    if (r) band = unionRect(band, r);
  }
  if (!band) {
    const area = captionArea(width, height, a.app);
    band = { x: area.x + area.width / 2 - 1, y: area.y + area.height - 2, width: 2, height: 2 };
  }
  band = inkSlack(band, a.fontPx);
  const x0 = Math.max(0, Math.floor(band.x / 2) * 2);
  const y0 = Math.max(0, Math.floor(band.y / 2) * 2);
  const x1 = Math.min(W, Math.ceil((band.x + band.width) / 2) * 2);
  const y1 = Math.min(H, Math.ceil((band.y + band.height) / 2) * 2);
  return { x: x0, y: y0, width: Math.max(2, x1 - x0), height: Math.max(2, y1 - y0) };
}

/**
 * The template's background boxes for one page, frame pixels: one around the page, or one per
 * line, stretched to the line height so stacked line boxes meet and read as one shape.
 */
export function backgroundRects(template: Template, page: CaptionPage, fontPx: number, lineHeightPx: number): Rect[] {
  const bg = template.background;
  if (!bg) return [];
  const padX = bg.paddingX * fontPx;
  const padY = bg.paddingY * fontPx;
  const grow = (r: Rect, extra: number): Rect => ({ x: r.x - padX, y: r.y - padY - extra, width: r.width + 2 * padX, height: r.height + 2 * (padY + extra) });
  if (bg.scope === 'page') return [grow(page.box, 0)];
  return page.lines.map((l) => grow(l.box, Math.max(0, (lineHeightPx - l.box.height - 2 * padY) / 2)));
}

/**
 * How far a glyph's ink may reach, in em of its font size, where the words are not known yet:
 * stacked accents over capitals (Vietnamese, Ǻ) above, descenders and marks below, overhangs on
 * each side.
 */
export const ANY_INK = { ascent: 1.25, descent: 0.45, side: 0.2 } as const;

/**
 * The page that stands for words not known yet (see bandForAnyWords): `maxLines` lines, each one
 * unit as wide as a line may be, with ink reaching as far as ANY_INK, at the template's position.
 */
export function anyWordsPage(template: Template, frame: LayoutFrame): { page: CaptionPage; units: CaptionUnit[] } {
  const { fontPx, metrics, lineHeightPx, textArea, maxLineWidth } = frame;
  const lines = template.layout.maxLines;
  const blockHeight = (lines - 1) * lineHeightPx + metrics.capHeight + metrics.descender;
  const top = textArea.y + template.position.y * Math.max(0, textArea.height - blockHeight);
  const x = textArea.x + (textArea.width - maxLineWidth) / 2;
  const units: CaptionUnit[] = [];
  const page: CaptionPage = {
    index: 0,
    phrase: 0,
    start: 0,
    end: 1,
    direction: 'ltr',
    lines: [],
    units: [],
    box: { x, y: top, width: maxLineWidth, height: blockHeight },
    emoji: null,
  };
  for (let line = 0; line < lines; line++) {
    const baseline = top + metrics.capHeight + line * lineHeightPx;
    const ink = {
      x: x - ANY_INK.side * fontPx,
      y: baseline - ANY_INK.ascent * fontPx,
      width: maxLineWidth + 2 * ANY_INK.side * fontPx,
      height: (ANY_INK.ascent + ANY_INK.descent) * fontPx,
    };
    const box = { x, y: baseline - metrics.capHeight, width: maxLineWidth, height: metrics.capHeight + metrics.descender };
    page.lines.push({ units: [units.length], box, baseline });
    page.units.push(units.length);
    units.push({
      text: '',
      wordIndex: 0,
      start: 0,
      end: 1,
      page: 0,
      line,
      x,
      baseline,
      width: maxLineWidth,
      fontPx,
      ink,
      direction: 'ltr',
      emphasized: true,
      spaceBefore: false,
    });
  }
  return { page, units };
}
