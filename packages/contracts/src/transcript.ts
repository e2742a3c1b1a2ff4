import { z } from 'zod';
import { contentTypesFor } from './content-types.ts';
import { LanguageSchema } from './languages.ts';
import { lineText } from './text.ts';

/** Limits of a transcript given at job creation (issue 10). */
export const TRANSCRIPT_MAX_WORDS = 20_000;
export const TRANSCRIPT_WORD_MAX_CHARS = 64;

/**
 * The JSON body limit of POST /v1/automation-jobs, which may carry a transcript: 20,000 words of
 * up to 64 characters each do not fit in the general 64 KiB limit. 8 MiB covers 20,000 words of
 * 64 four-byte characters (emoji, UTF-8) with their keys and times (about 300 bytes a word).
 */
export const CREATE_JOB_MAX_JSON_BYTES = 8 * 1024 * 1024;

/**
 * Each word's text: one line, no control characters (C0 or C1: they would break SRT/VTT cues), no
 * lone surrogate, something visible (not only zero-width characters). Punctuation, symbols and
 * emoji alone are words here ("♪", "—"): the recognizer writes them, and its export is sent back.
 */
const wordText = lineText('text', { min: 1, max: TRANSCRIPT_WORD_MAX_CHARS });

const seconds = z
  .number()
  .nonnegative()
  .max(24 * 3600);

/** One word of a transcript, in seconds from the start of the source. */
export const TranscriptWordSchema = z
  .strictObject({
    text: wordText,
    start: seconds,
    end: seconds,
    // An edited job's export gives each word's output time too (issue 42): accepted and ignored,
    // so that the export can be sent back unchanged after a fix.
    outputStart: z.number().nonnegative().nullable().optional(),
    outputEnd: z.number().nonnegative().nullable().optional(),
  })
  .transform(({ text, start, end }) => ({ text, start, end }));
export type TranscriptWord = z.infer<typeof TranscriptWordSchema>;

/** Starts never go back, and every word lasts: reported at the offending word, at most `limit` times. */
function checkOrder(words: readonly TranscriptWord[], ctx: z.RefinementCtx, limit = 10): void {
  let reported = 0;
  for (let i = 0; i < words.length && reported < limit; i++) {
    const w = words[i]!;
    if (!(w.end > w.start)) {
      ctx.addIssue({ code: 'custom', path: ['words', i, 'end'], message: `end (${w.end}) must be greater than start (${w.start})` });
      reported++;
    }
    const prev = words[i - 1];
    if (prev && w.start < prev.start) {
      ctx.addIssue({
        code: 'custom',
        path: ['words', i, 'start'],
        message: `starts must be in ascending order: ${w.start} is before the previous word's ${prev.start}`,
      });
      reported++;
    }
  }
}

/**
 * A transcript given at job creation: the job skips speech recognition and burns exactly these
 * words. `languageProbability` is accepted (and ignored) so that a transcript exported with
 * GET .../transcript can be sent back unchanged after an edit.
 */
export const TranscriptInputSchema = z
  .strictObject({
    language: LanguageSchema.nullable().optional(),
    languageProbability: z.number().min(0).max(1).nullable().optional(),
    words: z.array(TranscriptWordSchema).max(TRANSCRIPT_MAX_WORDS, `at most ${TRANSCRIPT_MAX_WORDS} words`),
  })
  .superRefine((t, ctx) => checkOrder(t.words, ctx));
export type TranscriptInput = z.input<typeof TranscriptInputSchema>;

/**
 * GET /v1/automation-jobs/:id/transcript: the words a succeeded job burned. `language` is null only
 * for a job given a transcript without a language (and no `language` field);
 * `languageProbability` is the recognizer's confidence in a detected language, null when the
 * language was given or the words were.
 */
export const TranscriptRecordSchema = z.strictObject({
  language: z.string().length(2).nullable(),
  languageProbability: z.number().min(0).max(1).nullable(),
  words: z.array(
    z.strictObject({
      text: z.string(),
      start: z.number().nonnegative(),
      end: z.number().nonnegative(),
      /** An edited job's words (issue 42): the word's time in the output video, null when a cut removed it. */
      outputStart: z.number().nonnegative().nullable().optional(),
      outputEnd: z.number().nonnegative().nullable().optional(),
    }),
  ),
});
export type TranscriptRecord = z.infer<typeof TranscriptRecordSchema>;

export const TRANSCRIPT_FORMATS = ['json', 'srt', 'vtt'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];
export const TranscriptQuerySchema = z.strictObject({ format: z.enum(TRANSCRIPT_FORMATS).default('json') });

/** Content types of the subtitle exports. */
export const TRANSCRIPT_CONTENT_TYPES = contentTypesFor(['srt', 'vtt']);

/**
 * Recognized words made fit to be given back as a transcript: starts non-decreasing, every word at
 * least 1 ms long, all within [0, duration]. Whisper can stamp a word with end == start (or both at
 * the very end); without this, an exported transcript would fail validation when sent back.
 */
export function fitWords<W extends { start: number; end: number }>(words: readonly W[], durationSeconds: number): W[] {
  const ms = (s: number) => Math.round(s * 1000) / 1000;
  const last = Math.max(0, ms(durationSeconds) - 0.001);
  let prevStart = 0;
  return words.map((w) => {
    const start = ms(Math.min(Math.max(w.start, prevStart, 0), last));
    const end = ms(Math.min(Math.max(w.end, start + 0.001), Math.max(durationSeconds, start + 0.001)));
    prevStart = start;
    return { ...w, start, end };
  });
}
