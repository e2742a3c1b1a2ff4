import type { Word } from '@captionfarm/contracts';
import { emphasisOf, type Template } from './template.ts';
import type { FontMetrics, FontSpec, TextMeasurer, TextBox } from './measure.ts';
import { captionArea, safeArea, unionRect, type Rect } from './safe-area.ts';
import {
  applyCase,
  baseDirection,
  displayLength,
  endsClause,
  endsSentence,
  graphemes,
  hasNoSpaceScript,
  isPunctuationOnly,
  needsSpaceBetween,
  splitNoSpaceWord,
  stripPunctuation,
  textDirection,
  visualOrder,
  type Direction,
} from './text.ts';
import { BOUNCE_EM, RISE_EM, SLIDE_EM, maxPageScale, maxWordScale } from './animation.ts';
import { fontFaceFor, type CustomFontFace } from './fonts.ts';
import { pickPageEmoji } from './emoji.ts';

/** One displayed unit: a word, or one character of Chinese/Japanese text. */
export interface CaptionUnit {
  /** Text as displayed (case and punctuation rules applied). */
  text: string;
  /** Index of the source word in the input array. */
  wordIndex: number;
  /** Seconds; `end` is clamped to timing.maxWordSeconds after start. */
  start: number;
  end: number;
  page: number;
  line: number;
  /** Left edge of the advance box and the baseline, frame pixels. */
  x: number;
  baseline: number;
  width: number;
  /** Font size of this unit (smaller than the template's when a single word had to shrink to fit). */
  fontPx: number;
  /** Ink of the glyphs, frame pixels. */
  ink: Rect;
  direction: Direction;
  /** Picked by the template's emphasis rule, or one of its `keywords`. */
  emphasized: boolean;
  /** Whether a space precedes this unit in reading order (false in Chinese/Japanese). */
  spaceBefore: boolean;
}

export interface CaptionLine {
  /** Indices into layout.units, reading order. */
  units: number[];
  /** Text box of the line: left/right of its words, cap height above to descender below. */
  box: Rect;
  baseline: number;
}

export interface CaptionPage {
  index: number;
  /** Which phrase (words between hard breaks: a long pause or a sentence end) the page is part of. */
  phrase: number;
  /** Seconds the page is on screen: [start, end). */
  start: number;
  end: number;
  direction: Direction;
  lines: CaptionLine[];
  /** Indices into layout.units, reading order. */
  units: number[];
  /** Union of the line boxes. */
  box: Rect;
  /** The page's emoji (template `emoji: 'auto'`), or null. */
  emoji: CaptionEmoji | null;
}

/** An emoji drawn centred above (or, without room, below) its page, appearing with its word. */
export interface CaptionEmoji {
  text: string;
  /** The unit whose word picked it (index into layout.units): the emoji appears when it is spoken. */
  unit: number;
  /** Left edge of the advance box and the baseline, frame pixels. */
  x: number;
  baseline: number;
  width: number;
  sizePx: number;
  ink: Rect;
}

/** Emoji are this many times the font size, and sit this far (em) from the text. */
export const EMOJI_EM = 1.15;
const EMOJI_GAP_EM = 0.3;

/** Pixels between a page's text and its emoji: room for a bouncing word to jump without touching it. */
function emojiGapPx(template: Template, fontPx: number): number {
  return EMOJI_GAP_EM * fontPx + (template.animation.active === 'bounce' ? BOUNCE_EM * fontPx : 0);
}

export interface CaptionLayout {
  width: number;
  height: number;
  /** Frame minus platform UI. */
  safeArea: Rect;
  /** Where text may go: inside the safe area, centred on the frame, inset by box padding and outline. */
  textArea: Rect;
  font: FontSpec;
  capHeight: number;
  descender: number;
  lineHeightPx: number;
  units: CaptionUnit[];
  pages: CaptionPage[];
  /** Even-aligned rect covering every pixel any frame may paint (animations and effects included). */
  band: Rect;
}

