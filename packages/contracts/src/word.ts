import { z } from 'zod';

/** One transcribed word. Times are seconds from the start of the media. */
export const WordSchema = z.object({
  text: z.string().min(1),
  start: z.number().nonnegative(),
  end: z.number().nonnegative(),
  confidence: z.number().min(0).max(1),
});
export type Word = z.infer<typeof WordSchema>;

export const TranscriptSchema = z.object({
  language: z.string().length(2),
  words: z.array(WordSchema),
});
export type Transcript = z.infer<typeof TranscriptSchema>;
