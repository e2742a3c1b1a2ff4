import { z } from 'zod';
import { EditRequestSchema, HookTitleSchema, ProfanitySchema } from './edit.ts';
import { LanguageSchema, WHISPER_LANGUAGES } from './languages.ts';
import { ReplacementsSchema, VocabularySchema } from './recognition.ts';
import { TranscriptInputSchema } from './transcript.ts';
import { framingRequestFields } from './framing.ts';
import { MAX_REQUESTED_ASPECT, MIN_REQUESTED_SIDE, RequestedResolutionSchema, ResolutionSchema } from './resolution.ts';

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export const JOB_PHASES = ['queued', 'ingesting', 'transcribing', 'rendering', 'succeeded', 'failed', 'cancelled'] as const;
export const TERMINAL_STATUSES = ['succeeded', 'failed', 'cancelled'] as const;
export const RUNNING_PHASES = ['ingesting', 'transcribing', 'rendering'] as const;

export const JobStatusSchema = z.enum(JOB_STATUSES);
export const JobPhaseSchema = z.enum(JOB_PHASES);
export type JobStatus = z.infer<typeof JobStatusSchema>;
export type JobPhase = z.infer<typeof JobPhaseSchema>;
export type RunningPhase = (typeof RUNNING_PHASES)[number];

/** status <-> phase (ARCHITECTURE.md): queued<->queued, running<->ingesting|transcribing|rendering, terminal = phase. */
export function statusForPhase(phase: JobPhase): JobStatus {
  if (phase === 'queued') return 'queued';
  if (phase === 'ingesting' || phase === 'transcribing' || phase === 'rendering') return 'running';
  return phase;
}

export const FAILURE_CODES = [
  'source-unreachable',
  'source-unreadable',
  'source-too-long',
  'output-larger-than-source',
  'automation-minutes-exhausted',
  'ingest-failed',
  'transcription-failed',
  'render-failed',
  'timed-out',
  'internal',
  // Added under the spec's versioning rule (new failure codes may be added): a transcript given at
  // creation has a word past the end of the source, measured at ingest. Not retryable.
  'transcript-out-of-range',
  // Issue 42: the job's own edit.keep has a range past the end of the source (measured at ingest).
  'edit-out-of-range',
  // Issue 42: the edit cut everything (no word and no kept range left to render).
  'edit-left-nothing',
] as const;
export const FailureCodeSchema = z.enum(FAILURE_CODES);
export type FailureCode = z.infer<typeof FailureCodeSchema>;

/**
 * `mp4` or `webm` (the spec's two) for burned videos; `mov` (ProRes 4444) exists only as a
 * transparent overlay, so a job asks for it with `overlay: true`.
 */
export const FormatSchema = z.enum(['mp4', 'webm', 'mov']);
export const QualitySchema = z.enum(['low', 'medium', 'high']);
export type Format = z.infer<typeof FormatSchema>;
export type Quality = z.infer<typeof QualitySchema>;

/** Template ids: built-ins are kebab-case words; custom ones are `tpl_` + 24 base62 chars. */
export const TemplateIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-zA-Z0-9_-]+$/, 'letters, digits, "-" and "_" only');

const isoTimestamp = z.iso.datetime({ offset: true });

/** The job record of the spec: every key is always present; nullable ones are null until their state. */
export const JobRecordSchema = z.strictObject({
  id: z.uuid(),
  status: JobStatusSchema,
  phase: JobPhaseSchema,
  templateId: TemplateIdSchema,
  quotedSeconds: z.number().int().nonnegative().nullable(),
  format: FormatSchema,
  quality: QualitySchema,
  resolution: ResolutionSchema.nullable(),
  percent: z.number().int().min(0).max(100).nullable(),
  downloadUrl: z.string().nullable(),
  outputExpiresAt: isoTimestamp.nullable(),
  failureReason: z.string().nullable(),
  failureCode: FailureCodeSchema.nullable(),
  settledAt: isoTimestamp.nullable(),
  createdAt: isoTimestamp,
});
export type JobRecord = z.infer<typeof JobRecordSchema>;

