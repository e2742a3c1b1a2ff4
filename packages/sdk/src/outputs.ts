import { z } from 'zod';
import type { Format, ReframeMode, Placement, SafeAreaName, SubtitleMode } from '@captionfarm/contracts';

// Issue 43: what GET /v1/automation-jobs/:id/outputs answers, checked as the SDK checks every
// answer: the contract's shape, loose, so that a newer service (a new format, safe area or field)
// never breaks an older client.

/** One of the known values, or any string a newer service adds. */
const open = <T extends string>() => z.string() as unknown as z.ZodType<T | (string & {})>;

const size = z.looseObject({ width: z.number(), height: z.number() });

const ClientJobOutputSchema = z.looseObject({
  /** 0 is the job's own rendition (the job record's format, resolution and downloadUrl). */
  index: z.number().int().nonnegative(),
  format: open<Format>(),
  reframe: open<ReframeMode>(),
  /** As asked for at creation; null: the source's size. */
  requestedResolution: size.nullable(),
  /** What was rendered; null until the job succeeded. */
  resolution: size.nullable(),
  sizeBytes: z.number().nullable(),
  /** A presigned GET link (no Authorization header); null before the job succeeded, or once the outputs expired. */
  downloadUrl: z.string().nullable(),
  outputExpiresAt: z.string().nullable(),
});

const ClientJobPosterSchema = z.looseObject({
  /** Output seconds of the first rendition the frame was taken at. */
  at: z.number(),
  width: z.number(),
  height: z.number(),
  sizeBytes: z.number(),
  downloadUrl: z.string(),
  outputExpiresAt: z.string(),
});

export const ClientJobOutputsSchema = z.looseObject({
  jobId: z.string(),
  safeArea: open<SafeAreaName>(),
  placement: open<Placement>(),
  subtitles: open<SubtitleMode>(),
  outputs: z.array(ClientJobOutputSchema).min(1),
  /** null: none asked for, or not made yet (the job has not succeeded). */
  poster: ClientJobPosterSchema.nullable(),
});

/**
 * GET /v1/automation-jobs/:id/outputs: every rendition of a job (the first being the job's own)
 * with its own presigned link and expiry, and the poster. The contract's `JobOutputs`, with its
 * closed sets (formats, reframe modes, safe areas) open to values a newer service adds.
 */
export type JobOutputs = z.infer<typeof ClientJobOutputsSchema>;
/** One rendition of `JobOutputs`. */
export type JobOutput = z.infer<typeof ClientJobOutputSchema>;
/** The poster of `JobOutputs`: a JPEG frame of the first rendition with its caption. */
export type JobPoster = z.infer<typeof ClientJobPosterSchema>;
