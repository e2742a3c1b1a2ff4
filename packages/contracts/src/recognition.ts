import { z } from 'zod';
import { lineText } from './text.ts';

// Issue 39 item 5, "the words the speaker meant": a job's (or a custom template's) vocabulary,
// given to the recognizer as context, and replacements applied to the recognized words. The
// schema and the matcher live together here because the schema's duplicate rule and the matcher
// must agree on when two `from`s are the same words; the control plane (validation), the agent
// (matching) and the SDK all import this package, and captions depends on it, not the other way.

export const VOCABULARY_MAX_TERMS = 100;
export const VOCABULARY_TERM_MAX_CHARS = 50;
export const REPLACEMENTS_MAX = 200;
export const REPLACEMENT_TEXT_MAX_CHARS = 50;

/** Names, brands and jargon the recognizer should spell as written (whisper.cpp's initial prompt). */
export const VocabularySchema = z
  .array(lineText('a term', { min: 1, max: VOCABULARY_TERM_MAX_CHARS, needs: 'letter-or-digit' }))
  .max(VOCABULARY_MAX_TERMS, `at most ${VOCABULARY_MAX_TERMS} terms`)
  .meta({
    description:
      `Names, brands and jargon the speech recognizer is told to expect (up to ${VOCABULARY_MAX_TERMS} terms, each ` +
      `1..${VOCABULARY_TERM_MAX_CHARS} characters after trimming, one line). Ignored when a transcript is given.`,
  });
export type Vocabulary = z.output<typeof VocabularySchema>;

export const ReplacementSchema = z.strictObject({
  from: lineText('from', { min: 1, max: REPLACEMENT_TEXT_MAX_CHARS, needs: 'letter-or-digit', wordless: 'from must hold a word, not only punctuation' }),
  to: lineText('to', { min: 0, max: REPLACEMENT_TEXT_MAX_CHARS, needs: 'letter-or-digit' }),
});
export type Replacement = z.output<typeof ReplacementSchema>;

export const ReplacementsSchema = z
  .array(ReplacementSchema)
  .max(REPLACEMENTS_MAX, `at most ${REPLACEMENTS_MAX} replacements`)
  .superRefine((list, ctx) => {
    const seen = new Map<string, number>();
    list.forEach((r, i) => {
      const key = phraseKey(r.from);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else ctx.addIssue({ code: 'custom', path: [i, 'from'], message: `the same words as replacements[${first}].from (compared case-insensitively)` });
    });
  })
  .meta({
    description:
      `Up to ${REPLACEMENTS_MAX} {from, to} pairs applied to the recognized words: whole words, case-insensitive, ` +
      `several words allowed (they become one word from the first's start to the last's end); a several-word "to" ` +
      `shares the time by characters; punctuation around the matched words is kept; an empty "to" removes them. ` +
      `from 1..${REPLACEMENT_TEXT_MAX_CHARS} characters, to 0..${REPLACEMENT_TEXT_MAX_CHARS}; the same from twice ` +
      `(case-insensitive) is refused. Not applied to a transcript given at creation.`,
  });

/** A word's text as replacements see it: punctuation (and space) around it, and its lowercased core. */
interface Parts {
  lead: string;
  key: string;
  trail: string;
}
function partsOf(text: string): Parts {
  const m = /^([\s\p{P}]*)(.*?)([\s\p{P}]*)$/su.exec(text)!;
  return { lead: m[1]!, key: m[2]!.toLocaleLowerCase('en'), trail: m[3]! };
}
function phraseKey(phrase: string): string {
  return phrase
    .split(/\s+/u)
    .map((w) => partsOf(w).key)
    .filter(Boolean)
    .join(' ');
}

interface Rule {
  /** The `from` words; punctuation between them must be there in the recognized words too. */
  words: Parts[];
  to: string[];
}
/** Rules by their first word's key, longest first (at one place the longest match wins). */
function compile(replacements: readonly { from: string; to: string }[]): Map<string, Rule[]> {
  const rules = new Map<string, Rule[]>();
  for (const r of replacements) {
    const words = r.from
      .split(/\s+/u)
      .map(partsOf)
      .filter((p) => p.key !== '');
    if (words.length === 0) continue;
    const list = rules.get(words[0]!.key) ?? [];
    list.push({ words, to: r.to.split(/\s+/u).filter(Boolean) });
    rules.set(words[0]!.key, list);
  }
  for (const list of rules.values()) list.sort((a, b) => b.words.length - a.words.length);
  return rules;
}

