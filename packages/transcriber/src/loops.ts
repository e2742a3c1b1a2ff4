/**
 * Our side of "no decoding loops": whisper's temperature fallback (entropy and log-probability
 * thresholds, see inferenceFields) catches most loops inside whisper.cpp; this catches what gets
 * through, on the text of one chunk. A looping chunk is retried, then dropped, never captioned.
 *
 * Signs of a loop (issue 10: French detected as Thai came out as "ฟรงฮะฟรงฮะ..." for 18 s):
 * - the text compresses too well: zlib ratio above 2.4, whisper's own threshold (openai/whisper
 *   `compression_ratio_threshold`), on texts long enough for the ratio to mean something;
 * - one word, or a run of 2-6 words, repeated back to back 4 times or more ("the the the the");
 * - a run of 2-20 letters repeated back to back 4 times or more inside a word (scripts written
 *   without spaces loop inside one "word").
 *
 * A chunk is judged window by window (`loopReasonIn`), as whisper applies its threshold to each
 * 30 s window it decodes: speech that really repeats a passage longer than a window (a looped
 * reading, a chorus, a slogan at the start and the end of an ad) compresses well as a whole chunk,
 * but no window of it does. Judged whole, 60 s of a 34 s reading looped came out at 3.3x and the
 * chunk was dropped: no captions for a minute of clear speech.
 */
import { deflateSync } from 'node:zlib';
import { normalizeWords } from './metrics.ts';

const COMPRESSION_RATIO_THRESHOLD = 2.4;
const MIN_CHARS_FOR_RATIO = 60;
const REPEATS = 4;

export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length / deflateSync(bytes).length;
}

/** A run of 2-20 letters repeated back to back 4 times or more (scripts written without spaces loop inside one "word"). */
const IN_WORD_LOOP = /([\p{L}\p{M}]{2,20}?)\1{3,}/u;

/** Why `text` looks like a decoding loop, or null when it does not (pure). */
export function loopReason(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed.length >= MIN_CHARS_FOR_RATIO) {
    const ratio = compressionRatio(trimmed);
    if (ratio > COMPRESSION_RATIO_THRESHOLD) return `text compresses ${ratio.toFixed(2)}x (> ${COMPRESSION_RATIO_THRESHOLD})`;
  }
  const words = normalizeWords(trimmed);
  for (let n = 1; n <= 6; n++) {
    for (let i = 0; i + n * REPEATS <= words.length; i++) {
      const k = repeatsAt(words, i, n);
      if (k >= REPEATS) return `"${words.slice(i, i + n).join(' ')}" repeated ${k} times`;
    }
  }
  const inWord = IN_WORD_LOOP.exec(trimmed);
  if (inWord) return `"${inWord[1]}" repeated ${Math.floor(inWord[0].length / inWord[1]!.length)} times`;
  return null;
}

/** Whisper's decoding window; windows overlap by half, so a loop never falls between two of them. */
const WINDOW_SECONDS = 30;
const WINDOW_STEP_SECONDS = 15;

/**
 * Why a chunk's words look like a decoding loop, or null: `loopReason` on the text of each 30 s
 * window of them (by start time, overlapping by half), the chunk's own text when it spans less.
 * These are the signs that send a chunk to a second decode; what is dropped in the end is
 * `findLoops`' decision, which also weighs the words' times.
 */
export function loopReasonIn(words: readonly { text: string; start: number }[]): string | null {
  for (const window of windowsOf(words)) {
    const reason = loopReason(window.text);
    if (reason) return window.label ? `${reason} at ${window.label}` : reason;
  }
  return null;
}

interface Window {
  /** Indexes of the window's words in the chunk, ascending. */
  indexes: number[];
  text: string;
  /** "0-30 s" for a chunk longer than one window, else "". */
  label: string;
}

function* windowsOf(words: readonly { text: string; start: number }[]): Generator<Window> {
  if (words.length === 0) return;
  const first = words[0]!.start;
  const last = words.at(-1)!.start;
  const long = last - first >= WINDOW_SECONDS;
  for (let from = first; ; from += WINDOW_STEP_SECONDS) {
    const indexes = words.flatMap((w, i) => (w.start >= from && w.start < from + WINDOW_SECONDS ? [i] : []));
    const label = long ? `${(from - first).toFixed(0)}-${(from - first + WINDOW_SECONDS).toFixed(0)} s` : '';
    yield { indexes, text: indexes.map((i) => words[i]!.text).join(' '), label };
    if (from + WINDOW_SECONDS > last) return;
  }
}

