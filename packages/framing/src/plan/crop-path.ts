import type { CropPath } from '@captionfarm/contracts';
import type { Size } from './types.ts';

/**
 * The window a reframe crops from the source: the largest rectangle of the output's aspect that
 * fits in the source (the window today's cover-then-centre crop takes), in even source pixels (4:2:0
 * chroma), its size rounded to the nearest even number (1920x1080 to 1080x1920: 608x1080, the
 * exact 607.5 being off by 0.08%). An odd source loses its last row/column as the renderer does.
 */
export function cropWindow(source: Size, out: Size): Size {
  const sw = evenFloor(source.width);
  const sh = evenFloor(source.height);
  if (sw * out.height > sh * out.width) return { width: evenRound((sh * out.width) / out.height, sw), height: sh };
  return { width: sw, height: evenRound((sw * out.height) / out.width, sh) };
}

/** Today's centre crop as a CropPath: the window in the middle of the source, one keyframe. */
export function centerCrop(source: Size, out: Size): CropPath {
  const win = cropWindow(source, out);
  return {
    ...win,
    keyframes: [{ t: 0, x: Math.floor((evenFloor(source.width) - win.width) / 2), y: Math.floor((evenFloor(source.height) - win.height) / 2) }],
  };
}

function evenFloor(n: number): number {
  return Math.max(2, Math.floor(n / 2) * 2);
}

function evenRound(n: number, max: number): number {
  return Math.min(max, Math.max(2, Math.round(n / 2) * 2));
}
