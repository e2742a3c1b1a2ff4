/**
 * Accuracy measures used by the tests and scripts/bench/transcribe.ts: word error rate against a
 * reference text, and word onset error against reference onsets.
 */
import type { Word } from '@captionfarm/contracts';
import { UNSPACED_LANGUAGES } from './to-words.ts';

/** Lower case, no punctuation, one entry per word ("Sun's" -> "sun's", "cloak." -> "cloak"). */
export function normalizeWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’]/g, "'")
    .replace(/[^\p{L}\p{N}'\s-]/gu, ' ')
    .replace(/(^|\s)['-]+|['-]+(?=\s|$)/g, ' ')
    .split(/[\s-]+/)
    .filter((w) => w.length > 0);
}

type Step = 'match' | 'sub' | 'del' | 'ins';

/** Levenshtein alignment of two word lists; returns the edit steps from start to end. */
function align(ref: string[], hyp: string[]): Step[] {
  const rows = ref.length + 1;
  const cols = hyp.length + 1;
  const d = new Uint32Array(rows * cols);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = ref[i - 1] === hyp[j - 1] ? 0 : 1;
      d[i * cols + j] = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost);
    }
  }
  const steps: Step[] = [];
  let i = ref.length;
  let j = hyp.length;
  while (i > 0 || j > 0) {
    const here = d[i * cols + j]!;
    if (i > 0 && j > 0 && here === d[(i - 1) * cols + j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1)) {
      steps.push(ref[i - 1] === hyp[j - 1] ? 'match' : 'sub');
      i--;
      j--;
    } else if (i > 0 && here === d[(i - 1) * cols + j]! + 1) {
      steps.push('del');
      i--;
    } else {
      steps.push('ins');
      j--;
    }
  }
  return steps.reverse();
}

/**
 * Hesitations and laughter, left out of the reference and of every system's words alike before
 * scoring (as openai/whisper's normaliser drops um/uh/hmm/mm): recognizers keep or drop them at
 * will, and a caption without "um" or "ha-ha" is not wrong. English, German, French, Spanish, Swedish.
 */
const FILLERS = new Set([
  'um',
  'umm',
  'uh',
  'uhm',
  'uhh',
  'hmm',
  'hm',
  'mm',
  'mmm',
  'mhm',
  'er',
  'erm',
  'ah',
  'äh',
  'ähm',
  'öh',
  'euh',
  'eh',
  'ha',
  'haha',
  'hahaha',
]);

/** One spelling for words written two ways ("all right" / "alright", "ok" / "okay"). */
const SPELLINGS: [RegExp, string][] = [
  [/\by'?know\b/giu, 'you know'],
  [/\ball right\b/giu, 'alright'],
  [/\bok\b/giu, 'okay'],
];

/**
 * The units a transcript is scored in, the one normaliser for every system: normalizeWords less
 * the fillers, one spelling for words written two ways ("y'know", "all right", "ok"), and in languages written without spaces (Japanese,
 * Chinese, Thai...) one unit per character, so the score is a character error rate.
 */
export function scoringUnits(text: string, language?: string): string[] {
  const spelled = SPELLINGS.reduce((t, [from, to]) => t.replace(from, to), text);
  const words = normalizeWords(spelled).filter((w) => !FILLERS.has(w));
  return language !== undefined && UNSPACED_LANGUAGES.has(language) ? words.flatMap((w) => [...w]) : words;
}

/** Edit steps between reference and hypothesis units, and how many reference units there are. */
export function scoreErrors(reference: string, hypothesis: string, language?: string): { errors: number; units: number } {
  const ref = scoringUnits(reference, language);
  const hyp = scoringUnits(hypothesis, language);
  if (ref.length === 0) return { errors: hyp.length, units: 0 };
  return { errors: align(ref, hyp).filter((s) => s !== 'match').length, units: ref.length };
}

/**
 * (substitutions + deletions + insertions) / reference units, on `scoringUnits`: the word error
 * rate, or the character error rate where `language` is written without spaces.
 */
export function wordErrorRate(reference: string, hypothesis: string, language?: string): number {
  const { errors, units } = scoreErrors(reference, hypothesis, language);
  if (units === 0) return errors === 0 ? 0 : 1;
  return errors / units;
}

export interface ReferenceOnset {
  word: string;
  /** seconds */
  onset: number;
}

/** Parses forced-aligner `.words` files (../shared/media/real): `start_seconds<TAB>end_seconds<TAB>word` lines. */
export function parseAlignedWords(text: string): { word: string; start: number; end: number }[] {
  return text
    .split('\n')
    .map((line) => line.split('\t'))
    .filter((cols) => cols.length >= 3 && cols[0] !== '')
    .map((cols) => ({ word: cols[2]!.trim(), start: Number(cols[0]), end: Number(cols[1]) }));
}

/** Parses espeak-style `.words` files: `onset_ms<TAB>char_offset<TAB>char_length<TAB>word` lines. */
export function parseReferenceOnsets(text: string): ReferenceOnset[] {
  return text
    .split('\n')
    .map((line) => line.split('\t'))
    .filter((cols) => cols.length >= 4 && cols[0] !== '')
    .map((cols) => ({ word: cols[3]!, onset: Number(cols[0]) / 1000 }));
}

/**
 * |word.start - reference onset| in milliseconds, for every word whose normalized text matches
 * its reference word in the WER alignment (substituted or missing words have no fair onset).
 */
export function onsetErrorsMs(reference: ReferenceOnset[], words: Word[]): number[] {
  const ref = reference.flatMap((r) => scoringUnits(r.word).map((w) => ({ w, onset: r.onset })));
  const hyp = words.flatMap((word) => scoringUnits(word.text).map((w, k) => ({ w, start: word.start, first: k === 0 })));
  const errors: number[] = [];
  let i = 0;
  let j = 0;
  for (const step of align(
    ref.map((r) => r.w),
    hyp.map((h) => h.w),
  )) {
    if (step === 'match') {
      if (hyp[j]!.first) errors.push(Math.abs(hyp[j]!.start - ref[i]!.onset) * 1000);
      i++;
      j++;
    } else if (step === 'sub') {
      i++;
      j++;
    } else if (step === 'del') i++;
    else j++;
  }
  return errors;
}

/** Nearest-rank percentile (p in 0..100) of the values; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
