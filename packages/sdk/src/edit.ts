import { z } from 'zod';
import type { CutReason, FillerMode, ProfanityMode, SilencePace, ZoomMode } from '@captionfarm/contracts';

// Issue 42: what GET /v1/automation-jobs/:id/edit and /v1/profanity-words answer, checked as the
// SDK checks every answer: the shape the contract says, but loose, so that a newer service (a new
// cut reason, a new pace, a new field) never breaks an older client.

/** One of the known values, or any string a newer service adds. */
const open = <T extends string>() => z.string() as unknown as z.ZodType<T | (string & {})>;

const range = z.looseObject({ start: z.number(), end: z.number() });

export const ClientJobEditSchema = z.looseObject({
  jobId: z.string(),
  edit: z.looseObject({
    silences: open<SilencePace>(),
    fillers: open<FillerMode>(),
    zoom: open<ZoomMode>(),
    /** The job's own keep-ranges (edit.keep), or null when the agent planned the cut. */
    keep: z.array(range).nullable(),
  }),
  hookTitle: z.looseObject({ text: z.string(), seconds: z.number() }).nullable(),
  profanity: open<ProfanityMode>(),
  plan: z.looseObject({
    sourceSeconds: z.number(),
    outputSeconds: z.number(),
    /** Source seconds, ascending: the output is their concatenation. */
    keep: z.array(range),
    /** Every cut (source seconds) with its reason and the words it removed (null: no word in it). */
    cuts: z.array(z.looseObject({ start: z.number(), end: z.number(), reason: open<CutReason>(), text: z.string().nullable() })),
    /** Output seconds. */
    zooms: z.array(z.looseObject({ start: z.number(), end: z.number(), scale: z.number() })),
    /** Output seconds. */
    bleeps: z.array(range),
  }),
});

/**
 * GET /v1/automation-jobs/:id/edit: the job's edit options as resolved, and the plan its agent
 * rendered (keep-ranges and cuts in source seconds, zooms and bleeps in output seconds). The
 * contract's `JobEdit`, with its closed sets (cut reasons, paces, modes) open to values a newer
 * service adds.
 */
export type JobEdit = z.infer<typeof ClientJobEditSchema>;

export const ClientProfanityWordsSchema = z.looseObject({ words: z.array(z.string()) });
