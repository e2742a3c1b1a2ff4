// Words -> pages -> lines placed in frame pixels: this file runs the stages, each in its own module:
// tokens.ts (words to display tokens, measured), emphasis.ts (keywords and the picked word),
// line-breaking.ts (phrases, pages, balanced lines), placement.ts (text area, lines and words in
// pixels), page-emoji.ts, page-timing.ts (when pages show) and band.ts (where frames may paint).
import { maxWordScale } from './animation.ts';
import { anyWordsPage, computeBand } from './band.ts';
import { keywordTokens } from './emphasis.ts';
import type { CaptionLayout, CaptionUnit, LayoutOptions } from './layout-types.ts';
import { breakPages, createLineFits, createSpacing } from './line-breaking.ts';
import { anyWordsEmoji, placeEmoji } from './page-emoji.ts';
import { timePages } from './page-timing.ts';
import { positionPages } from './page-position.ts';
import { frameOf, placePage } from './placement.ts';
import { captionAreaAt, safeArea, type Rect } from './safe-area.ts';
import { measureTokens, tokenize } from './tokens.ts';

/**
 * Layout is computed for a reference frame whose shorter side is this many pixels, then scaled:
 * 720p and 4K get the same line and page breaks, whatever rounding the font engine does.
 */
export const REFERENCE_SIDE = 1080;

/** Words -> pages -> lines, placed in frame pixels with real font metrics. Pure. */
export function layoutCaptions(opts: LayoutOptions): CaptionLayout {
  const k = Math.min(opts.width, opts.height) / REFERENCE_SIDE;
  const ref = layoutReference({ ...opts, width: opts.width / k, height: opts.height / k }, 1 / k);
  return scaleLayout(ref, k, opts);
}

/**
 * The band of captions whose words are not known yet (a render that starts while recognition
 * runs, see `settledUntil`): every pixel a page of `maxLines` lines, each as wide as a line may
 * be, can paint with its emoji, effects and animations. A block of n lines covers the block of
 * fewer lines at any vertical position, so the tallest page bounds them all. The band of the
 * words' own layout (`layoutCaptions(...).band`) fits inside it for text within ANY_INK (band.ts);
 * a caller that starts early checks that and starts over when it does not.
 */
export function bandForAnyWords(opts: Omit<LayoutOptions, 'words' | 'placement' | 'avoid'>): Rect {
  const k = Math.min(opts.width, opts.height) / REFERENCE_SIDE;
  const width = opts.width / k;
  const height = opts.height / k;
  const { template, measurer } = opts;
  const app = opts.safeArea ?? 'none';
  const frame = frameOf({ ...opts, width, height }, 1 / k);
  const { page, units } = anyWordsPage(template, frame);
  if (template.emoji === 'auto') {
    page.emoji = anyWordsEmoji({ pageBox: page.box, fontPx: frame.fontPx, measurer, top: captionAreaAt(width, height, app, 1 / k).y, template });
  }
  const ref = {
    width,
    height,
    safeArea: safeArea(width, height, app),
    textArea: frame.textArea,
    font: frame.font,
    capHeight: frame.metrics.capHeight,
    descender: frame.metrics.descender,
    lineHeightPx: frame.lineHeightPx,
    units,
    pages: [page],
  };
  // Moved like the words' pages (placement aside: a job placed automatically renders once every word is known).
  return scaleLayout(ref, k, { ...opts, placement: 'fixed', avoid: [] }).band;
}

/** The layout of the reference frame (see REFERENCE_SIDE), without its band; `px`: one output pixel there. */
function layoutReference(opts: LayoutOptions, px: number): Omit<CaptionLayout, 'band'> {
  const { template, width, height, measurer } = opts;
  const app = opts.safeArea ?? 'none';
  const frame = frameOf(opts, px);
  const { fontPx, font, metrics, lineHeightPx, textArea, maxLineWidth } = frame;
  const safe = safeArea(width, height, app);

  const tokens = tokenize(opts.words, template);
  // A word alone on its line must fit even at its largest animated or emphasised size.
  const forced = keywordTokens(tokens, template.keywords);
  const measured = measureTokens(tokens, { font, measurer, maxWidth: maxLineWidth / maxWordScale(template), forced });
  const spacing = createSpacing(template, fontPx);
  const lineFits = createLineFits(template, spacing, maxLineWidth);

  const units: CaptionUnit[] = [];
  const pages = breakPages(measured, lineFits, template).map(({ lines, phrase }, index) => {
    const page = placePage({ lines, index, phrase, frame, spacing, template, units });
    if (template.emoji === 'auto') page.emoji = placeEmoji({ page, units, fontPx, measurer, top: captionAreaAt(width, height, app, px).y, template });
    return page;
  });
  timePages(pages, units, template);

  return { width, height, safeArea: safe, textArea, font, capHeight: metrics.capHeight, descender: metrics.descender, lineHeightPx, units, pages };
}

/** A reference layout scaled by `k` to the frame of `opts`, its pages moved clear of the app's zones and faces (page-position.ts), with its band. */
function scaleLayout(ref: Omit<CaptionLayout, 'band'>, k: number, opts: Omit<LayoutOptions, 'words'>): CaptionLayout {
  const r = (v: Rect): Rect => ({ x: v.x * k, y: v.y * k, width: v.width * k, height: v.height * k });
  const units = ref.units.map((u) => ({ ...u, x: u.x * k, baseline: u.baseline * k, width: u.width * k, fontPx: u.fontPx * k, ink: r(u.ink) }));
  const pages = ref.pages.map((p) => ({
    ...p,
    box: r(p.box),
    lines: p.lines.map((l) => ({ ...l, box: r(l.box), baseline: l.baseline * k })),
    emoji: p.emoji && {
      ...p.emoji,
      x: p.emoji.x * k,
      baseline: p.emoji.baseline * k,
      width: p.emoji.width * k,
      sizePx: p.emoji.sizePx * k,
      ink: r(p.emoji.ink),
    },
  }));
  const fontPx = ref.font.sizePx * k;
  const app = opts.safeArea ?? 'none';
  const out = {
    width: opts.width,
    height: opts.height,
    safeArea: safeArea(opts.width, opts.height, app),
    textArea: r(ref.textArea),
    font: { ...ref.font, sizePx: fontPx, letterSpacingPx: ref.font.letterSpacingPx * k },
    capHeight: ref.capHeight * k,
    descender: ref.descender * k,
    lineHeightPx: ref.lineHeightPx * k,
    units,
    pages,
  };
  const ink = { template: opts.template, width: opts.width, height: opts.height, fontPx, lineHeightPx: out.lineHeightPx, units, pages };
  positionPages({ ...ink, app, placement: opts.placement ?? 'fixed', avoid: opts.avoid ?? [] });
  return { ...out, band: computeBand({ ...ink, app }) };
}
