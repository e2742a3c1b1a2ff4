// Pages of tokens -> frame pixels: where text may go, and each line and word placed in it.
import { BOUNCE_EM, RISE_EM, SLIDE_EM, maxPageScale, maxWordScale } from './animation.ts';
import { pageEmphasis } from './emphasis.ts';
import { fontFaceFor } from './fonts.ts';
import type { CaptionLine, CaptionPage, CaptionUnit, LayoutOptions } from './layout-types.ts';
import type { Spacing } from './line-breaking.ts';
import type { FontMetrics, FontSpec } from './measure.ts';
import { captionAreaAt, unionRect, type Rect } from './safe-area.ts';
import { ANY_INK, effectsEm, inkSlackPx } from './band.ts';
import type { SafeAreaName } from '@captionfarm/contracts';
import type { Template } from './template.ts';
import { baseDirection, needsSpaceBetween, visualOrder, type Direction } from './text.ts';
import type { MeasuredToken } from './tokens.ts';

/** Base font size in pixels: template.font.size percent of the frame's shorter side. */
export function baseFontPx(template: Template, width: number, height: number): number {
  return (template.font.size / 100) * Math.min(width, height);
}

/** What every page of a layout shares: the font and where text may go (reference pixels). */
export interface LayoutFrame {
  fontPx: number;
  font: FontSpec;
  metrics: FontMetrics;
  lineHeightPx: number;
  textArea: Rect;
  maxLineWidth: number;
}

/** `px`: one output pixel in the units of `opts` (the layout runs at a reference size, see layoutCaptions). */
export function frameOf(opts: Omit<LayoutOptions, 'words'>, px = 1): LayoutFrame {
  const { template, width, height, measurer } = opts;
  const fontPx = baseFontPx(template, width, height);
  const face = fontFaceFor(template.font, opts.fonts);
  const font: FontSpec = {
    family: face.family,
    weight: face.weight,
    sizePx: fontPx,
    letterSpacingPx: template.font.letterSpacing * fontPx,
  };
  const metrics = measurer.fontMetrics(font);
  const lineHeightPx = template.font.lineHeight * fontPx;
  const textArea = textAreaFor({ template, width, height, fontPx, metrics, app: opts.safeArea ?? 'none', px });
  return { fontPx, font, metrics, lineHeightPx, textArea, maxLineWidth: textArea.width * template.layout.maxWidth };
}

/**
 * The caption area inset so that outlines, boxes and animations (a bounce's jump, a rise from
 * below, a pop's growth) stay inside the safe area too. With an app's zones to keep clear of,
 * lines are narrower still, so that everything a page may paint (shadows and glows, glyphs
 * reaching ANY_INK.side past their advance, the slack of the band) is no wider than the caption
 * area: a page then fits between the side zones (page-position.ts shifts it there when its ends
 * grow unevenly, and keeps it clear of the top and bottom zones).
 */
function textAreaFor(o: { template: Template; width: number; height: number; fontPx: number; metrics: FontMetrics; app: SafeAreaName; px: number }): Rect {
  const { template, fontPx, metrics } = o;
  const area = captionAreaAt(o.width, o.height, o.app, o.px);
  const capHeight = metrics.capHeight;
  const bg = template.background;
  const outline = template.outline ? template.outline.width : 0;
  const activeBox = template.active.box;
  const padX = Math.max(bg ? bg.paddingX : 0, activeBox ? activeBox.paddingX : 0, outline) * fontPx;
  // Line boxes stretch to the line height (see backgroundRects).
  const lineBoxExtra =
    bg && bg.scope === 'line' ? Math.max(0, (template.font.lineHeight * fontPx - capHeight - metrics.descender) / 2 - bg.paddingY * fontPx) : 0;
  const padY = Math.max(bg ? bg.paddingY * fontPx + lineBoxExtra : 0, (activeBox ? activeBox.paddingY : 0) * fontPx, outline * fontPx);
  const grow = ((maxWordScale(template) - 1) * capHeight) / 2;
  const up = (template.animation.active === 'bounce' ? BOUNCE_EM : 0) * fontPx;
  const down = ((template.animation.word === 'rise' ? RISE_EM : 0) + (template.animation.page === 'slide-up' ? SLIDE_EM : 0)) * fontPx;
  // A page popping in overshoots about its centre.
  const ps = maxPageScale(template);
  const pageGrowY = ((ps - 1) * template.layout.maxLines * template.font.lineHeight * fontPx) / 2;
  const top = padY + grow + up + pageGrowY;
  const bottom = padY + grow + down + pageGrowY;
  let w = Math.max(0, area.width / ps - 2 * padX);
  if (o.app !== 'none') {
    const reach = Math.max(maxWordScale(template) * ANY_INK.side + effectsEm(template), bg ? bg.paddingX : 0) * fontPx;
    w = Math.max(0, Math.min(w, (area.width - 2 * inkSlackPx(fontPx, o.px)) / ps - 2 * reach));
  }
  return { x: area.x + (area.width - w) / 2, y: area.y + top, width: w, height: Math.max(0, area.height - top - bottom) };
}

