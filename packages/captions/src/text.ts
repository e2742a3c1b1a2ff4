// Script, direction and punctuation helpers. Pure string functions, no I/O.

export type Direction = 'ltr' | 'rtl';

const RTL_RE = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const STRONG_RE = /\p{L}/u;
// Scripts written without spaces between words, broken by character (not by spaces).
const NO_SPACE_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef\u30fc]/u;
const KANA_RE = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const HANGUL_RE = /\p{Script=Hangul}/u;
const LETTER_OR_DIGIT_RE = /[\p{L}\p{N}\p{Extended_Pictographic}]/u;

/** Punctuation that must not start a line in CJK text (kinsoku): it sticks to the character before. */
const CJK_CLOSING = new Set([...'、。，．！？：；」』）】〉》〕］｝…ー・〜,.!?:;)]}%']);
/** Opening brackets stick to the character after. */
const CJK_OPENING = new Set([...'「『（【〈《〔［｛(']);

const SENTENCE_END_RE = /[.!?…。！？]["'”’」』)]*$/u;
const SOFT_BREAK_RE = /[,;:，、；：—–]["'”’」』)]*$/u;
const STRIP_TRAILING_RE = /[.,;:…，。、；：]+$/u;

function charDirection(ch: string): Direction | null {
  if (RTL_RE.test(ch)) return 'rtl';
  if (STRONG_RE.test(ch)) return 'ltr';
  return null;
}

/** Direction of the first strong character, or null for digits/punctuation/emoji only. */
export function textDirection(text: string): Direction | null {
  for (const ch of text) {
    const d = charDirection(ch);
    if (d) return d;
  }
  return null;
}

/**
 * Base direction of a run of words: the direction most words have (a Hebrew sentence quoting
 * "Visual Studio" stays right-to-left); on a tie, the first word with a direction.
 */
export function baseDirection(texts: readonly string[]): Direction {
  let rtl = 0;
  let ltr = 0;
  let first: Direction | null = null;
  for (const t of texts) {
    const d = textDirection(t);
    if (d === 'rtl') rtl++;
    else if (d === 'ltr') ltr++;
    first ??= d;
  }
  if (rtl !== ltr) return rtl > ltr ? 'rtl' : 'ltr';
  return first ?? 'ltr';
}

export function isNoSpaceChar(ch: string): boolean {
  return NO_SPACE_RE.test(ch);
}

/** True when the text contains characters of a script written without spaces (Chinese, Japanese). */
export function hasNoSpaceScript(text: string): boolean {
  return NO_SPACE_RE.test(text);
}

export function hasKana(text: string): boolean {
  return KANA_RE.test(text);
}

export function hasHangul(text: string): boolean {
  return HANGUL_RE.test(text);
}

export function hasRtl(text: string): boolean {
  return RTL_RE.test(text);
}

/** Whether two neighbouring units are separated by a space (not in Chinese/Japanese). */
export function needsSpaceBetween(left: string, right: string): boolean {
  const a = [...left].at(-1) ?? '';
  const b = [...right][0] ?? '';
  return !(isNoSpaceChar(a) || isNoSpaceChar(b));
}

// One segmenter for the process: building one costs ~100 us (ICU), which made the typewriter's
// keyAt 109 us a call, and planning a 30 s render calls keyAt tens of thousands of times.
// Grapheme clusters do not depend on the locale.
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** User-perceived characters (grapheme clusters): emoji and combining marks stay whole. */
export function graphemes(text: string): string[] {
  return Array.from(GRAPHEMES.segment(text), (s) => s.segment);
}

/** Characters counted for maxCharsPerLine: full-width (CJK) characters count as two. */
export function displayLength(text: string): number {
  let n = 0;
  for (const g of graphemes(text)) n += isNoSpaceChar(g) ? 2 : 1;
  return n;
}

export function isPunctuationOnly(text: string): boolean {
  return !LETTER_OR_DIGIT_RE.test(text);
}

export function endsSentence(text: string): boolean {
  return SENTENCE_END_RE.test(text.trim());
}

export function endsClause(text: string): boolean {
  return SOFT_BREAK_RE.test(text.trim());
}

export type TextCase = 'none' | 'upper' | 'lower';

export function applyCase(text: string, textCase: TextCase): string {
  if (textCase === 'upper') return text.toUpperCase();
  if (textCase === 'lower') return text.toLowerCase();
  return text;
}

/** Drops trailing commas and full stops (keeps ? and !), the clean look of social captions. */
export function stripPunctuation(text: string): string {
  const out = text.replace(STRIP_TRAILING_RE, '');
  return out.length > 0 ? out : text;
}

/**
 * Splits a Chinese/Japanese word into characters, keeping closing punctuation with the character
 * before it and opening brackets with the character after, so no line starts with "。" or ends
 * with "「". Latin runs inside (e.g. "iPhone") stay whole.
 */
export function splitNoSpaceWord(text: string): string[] {
  const units: string[] = [];
  let pendingOpen = '';
  let latin = '';
  const flushLatin = () => {
    if (latin) units.push(pendingOpen + latin);
    if (latin) pendingOpen = '';
    latin = '';
  };
  for (const g of graphemes(text)) {
    if (CJK_OPENING.has(g)) {
      flushLatin();
      pendingOpen += g;
    } else if (CJK_CLOSING.has(g) && (units.length > 0 || latin)) {
      if (latin) latin += g;
      else units[units.length - 1] += g;
    } else if (isNoSpaceChar(g)) {
      flushLatin();
      units.push(pendingOpen + g);
      pendingOpen = '';
    } else {
      latin += g;
    }
  }
  flushLatin();
  if (pendingOpen) {
    if (units.length > 0) units[units.length - 1] += pendingOpen;
    else units.push(pendingOpen);
  }
  return units;
}

/**
 * Word-level bidi: the visual left-to-right order of words on one line. In an RTL line, runs of
 * LTR words (and neutral words between two LTR words) keep their reading order; everything else
 * is reversed. Inside each word the text shaper orders the characters.
 */
export function visualOrder(dirs: readonly (Direction | null)[], base: Direction): number[] {
  const n = dirs.length;
  const idx = Array.from({ length: n }, (_, i) => i);
  if (base === 'ltr') {
    // Runs of RTL words inside an LTR line are reversed.
    return reorderRuns(idx, resolveEmbedded(dirs, 'rtl'));
  }
  const embeddedLtr = resolveEmbedded(dirs, 'ltr');
  const reversed = idx.slice().reverse();
  const revFlags = embeddedLtr.slice().reverse();
  return reorderRuns(reversed, revFlags);
}

/** Marks words that belong to an embedded run of direction `dir` (neutrals between two such words join it). */
function resolveEmbedded(dirs: readonly (Direction | null)[], dir: Direction): boolean[] {
  const n = dirs.length;
  const out = dirs.map((d) => d === dir);
  for (let i = 0; i < n; i++) {
    if (dirs[i] !== null) continue;
    let l = i - 1;
    while (l >= 0 && dirs[l] === null) l--;
    let r = i + 1;
    while (r < n && dirs[r] === null) r++;
    if (l >= 0 && r < n && dirs[l] === dir && dirs[r] === dir) out[i] = true;
  }
  return out;
}

function reorderRuns(order: number[], flags: boolean[]): number[] {
  const out: number[] = [];
  let i = 0;
  while (i < order.length) {
    if (!flags[i]) {
      out.push(order[i]!);
      i++;
      continue;
    }
    let j = i;
    while (j < order.length && flags[j]) j++;
    out.push(...order.slice(i, j).reverse());
    i = j;
  }
  return out;
}
