import { z } from 'zod';
import { FAILURE_CODES, JobRecordSchema, TERMINAL_STATUSES, UploadRecordSchema, type FailureCode, type JobRecord } from '@captionfarm/contracts';

/**
 * A job record as the SDK hands it out. The spec lets the service add failure codes later
 * ("clients treat unknown codes with a generic fallback"), so `failureCode` is any string here,
 * and fields added to the record later are kept, not rejected: a newer server never breaks an
 * older client.
 */
export type Job = Omit<JobRecord, 'failureCode'> & { failureCode: FailureCode | (string & {}) | null };

export const ClientJobSchema = JobRecordSchema.extend({ failureCode: z.string().nullable() }).loose();
export const ClientUploadSchema = UploadRecordSchema.loose();
export const ClientTranscriptSchema = z.looseObject({
  language: z.string().nullable(),
  languageProbability: z.number().nullable(),
  words: z.array(z.looseObject({ text: z.string(), start: z.number(), end: z.number() })),
});
export const ClientJobListSchema = z.looseObject({ jobs: z.array(ClientJobSchema), nextCursor: z.string().nullable() });

export const TemplateSummarySchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  builtin: z.boolean(),
  createdAt: z.string().nullable(),
});
export type TemplateSummary = z.infer<typeof TemplateSummarySchema>;

export const TemplateDetailSchema = z.looseObject({
  id: z.string(),
  builtin: z.boolean(),
  createdAt: z.string().nullable(),
  template: z.record(z.string(), z.unknown()),
});
export type TemplateDetail = z.infer<typeof TemplateDetailSchema>;

const terminal: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/** True once the job is `succeeded`, `failed` or `cancelled`: it will not change any more. */
export function isTerminal(job: Pick<Job, 'status'>): boolean {
  return terminal.has(job.status);
}

/** The failure codes the spec marks retryable (submitting the same job again may succeed). */
export const RETRYABLE_FAILURE_CODES: readonly FailureCode[] = [
  'source-unreachable',
  'ingest-failed',
  'transcription-failed',
  'render-failed',
  'timed-out',
  'internal',
];

/**
 * Whether a failed job is worth submitting again. Codes this SDK does not know (added by a newer
 * service) answer false: a client should not loop on a failure it cannot classify.
 */
export function isRetryableFailure(code: string | null): boolean {
  return code !== null && (RETRYABLE_FAILURE_CODES as readonly string[]).includes(code);
}

/** True for the failure codes this SDK version knows; anything else needs a generic fallback. */
export function isKnownFailureCode(code: string): code is FailureCode {
  return (FAILURE_CODES as readonly string[]).includes(code);
}
