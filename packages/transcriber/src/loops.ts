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
      let k = 1;
      while (i + (k + 1) * n <= words.length && sameRun(words, i, i + k * n, n)) k++;
      if (k >= REPEATS) return `"${words.slice(i, i + n).join(' ')}" repeated ${k} times`;
    }
  }
  const inWord = /([\p{L}\p{M}]{2,20}?)\1{3,}/u.exec(trimmed);
  if (inWord) return `"${inWord[1]}" repeated ${Math.floor(inWord[0].length / inWord[1]!.length)} times`;
  return null;
}

/** Whisper's decoding window; windows overlap by half, so a loop never falls between two of them. */
const WINDOW_SECONDS = 30;
const WINDOW_STEP_SECONDS = 15;

/**
 * Why a chunk's words look like a decoding loop, or null: `loopReason` on the text of each 30 s
 * window of them (by start time, overlapping by half), the chunk's own text when it spans less.
 */
export function loopReasonIn(words: readonly { text: string; start: number }[]): string | null {
  if (words.length === 0) return null;
  const first = words[0]!.start;
  const last = words.at(-1)!.start;
  for (let from = first; ; from += WINDOW_STEP_SECONDS) {
    const text = words
      .filter((w) => w.start >= from && w.start < from + WINDOW_SECONDS)
      .map((w) => w.text)
      .join(' ');
    const reason = loopReason(text);
    if (reason) return last - first >= WINDOW_SECONDS ? `${reason} at ${(from - first).toFixed(0)}-${(from - first + WINDOW_SECONDS).toFixed(0)} s` : reason;
    if (from + WINDOW_SECONDS > last) return null;
  }
}

function sameRun(words: string[], a: number, b: number, n: number): boolean {
  for (let j = 0; j < n; j++) if (words[a + j] !== words[b + j]) return false;
  return true;
}
