import { z } from 'zod';
import { EditPlanSchema, EditRequestSchema, HookTitleSchema, PROFANITY_MODES, PROFANITY_WORDS_MAX } from './edit.ts';
import { CompletedOutputSchema, CompletedPosterSchema, LeasedOutputSchema, MAX_OUTPUTS, PLACEMENTS, SAFE_AREAS, SUBTITLE_MODES } from './framing.ts';
import { FailureCodeSchema, FormatSchema, QualitySchema } from './job.ts';
import { ResolutionSchema } from './resolution.ts';
import { REPLACEMENTS_MAX, VOCABULARY_MAX_TERMS } from './recognition.ts';
import { TRANSCRIPT_MAX_WORDS } from './transcript.ts';

/** What an agent node can do, sent at register. */
export const AgentCapabilitiesSchema = z.strictObject({
  gpu: z.boolean(),
  nvenc: z.boolean(),
  cudaWhisper: z.boolean(),
  models: z.array(z.string()).max(32),
  maxConcurrentJobs: z.number().int().min(1).max(64),
  version: z.string().max(64).optional(),
});
export type AgentCapabilities = z.infer<typeof AgentCapabilitiesSchema>;

export const AgentRegisterInputSchema = z.strictObject({
  nodeName: z.string().min(1).max(128),
  capabilities: AgentCapabilitiesSchema,
});

/** Where the agent reads the source from. */
export const JobSourceSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('upload'), url: z.string(), sizeBytes: z.number().int().positive() }),
  z.strictObject({ kind: z.literal('url'), url: z.string() }),
]);
export type JobSource = z.infer<typeof JobSourceSchema>;

