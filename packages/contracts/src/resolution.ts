import { z } from 'zod';

export const ResolutionSchema = z.strictObject({
  width: z.number().int().positive().max(16384),
  height: z.number().int().positive().max(16384),
});
export type Resolution = z.infer<typeof ResolutionSchema>;

/**
 * What a client may request: sizes the encoders produce exactly (H.264/VP9 4:2:0 need even
 * sizes; the renderer would otherwise round down), at least MIN_REQUESTED_SIDE per side (below
 * that, caption text is a few pixels tall) and at most MAX_REQUESTED_ASPECT:1 (past that the
 * caption band cannot hold a line of words). Anything else could never succeed, so it is refused
 * at creation rather than failing later with a retryable render-failed.
 */
export const MIN_REQUESTED_SIDE = 64;
export const MAX_REQUESTED_ASPECT = 4;
export const RequestedResolutionSchema = ResolutionSchema.superRefine((r, ctx) => {
  for (const side of ['width', 'height'] as const) {
    if (r[side] < MIN_REQUESTED_SIDE) ctx.addIssue({ code: 'custom', path: [side], message: `at least ${MIN_REQUESTED_SIDE} pixels` });
    else if (r[side] % 2 !== 0)
      ctx.addIssue({ code: 'custom', path: [side], message: `an even number of pixels (the encoders need even sizes), e.g. ${r[side] - 1}` });
  }
  if (Math.max(r.width, r.height) > MAX_REQUESTED_ASPECT * Math.min(r.width, r.height)) {
    ctx.addIssue({ code: 'custom', path: [], message: `an aspect ratio of at most ${MAX_REQUESTED_ASPECT}:1` });
  }
});