/**
 * A per-job style as sent: template fields, validated by the template schema once the template is
 * known. zod's record drops an own "__proto__" key without a word (so that it cannot replace the
 * result's prototype); a strict object, the body's top level included, refuses it as an unknown
 * field: so does this, at its path (style.__proto__).
 */
export const StyleOverrideSchema = z.preprocess(
  (value, ctx) => {
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__')) {
      ctx.addIssue({ code: 'custom', path: ['__proto__'], message: 'unknown field' });
    }
    return value;
  },
  z.record(z.string(), z.unknown()),
);

export const CreateJobRequestSchema = z
  .strictObject({
    videoUrl: z.string().min(1).max(2048).optional(),
    uploadId: z.uuid().optional(),
    templateId: TemplateIdSchema,
    format: FormatSchema.default('mp4'),
    quality: QualitySchema.default('high'),
    resolution: RequestedResolutionSchema.optional().meta({
      description:
        `Output size in pixels: even numbers, at least ${MIN_REQUESTED_SIDE} per side, an aspect ratio of at ` +
        `most ${MAX_REQUESTED_ASPECT}:1, within the plan's frame budget (422 limit_exceeded over it).`,
    }),
    language: LanguageSchema.optional().meta({
      description: `2-letter code of the spoken language, one the speech recognizer knows: ${Object.keys(WHISPER_LANGUAGES)
        .filter((c) => c.length === 2)
        .join(', ')}. Omit it to detect the language.`,
    }),
    webhookUrl: z.string().min(1).max(2048).optional(),
    /**
     * Overrides of the template's fields for this job (any template field but id, name and
     * description; nested objects partially). Validated by the template schema.
     */
    style: StyleOverrideSchema.optional(),
    /** Only the captions on transparent frames: `webm` (VP9 + alpha) or `mov` (ProRes 4444 + alpha). */
    overlay: z.boolean().default(false),
    /** Words to burn instead of recognizing speech (fix a misheard word, render again). */
    transcript: TranscriptInputSchema.optional().meta({
      description:
        'Words to burn instead of recognizing speech, e.g. the export of GET ' +
        '/v1/automation-jobs/{id}/transcript with a word fixed. Up to 20,000 words; each text 1..64 ' +
        'characters on one line; start and end in seconds, starts ascending (equal allowed), end > start. ' +
        'The job still passes through phase transcribing. A word ending after the source does fails the job ' +
        'after ingest with failureCode transcript-out-of-range (not retryable).',
    }),
    /** Terms the recognizer is told to expect; replaces the template's own `vocabulary` (not merged). */
    vocabulary: VocabularySchema.optional(),
    /** Fixes applied to the recognized words; replaces the template's own `replacements` (not merged). */
    replacements: ReplacementsSchema.optional(),
    /** Issue 42: silences and fillers cut, punch-in zoom, or the job's own keep-ranges. */
    edit: EditRequestSchema.optional(),
    /** Issue 42: a headline over the first seconds. */
    hookTitle: HookTitleSchema.optional(),
    /** Issue 42: profane words masked in the captions and exports, or also bleeped. */
    profanity: ProfanitySchema.default('off'),
    /** Issue 43: reframe, safeArea, placement, outputs, poster, subtitles. */
    ...framingRequestFields,
  })
  .superRefine((body, ctx) => {
    if (body.overlay) {
      // An overlay is laid over the untouched source: one transparent rendition of it, nothing moved, nothing muxed.
      if (body.reframe !== 'center')
        ctx.addIssue({ code: 'custom', path: ['reframe'], message: 'an overlay is laid over the untouched source: it cannot be reframed' });
      if (body.outputs) ctx.addIssue({ code: 'custom', path: ['outputs'], message: 'an overlay has one rendition: drop outputs (use resolution)' });
      if (body.poster !== false) ctx.addIssue({ code: 'custom', path: ['poster'], message: 'an overlay has no picture to make a poster of' });
      if (body.subtitles !== 'burn')
        ctx.addIssue({ code: 'custom', path: ['subtitles'], message: 'an overlay is only the captions: it has no subtitle track' });
    }
    if (!body.outputs && body.reframe === 'subject' && !body.resolution) {
      ctx.addIssue({ code: 'custom', path: ['reframe'], message: 'reframe subject needs a resolution of another aspect ratio to crop to' });
    }
    if (body.outputs) {
      if (body.resolution)
        ctx.addIssue({ code: 'custom', path: ['resolution'], message: 'give each output its own resolution (outputs[].resolution), not both' });
      const seen = new Set<string>();
      body.outputs.forEach((o, i) => {
        if (o.reframe === 'subject' && !o.resolution) {
          ctx.addIssue({ code: 'custom', path: ['outputs', i, 'reframe'], message: 'reframe subject needs a resolution to crop to' });
        }
        const key = JSON.stringify([o.resolution?.width, o.resolution?.height, o.format ?? body.format, o.reframe ?? body.reframe]);
        if (seen.has(key))
          ctx.addIssue({ code: 'custom', path: ['outputs', i], message: 'the same rendition twice: each output differs in resolution, format or reframe' });
        seen.add(key);
      });
    }
    if (body.overlay && body.edit) {
      ctx.addIssue({
        code: 'custom',
        path: ['edit'],
        message: 'an overlay is laid over the untouched source: it cannot cut or zoom it (drop edit, or render a burned video)',
      });
    }
    if (body.overlay && body.profanity === 'bleep') {
      ctx.addIssue({ code: 'custom', path: ['profanity'], message: 'an overlay has no audio to bleep: use "mask"' });
    }
    if (body.format === 'mov' && !body.overlay) {
      ctx.addIssue({ code: 'custom', path: ['format'], message: '"mov" (ProRes 4444) is only an overlay output: send overlay: true, or use mp4 or webm' });
    }
    if (body.overlay && body.format === 'mp4') {
      ctx.addIssue({ code: 'custom', path: ['overlay'], message: 'mp4 has no alpha channel: an overlay is "webm" (VP9 with alpha) or "mov" (ProRes 4444)' });
    }
    const given = (body.videoUrl !== undefined ? 1 : 0) + (body.uploadId !== undefined ? 1 : 0);
    if (given !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: given === 0 ? ['videoUrl'] : ['uploadId'],
        message: given === 0 ? 'give exactly one of videoUrl and uploadId (neither was given)' : 'give exactly one of videoUrl and uploadId, not both',
      });
    }
  });
