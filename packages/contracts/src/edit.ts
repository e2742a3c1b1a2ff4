import { z } from 'zod';
import { lineText } from './text.ts';

// Issue 42, shorts-ready in one job: the edit a job asks for (silences and fillers cut, punch-in
// zoom, a hook title, profanity masked or bleeped), and the edit plan the agent made of it (the
// keep-ranges, every cut with its reason, the zooms and bleeps on the output timeline). The
// control plane validates the request and serves the plan (GET .../edit, the transcript's output
// times); the agent plans and renders it (packages/edit, packages/renderer); the SDK, CLI and
// dashboard import the same schemas.

/** How much silence is cut: a pause longer than the pace's threshold is shortened to its padding. */
export const SILENCE_PACES = ['off', 'natural', 'fast', 'extra-fast'] as const;
/** `safe`: hesitations (um, uh, äh, euh...), immediate repeats and short unrecognized voiced blobs between words; `aggressive` also "like", "you know"... */
export const FILLER_MODES = ['off', 'safe', 'aggressive'] as const;
export const ZOOM_MODES = ['off', 'emphasis'] as const;
export const PROFANITY_MODES = ['off', 'mask', 'bleep'] as const;
export type SilencePace = (typeof SILENCE_PACES)[number];
export type FillerMode = (typeof FILLER_MODES)[number];
export type ZoomMode = (typeof ZOOM_MODES)[number];
export type ProfanityMode = (typeof PROFANITY_MODES)[number];

/** At most this many keep-ranges in a job's own `edit.keep` (and in a plan). */
export const EDIT_MAX_RANGES = 2000;
/** The shortest keep-range: a cut that leaves less than one frame at 30 fps is no range. */
export const EDIT_MIN_RANGE_SECONDS = 0.04;
export const HOOK_TITLE_MAX_CHARS = 120;
export const HOOK_TITLE_MAX_SECONDS = 10;
export const PROFANITY_WORDS_MAX = 500;
export const PROFANITY_WORD_MAX_CHARS = 50;

const seconds = z
  .number()
  .nonnegative()
  .max(24 * 3600);

/** A span of time in seconds, end after start. */
export const TimeRangeSchema = z
  .strictObject({ start: seconds, end: seconds })
  .refine((r) => r.end > r.start, { message: 'end must be greater than start', path: ['end'] });
export type TimeRange = z.infer<typeof TimeRangeSchema>;

/** Ranges in source seconds: ascending, not overlapping, each at least EDIT_MIN_RANGE_SECONDS. */
export const KeepRangesSchema = z
  .array(TimeRangeSchema)
  .min(1, 'at least one range: a job that keeps nothing has nothing to render')
  .max(EDIT_MAX_RANGES, `at most ${EDIT_MAX_RANGES} ranges`)
  .superRefine((ranges, ctx) => {
    let reported = 0;
    for (let i = 0; i < ranges.length && reported < 10; i++) {
      const r = ranges[i]!;
      if (r.end - r.start < EDIT_MIN_RANGE_SECONDS - 1e-9) {
        ctx.addIssue({ code: 'custom', path: [i, 'end'], message: `a range lasts at least ${EDIT_MIN_RANGE_SECONDS} s (${r.start}..${r.end} is shorter)` });
        reported++;
      }
      const prev = ranges[i - 1];
      if (prev && r.start < prev.end) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'start'],
          message: `ranges must be ascending and not overlap: ${r.start} is before the previous range's end ${prev.end}`,
        });
        reported++;
      }
    }
  });

export const EditRequestSchema = z
  .strictObject({
    silences: z.enum(SILENCE_PACES).default('off'),
    fillers: z.enum(FILLER_MODES).default('off'),
    zoom: z.enum(ZOOM_MODES).default('off'),
    /** The job's own keep-ranges (source seconds), e.g. GET .../edit's with a cut fixed: replaces silences and fillers. */
    keep: KeepRangesSchema.optional(),
  })
  .superRefine((e, ctx) => {
    if (e.keep && (e.silences !== 'off' || e.fillers !== 'off')) {
      ctx.addIssue({ code: 'custom', path: ['keep'], message: 'keep gives the cut itself: send it with silences and fillers "off" (or omitted)' });
    }
  })
  .meta({
    description:
      'The edit that turns a talking-head clip into a short. silences: off | natural (pauses over 0.8 s shortened to 0.3 s) | ' +
      'fast (over 0.4 s to 0.15 s) | extra-fast (over 0.2 s to 0.08 s). fillers: off | safe (um, uh, äh, euh... in the ' +
      "speaker's language, immediate repeats, short voiced sounds between words that no word covers) | aggressive (also " +
      '"like", "you know", "I mean"...). zoom: off | emphasis (an eased 1.06-1.15x punch-in while emphasised words are ' +
      'spoken; the captions are never scaled). keep: your own keep-ranges in source seconds (ascending, not overlapping, ' +
      `each at least ${EDIT_MIN_RANGE_SECONDS} s, at most ${EDIT_MAX_RANGES}), e.g. GET /v1/automation-jobs/{id}/edit's with a cut fixed; ` +
      'with keep, silences and fillers stay off. A range past the end of the source fails the job after ingest with ' +
      'failureCode edit-out-of-range; an edit that keeps no speech fails it with edit-left-nothing (neither retryable).',
  });
export type EditRequest = z.input<typeof EditRequestSchema>;
export type EditOptions = z.output<typeof EditRequestSchema>;

const hexColor = z.string().regex(/^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/, 'a colour as #rrggbb or #rrggbbaa');

