import { z } from 'zod';
import { RequestedResolutionSchema, ResolutionSchema } from './resolution.ts';

// Issue 43, framed for every platform: a reframe that follows the speaker, captions kept clear of
// the apps' buttons and of faces, several renditions and a poster from one job, soft subtitles.
// The control plane validates the request and serves the renditions (GET .../outputs); the agent
// analyses the picture (packages/framing), plans the crop and the caption placement, and renders
// every rendition in one ffmpeg run (packages/renderer); the SDK, CLI and dashboard import these.

/** `center`: fill and centre-crop (the default); `subject`: the crop follows the face (or the salient region) shot by shot. */
export const REFRAME_MODES = ['center', 'subject'] as const;
/** `none`: the generic margins of the frame's aspect (title-safe); else that app's interface zones are kept clear too. */
export const SAFE_AREAS = ['none', 'tiktok', 'reels', 'shorts'] as const;
/** `fixed`: the template's position; `auto`: a caption page that would cover a face moves above or below it. */
export const PLACEMENTS = ['fixed', 'auto'] as const;
/** `burn`: captions in the pixels; `track`: a subtitle track only (mov_text in MP4, WebVTT in WebM); `both`. */
export const SUBTITLE_MODES = ['burn', 'track', 'both'] as const;
export type ReframeMode = (typeof REFRAME_MODES)[number];
export type SafeAreaName = (typeof SAFE_AREAS)[number];
export type Placement = (typeof PLACEMENTS)[number];
export type SubtitleMode = (typeof SUBTITLE_MODES)[number];

/** At most this many renditions per job. */
export const MAX_OUTPUTS = 4;

/**
 * Each app's interface zones, as rectangles in a 1080x1920 frame (scaled to the output's size):
 * the top bar, the caption/account/music block at the bottom and the button column on the right.
 * From the apps' own ad safe-zone guidance and measured screenshots (TikTok: bottom 320-350 px,
 * right 120-164 px), rounded outward.
 */
export const SAFE_AREA_REFERENCE = { width: 1080, height: 1920 } as const;
export const SAFE_AREA_ZONES: Readonly<Record<Exclude<SafeAreaName, 'none'>, readonly Box[]>> = {
  tiktok: [
    { x: 0, y: 0, width: 1080, height: 150 },
    { x: 0, y: 1570, width: 1080, height: 350 },
    { x: 916, y: 0, width: 164, height: 1920 },
    { x: 0, y: 0, width: 60, height: 1920 },
  ],
  // Meta's Reels guidance: keep 14% at the top and 35% at the bottom free of text, 6% at the sides.
  reels: [
    { x: 0, y: 0, width: 1080, height: 270 },
    { x: 0, y: 1248, width: 1080, height: 672 },
    { x: 1014, y: 0, width: 66, height: 1920 },
    { x: 0, y: 0, width: 66, height: 1920 },
  ],
  shorts: [
    { x: 0, y: 0, width: 1080, height: 120 },
    { x: 0, y: 1500, width: 1080, height: 420 },
    { x: 890, y: 0, width: 190, height: 1920 },
    { x: 0, y: 0, width: 60, height: 1920 },
  ],
};

/** An app's zones at an output size (pixels, rounded outward). */
export function safeAreaZones(name: SafeAreaName, size: { width: number; height: number }): Box[] {
  if (name === 'none') return [];
  const sx = size.width / SAFE_AREA_REFERENCE.width;
  const sy = size.height / SAFE_AREA_REFERENCE.height;
  return SAFE_AREA_ZONES[name].map((z) => {
    const x = Math.floor(z.x * sx);
    const y = Math.floor(z.y * sy);
    return { x, y, width: Math.ceil((z.x + z.width) * sx) - x, height: Math.ceil((z.y + z.height) * sy) - y };
  });
}

/** A rectangle in pixels (top-left corner, size). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Where a reframed output's crop sits over time, in SOURCE pixels and SOURCE seconds: a
 * `width` x `height` window (the output's aspect), its top-left corner at each keyframe, moving
 * linearly between keyframes; two keyframes at the same `t` are a cut (the second holds from `t`).
 * Before the first keyframe the first holds, after the last the last. The renderer crops with it,
 * then scales the window to the output size.
 */
export interface CropPath {
  width: number;
  height: number;
  keyframes: CropKeyframe[];
}
export interface CropKeyframe {
  t: number;
  x: number;
  y: number;
}

/**
 * The window's top-left corner at `t` (source seconds): linear between keyframes; at two keyframes
 * with the same `t` (a cut) the second holds from `t` on; before the first the first, after the
 * last the last. `before`: the position just before `t` (the left limit, the first of a cut pair).
 * The planners, the renderer's crop expression and the tests read a path through this one function.
 */
export function cropAt(path: CropPath, t: number, before = false): { x: number; y: number } {
  const k = path.keyframes;
  if (k.length === 0) return { x: 0, y: 0 };
  const at = (i: number) => ({ x: k[i]!.x, y: k[i]!.y });
  if (before ? t <= k[0]!.t : t < k[0]!.t) return at(0);
  // The last keyframe at or before t (strictly before, for the left limit): binary search.
  let lo = 0;
  let hi = k.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (before ? k[mid]!.t < t : k[mid]!.t <= t) lo = mid;
    else hi = mid - 1;
  }
  const a = k[lo]!;
  const b = k[lo + 1];
  if (!b || b.t <= a.t) return at(lo);
  const f = (t - a.t) / (b.t - a.t);
  return { x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f };
}