export type CreateJobRequest = z.input<typeof CreateJobRequestSchema>;
export type CreateJobInput = z.output<typeof CreateJobRequestSchema>;

/** GET /v1/automation-jobs/:id/style: what the job renders with. */
export const JobStyleSchema = z.strictObject({
  jobId: z.uuid(),
  templateId: TemplateIdSchema,
  overlay: z.boolean(),
  /** The per-job style as sent at creation, or null. */
  override: z.record(z.string(), z.unknown()).nullable(),
  /** The effective template: the template with the style applied, every default filled in. */
  style: z.record(z.string(), z.unknown()),
  /** The vocabulary given to the recognizer: the job's own, else its template's (empty: none). */
  vocabulary: z.array(z.string()).meta({ description: "The vocabulary given to the recognizer: the job's own, else its template's (resolved at creation)." }),
  /** The replacements applied to the recognized words: the job's own, else its template's. */
  replacements: z
    .array(z.strictObject({ from: z.string(), to: z.string() }))
    .meta({ description: "The replacements applied to the recognized words: the job's own, else its template's (resolved at creation)." }),
});
export type JobStyle = z.infer<typeof JobStyleSchema>;

export const ListJobsQuerySchema = z.strictObject({
  cursor: z.string().min(1).max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export const JobListSchema = z.strictObject({
  jobs: z.array(JobRecordSchema),
  nextCursor: z.string().nullable(),
});
export type JobList = z.infer<typeof JobListSchema>;
