import type { Word } from '@captionfarm/contracts';
import type { FontSpec, TextBox, TextMeasurer } from './measure.ts';
import type { Template } from './template.ts';
import {
  applyCase,
  displayLength,
  endsClause,
  endsSentence,
  graphemes,
  hasNoSpaceScript,
  isPunctuationOnly,
  splitNoSpaceWord,
  stripPunctuation,
  textDirection,
  type Direction,
} from './text.ts';

export interface Token {
  text: string;
  wordIndex: number;
  start: number;
  end: number;
  /** Pause/sentence/clause markers taken from the original text before case/punctuation rules. */
  sentenceEnd: boolean;
  clauseEnd: boolean;
  noSpace: boolean;
}

export interface MeasuredToken extends Token {
  width: number;
  fontPx: number;
  box: TextBox;
  direction: Direction | null;
  chars: number;
  /** One of the template's keywords (always emphasised). */
  forced: boolean;
}

/** Words -> display tokens: case and punctuation rules, punctuation-only words merged, CJK split by character. */
export function tokenize(words: readonly Word[], template: Template): Token[] {
  return mergePunctuation(words, template).flatMap((tok) => displayTokens(tok, template));
}

/** Non-blank words in time order, as tokens; a word of punctuation only joins the word before. */
function mergePunctuation(words: readonly Word[], template: Template): Token[] {
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
  return raw;
}

/** One token with the template's case and punctuation rules applied; Chinese/Japanese split into characters. */
function displayTokens(tok: Token, template: Template): Token[] {
  let text = applyCase(tok.text, template.text.case);
  if (template.text.punctuation === 'strip') text = stripPunctuation(text);
  if (!hasNoSpaceScript(text)) return [{ ...tok, text }];
  // Chinese/Japanese: one unit per character, times spread by character count.
  const parts = splitNoSpaceWord(text);
  const total = parts.reduce((n, p) => n + graphemes(p).length, 0);
  let done = 0;
  const dur = tok.end - tok.start;
  return parts.map((p, k) => {
    const n = graphemes(p).length;
    const last = k === parts.length - 1;
    const out: Token = {
      text: p,
      wordIndex: tok.wordIndex,
      start: tok.start + (dur * done) / total,
      end: last ? tok.end : tok.start + (dur * (done + n)) / total,
      sentenceEnd: last && tok.sentenceEnd,
      clauseEnd: last ? tok.clauseEnd : endsClause(p),
      noSpace: hasNoSpaceScript(p),
    };
    done += n;
    return out;
  });
}

/**
 * Tokens with their widths, at the template's font; a single word wider than `maxWidth` shrinks
 * to fit (it will be alone on its line). `forced`: indices of the template's keywords.
 */
export function measureTokens(
  tokens: readonly Token[],
  a: { font: FontSpec; measurer: TextMeasurer; maxWidth: number; forced: ReadonlySet<number> },
): MeasuredToken[] {
  return tokens.map((tok, i) => ({ ...measureToken(tok, a.font, a.measurer, a.maxWidth), forced: a.forced.has(i) }));
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
