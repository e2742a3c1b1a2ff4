// Punch-in zoom (`edit.zoom: "emphasis"`): which words get a short eased scale, on the output
// timeline. The renderer eases in and out inside each span; the captions are painted after the
// zoom and are never scaled.
import type { EditPlan } from '@captionfarm/contracts';
import { roundMs } from './ranges.ts';
import { endsSentence, splitWord, wordKey } from './words.ts';

interface OutputWord {
  /** The word as spoken (not masked): emphasis reads its case and "!". */
  text: string;
  start: number;
  end: number;
}

/** Starts of two zooms are at least this far apart on the output timeline. */
const MIN_SPACING = 2.5;
const LEAD = 0.1;
const TAIL = 0.35;
const SCALE = 1.08;
const SCALE_STRONG = 1.12;
/** Sentences of more than this many words get their longest non-stopword zoomed when nothing else in them is. */
const SENTENCE_WORDS = 6;

// Function words of the languages with filler lexicons: never "the" word of a sentence.
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her him his how i if in into is it its just me my no not of on or our she so some than that the their them then there these they this those to up was we were what when where which who why will with would you your ' +
    'aber als auch auf aus bei bin bist das dass dem den der des die doch ein eine einem einen einer er es für hat haben ich ihr im ist mit nicht noch nur oder schon sein sie sind und uns von war was wenn wie wir zu ' +
    'au aux avec ce ces dans de des du elle en est et il ils je la le les leur mais me mes moi ne nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vous ' +
    'al con como del el ella ellos es esta este lo los más mi muy para pero por porque se si sin su sus también te tu una uno y yo ' +
    'che chi ci di gli il io la le lei lo lui ma mi ne non per più questo quello si sono tu un una ' +
    'aan ben bij dat deze die dit een het hij ik is je maar met niet naar nog ook op te van voor wat we wij zijn ze ' +
    'ao aos com da das do dos ela ele em eu isso isto mas na nas no nos não os para pela pelo por que se seu sua um uma você'
  ).split(' '),
);

interface Candidate {
  start: number;
  end: number;
  scale: number;
  /** 0: keywords, ALL CAPS, "!"; 1: the longest word of a long sentence. */
  tier: number;
}

/**
 * One punch-in per emphasised word: the template's keywords (phrases as consecutive words), words
 * in ALL CAPS (2+ letters) and words followed by "!" (scale 1.12 for these two), and in each
 * sentence of more than 6 words that has none of those, its longest non-stopword (1.08). Each
 * spans the word's output start - 0.1 s to its end + 0.35 s; the strong ones are placed first,
 * then the others where they fit: at most one zoom starts in any 2.5 s, and none overlap.
 */
export function planZooms(words: readonly OutputWord[], keywords: readonly string[], outputSeconds: number): EditPlan['zooms'] {
  const candidates = emphasisCandidates(words, keywords);
  candidates.sort((a, b) => a.tier - b.tier || a.start - b.start);
  const chosen: Candidate[] = [];
  for (const c of candidates) {
    const span = { start: Math.max(0, c.start - LEAD), end: Math.min(outputSeconds, c.end + TAIL) };
    if (span.end <= span.start) continue;
    // chosen stays sorted, its zooms spaced and disjoint: only the two neighbours can clash.
    let at = 0;
    for (let hi = chosen.length; at < hi; ) {
      const mid = (at + hi) >> 1;
      if (chosen[mid]!.start < span.start) at = mid + 1;
      else hi = mid;
    }
    const clash = [chosen[at - 1], chosen[at]].some((z) => z && (Math.abs(z.start - span.start) < MIN_SPACING || (span.start < z.end && z.start < span.end)));
    if (!clash) chosen.splice(at, 0, { ...c, ...span });
  }
  return chosen.map((z) => ({ start: roundMs(z.start), end: roundMs(z.end), scale: z.scale }));
}

function emphasisCandidates(words: readonly OutputWord[], keywords: readonly string[]): Candidate[] {
  const keys = words.map((w) => wordKey(w.text));
  const out: Candidate[] = [];
  const emphasised = new Set<number>();
  for (const k of keywords) {
    const phrase = k.split(/\s+/).map(wordKey).filter(Boolean);
    if (phrase.length === 0) continue;
    for (let i = 0; i + phrase.length <= keys.length; i++) {
      if (!phrase.every((p, j) => keys[i + j] === p)) continue;
      for (let j = 0; j < phrase.length; j++) emphasised.add(i + j);
      out.push({ start: words[i]!.start, end: words[i + phrase.length - 1]!.end, scale: SCALE, tier: 0 });
    }
  }
  words.forEach((w, i) => {
    if (!isAllCaps(w.text) && !/!["'”’)\]]*$/u.test(w.text.trimEnd())) return;
    emphasised.add(i);
    out.push({ start: w.start, end: w.end, scale: SCALE_STRONG, tier: 0 });
  });
  for (const sentence of sentences(words)) {
    if (sentence.length <= SENTENCE_WORDS || sentence.some((i) => emphasised.has(i))) continue;
    const best = longestWord(words, sentence);
    if (best !== null) out.push({ start: words[best]!.start, end: words[best]!.end, scale: SCALE, tier: 1 });
  }
  return out;
}

/** ALL CAPS: at least two letters, every letter upper case ("NEVER", "OK"; not "I", not "McDonald"). */
function isAllCaps(text: string): boolean {
  const letters = splitWord(text).core.replace(/[^\p{L}]/gu, '');
  return Array.from(letters).length >= 2 && letters === letters.toUpperCase() && letters !== letters.toLowerCase();
}

/** The words' indices grouped by sentence (a word ending in . ! ? … closes one). */
function sentences(words: readonly OutputWord[]): number[][] {
  const out: number[][] = [[]];
  words.forEach((w, i) => {
    out.at(-1)!.push(i);
    if (endsSentence(w.text)) out.push([]);
  });
  return out.filter((s) => s.length > 0);
}

function longestWord(words: readonly OutputWord[], sentence: readonly number[]): number | null {
  let best: number | null = null;
  let bestLength = 0;
  for (const i of sentence) {
    const key = wordKey(words[i]!.text);
    const length = Array.from(key.replace(/[^\p{L}\p{N}]/gu, '')).length;
    if (length > bestLength && !STOPWORDS.has(key)) {
      best = i;
      bestLength = length;
    }
  }
  return best;
}
