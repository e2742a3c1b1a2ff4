/**
 * The one edge where whisper.cpp's output becomes ours: whisper-server's `verbose_json` payload
 * (segments of tokens, each with t0/t1, optional DTW time and probability) -> `Word[]`.
 *
 * - Tokens are grouped into words: a token that starts with whitespace starts a new word; any
 *   other token (sub-word piece, punctuation) continues the current one, so punctuation stays
 *   attached to its word ("country." not "country" + ".").
 * - A word's times and confidence come from its letter/digit tokens only: whisper gives
 *   punctuation tokens poor times and probabilities that say nothing about the word.
 * - Punctuation-only words join the next word when they open ("(", "¿", a quote before a word),
 *   else the previous one (" ...", " !"); lone dashes are dropped.
 * - Non-speech annotations ("[BLANK_AUDIO]", "(music)", "♪") are dropped: they are not words.
 * - Times are seconds rounded to the millisecond, never decreasing from word to word.
 */
import { z } from 'zod';
import type { Word } from '@captionfarm/contracts';
import { TranscriptionError } from './errors.ts';
import { languageCode } from './languages.ts';

const ServerTokenSchema = z.object({
  word: z.string(),
  start: z.number().optional(),
  end: z.number().optional(),
  /** DTW time in centiseconds; -1 when DTW is off. */
  t_dtw: z.number().optional(),
  probability: z.number(),
});

const ServerSegmentSchema = z.object({
  text: z.string(),
  start: z.number().optional(),
  end: z.number().optional(),
  words: z.array(ServerTokenSchema).optional(),
  no_speech_prob: z.number().nullable().optional(),
  avg_logprob: z.number().nullable().optional(),
});

/** whisper-server's `response_format=verbose_json` (examples/server/server.cpp). */
export const WhisperServerResponseSchema = z.object({
  language: z.string(),
  duration: z.number().optional(),
  text: z.string(),
  segments: z.array(ServerSegmentSchema),
  /** With no_language_probabilities=false: the language whisper finds at the start of the audio. */
  detected_language: z.string().optional(),
  detected_language_probability: z.number().optional(),
  language_probabilities: z.record(z.string(), z.number()).optional(),
});
export type WhisperServerResponse = z.infer<typeof WhisperServerResponseSchema>;

/**
 * - 'token': whisper.cpp's token timestamps (t0/t1 from the timestamp-token probabilities).
 * - 'dtw': start from DTW over the cross-attention alignment heads (`--dtw <model>`): the DTW
 *   time of the token *before* the word. whisper.cpp's t_dtw marks where a token ends (a word's
 *   own t_dtw lags its onset by a median 254 ms on our espeak clips); the previous token's is
 *   where the DTW path enters the word, the start openai/whisper's word_timestamps gives. Token
 *   timestamps only where there is no DTW time. End from the token timestamps. Needs our
 *   whisper.cpp patch 0002 (scripts/whisper-patches): upstream's DTW leaves the task token out of
 *   the prompt and softmaxes over the padding, which made DTW drift 0.3-1.2 s late on the first
 *   sentence of a chunk; that drift was why a 250 ms agreement window with the token times was
 *   kept before. See README for the figures.
 */
export type WordTiming = 'token' | 'dtw';

export interface ToWordsOptions {
  timing: WordTiming;
  /** The language asked for; when absent the one whisper detected is reported. */
  language?: string;
  /** Media duration in seconds: no word ends after it. */
  duration?: number;
}

interface Piece {
  text: string;
  start: number;
  end: number;
  dtw: number;
  /** t_dtw of the token just before this one (any token, special ones included); -1 if none. */
  prevDtw: number;
  p: number;
}

interface RawWord {
  text: string;
  pieces: Piece[];
}

