// Which units of a page are emphasised: the template's keywords, and with the 'keyword' rule one
// picked word per page.
import { emphasisOf, type Template } from './template.ts';
import type { MeasuredToken, Token } from './tokens.ts';

const STOPWORDS = new Set(
  'a an and are as at be but by for from had has have he her his i if in into is it its me my no not of on or our she so that the their them then there these they this to up was we were what when which who will with you your'.split(
    ' ',
  ),
);

/**
 * Token indices matching the keywords: whole words, case-insensitive, phrases as consecutive
 * words, punctuation around words ignored.
 */
export function keywordTokens(tokens: readonly Token[], keywords: readonly string[]): Set<number> {
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

/** Whether the template emphasises one picked word per page (the 'keyword' rule). */
export function hasAutoEmphasis(template: Template): boolean {
  const emphasis = emphasisOf(template);
  return emphasis !== null && emphasis.rule === 'keyword';
}

/** Indices into the page's tokens (reading order) of its emphasised words: its keywords, and the picked word. */
export function pageEmphasis(pageTokens: readonly MeasuredToken[], template: Template): Set<number> {
  const emphasized = new Set<number>();
  for (const [i, t] of pageTokens.entries()) if (t.forced) emphasized.add(i);
  if (hasAutoEmphasis(template)) emphasized.add(pickKeyword(pageTokens));
  emphasized.delete(-1);
  return emphasized;
}

/** The emphasised unit of a page: a word with a digit, else the longest non-stopword of 4+ letters. */
function pickKeyword(tokens: readonly MeasuredToken[]): number {
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
