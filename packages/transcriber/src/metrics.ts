/**
 * Accuracy measures used by the tests and scripts/bench/transcribe.ts: word error rate against a
 * reference text, and word onset error against reference onsets.
 */
import type { Word } from '@captionfarm/contracts';

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

/** (substitutions + deletions + insertions) / reference words, on normalized words. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = normalizeWords(reference);
  const hyp = normalizeWords(hypothesis);
  if (ref.length === 0) return hyp.length === 0 ? 0 : 1;
  return align(ref, hyp).filter((s) => s !== 'match').length / ref.length;
}

export interface ReferenceOnset {
  word: string;
  /** seconds */
  onset: number;
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
  const ref = reference.flatMap((r) => normalizeWords(r.word).map((w) => ({ w, onset: r.onset })));
  const hyp = words.flatMap((word) => normalizeWords(word.text).map((w, k) => ({ w, start: word.start, first: k === 0 })));
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
