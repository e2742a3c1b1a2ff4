/**
 * The cheap picture measures of a sample: its luma, the motion against the previous sample, and
 * the salient region used where no face is found. All on the small sampled frame (256 px long
 * side), a few hundred microseconds each.
 */
import type { Box } from '@captionfarm/contracts';

/** BT.601 luma (0..255) of an RGB24 frame, integer weights (77, 150, 29)/256. */
export function lumaOf(rgb: Uint8Array, pixels: number, out = new Uint8Array(pixels)): Uint8Array {
  for (let i = 0, j = 0; i < pixels; i++, j += 3) out[i] = ((rgb[j] ?? 0) * 77 + (rgb[j + 1] ?? 0) * 150 + (rgb[j + 2] ?? 0) * 29) >> 8;
  return out;
}

/** Mean absolute luma difference, 0..1 (0 for identical frames, 1 for black against white). */
export function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs((a[i] ?? 0) - (b[i] ?? 0));
  return a.length ? sum / a.length / 255 : 0;
}

/** A motion pixel counts this many times an edge pixel: what moves is more likely the subject than what is merely sharp. */
const MOTION_WEIGHT = 4;
/** Luma steps under this are noise (compression, grain), not edges or motion. */
const NOISE = 12;
/** The box is the energy's centre of mass plus and minus this many standard deviations. */
const SPREAD = 1.5;
/** The box's side at least this share of the frame's short side, so a few bright pixels do not make a pin-point subject. */
const MIN_SIDE = 0.25;
/** Below this share of pixels with energy the frame is flat (a black or still title card): no salient region. */
const MIN_ACTIVE = 0.002;

/**
 * The salient region of a frame where no face was found: the energy of each pixel is its
 * gradient magnitude (edges: texture, text, objects stand out from a plain background) plus
 * MOTION_WEIGHT times its change against the previous sample; the box is centred on the energy's
 * centre of mass and spans SPREAD standard deviations each way (at least MIN_SIDE of the short
 * side), in the frame's pixels. Null on a flat frame. Deliberately simple: it only has to keep the
 * crop on where things happen when nobody is in the picture.
 */
export function salientBox(luma: Uint8Array, previous: Uint8Array | null, width: number, height: number): Box | null {
  let total = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let syy = 0;
  let active = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const gx = (luma[i + 1] ?? 0) - (luma[i - 1] ?? 0);
      const gy = (luma[i + width] ?? 0) - (luma[i - width] ?? 0);
      let e = Math.abs(gx) + Math.abs(gy);
      e = e > NOISE ? e : 0;
      if (previous) {
        const m = Math.abs((luma[i] ?? 0) - (previous[i] ?? 0));
        if (m > NOISE) e += MOTION_WEIGHT * m;
      }
      if (e === 0) continue;
      active++;
      total += e;
      sx += e * x;
      sy += e * y;
      sxx += e * x * x;
      syy += e * y * y;
    }
  }
  if (total === 0 || active < MIN_ACTIVE * width * height) return null;
  const cx = sx / total;
  const cy = sy / total;
  const minSide = MIN_SIDE * Math.min(width, height);
  const w = Math.min(width, Math.max(minSide, 2 * SPREAD * Math.sqrt(Math.max(0, sxx / total - cx * cx))));
  const h = Math.min(height, Math.max(minSide, 2 * SPREAD * Math.sqrt(Math.max(0, syy / total - cy * cy))));
  const x = Math.min(width - w, Math.max(0, cx - w / 2));
  const y = Math.min(height - h, Math.max(0, cy - h / 2));
  return { x, y, width: w, height: h };
}
