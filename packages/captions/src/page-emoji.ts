// Where a page's emoji goes (template `emoji: 'auto'`); which emoji is emoji.ts's table.
import { BOUNCE_EM } from './animation.ts';
import { pickPageEmoji } from './emoji.ts';
import type { CaptionEmoji, CaptionPage, CaptionUnit } from './layout-types.ts';
import type { TextMeasurer } from './measure.ts';
import type { Rect } from './safe-area.ts';
import type { Template } from './template.ts';

/** Emoji are this many times the font size, and sit this far (em) from the text. */
export const EMOJI_EM = 1.15;
const EMOJI_GAP_EM = 0.3;

/** The family that draws emoji (a colour font every renderer host installs). */
export const EMOJI_FAMILY = 'Noto Color Emoji';

/** Pixels between a page's text and its emoji: room for a bouncing word to jump without touching it. */
function emojiGapPx(template: Template, fontPx: number): number {
  return EMOJI_GAP_EM * fontPx + (template.animation.active === 'bounce' ? BOUNCE_EM * fontPx : 0);
}

/**
 * The page's emoji, centred over the page's text box: above it, or below it when the caption area
 * has no room above (`top`: the caption area's top). Never moves the text, so switching emoji on
 * changes nothing else.
 */
export function placeEmoji(a: {
  page: CaptionPage;
  units: readonly CaptionUnit[];
  fontPx: number;
  measurer: TextMeasurer;
  top: number;
  template: Template;
}): CaptionEmoji | null {
  const pageUnits = a.page.units.map((u) => a.units[u]!);
  const emphasized = new Set<number>();
  for (const [i, u] of pageUnits.entries()) if (u.emphasized) emphasized.add(i);
  const pick = pickPageEmoji(
    pageUnits.map((u) => u.text),
    emphasized,
  );
  if (!pick) return null;
  const sizePx = EMOJI_EM * a.fontPx;
  const box = a.measurer.measureText(pick.emoji, { family: EMOJI_FAMILY, weight: 400, sizePx, letterSpacingPx: 0 });
  const gap = emojiGapPx(a.template, a.fontPx);
  const x = a.page.box.x + a.page.box.width / 2 - (box.inkLeft + box.inkRight) / 2;
  let baseline = a.page.box.y - gap - box.inkDescent;
  if (baseline - box.inkAscent < a.top) baseline = a.page.box.y + a.page.box.height + gap + box.inkAscent;
  return {
    text: pick.emoji,
    unit: a.page.units[pick.word]!,
    x,
    baseline,
    width: box.width,
    sizePx,
    ink: { x: x + box.inkLeft, y: baseline - box.inkAscent, width: box.inkRight - box.inkLeft, height: box.inkAscent + box.inkDescent },
  };
}

/**
 * Where placeEmoji puts one over (or under) a page with box `pageBox` whose words are not known
 * yet, as big as the widest emoji (see bandForAnyWords).
 */
export function anyWordsEmoji(a: { pageBox: Rect; fontPx: number; measurer: TextMeasurer; top: number; template: Template }): CaptionEmoji {
  const { pageBox, fontPx } = a;
  const sizePx = EMOJI_EM * fontPx;
  const e = a.measurer.measureText('\u{1F525}', { family: EMOJI_FAMILY, weight: 400, sizePx, letterSpacingPx: 0 });
  const gap = emojiGapPx(a.template, fontPx);
  const inkWidth = Math.max(e.inkRight - e.inkLeft, sizePx) * 1.1;
  const inkHeight = Math.max(e.inkAscent + e.inkDescent, sizePx) * 1.1;
  let baseline = pageBox.y - gap;
  if (baseline - inkHeight < a.top) baseline = pageBox.y + pageBox.height + gap + inkHeight;
  const ex = pageBox.x + pageBox.width / 2 - inkWidth / 2;
  return { text: '', unit: 0, x: ex, baseline, width: inkWidth, sizePx, ink: { x: ex, y: baseline - inkHeight, width: inkWidth, height: inkHeight } };
}
