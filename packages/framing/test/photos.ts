import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Box } from '@captionfarm/contracts';
import { captionfarmCacheDir } from '@captionfarm/process/tools';

/**
 * The real photographs the framing tests build their clips from, fetched by
 * `bash scripts/face-photos.sh` out of scikit-image 0.25.2's wheel on PyPI (README "Test
 * photographs": astronaut.png, Eileen Collins, NASA, public domain; coffee.png and chelsea.png,
 * CC0; rocket.jpg, public domain).
 */
export type PhotoName = 'astronaut.png' | 'camera.png' | 'coffee.png' | 'chelsea.png' | 'rocket.jpg';

const FACES = join(captionfarmCacheDir(), 'faces');

/** The path of one photograph; throws with what to run when it is missing (never skips). */
export function photo(name: PhotoName): string {
  const path = join(FACES, name);
  if (!existsSync(path)) throw new Error(`${name} is not in ${FACES}: run "bash scripts/face-photos.sh" (scikit-image's photographs, from PyPI)`);
  return path;
}

/** astronaut.png's side. */
export const ASTRONAUT_SIZE = 512;

/**
 * The face in astronaut.png, measured by eye (not by our detector) on a 3x crop of
 * (140, 20)-(320, 220) with a 10 px grid: the cheeks at x 180 and 270, the forehead under the
 * fringe at y 78, the chin at y 170. (The detector's own box on the still is (174, 76, 104, 104):
 * IoU 0.77 with this one.)
 */
export const ASTRONAUT_FACE: Readonly<Box> = { x: 180, y: 78, width: 90, height: 92 };

export function iou(a: Box, b: Box): number {
  const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const inter = ix * iy;
  return inter / (a.width * a.height + b.width * b.height - inter);
}