/** Words of a loop found by `findLoops`: `drop` are indexes into the chunk's words. */
export interface Loop {
  drop: number[];
  reason: string;
}

/** A run repeated this often is a loop wherever it is: people do not say a word 8 times running. */
const REPEATS_ALWAYS_LOOP = 8;
/** Repeated words whose starts come faster than this (seconds a word) are not speech. */
const MIN_SECONDS_PER_WORD = 0.1;
/** A run of letters repeated inside one word is a loop from this many characters on ("hahahaha" is 8). */
const MIN_LOOP_CHARS_IN_WORD = 12;

/**
 * The words of a chunk that are a decoding loop, and why; [] when there are none (pure). Only
 * the loop goes, never the chunk around it:
 * - a word or a run of 2-6 words repeated 4 times or more back to back is a loop when it goes
 *   on to the chunk's last word (the decoder never came back), when it is repeated 8 times or
 *   more, or when its words start less than 0.1 s apart (no one speaks that fast). People say
 *   "words words words words" and "no no no no" with a voice behind each word: that is kept.
 *   A loop keeps its first saying and drops the repeats;
 * - a run of letters repeated 4 times or more inside one word, 12 characters or more of it
 *   ("ฟรงฮะฟรงฮะ...", not "hahahaha"), drops that word;
 * - a 30 s window whose text compresses more than 2.4x (whisper's threshold) with no such run to
 *   blame drops the window's words: whisper's own fallback did not get it out of the loop.
 */
export function findLoops(words: readonly { text: string; start: number }[]): Loop[] {
  const loops: Loop[] = [];
  const dropped = new Set<number>();
  const add = (drop: number[], reason: string) => {
    const fresh = drop.filter((i) => !dropped.has(i));
    if (fresh.length === 0) return;
    for (const i of fresh) dropped.add(i);
    loops.push({ drop: fresh, reason });
  };
  const normalized = words.map((w) => normalizeWords(w.text).join(' '));
  // Repeated runs of whole words, over the chunk (a run repeated back to back has no gap to cross windows).
  for (let i = 0; i < words.length; i++) {
    for (let n = 1; n <= 6; n++) {
      if (normalized[i] === '' || dropped.has(i)) break;
      const k = repeatsAt(normalized, i, n);
      if (k < REPEATS) continue;
      const end = i + k * n;
      const secondsPerWord = (words[end - 1]!.start - words[i]!.start) / (k * n - 1);
      const runText = `"${words
        .slice(i, i + n)
        .map((w) => w.text)
        .join(' ')}" repeated ${k} times`;
      const why =
        end === words.length
          ? 'up to the end of the chunk'
          : k >= REPEATS_ALWAYS_LOOP
            ? null
            : secondsPerWord < MIN_SECONDS_PER_WORD
              ? `${Math.round(secondsPerWord * 1000)} ms a word`
              : undefined;
      if (why === undefined) continue; // said by a person: kept
      add(range(i + n, end), why ? `${runText}, ${why}` : runText);
      break;
    }
  }
  words.forEach((w, i) => {
    const inWord = IN_WORD_LOOP.exec(w.text);
    if (inWord && inWord[0].length >= MIN_LOOP_CHARS_IN_WORD)
      add([i], `"${inWord[1]}" repeated ${Math.floor(inWord[0].length / inWord[1]!.length)} times in a word`);
  });
  for (const window of windowsOf(words)) {
    const text = window.indexes
      .filter((i) => !dropped.has(i))
      .map((i) => words[i]!.text)
      .join(' ')
      .trim();
    if (text.length < MIN_CHARS_FOR_RATIO) continue;
    const ratio = compressionRatio(text);
    if (ratio > COMPRESSION_RATIO_THRESHOLD)
      add(window.indexes, `text compresses ${ratio.toFixed(2)}x (> ${COMPRESSION_RATIO_THRESHOLD})${window.label ? ` at ${window.label}` : ''}`);
  }
  return loops;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

/** How many times the run of `n` words at `i` is said back to back (1: once, not repeated). */
function repeatsAt(words: string[], i: number, n: number): number {
  let k = 1;
  while (i + (k + 1) * n <= words.length && sameRun(words, i, i + k * n, n)) k++;
  return k;
}

function sameRun(words: string[], a: number, b: number, n: number): boolean {
  for (let j = 0; j < n; j++) if (words[a + j] !== words[b + j]) return false;
  return true;
}