/**
 * One page's lines placed in the text area (the block at the template's vertical position, each
 * line centred), its units appended to `units`. The page's time and emoji are left to later
 * stages (start and end 0, emoji null).
 */
export function placePage(a: {
  lines: MeasuredToken[][];
  index: number;
  phrase: number;
  frame: LayoutFrame;
  spacing: Spacing;
  template: Template;
  units: CaptionUnit[];
}): CaptionPage {
  const { lines, frame, units } = a;
  const { metrics, lineHeightPx, textArea } = frame;
  const pageTokens = lines.flat();
  const direction = baseDirection(pageTokens.map((t) => t.text));
  const emphasized = pageEmphasis(pageTokens, a.template);
  const blockHeight = (lines.length - 1) * lineHeightPx + metrics.capHeight + metrics.descender;
  const top = textArea.y + a.template.position.y * Math.max(0, textArea.height - blockHeight);
  const page: CaptionPage = {
    index: a.index,
    phrase: a.phrase,
    start: 0,
    end: 0,
    direction,
    lines: [],
    units: [],
    box: { x: 0, y: 0, width: 0, height: 0 },
    emoji: null,
  };
  let pageBox: Rect | null = null;
  let firstIndex = 0;
  lines.forEach((tokens, lineIndex) => {
    const baseline = top + metrics.capHeight + lineIndex * lineHeightPx;
    const placed = placeLine({ tokens, page: a.index, lineIndex, baseline, direction, emphasized, firstIndex, frame, spacing: a.spacing });
    for (const unit of placed.units) {
      placed.line.units.push(units.length);
      page.units.push(units.length);
      units.push(unit);
    }
    firstIndex += tokens.length;
    page.lines.push(placed.line);
    pageBox = unionRect(pageBox, placed.line.box);
  });
  page.box = pageBox ?? page.box;
  return page;
}

/**
 * One line's units, in visual order (word-level bidi) and centred, with gaps that leave room for
 * each word's largest size. `firstIndex`: the line's first token in the page (`emphasized` counts
 * tokens of the page).
 */
function placeLine(a: {
  tokens: MeasuredToken[];
  page: number;
  lineIndex: number;
  baseline: number;
  direction: Direction;
  emphasized: ReadonlySet<number>;
  firstIndex: number;
  frame: LayoutFrame;
  spacing: Spacing;
}): { line: CaptionLine; units: CaptionUnit[] } {
  const { tokens, baseline, direction, emphasized, firstIndex, spacing } = a;
  const { textArea, metrics } = a.frame;
  const order = visualOrder(
    tokens.map((t) => t.direction),
    direction,
  );
  const scaleOf = (ti: number) => (emphasized.has(firstIndex + ti) ? spacing.wordScale * spacing.emphScale : spacing.wordScale);
  const gapBefore = (k: number) => {
    const p = order[k - 1]!;
    const q = order[k]!;
    return spacing.gap(tokens[p]!, tokens[q]!, scaleOf(p), scaleOf(q));
  };
  let lineWidth = 0;
  order.forEach((ti, k) => {
    if (k > 0) lineWidth += gapBefore(k);
    lineWidth += tokens[ti]!.width;
  });
  let x = textArea.x + (textArea.width - lineWidth) / 2;
  const xs: number[] = new Array(tokens.length);
  order.forEach((ti, k) => {
    if (k > 0) x += gapBefore(k);
    xs[ti] = x;
    x += tokens[ti]!.width;
  });
  const line: CaptionLine = {
    units: [],
    baseline,
    box: {
      x: textArea.x + (textArea.width - lineWidth) / 2,
      y: baseline - metrics.capHeight,
      width: lineWidth,
      height: metrics.capHeight + metrics.descender,
    },
  };
  const units = tokens.map(
    (t, i): CaptionUnit => ({
      text: t.text,
      wordIndex: t.wordIndex,
      start: t.start,
      end: t.end,
      page: a.page,
      line: a.lineIndex,
      x: xs[i]!,
      baseline,
      width: t.width,
      fontPx: t.fontPx,
      ink: {
        x: xs[i]! + Math.min(0, t.box.inkLeft),
        y: baseline - t.box.inkAscent,
        width: Math.max(t.box.inkRight, t.width) - Math.min(0, t.box.inkLeft),
        height: t.box.inkAscent + t.box.inkDescent,
      },
      direction: t.direction ?? direction,
      emphasized: emphasized.has(firstIndex + i),
      spaceBefore: i > 0 && needsSpaceBetween(tokens[i - 1]!.text, t.text),
    }),
  );
  return { line, units };
}