const SPECIAL_TOKEN = /^\s*(\[_[A-Z]+_?\d*\]|<\|[^|]*\|>)\s*$/;
const HAS_CONTENT = /[\p{L}\p{N}]/u;
const OPENING_PUNCTUATION = /^["'“‘«¿¡([{]+$/u;
const DASHES = /^[-–—]+$/u;
const MUSIC = /^[♪♫♬♩*]+$/u;

function groupWords(tokens: z.infer<typeof ServerTokenSchema>[]): RawWord[] {
  const words: RawWord[] = [];
  let prevDtw = -1;
  for (const t of tokens) {
    const before = prevDtw;
    prevDtw = t.t_dtw ?? -1;
    if (SPECIAL_TOKEN.test(t.word) || t.word.length === 0) continue;
    const piece: Piece = { text: t.word, start: t.start ?? 0, end: t.end ?? t.start ?? 0, dtw: t.t_dtw ?? -1, prevDtw: before, p: t.probability };
    const current = words.at(-1);
    if (!current || /^\s/.test(t.word)) words.push({ text: t.word.trimStart(), pieces: [piece] });
    else {
      current.text += t.word;
      current.pieces.push(piece);
    }
  }
  return words.filter((w) => w.text.length > 0);
}

/** Drops bracketed annotations whisper writes for non-speech: "[BLANK_AUDIO]", "(upbeat music)". */
function dropAnnotations(words: RawWord[]): RawWord[] {
  const kept: RawWord[] = [];
  let closer: string | null = null;
  for (const w of words) {
    if (closer === null && /^[[(]/.test(w.text)) closer = w.text.startsWith('[') ? ']' : ')';
    if (closer !== null) {
      if (w.text.replace(/[.,!?;:]+$/, '').endsWith(closer)) closer = null;
      continue;
    }
    if (MUSIC.test(w.text)) continue;
    kept.push(w);
  }
  return kept;
}

/**
 * Languages written without spaces between words. Whisper marks a new word by a token's leading
 * space, so there a whole sentence came out as one "word" (15 s of Japanese as one, Chinese as
 * 3-7 s "words"), and a karaoke highlight could not move through it.
 */
export const UNSPACED_LANGUAGES: ReadonlySet<string> = new Set(['ja', 'zh', 'yue', 'th', 'lo', 'km', 'my', 'bo']);

const segmenters = new Map<string, Intl.Segmenter>();
const segmenterFor = (language: string) => {
  let segmenter = segmenters.get(language);
  if (!segmenter) {
    // ICU's dictionary word breaker (Chinese, Japanese, Thai, Lao, Khmer, Burmese), built into Node.
    segmenter = new Intl.Segmenter(language === 'yue' ? 'zh-Hant' : language, { granularity: 'word' });
    segmenters.set(language, segmenter);
  }
  return segmenter;
};

/**
 * Whisper's "words" of a language written without spaces, cut into the words ICU's segmenter
 * finds ("今日は" -> "今日" "は"), each timed from the tokens it is made of; a word that begins
 * or ends inside a token takes its share of that token's time by characters. Punctuation comes
 * out as words of its own and is attached by attachPunctuation, as in other languages.
 */
function splitUnspaced(words: RawWord[], language: string | undefined): RawWord[] {
  if (!language || !UNSPACED_LANGUAGES.has(language)) return words;
  const segmenter = segmenterFor(language);
  return words.flatMap((w) => {
    // Each piece's characters in the word's text (the first piece's leading space is not in it).
    const spans: { piece: Piece; from: number; to: number }[] = [];
    let at = 0;
    w.pieces.forEach((piece, i) => {
      const length = (i === 0 ? piece.text.trimStart() : piece.text).length;
      spans.push({ piece, from: at, to: at + length });
      at += length;
    });
    if (at !== w.text.length) return [w];
    const out: RawWord[] = [];
    for (const { segment, index } of segmenter.segment(w.text)) {
      const end = index + segment.length;
      if (segment.trim().length === 0) continue;
      const pieces = spans
        .filter((s) => s.to > index && s.from < end)
        .map(({ piece, from, to }) => share(piece, (Math.max(from, index) - from) / (to - from || 1), (Math.min(to, end) - from) / (to - from || 1)));
      if (pieces.length > 0) out.push({ text: segment.trim(), pieces });
    }
    return out.length > 0 ? out : [w];
  });
}

/** The part of a token from fraction f0 to f1 of its characters, its times shared out alike. */
function share(piece: Piece, f0: number, f1: number): Piece {
  if (f0 === 0 && f1 === 1) return piece;
  const at = (a: number, b: number, f: number) => a + (b - a) * f;
  const dtwKnown = piece.prevDtw >= 0 && piece.dtw >= 0;
  return {
    ...piece,
    start: at(piece.start, piece.end, f0),
    end: at(piece.start, piece.end, f1),
    prevDtw: dtwKnown ? at(piece.prevDtw, piece.dtw, f0) : piece.prevDtw,
    dtw: dtwKnown ? at(piece.prevDtw, piece.dtw, f1) : piece.dtw,
  };
}

/** Attaches punctuation-only words to a neighbour. */
function attachPunctuation(words: RawWord[]): RawWord[] {
  const out: RawWord[] = [];
  let pendingPrefix = '';
  words.forEach((w, i) => {
    if (HAS_CONTENT.test(w.text)) {
      out.push({ text: pendingPrefix + w.text, pieces: w.pieces });
      pendingPrefix = '';
      return;
    }
    const hasNext = words.slice(i + 1).some((n) => HAS_CONTENT.test(n.text));
    const previous = out.at(-1);
    if (DASHES.test(w.text)) return; // a pause or dialogue dash, not part of a word
    if (OPENING_PUNCTUATION.test(w.text) && hasNext) pendingPrefix += w.text;
    else if (previous) previous.text += w.text;
    else if (hasNext) pendingPrefix += w.text;
  });
  return out;
}

const ms = (seconds: number) => Math.round(seconds * 1000) / 1000;

function toWord(w: RawWord, timing: WordTiming): Word {
  const core = w.pieces.filter((p) => HAS_CONTENT.test(p.text));
  const timed = core.length > 0 ? core : w.pieces;
  const first = timed[0]!;
  const last = timed.at(-1)!;
  const start = timing === 'dtw' && first.prevDtw >= 0 ? first.prevDtw / 100 : first.start;
  const confidence = timed.reduce((sum, p) => sum + p.p, 0) / timed.length;
  return { text: w.text, start, end: Math.max(last.end, start), confidence: Math.min(1, Math.max(0, confidence)) };
}

/** Converts a whisper-server verbose_json payload into our language + words. */
export function toWords(payload: unknown, options: ToWordsOptions): { language: string; words: Word[] } {
  const parsed = WhisperServerResponseSchema.safeParse(payload);
  if (!parsed.success) {
    throw new TranscriptionError('transcription-failed', `whisper.cpp answered an unexpected payload: ${parsed.error.message}`);
  }
  const language = options.language ?? languageCode(parsed.data.language);
  if (!language) {
    throw new TranscriptionError('transcription-failed', `whisper.cpp detected a language we do not know: "${parsed.data.language}"`);
  }
  // Tokens of all segments in one stream: whisper-server cuts segments at 60 characters, at
  // token boundaries, so a word can start in one segment and end in the next.
  const tokens = parsed.data.segments.flatMap((segment) => segment.words ?? []);
  const words: Word[] = [];
  for (const raw of attachPunctuation(splitUnspaced(dropAnnotations(groupWords(tokens)), language))) {
    const word = toWord(raw, options.timing);
    const previous = words.at(-1);
    let start = Math.max(word.start, previous?.start ?? 0, 0);
    let end = Math.max(word.end, start);
    if (options.duration !== undefined) {
      start = Math.min(start, options.duration);
      end = Math.min(end, options.duration);
    }
    words.push({ ...word, start: ms(start), end: ms(end), confidence: Math.round(word.confidence * 1000) / 1000 });
  }
  return { language, words };
}