export interface LayoutOptions {
  words: readonly Word[];
  template: Template;
  width: number;
  height: number;
  measurer: TextMeasurer;
  /**
   * Uploaded fonts the renderer registered, by font id: the template's `font.fontId` must be one
   * of them (a missing one throws).
   */
  fonts?: ReadonlyMap<string, CustomFontFace> | undefined;
}

/** The family that draws emoji (a colour font every renderer host installs). */
export const EMOJI_FAMILY = 'Noto Color Emoji';

interface Token {
  text: string;
  wordIndex: number;
  start: number;
  end: number;
  /** Pause/sentence/clause markers taken from the original text before case/punctuation rules. */
  sentenceEnd: boolean;
  clauseEnd: boolean;
  noSpace: boolean;
}

interface MeasuredToken extends Token {
  width: number;
  fontPx: number;
  box: TextBox;
  direction: Direction | null;
  chars: number;
  /** One of the template's keywords (always emphasised). */
  forced: boolean;
}

/** Words a line or page should not end on (articles, prepositions, conjunctions, possessives). */
const WEAK_ENDINGS = new Set(
  'a an the and or but nor of to in on at for with from by into onto as than that which who whose my your our their his her its this these those'.split(' '),
);

const isWeakEnding = (text: string) => WEAK_ENDINGS.has(text.toLowerCase().replace(/[^\p{L}]/gu, ''));

const STOPWORDS = new Set(
  'a an and are as at be but by for from had has have he her his i if in into is it its me my no not of on or our she so that the their them then there these they this to up was we were what when which who will with you your'.split(
    ' ',
  ),
);

/** Base font size in pixels: template.font.size percent of the frame's shorter side. */
export function baseFontPx(template: Template, width: number, height: number): number {
  return (template.font.size / 100) * Math.min(width, height);
}

/**
 * Layout is computed for a reference frame whose shorter side is this many pixels, then scaled:
 * 720p and 4K get the same line and page breaks, whatever rounding the font engine does.
 */
export const REFERENCE_SIDE = 1080;

/** Words -> pages -> lines, placed in frame pixels with real font metrics. Pure. */
export function layoutCaptions(opts: LayoutOptions): CaptionLayout {
  const k = Math.min(opts.width, opts.height) / REFERENCE_SIDE;
  const ref = layoutReference({ ...opts, width: opts.width / k, height: opts.height / k });
  return scaleLayout(ref, k, opts);
}

/**
 * How far a glyph's ink may reach, in em of its font size, where the words are not known yet:
 * stacked accents over capitals (Vietnamese, Ǻ) above, descenders and marks below, overhangs on
 * each side.
 */
const ANY_INK = { ascent: 1.25, descent: 0.45, side: 0.2 } as const;

/**
 * The band of captions whose words are not known yet (a render that starts while recognition
 * runs, see `settledUntil`): every pixel a page of `maxLines` lines, each as wide as a line may
 * be, can paint with its emoji, effects and animations. A block of n lines covers the block of
 * fewer lines at any vertical position, so the tallest page bounds them all. The band of the
 * words' own layout (`layoutCaptions(...).band`) fits inside it for text within ANY_INK; a
 * caller that starts early checks that and starts over when it does not.
 */