/** How many of `rule`'s words match at `at` (rule.words.length: all of them; -1: none can). */
function matched(rule: Rule, parts: readonly Parts[], at: number): number {
  let j = 0;
  for (; j < rule.words.length && at + j < parts.length; j++) {
    const want = rule.words[j]!;
    const got = parts[at + j]!;
    if (got.key !== want.key) return -1;
    // Punctuation inside the phrase must be the phrase's own ("caption farm" never joins "caption. Farm").
    if (j > 0 && got.lead !== want.lead) return -1;
    if (j < rule.words.length - 1 && got.trail !== want.trail) return -1;
  }
  return j;
}

type TimedWord = { text: string; start: number; end: number };

const SENTENCE_END = /[.!?…。！？]/u;

/**
 * Greedy, left to right, the longest rule first at each word; replaced words are not matched
 * again. `open`: more words will follow the last one, so stop at the first place where a rule
 * could still match with them, and say where (`heldFrom`); every word before it is replaced
 * exactly as it will be once all words are known.
 */
function run<W extends TimedWord>(words: readonly W[], rules: Map<string, Rule[]>, open: boolean): { words: W[]; heldFrom: number | null } {
  const parts = words.map((w) => partsOf(w.text));
  const out: W[] = [];
  for (let i = 0; i < words.length; ) {
    let rule: Rule | undefined;
    for (const r of rules.get(parts[i]!.key) ?? []) {
      const n = matched(r, parts, i);
      if (n === r.words.length) {
        rule = r;
        break;
      }
      if (open && n > 0 && i + n === words.length) return { words: out, heldFrom: i };
    }
    if (!rule) {
      out.push(words[i]!);
      i++;
      continue;
    }
    const first = words[i]!;
    const last = words[i + rule.words.length - 1]!;
    const lead = parts[i]!.lead;
    const trail = parts[i + rule.words.length - 1]!.trail;
    i += rule.words.length;
    if (rule.to.length === 0) {
      // Removed with their punctuation, but a sentence end stays: it moves to the word before.
      const prev = out.at(-1);
      const end = SENTENCE_END.exec(trail)?.[0];
      if (prev && end && !SENTENCE_END.test(partsOf(prev.text).trail)) {
        const p = partsOf(prev.text);
        out[out.length - 1] = { ...prev, text: `${prev.text.slice(0, prev.text.length - p.trail.length)}${end}` };
      }
      continue;
    }
    // The span's time shared by the new words in proportion to their characters.
    const sizes = rule.to.map((t) => [...t].length);
    const total = sizes.reduce((a, b) => a + b, 0);
    const span = last.end - first.start;
    let done = 0;
    rule.to.forEach((t, k) => {
      let text = t;
      if (k === 0) text = lead + text;
      if (k === rule.to.length - 1 && !text.endsWith(trail.trim())) text += trail.trim();
      const start = first.start + (span * done) / total;
      done += sizes[k]!;
      const end = k === rule.to.length - 1 ? last.end : first.start + (span * done) / total;
      out.push({ ...first, text, start, end });
    });
  }
  return { words: out, heldFrom: null };
}

/**
 * `words` with `replacements` applied: whole words, case-insensitive, punctuation around a word
 * ignored for matching and kept on the replacement; a `from` of several words becomes one word
 * from the first's start to the last's end (any other field of the word, e.g. confidence, is the
 * first word's); a `to` of several words shares that time by characters; an empty `to` removes
 * the words (a sentence end they carried moves to the word before). At one place the `from` with
 * the most words wins; the words a replacement put in are not matched again.
 */
export function replaceWords<W extends TimedWord>(words: readonly W[], replacements: readonly { from: string; to: string }[]): W[] {
  if (replacements.length === 0) return [...words];
  return run(words, compile(replacements), false).words;
}

/**
 * The same for the words recognition has made final so far, while more are coming (no word to
 * come starts before `finalUntil`): the last words that a replacement of several words could
 * still join with words to come are held back, and `finalUntil` moves back to the first of them,
 * so every word given out is already what replaceWords will make of the whole list.
 */
export function replaceFinalWords<W extends TimedWord>(
  words: readonly W[],
  finalUntil: number,
  replacements: readonly { from: string; to: string }[],
): { words: W[]; finalUntil: number } {
  if (replacements.length === 0) return { words: [...words], finalUntil };
  const r = run(words, compile(replacements), finalUntil !== Infinity);
  return { words: r.words, finalUntil: r.heldFrom === null ? finalUntil : Math.min(finalUntil, words[r.heldFrom]!.start) };
}