/** Something captions must not cover from `start` to `end` (OUTPUT seconds), in OUTPUT pixels: a face. */
export interface TimedBox {
  start: number;
  end: number;
  box: Box;
}

/** One rendition as a job asks for it. */
export const OutputRequestSchema = z.strictObject({
  resolution: RequestedResolutionSchema.optional().meta({
    description: "This rendition's size in pixels (even, at least 64 per side, at most 4:1, within the plan's frame budget); omitted: the source's size.",
  }),
  format: z.enum(['mp4', 'webm']).optional().meta({ description: "mp4 or webm; omitted: the job's format." }),
  reframe: z.enum(REFRAME_MODES).optional().meta({ description: "center or subject; omitted: the job's reframe." }),
});
export type OutputRequest = z.infer<typeof OutputRequestSchema>;

/** `true`: a frame chosen by faces and stillness; `{ at }`: the frame at that time (output seconds). */
export const PosterRequestSchema = z.union([
  z.boolean(),
  z.strictObject({
    at: z
      .number()
      .nonnegative()
      .max(24 * 3600),
  }),
]);
export type PosterRequest = z.infer<typeof PosterRequestSchema>;

/** The request fields of issue 43, spread into CreateJobRequestSchema. */
export const framingRequestFields = {
  reframe: z
    .enum(REFRAME_MODES)
    .default('center')
    .meta({
      description:
        'How a resolution of another aspect ratio is filled: center (centre-crop) or subject (the crop follows the face, ' +
        'or the salient region where there is none, shot by shot, cutting at shot changes).',
    }),
  safeArea: z.enum(SAFE_AREAS).default('none').meta({
    description: "none (the frame's generic margins), tiktok, reels or shorts: captions and the hook title keep out of that app's interface zones.",
  }),
  placement: z.enum(PLACEMENTS).default('fixed').meta({
    description: "fixed (the template's position) or auto: a caption page that would cover a face moves above or below it.",
  }),
  outputs: z
    .array(OutputRequestSchema)
    .min(1)
    .max(MAX_OUTPUTS, `at most ${MAX_OUTPUTS} outputs`)
    .optional()
    .meta({
      description:
        `Up to ${MAX_OUTPUTS} renditions from one decode and one recognition; the job record's format, resolution and ` +
        "downloadUrl are the first one's; GET /v1/automation-jobs/{id}/outputs lists them all. Not with resolution or overlay.",
    }),
  poster: PosterRequestSchema.default(false).meta({
    description: 'A JPEG frame of the first output with its caption: true (chosen by faces and stillness) or { at } (output seconds).',
  }),
  subtitles: z.enum(SUBTITLE_MODES).default('burn').meta({
    description: 'burn (in the pixels), track (a subtitle track only: mov_text in MP4, WebVTT in WebM) or both.',
  }),
};

/** One rendition of a job, as GET /v1/automation-jobs/:id/outputs serves it. */
export const JobOutputSchema = z.strictObject({
  index: z
    .number()
    .int()
    .min(0)
    .max(MAX_OUTPUTS - 1),
  format: z.enum(['mp4', 'webm', 'mov']),
  reframe: z.enum(REFRAME_MODES),
  /** As asked for at creation (null: the source's, known once the job succeeds). */
  requestedResolution: ResolutionSchema.nullable(),
  /** What was rendered; null until the job succeeds. */
  resolution: ResolutionSchema.nullable(),
  sizeBytes: z.number().int().positive().nullable(),
  downloadUrl: z.string().nullable(),
  outputExpiresAt: z.iso.datetime({ offset: true }).nullable(),
});
export type JobOutput = z.infer<typeof JobOutputSchema>;

export const JobPosterSchema = z.strictObject({
  /** Output seconds of the first output the frame was taken at. */
  at: z.number().nonnegative(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  sizeBytes: z.number().int().positive(),
  downloadUrl: z.string(),
  outputExpiresAt: z.iso.datetime({ offset: true }),
});
export type JobPoster = z.infer<typeof JobPosterSchema>;

/** GET /v1/automation-jobs/:id/outputs */
export const JobOutputsSchema = z.strictObject({
  jobId: z.uuid(),
  safeArea: z.enum(SAFE_AREAS),
  placement: z.enum(PLACEMENTS),
  subtitles: z.enum(SUBTITLE_MODES),
  outputs: z.array(JobOutputSchema).min(1).max(MAX_OUTPUTS),
  /** null: none asked for, or not made yet (the job has not succeeded). */
  poster: JobPosterSchema.nullable(),
});
export type JobOutputs = z.infer<typeof JobOutputsSchema>;

/** One rendition as the agent is told to make it. */
export const LeasedOutputSchema = z.strictObject({
  resolution: ResolutionSchema.nullable(),
  format: z.enum(['mp4', 'webm', 'mov']),
  reframe: z.enum(REFRAME_MODES),
});
export type LeasedOutput = z.infer<typeof LeasedOutputSchema>;

/** What the agent reports of each rendition and the poster at complete. */
export const CompletedOutputSchema = z.strictObject({
  index: z
    .number()
    .int()
    .min(0)
    .max(MAX_OUTPUTS - 1),
  resolution: ResolutionSchema,
  outputBytes: z.number().int().positive(),
});
export const CompletedPosterSchema = z.strictObject({
  at: z.number().nonnegative(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  bytes: z.number().int().positive(),
});
export type CompletedOutput = z.infer<typeof CompletedOutputSchema>;
export type CompletedPoster = z.infer<typeof CompletedPosterSchema>;