export function bandForAnyWords(opts: Omit<LayoutOptions, 'words'>): Rect {
  const k = Math.min(opts.width, opts.height) / REFERENCE_SIDE;
  const width = opts.width / k;
  const height = opts.height / k;
  const { template, measurer } = opts;
  const { fontPx, font, metrics, lineHeightPx, textArea, maxLineWidth } = frameOf({ ...opts, width, height });
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
  if (template.emoji === 'auto') {
    // Where placeEmoji puts one over (or under) this page, as big as the widest emoji.
    const sizePx = EMOJI_EM * fontPx;
    const e = measurer.measureText('\u{1F525}', { family: EMOJI_FAMILY, weight: 400, sizePx, letterSpacingPx: 0 });
    const gap = emojiGapPx(template, fontPx);
    const inkWidth = Math.max(e.inkRight - e.inkLeft, sizePx) * 1.1;
    const inkHeight = Math.max(e.inkAscent + e.inkDescent, sizePx) * 1.1;
    let baseline = page.box.y - gap;
    if (baseline - inkHeight < captionArea(width, height).y) baseline = page.box.y + page.box.height + gap + inkHeight;
    const ex = x + maxLineWidth / 2 - inkWidth / 2;
    page.emoji = { text: '', unit: 0, x: ex, baseline, width: inkWidth, sizePx, ink: { x: ex, y: baseline - inkHeight, width: inkWidth, height: inkHeight } };
  }
  const ref = {
    width,
    height,
    safeArea: safeArea(width, height),
    textArea,
    font,
    capHeight: metrics.capHeight,
    descender: metrics.descender,
    lineHeightPx,
    units,
    pages: [page],
  };
  return scaleLayout(ref, k, opts).band;
}

/**
 * While words are still coming (recognition runs chunk by chunk), the time before which the
 * captions of `layout` (laid out from `words`) can no longer change, given that no word still to
 * come starts before `finalUntil` seconds. Words to come join the last phrase, unless it ended
 * (a sentence end, or a pause of `pauseSeconds` before `finalUntil`), so only the last phrase's
 * pages can still change (page and line breaks, emphasis, emoji); an ended phrase's last page
 * can still stay up until the next page (its end), and a page before it ends no later than the
 * last phrase's first word. A keyword of several words can reach back over a phrase break, so
 * the pages holding the last words such a keyword could still complete wait too.
 * `finalUntil` Infinity: every word is known.
 */
export function settledUntil(layout: CaptionLayout, template: Template, words: readonly Word[], finalUntil: number): number {
  if (finalUntil === Infinity) return Infinity;
  const pages = layout.pages;
  const last = pages.at(-1);
  if (!last) return finalUntil;
  // Units are laid out in time order: the last one is the latest word's.
  const lastUnit = layout.units.at(-1)!;
  const ended =
    (template.timing.breakOnSentence && endsSentence(words[lastUnit.wordIndex]?.text ?? '')) ||
    finalUntil - Math.max(...last.units.map((u) => layout.units[u]!.end)) >= template.timing.pauseSeconds;
  const longestKeyword = Math.max(1, ...template.keywords.map((k) => k.split(/\s+/).filter(Boolean).length));
  let open = pages.length;
  while (open > 0) {
    const p = pages[open - 1]!;
    const reachable = p.units.some((u) => layout.units[u]!.wordIndex > lastUnit.wordIndex - longestKeyword + 1);
    if ((ended || p.phrase !== last.phrase) && !reachable) break;
    open--;
  }
  if (open < pages.length) return Math.min(finalUntil, pages[open]!.start);
  return Math.min(finalUntil, last.end);
}

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
  const out = {
    width: opts.width,
    height: opts.height,
    safeArea: safeArea(opts.width, opts.height),
    textArea: r(ref.textArea),
    font: { ...ref.font, sizePx: fontPx, letterSpacingPx: ref.font.letterSpacingPx * k },
    capHeight: ref.capHeight * k,
    descender: ref.descender * k,
    lineHeightPx: ref.lineHeightPx * k,
    units,
    pages,
  };
  return {
    ...out,
    band: computeBand({ template: opts.template, width: opts.width, height: opts.height, fontPx, lineHeightPx: out.lineHeightPx, units, pages }),
  };
}

/** What every page of a layout shares: the font and where text may go (reference pixels). */
function frameOf(opts: Omit<LayoutOptions, 'words'>) {
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
  const textArea = textAreaFor(template, width, height, fontPx, metrics);
  return { fontPx, font, metrics, lineHeightPx, textArea, maxLineWidth: textArea.width * template.layout.maxWidth };
}