export const HookTitleSchema = z
  .strictObject({
    text: lineText('text', { min: 1, max: HOOK_TITLE_MAX_CHARS }),
    seconds: z.number().min(0.5).max(HOOK_TITLE_MAX_SECONDS).default(3),
    /** Its own look; unset fields come from the job's template (font, text colour, highlight colour as the box). */
    style: z
      .strictObject({
        textColor: hexColor.optional(),
        boxColor: hexColor.nullable().optional(),
        size: z.enum(['small', 'medium', 'large']).default('medium'),
      })
      .default({ size: 'medium' }),
  })
  .meta({
    description:
      `A headline over the first seconds (0.5..${HOOK_TITLE_MAX_SECONDS}, default 3), in the template's font and colours unless ` +
      `style says otherwise, on a part of the frame the captions do not use. text: 1..${HOOK_TITLE_MAX_CHARS} characters, one line ` +
      '(long titles wrap on up to 3 lines).',
  });
export type HookTitle = z.output<typeof HookTitleSchema>;

export const ProfanitySchema = z.enum(PROFANITY_MODES).meta({
  description:
    "off | mask (each profane word's letters after the first become *, in the captions and the exports: f***) | bleep " +
    "(masked, and a 1 kHz tone replaces exactly those words' audio). The words come from the LDNOOBW lists (npm " +
    "naughty-words) in the job's language, with the account's own additions (PUT /v1/profanity-words).",
});

/** The account's own profane words, added to the language's list (GET/PUT /v1/profanity-words). */
export const ProfanityWordsSchema = z.strictObject({
  words: z
    .array(lineText('a word', { min: 1, max: PROFANITY_WORD_MAX_CHARS, needs: 'letter-or-digit' }))
    .max(PROFANITY_WORDS_MAX, `at most ${PROFANITY_WORDS_MAX} words`),
});
export type ProfanityWords = z.output<typeof ProfanityWordsSchema>;

export const CUT_REASONS = ['silence', 'filler', 'repeat', 'voiced-gap', 'client'] as const;
export type CutReason = (typeof CUT_REASONS)[number];

/**
 * The edit an agent made of a job (GET /v1/automation-jobs/:id/edit): `keep` in source seconds
 * (frame-aligned; the output is their concatenation, so outputSeconds is their summed length),
 * every cut with its reason and the words it removed, and the zooms and bleeps in output seconds.
 */
export const EditPlanSchema = z.strictObject({
  sourceSeconds: z.number().nonnegative(),
  outputSeconds: z.number().nonnegative(),
  keep: z.array(z.strictObject({ start: z.number().nonnegative(), end: z.number().nonnegative() })).max(EDIT_MAX_RANGES),
  cuts: z
    .array(
      z.strictObject({
        start: z.number().nonnegative(),
        end: z.number().nonnegative(),
        reason: z.enum(CUT_REASONS),
        /** The words the cut removed (joined by spaces), or null for a cut with no word in it. */
        text: z.string().max(2000).nullable(),
      }),
    )
    .max(EDIT_MAX_RANGES + 1),
  zooms: z.array(z.strictObject({ start: z.number().nonnegative(), end: z.number().nonnegative(), scale: z.number().min(1).max(1.5) })).max(EDIT_MAX_RANGES),
  bleeps: z.array(z.strictObject({ start: z.number().nonnegative(), end: z.number().nonnegative() })).max(20_000),
  /**
   * Indices of the reported words the edit removed (fillers, repeats, words wholly cut): their
   * output times are null even where a sliver of their recognized span lies in a keep-range.
   * Absent in plans from agents before it.
   */
  removed: z.array(z.number().int().nonnegative()).max(20_000).optional(),
});
export type EditPlan = z.infer<typeof EditPlanSchema>;

/** GET /v1/automation-jobs/:id/edit: the job's options as resolved, and the plan its agent rendered. */
export const JobEditSchema = z.strictObject({
  jobId: z.uuid(),
  edit: z.strictObject({
    silences: z.enum(SILENCE_PACES),
    fillers: z.enum(FILLER_MODES),
    zoom: z.enum(ZOOM_MODES),
    keep: z.array(z.strictObject({ start: z.number(), end: z.number() })).nullable(),
  }),
  hookTitle: z.strictObject({ text: z.string(), seconds: z.number() }).nullable(),
  profanity: z.enum(PROFANITY_MODES),
  plan: EditPlanSchema,
});
export type JobEdit = z.infer<typeof JobEditSchema>;

/**
 * A source time on the output timeline of `keep` (ascending, not overlapping): the time inside its
 * range shifted by the cuts before it, or null when a cut removed it. A time at a range's end maps
 * to that range's output end.
 */
export function toOutputTime(keep: readonly { start: number; end: number }[], t: number): number | null {
  let before = 0;
  for (const r of keep) {
    if (t < r.start - 1e-9) return null;
    if (t <= r.end + 1e-9) return before + (Math.min(Math.max(t, r.start), r.end) - r.start);
    before += r.end - r.start;
  }
  return null;
}

/**
 * A word's span on the output timeline: the part of [start, end] that the keep-ranges kept, from
 * its first kept instant to its last, or null when none of it was kept.
 */
export function wordOnOutput(keep: readonly { start: number; end: number }[], start: number, end: number): { start: number; end: number } | null {
  let before = 0;
  let first: number | null = null;
  let last: number | null = null;
  for (const r of keep) {
    const a = Math.max(start, r.start);
    const b = Math.min(end, r.end);
    if (b > a + 1e-9) {
      first ??= before + (a - r.start);
      last = before + (b - r.start);
    }
    before += r.end - r.start;
  }
  return first === null || last === null ? null : { start: first, end: last };
}
