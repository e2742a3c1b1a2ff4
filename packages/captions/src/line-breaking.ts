// Display tokens -> pages -> lines: hard breaks between phrases, pages as full as the template
// allows, then balanced lines. Widths come from the measured tokens and the spacing rule.
import { maxWordScale } from './animation.ts';
import { emphasisOf, type Template } from './template.ts';
import { needsSpaceBetween } from './text.ts';
import type { MeasuredToken, Token } from './tokens.ts';
import { hasAutoEmphasis } from './emphasis.ts';

/** Whether a run of tokens fits on one line. */
export type LineFits = (ts: MeasuredToken[]) => boolean;

/**
 * Words are placed absolutely and never move, so the gap between two words leaves room for
 * both to grow to their largest animated (or emphasised) size without touching.
 */
export interface Spacing {
  /** The largest animated scale of a word, emphasis aside. */
  wordScale: number;
  /** The emphasis scale (1 without emphasis). */
  emphScale: number;
  /** Pixels between `a` and `b`, which grow at most to `sa` and `sb` times their width. */
  gap(a: MeasuredToken, b: MeasuredToken, sa?: number, sb?: number): number;
}

export function createSpacing(template: Template, fontPx: number): Spacing {
  const emphasis = emphasisOf(template);
  const wordScale = maxWordScale(template) / (emphasis ? emphasis.scale : 1);
  const emphScale = emphasis ? emphasis.scale : 1;
  const gap = (a: MeasuredToken, b: MeasuredToken, sa = wordScale, sb = wordScale) =>
    (needsSpaceBetween(a.text, b.text) ? template.font.wordSpacing * fontPx : 0) + ((sa - 1) * a.width + (sb - 1) * b.width) / 2;
  return { wordScale, emphScale, gap };
}

/** The template's line limits (words, characters, width) with room for every word to grow. */
export function createLineFits(template: Template, spacing: Spacing, maxLineWidth: number): LineFits {
  const emphasis = emphasisOf(template);
  const autoEmphasis = hasAutoEmphasis(template);
  const emphasisGrowth = emphasis ? emphasis.scale - 1 : 0;
  const { wordScale, gap } = spacing;
  return (ts) => {
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
}

/** The pages of a caption, each as its lines of tokens, with the phrase it belongs to. */
export function breakPages(tokens: MeasuredToken[], lineFits: LineFits, template: Template): { lines: MeasuredToken[][]; phrase: number }[] {
  const out: { lines: MeasuredToken[][]; phrase: number }[] = [];
  for (const [phrase, phraseTokens] of splitPhrases(tokens, template).entries()) {
    for (const page of chunkPages(phraseTokens, lineFits, template)) out.push({ lines: breakLines(page, lineFits, template.layout.maxLines), phrase });
  }
  return out;
}

/** Words a line or page should not end on (articles, prepositions, conjunctions, possessives). */
const WEAK_ENDINGS = new Set(
  'a an the and or but nor of to in on at for with from by into onto as than that which who whose my your our their his her its this these those'.split(' '),
);

const isWeakEnding = (text: string) => WEAK_ENDINGS.has(text.toLowerCase().replace(/[^\p{L}]/gu, ''));

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
function chunkPages(tokens: MeasuredToken[], lineFits: LineFits, template: Template): MeasuredToken[][] {
  const pages: MeasuredToken[][] = [];
  let rest = tokens;
  while (rest.length > 0) {
    let k = Math.max(1, capacity(rest, lineFits, template.layout.maxLines));
    if (k < rest.length) k = pageEnd(rest, k, template);
    pages.push(rest.slice(0, k));
    rest = rest.slice(k);
  }
  return pages;
}

/** Where a full page of `k` of the `rest` tokens (more follow) should end instead. */
function pageEnd(rest: MeasuredToken[], k: number, template: Template): number {
  for (let i = k - 1; i >= Math.ceil(k / 2) && i >= 1; i--) {
    const t = rest[i - 1]!;
    const pause = rest[i]!.start - t.end;
    if (t.clauseEnd || pause >= template.timing.pauseSeconds / 2) return i;
  }
  if (rest.length - k === 1 && k >= 3) k -= 1; // no orphan word on the last page of a phrase
  // "...the North Wind and the | Sun" reads badly: move trailing articles/conjunctions on.
  let k2 = k;
  while (k2 > 1 && isWeakEnding(rest[k2 - 1]!.text)) k2--;
  // Chinese/Japanese: end the page at a word boundary of the transcript when one is near.
  while (k2 > 1 && rest[k2 - 1]!.wordIndex === rest[k2]!.wordIndex) k2--;
  return k2 >= Math.max(1, Math.floor(k / 2)) ? k2 : k;
}

interface Breaks {
  cost: number;
  breaks: number[];
}

/** The fewest lines that fit, then the most even line widths, preferring breaks after commas. */
function breakLines(tokens: MeasuredToken[], lineFits: LineFits, maxLines: number): MeasuredToken[][] {
  const n = tokens.length;
  if (n === 0) return [];
  if (lineFits(tokens)) return [tokens];
  for (let lineCount = 2; lineCount <= Math.max(2, maxLines); lineCount++) {
    const sol = bestBreaks(tokens, lineFits, lineCount);
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

/** The cheapest way to lay `tokens` on exactly `lineCount` lines, or null when they do not fit. */
function bestBreaks(tokens: MeasuredToken[], lineFits: LineFits, lineCount: number): Breaks | null {
  const n = tokens.length;
  const widthOf = (ts: MeasuredToken[]) => ts.reduce((s, t) => s + t.width, 0);
  const total = widthOf(tokens);
  // memo `${i}:${l}`: the cost of laying tokens[i..] on exactly l lines.
  const memo = new Map<string, Breaks | null>();
  const solve = (i: number, l: number): Breaks | null => {
    const key = `${i}:${l}`;
    if (memo.has(key)) return memo.get(key)!;
    let best: Breaks | null = null;
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
  return solve(0, lineCount);
}