function layoutReference(opts: LayoutOptions): Omit<CaptionLayout, 'band'> {
  const { template, width, height, measurer } = opts;
  const { fontPx, font, metrics, lineHeightPx, textArea, maxLineWidth } = frameOf(opts);
  const safe = safeArea(width, height);

  const tokens = tokenize(opts.words, template);
  const emphasis = emphasisOf(template);
  const autoEmphasis = emphasis !== null && emphasis.rule === 'keyword';
  const wordScale = maxWordScale(template) / (emphasis ? emphasis.scale : 1);
  // A word alone on its line must fit even at its largest animated or emphasised size.
  const forced = keywordTokens(tokens, template.keywords);
  const measured = tokens.map((tok, i) => ({ ...measureToken(tok, font, measurer, maxLineWidth / maxWordScale(template)), forced: forced.has(i) }));
  const emphasisGrowth = emphasis ? emphasis.scale - 1 : 0;

  // Words are placed absolutely and never move, so the gap between two words leaves room for
  // both to grow to their largest animated (or emphasised) size without touching.
  const emphScale = emphasis ? emphasis.scale : 1;
  const gap = (a: MeasuredToken, b: MeasuredToken, sa = wordScale, sb = wordScale) =>
    (needsSpaceBetween(a.text, b.text) ? template.font.wordSpacing * fontPx : 0) + ((sa - 1) * a.width + (sb - 1) * b.width) / 2;

  const lineFits = (ts: MeasuredToken[]): boolean => {
    if (ts.length <= 1) return true;
    // Words of the transcript: a Chinese/Japanese word split into characters counts once.
    let words = 0;
    let chars = 0;
    let w = 0;
    let widest = 0;
    let forcedWidth = 0;
    ts.forEach((t, i) => {
      if (i === 0 || ts[i - 1]!.wordIndex !== t.wordIndex) words++;
      chars += t.chars;
      w += t.width;
      if (t.forced) forcedWidth += t.width;
      else if (autoEmphasis) widest = Math.max(widest, t.width);
      if (i > 0) {
        const space = needsSpaceBetween(ts[i - 1]!.text, t.text);
        chars += space ? 1 : 0;
        w += gap(ts[i - 1]!, t);
      }
    });
    // Room for the end words to grow past the line's ends (they scale about their centres), for
    // every keyword, and for the one automatically emphasised word per page, the widest at worst.
    const ends = ((wordScale - 1) * (ts[0]!.width + ts.at(-1)!.width)) / 2;
    return (
      words <= template.layout.maxWordsPerLine &&
      chars <= template.layout.maxCharsPerLine &&
      w + ends + emphasisGrowth * (widest + forcedWidth) * wordScale <= maxLineWidth * (1 + 1e-9)
    );
  };

  const pagesOfTokens: MeasuredToken[][][] = [];
  const phraseOf: number[] = [];
  for (const [phraseIndex, phrase] of splitPhrases(measured, template).entries()) {
    for (const page of chunkPages(phrase, lineFits, template)) {
      pagesOfTokens.push(breakLines(page, lineFits, template.layout.maxLines));
      phraseOf.push(phraseIndex);
    }
  }

  const units: CaptionUnit[] = [];
  const pages: CaptionPage[] = [];
  pagesOfTokens.forEach((lines, pageIndex) => {
    const pageTokens = lines.flat();
    const direction = baseDirection(pageTokens.map((t) => t.text));
    const emphasized = new Set<number>();
    for (const [i, t] of pageTokens.entries()) if (t.forced) emphasized.add(i);
    if (autoEmphasis) emphasized.add(pickKeyword(pageTokens));
    emphasized.delete(-1);
    const blockHeight = (lines.length - 1) * lineHeightPx + metrics.capHeight + metrics.descender;
    const top = textArea.y + template.position.y * Math.max(0, textArea.height - blockHeight);
    const page: CaptionPage = {
      index: pageIndex,
      phrase: phraseOf[pageIndex]!,
      start: 0,
      end: 0,
      direction,
      lines: [],
      units: [],
      box: { x: 0, y: 0, width: 0, height: 0 },
      emoji: null,
    };
    let pageBox: Rect | null = null;
    let tokenIndex = 0;
    lines.forEach((lineTokens, lineIndex) => {
      const baseline = top + metrics.capHeight + lineIndex * lineHeightPx;
      const order = visualOrder(
        lineTokens.map((t) => t.direction),
        direction,
      );
      const firstIndex = tokenIndex;
      const scaleOf = (ti: number) => (emphasized.has(firstIndex + ti) ? wordScale * emphScale : wordScale);
      const gapBefore = (k: number) => {
        const a = order[k - 1]!;
        const b = order[k]!;
        return gap(lineTokens[a]!, lineTokens[b]!, scaleOf(a), scaleOf(b));
      };
      let lineWidth = 0;
      order.forEach((ti, k) => {
        if (k > 0) lineWidth += gapBefore(k);
        lineWidth += lineTokens[ti]!.width;
      });
      let x = textArea.x + (textArea.width - lineWidth) / 2;
      const xs: number[] = new Array(lineTokens.length);
      order.forEach((ti, k) => {
        if (k > 0) x += gapBefore(k);
        xs[ti] = x;
        x += lineTokens[ti]!.width;
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
      lineTokens.forEach((t, i) => {
        const ux = xs[i]!;
        const unit: CaptionUnit = {
          text: t.text,
          wordIndex: t.wordIndex,
          start: t.start,
          end: t.end,
          page: pageIndex,
          line: lineIndex,
          x: ux,
          baseline,
          width: t.width,
          fontPx: t.fontPx,
          ink: {
            x: ux + Math.min(0, t.box.inkLeft),
            y: baseline - t.box.inkAscent,
            width: Math.max(t.box.inkRight, t.width) - Math.min(0, t.box.inkLeft),
            height: t.box.inkAscent + t.box.inkDescent,
          },
          direction: t.direction ?? direction,
          emphasized: emphasized.has(tokenIndex),
          spaceBefore: i > 0 && needsSpaceBetween(lineTokens[i - 1]!.text, t.text),
        };
        tokenIndex++;
        line.units.push(units.length);
        page.units.push(units.length);
        units.push(unit);
      });
      page.lines.push(line);
      pageBox = unionRect(pageBox, line.box);
    });
    page.box = pageBox ?? page.box;
    if (template.emoji === 'auto')
      page.emoji = placeEmoji({ page, pageTokens, emphasized, units, fontPx, font, measurer, top: captionArea(width, height).y, template });
    pages.push(page);
  });

  // Page timing: on screen from its first word until shortly after its last word, never across a
  // long silence, and without a blank flash when the next page follows closely.
  pages.forEach((p, i) => {
    const first = units[p.units[0]!]!;
    const last = units[p.units.at(-1)!]!;
    p.start = first.start;
    let end = Math.max(last.end, last.start + 0.05) + template.timing.lingerSeconds;
    const next = pages[i + 1];
    if (next) {
      const nextStart = units[next.units[0]!]!.start;
      end = Math.min(end, nextStart);
      // Close a gap shorter than the linger: the page stays until the next one replaces it.
      if (nextStart - end < template.timing.lingerSeconds) end = nextStart;
    }
    p.end = Math.max(end, p.start + 0.05);
  });

  return { width, height, safeArea: safe, textArea, font, capHeight: metrics.capHeight, descender: metrics.descender, lineHeightPx, units, pages };
}

/**
 * The page's emoji, centred over the page's text box: above it, or below it when the caption area
 * has no room above. Never moves the text, so switching emoji on changes nothing else.
 */
function placeEmoji(a: {
  page: CaptionPage;
  pageTokens: MeasuredToken[];
  emphasized: ReadonlySet<number>;
  units: CaptionUnit[];
  fontPx: number;
  font: FontSpec;
  measurer: TextMeasurer;
  top: number;
  template: Template;
}): CaptionEmoji | null {
  const pick = pickPageEmoji(
    a.pageTokens.map((t) => t.text),
    a.emphasized,
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
 * Token indices matching the keywords: whole words, case-insensitive, phrases as consecutive
 * words, punctuation around words ignored.
 */
function keywordTokens(tokens: readonly Token[], keywords: readonly string[]): Set<number> {
  const out = new Set<number>();
  const norm = (s: string) => s.toLocaleLowerCase('en').replace(/[^\p{L}\p{N}'’]/gu, '');
  const words = tokens.map((t) => norm(t.text));
  for (const k of keywords) {
    const phrase = k.split(/\s+/).map(norm).filter(Boolean);
    if (phrase.length === 0) continue;
    for (let i = 0; i + phrase.length <= words.length; i++) {
      if (phrase.every((p, j) => words[i + j] === p)) for (let j = 0; j < phrase.length; j++) out.add(i + j);
    }
  }
  return out;
}

/**
 * The caption area inset so that outlines, boxes and animations (a bounce's jump, a rise from
 * below, a pop's growth) stay inside the safe area too.
 */
function textAreaFor(template: Template, width: number, height: number, fontPx: number, metrics: FontMetrics): Rect {
  const area = captionArea(width, height);
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
  const w = Math.max(0, area.width / ps - 2 * padX);
  return { x: area.x + (area.width - w) / 2, y: area.y + top, width: w, height: Math.max(0, area.height - top - bottom) };
}

/** Words -> display tokens: case and punctuation rules, punctuation-only words merged, CJK split by character. */
function tokenize(words: readonly Word[], template: Template): Token[] {
  const sorted = words
    .map((w, i) => ({ w, i }))
    .filter(({ w }) => w.text.trim().length > 0)
    .sort((a, b) => a.w.start - b.w.start || a.i - b.i);
  const raw: Token[] = [];
  for (const { w, i } of sorted) {
    const text = w.text.trim().replace(/\s+/g, ' ');
    const end = Math.max(w.start + 0.05, Math.min(w.end, w.start + template.timing.maxWordSeconds));
    if (isPunctuationOnly(text) && raw.length > 0) {
      // whisper sometimes emits punctuation as its own token: it belongs to the word before.
      const prev = raw.at(-1)!;
      prev.text += text;
      prev.sentenceEnd = endsSentence(prev.text);
      prev.clauseEnd = endsClause(prev.text);
      continue;
    }
    raw.push({ text, wordIndex: i, start: w.start, end, sentenceEnd: endsSentence(text), clauseEnd: endsClause(text), noSpace: false });
  }
  const out: Token[] = [];
  for (const tok of raw) {
    let text = applyCase(tok.text, template.text.case);
    if (template.text.punctuation === 'strip') text = stripPunctuation(text);
    if (!hasNoSpaceScript(text)) {
      out.push({ ...tok, text });
      continue;
    }
    // Chinese/Japanese: one unit per character, times spread by character count.
    const parts = splitNoSpaceWord(text);
    const total = parts.reduce((n, p) => n + graphemes(p).length, 0);
    let done = 0;
    const dur = tok.end - tok.start;
    parts.forEach((p, k) => {
      const n = graphemes(p).length;
      const last = k === parts.length - 1;
      out.push({
        text: p,
        wordIndex: tok.wordIndex,
        start: tok.start + (dur * done) / total,
        end: last ? tok.end : tok.start + (dur * (done + n)) / total,
        sentenceEnd: last && tok.sentenceEnd,
        clauseEnd: last ? tok.clauseEnd : endsClause(p),
        noSpace: hasNoSpaceScript(p),
      });
      done += n;
    });
  }
  return out;
}

function measureToken(tok: Token, font: FontSpec, measurer: TextMeasurer, maxLineWidth: number): Omit<MeasuredToken, 'forced'> {
  let box = measurer.measureText(tok.text, font);
  let fontPx = font.sizePx;
  // A single word wider than a line shrinks to fit (it will be alone on its line).
  for (let i = 0; i < 3 && box.width > maxLineWidth; i++) {
    fontPx = ((fontPx * maxLineWidth) / box.width) * 0.995;
    box = measurer.measureText(tok.text, { ...font, sizePx: fontPx, letterSpacingPx: (font.letterSpacingPx * fontPx) / font.sizePx });
  }
  return { ...tok, width: box.width, fontPx, box, direction: textDirection(tok.text), chars: displayLength(tok.text) };
}

/** Hard breaks: a long pause, or the end of a sentence, always starts a new page. */
function splitPhrases<T extends Token>(tokens: T[], template: Template): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  tokens.forEach((t, i) => {
    const prev = tokens[i - 1];
    if (prev && (t.start - prev.end >= template.timing.pauseSeconds || (template.timing.breakOnSentence && prev.sentenceEnd))) {
      out.push(cur);
      cur = [];
    }
    cur.push(t);
  });
  if (cur.length > 0) out.push(cur);
  return out;
}

/** How many tokens fit on one page (greedy line filling is optimal for this count). */
function capacity<T>(tokens: T[], lineFits: (ts: T[]) => boolean, maxLines: number): number {
  let lines = 1;
  let lineStart = 0;
  for (let i = 0; i < tokens.length; i++) {
    if (lineFits(tokens.slice(lineStart, i + 1))) continue;
    lines++;
    if (lines > maxLines) return i;
    lineStart = i;
  }
  return tokens.length;
}

/**
 * Pages inside one phrase: as full as the template allows, but breaking after a comma or a short
 * pause when one falls in the second half of the page, and never leaving one word alone when
 * the phrase goes on.
 */
function chunkPages(tokens: MeasuredToken[], lineFits: (ts: MeasuredToken[]) => boolean, template: Template): MeasuredToken[][] {
  const pages: MeasuredToken[][] = [];
  let rest = tokens;
  while (rest.length > 0) {
    let k = Math.max(1, capacity(rest, lineFits, template.layout.maxLines));
    if (k < rest.length) {
      let soft = -1;
      for (let i = k - 1; i >= Math.ceil(k / 2) && i >= 1; i--) {
        const t = rest[i - 1]!;
        const pause = rest[i]!.start - t.end;
        if (t.clauseEnd || pause >= template.timing.pauseSeconds / 2) {
          soft = i;
          break;
        }
      }
      if (soft > 0) k = soft;
      else {
        if (rest.length - k === 1 && k >= 3) k -= 1; // no orphan word on the last page of a phrase
        // "...the North Wind and the | Sun" reads badly: move trailing articles/conjunctions on.
        let k2 = k;
        while (k2 > 1 && isWeakEnding(rest[k2 - 1]!.text)) k2--;
        // Chinese/Japanese: end the page at a word boundary of the transcript when one is near.
        while (k2 > 1 && rest[k2 - 1]!.wordIndex === rest[k2]!.wordIndex) k2--;
        if (k2 >= Math.max(1, Math.floor(k / 2))) k = k2;
      }
    }
    pages.push(rest.slice(0, k));
    rest = rest.slice(k);
  }
  return pages;
}

/** The fewest lines that fit, then the most even line widths, preferring breaks after commas. */
function breakLines(tokens: MeasuredToken[], lineFits: (ts: MeasuredToken[]) => boolean, maxLines: number): MeasuredToken[][] {
  const n = tokens.length;
  if (n === 0) return [];
  if (lineFits(tokens)) return [tokens];
  const widthOf = (ts: MeasuredToken[]) => ts.reduce((s, t) => s + t.width, 0);
  const total = widthOf(tokens);
  // best[i][l]: cost of laying tokens[i..] on exactly l lines.
  const memo = new Map<string, { cost: number; breaks: number[] } | null>();
  const solve = (i: number, l: number): { cost: number; breaks: number[] } | null => {
    const key = `${i}:${l}`;
    if (memo.has(key)) return memo.get(key)!;
    let best: { cost: number; breaks: number[] } | null = null;
    if (l === 1) {
      const seg = tokens.slice(i);
      best = lineFits(seg) ? { cost: 0, breaks: [] } : null;
    } else {
      for (let j = i + 1; j < n; j++) {
        const seg = tokens.slice(i, j);
        if (!lineFits(seg)) break;
        const rest = solve(j, l - 1);
        if (!rest) continue;
        const dev = widthOf(seg) - total / lineCount;
        const ideal = (total / lineCount) ** 2;
        const punct = tokens[j - 1]!.clauseEnd
          ? -0.25 * ideal
          : isWeakEnding(tokens[j - 1]!.text)
            ? 0.3 * ideal
            : tokens[j - 1]!.wordIndex === tokens[j]!.wordIndex
              ? 0.5 * ideal // inside a Chinese/Japanese word: allowed, but a word boundary reads better
              : 0;
        const cost = dev * dev + punct + rest.cost;
        if (!best || cost < best.cost) best = { cost, breaks: [j, ...rest.breaks] };
      }
    }
    memo.set(key, best);
    return best;
  };
  let lineCount = 2;
  for (; lineCount <= Math.max(2, maxLines); lineCount++) {
    memo.clear();
    const sol = solve(0, lineCount);
    if (sol) {
      const out: MeasuredToken[][] = [];
      let s = 0;
      for (const b of [...sol.breaks, n]) {
        out.push(tokens.slice(s, b));
        s = b;
      }
      return out;
    }
  }
  return tokens.map((t) => [t]);
}

/** The emphasised unit of a page: a word with a digit, else the longest non-stopword of 4+ letters. */
function pickKeyword(tokens: MeasuredToken[]): number {
  let best = -1;
  let bestScore = 0;
  tokens.forEach((t, i) => {
    if (t.noSpace) return;
    const letters = t.text.replace(/[^\p{L}\p{N}]/gu, '');
    const lower = letters.toLowerCase();
    if (STOPWORDS.has(lower)) return;
    const score = /\p{N}/u.test(letters) ? 1000 + letters.length : letters.length >= 4 ? letters.length : 0;
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  });
  return best;
}

interface InkInput {
  template: Template;
  fontPx: number;
  lineHeightPx: number;
  units: CaptionUnit[];
  pages: CaptionPage[];
}

/** Every pixel one unit may paint in any frame: its ink grown by the largest animated scale, jumps, its box and effects. */
function unitInk(a: InkInput, u: CaptionUnit): Rect {
  const { template: t, fontPx } = a;
  const scale = maxWordScale(t);
  const effects =
    Math.max(
      t.outline ? t.outline.width : 0,
      t.shadow ? t.shadow.blur * 1.5 + Math.max(Math.abs(t.shadow.offsetX), Math.abs(t.shadow.offsetY)) + (t.outline ? t.outline.width : 0) : 0,
      t.glow ? t.glow.blur * 1.5 : 0,
      t.active.glow ? t.active.glow.blur * 1.5 : 0,
      t.active.box ? Math.max(t.active.box.paddingX, t.active.box.paddingY) : 0,
    ) * fontPx;
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

/** A little slack for antialiasing and for glyphs drawn at a size other than the one measured. */
function inkSlack(r: Rect, fontPx: number): Rect {
  const slack = 1 + 0.02 * fontPx;
  return { x: r.x - slack, y: r.y - slack, width: r.width + 2 * slack, height: r.height + 2 * slack };
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
    pages: layout.pages.map((p) => {
      const r = pageInk(a, p);
      return r && inkSlack(r, a.fontPx);
    }),
  };
}

/** Every pixel any frame may paint: the union of the pages' ink, with slack, even-aligned and inside the frame. */
function computeBand(a: InkInput & { width: number; height: number }): Rect {
  const { width, height } = a;
  const W = Math.floor(width / 2) * 2;
  const H = Math.floor(height / 2) * 2;
  let band: Rect | null = null;
  for (const p of a.pages) {
    const r = pageInk(a, p);
    if (r) band = unionRect(band, r);
  }
  if (!band) {
    const area = captionArea(width, height);
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
