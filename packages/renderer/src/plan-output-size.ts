import { largerThanSource } from '@captionfarm/contracts';
import { RenderError } from './errors.ts';

export interface Size {
  width: number;
  height: number;
}

/**
 * The output frame size. H.264/VP9 in 4:2:0 need even sizes, so every size is rounded down to
 * even (an odd source loses its last row/column rather than being resampled).
 * - `resolution` given: that size, never larger than the (rotated) source (`largerThanSource`),
 *   else 'output-larger-than-source'. A different aspect ratio is filled and centre-cropped (or
 *   cropped along a subject's path, issue 43).
 * - omitted: the source size, scaled down (aspect kept) to fit `maxPixels` when it is over.
 */
export function planOutputSize(opts: { source: Size; resolution?: Size | undefined; maxPixels?: number | undefined }): Size {
  const { source, resolution, maxPixels } = opts;
  if (resolution) {
    if (!(resolution.width >= 2 && resolution.height >= 2)) {
      throw new RenderError('render-failed', `Invalid output resolution ${resolution.width}x${resolution.height}`);
    }
    if (largerThanSource(resolution, source)) {
      throw new RenderError(
        'output-larger-than-source',
        `Requested ${resolution.width}x${resolution.height} is larger than the ` +
          `${source.width}x${source.height} source; request at most the source size or omit resolution`,
      );
    }
    return { width: even(resolution.width), height: even(resolution.height) };
  }
  const pixels = source.width * source.height;
  if (maxPixels === undefined || pixels <= maxPixels) return { width: even(source.width), height: even(source.height) };
  let scale = Math.sqrt(maxPixels / pixels);
  let size = { width: even(source.width * scale), height: even(source.height * scale) };
  // Flooring keeps us under budget almost always; the loop covers float edge cases.
  while (size.width * size.height > maxPixels && size.width > 2 && size.height > 2) {
    scale *= 0.999;
    size = { width: even(source.width * scale), height: even(source.height * scale) };
  }
  return size;
}

function even(n: number): number {
  return Math.max(2, Math.floor(n / 2) * 2);
}

/**
 * ffmpeg filters that turn the decoded (already rotated) source into `out`: scale to cover,
 * then centre-crop. Empty when nothing changes; a crop only for odd sources.
 */
export function sizeFilters(source: Size, out: Size): string[] {
  if (source.width === out.width && source.height === out.height) return [];
  // An odd source kept at its size: drop the extra row/column rather than resample the frame.
  if (out.width === even(source.width) && out.height === even(source.height)) return [`crop=${out.width}:${out.height}:0:0`];
  const scale = Math.max(out.width / source.width, out.height / source.height);
  // Cover: the scaled frame is at least `out` in both dimensions, rounded up to even.
  const w = Math.max(out.width, Math.ceil((source.width * scale) / 2) * 2);
  const h = Math.max(out.height, Math.ceil((source.height * scale) / 2) * 2);
  const filters = w === source.width && h === source.height ? [] : [`scale=${w}:${h}:flags=bicubic`];
  if (w !== out.width || h !== out.height) filters.push(`crop=${out.width}:${out.height}`);
  return filters;
}