/** An uploaded font a leased job needs: a presigned GET of its checked TTF/OTF. */
export const LeasedFontSchema = z.strictObject({
  id: z.uuid(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  sizeBytes: z.number().int().positive(),
  weight: z.number().int().min(100).max(900),
  url: z.string(),
});
export type LeasedFont = z.infer<typeof LeasedFontSchema>;

/** A leased job, as the agent receives it. */
export const LeasedJobSchema = z.strictObject({
  jobId: z.uuid(),
  leaseId: z.string(),
  attempt: z.number().int().positive(),
  leaseExpiresAt: z.string(),
  deadlineAt: z.string().nullable(),
  source: JobSourceSchema,
  templateId: z.string(),
  /** The template, resolved at creation (built-in or the account's custom template). */
  template: z.unknown(),
  format: FormatSchema,
  quality: QualitySchema,
  /** Render only the captions on transparent frames (format webm or mov). */
  overlay: z.boolean().default(false),
  /** Uploaded fonts the template uses, checked at upload; the agent caches them by sha256. */
  fonts: z.array(LeasedFontSchema).max(4).default([]),
  resolution: ResolutionSchema.nullable(),
  language: z.string().length(2).nullable(),
  maxInputSeconds: z.number().int().positive(),
  frameBudget: z.number().int().positive(),
  /** Largest source the agent downloads (the plan's upload limit). */
  maxSourceBytes: z.number().int().positive(),
  /** Words given at creation: the agent skips speech recognition and burns exactly these. */
  transcript: z
    .strictObject({ language: z.string().length(2).nullable(), words: z.array(z.strictObject({ text: z.string(), start: z.number(), end: z.number() })) })
    .nullable(),
  /** Terms the recognizer is told to expect (its initial prompt); unused with a transcript. */
  vocabulary: z.array(z.string()).max(VOCABULARY_MAX_TERMS).default([]),
  /** Applied to the recognized words (replaceWords), not to a transcript given at creation. */
  replacements: z
    .array(z.strictObject({ from: z.string(), to: z.string() }))
    .max(REPLACEMENTS_MAX)
    .default([]),
  /** Issue 42: the edit asked for (null: none); a lease from a control plane from before omits it. */
  edit: z
    .strictObject({
      silences: EditRequestSchema.shape.silences,
      fillers: EditRequestSchema.shape.fillers,
      zoom: EditRequestSchema.shape.zoom,
      keep: z.array(z.strictObject({ start: z.number(), end: z.number() })).nullable(),
    })
    .nullable()
    .default(null),
  hookTitle: HookTitleSchema.nullable().default(null),
  profanity: z.enum(PROFANITY_MODES).default('off'),
  /** The account's own profane words, added to the language's list (resolved at creation). */
  profanityWords: z.array(z.string()).max(PROFANITY_WORDS_MAX).default([]),
  /**
   * Issue 43: every rendition to make, the first being the job's own format and resolution;
   * empty (a control plane from before): one, from format, resolution and reframe center.
   */
  outputs: z.array(LeasedOutputSchema).max(MAX_OUTPUTS).default([]),
  safeArea: z.enum(SAFE_AREAS).default('none'),
  placement: z.enum(PLACEMENTS).default('fixed'),
  /** null: no poster; `at` null: the agent chooses the frame (faces, stillness); else output seconds. */
  poster: z.strictObject({ at: z.number().nonnegative().nullable() }).nullable().default(null),
  subtitles: z.enum(SUBTITLE_MODES).default('burn'),
});
export type LeasedJob = z.infer<typeof LeasedJobSchema>;

const leaseRef = { jobId: z.uuid(), leaseId: z.string().min(1) };
export const AgentProgressInputSchema = z.strictObject({
  ...leaseRef,
  phase: z.enum(['ingesting', 'transcribing', 'rendering']),
  percent: z.number().int().min(0).max(100).nullable(),
});
export const AgentIngestedInputSchema = z.strictObject({
  ...leaseRef,
  durationSeconds: z.number().nonnegative(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
});
/** Wall seconds per stage as the agent measured them (for the control plane's metrics). */
export const PhaseSecondsSchema = z.strictObject({
  ingest: z.number().nonnegative(),
  transcribe: z.number().nonnegative(),
  render: z.number().nonnegative(),
  upload: z.number().nonnegative(),
});
export const AgentCompleteInputSchema = z.strictObject({
  ...leaseRef,
  resolution: ResolutionSchema,
  outputBytes: z.number().int().positive(),
  /** Optional: agents from before metrics omit it. */
  phaseSeconds: PhaseSecondsSchema.optional(),
  /** Issue 43: every rendition uploaded (index 0 is the one above); agents from before omit it. */
  outputs: z.array(CompletedOutputSchema).max(MAX_OUTPUTS).optional(),
  /** Issue 43: the poster uploaded, when the job asked for one. */
  poster: CompletedPosterSchema.optional(),
});
const RecognitionCheckSchema = z.enum(['loop', 'budget']);
/**
 * A transcriber's checks on one job: chunks decoded again ('loop': the words looked like a
 * decoding loop; 'budget': the decode ran past its time budget) and recognized words left out.
 */
export const RecognitionChecksSchema = z.strictObject({
  retries: z.array(z.strictObject({ check: RecognitionCheckSchema, reason: z.string().max(2000) })).max(10_000),
  dropped: z
    .array(
      z.strictObject({
        check: RecognitionCheckSchema,
        start: z.number().nonnegative(),
        end: z.number().nonnegative(),
        /** null: a whole chunk, never decoded to the end. */
        words: z.number().int().nonnegative().nullable(),
        reason: z.string().max(2000),
      }),
    )
    .max(10_000),
});
export type RecognitionChecks = z.infer<typeof RecognitionChecksSchema>;
/** The recognized words of a job (before rendering); kept and served once the job succeeds. */
export const AgentTranscribedInputSchema = z.strictObject({
  ...leaseRef,
  language: z.string().length(2),
  languageProbability: z.number().min(0).max(1).nullable(),
  words: z
    .array(z.strictObject({ text: z.string().min(1).max(1024), start: z.number().nonnegative(), end: z.number().nonnegative() }))
    .max(TRANSCRIPT_MAX_WORDS),
  /** What the agent's recognition checks retried and left out (for /metrics); agents from before omit it. */
  checks: RecognitionChecksSchema.optional(),
  /** Issue 42: the edit the agent will render (keep-ranges, cuts, zooms, bleeps); absent when the job has none. */
  edit: EditPlanSchema.optional(),
});
export const AgentFailInputSchema = z.strictObject({
  ...leaseRef,
  failureCode: FailureCodeSchema,
  failureReason: z.string().max(2000),
});
export type AgentProgressInput = z.infer<typeof AgentProgressInputSchema>;
export type AgentIngestedInput = z.infer<typeof AgentIngestedInputSchema>;
export type AgentCompleteInput = z.infer<typeof AgentCompleteInputSchema>;
export type PhaseSeconds = z.infer<typeof PhaseSecondsSchema>;
export type AgentFailInput = z.infer<typeof AgentFailInputSchema>;
export type AgentTranscribedInput = z.infer<typeof AgentTranscribedInputSchema>;

/** Events pushed to an agent over its subscription. */
export const AgentEventSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('cancel'), jobId: z.uuid() }),
  z.strictObject({ type: z.literal('drain') }),
  z.strictObject({ type: z.literal('undrain') }),
  z.strictObject({ type: z.literal('work-available') }),
]);
export type AgentEvent = z.infer<typeof AgentEventSchema>;
