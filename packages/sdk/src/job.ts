import { z } from 'zod';
// Types only: the captions package (layout, emoji tables, string-width) stays out of the bundle;
// tsup inlines these declarations into index.d.ts (see tsup.config.ts).
import type { StyleInput, Template } from '@captionfarm/captions';
import {
  FAILURE_CODES,
  JobRecordSchema,
  JobStyleSchema,
  TERMINAL_STATUSES,
  UploadRecordSchema,
  type FailureCode,
  type JobRecord,
} from '@captionfarm/contracts';

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

/**
 * A per-job style: any template field but id, name and description, nested objects partially,
 * e.g. `{ font: { fontId, size: 8 }, fill: '#FFFFFF', active: { color: '#FFD400' }, position: { y: 0.8 },
 * text: { case: 'upper' }, emoji: 'auto', keywords: ['launch'] }`. The type is the service's own
 * template schema (`StyleSchema` of the captions package), so a misspelt field or a value outside a
 * closed set (`emoji: 'yes'`, `text: { case: 'title' }`) fails to compile; ranges and colour formats
 * are checked by the service (400 invalid_request with the path of each problem).
 */
export type CaptionStyle = StyleInput;

/** A complete template, every default filled in: what getTemplate and getJobStyle answer. */
export type CaptionTemplate = Template;

const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
// Templates and styles the service answers are checked as objects only, so a newer service's
// template fields never break an older client, and typed as the schema the service validated them with.
const TemplateObjectSchema = z.custom<CaptionTemplate>(isObject, 'expected a template object');
const StyleObjectSchema = z.custom<CaptionStyle>(isObject, 'expected a style object');

export const TemplateDetailSchema = z.looseObject({
  id: z.string(),
  builtin: z.boolean(),
  createdAt: z.string().nullable(),
  template: TemplateObjectSchema,
});
export type TemplateDetail = z.infer<typeof TemplateDetailSchema>;

/**
 * GET /v1/automation-jobs/:id/style: the per-job style sent (or null), the effective template, and
 * the vocabulary and replacements the job uses (empty from a service that predates them).
 */
export const ClientJobStyleSchema = JobStyleSchema.extend({
  override: StyleObjectSchema.nullable(),
  style: TemplateObjectSchema,
  vocabulary: z.array(z.string()).default([]),
  replacements: z.array(z.looseObject({ from: z.string(), to: z.string() })).default([]),
}).loose();
export type JobStyle = z.infer<typeof ClientJobStyleSchema>;

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
