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

type PixelSize = { width: number; height: number };

/**
 * Whether a requested size is an upscale of the source: more pixels than it, or a longer side
 * longer than its longer side. So a 1920x1080 source gives 1080x1920 (issue 43: the Shorts
 * rendition of 16:9 footage, the same pixels turned), 1080x1080 or 1280x720, never 2560x1440 or
 * 2000x1000. (Before issue 43, each side had to fit: a turned rendition was refused.)
 */
export function largerThanSource(resolution: PixelSize, source: PixelSize): boolean {
  return (
    resolution.width * resolution.height > source.width * source.height || Math.max(resolution.width, resolution.height) > Math.max(source.width, source.height)
  );
}
