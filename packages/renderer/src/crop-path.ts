import { cropAt, type CropKeyframe, type CropPath } from '@captionfarm/contracts';
import { byTime, FRAME_EPSILON, sec, type TimeSpan } from './edit-graph.ts';
import { RenderError } from './errors.ts';
import { sizeFilters, type Size } from './plan-output-size.ts';

// Issue 43: a reframed rendition's crop window (contracts' CropPath: a window in SOURCE pixels,
// rotation applied, its corner at keyframes in SOURCE seconds, linear between them, two keyframes
// at one t a cut) as ffmpeg filters. Pure functions of the path; render-args.ts puts them in each
// rendition's chain.

/**
 * The path on the OUTPUT timeline of an edit: each keep-range contributes its start and end
 * positions and the keyframes inside it, moved by what the cuts before it removed; consecutive
 * ranges meet as a cut (two keyframes at the join's output time). Mapping the path, rather than
 * cropping before the cut, lets every rendition share one cut (select + setpts) ahead of the split.
 */
export function cropPathOnOutput(path: CropPath, keep: readonly TimeSpan[]): CropKeyframe[] {
  const out: CropKeyframe[] = [];
  let at = 0;
  for (const r of keep) {
    out.push({ t: at, ...cropAt(path, r.start) });
    for (const k of path.keyframes) if (k.t > r.start && k.t < r.end) out.push({ t: at + (k.t - r.start), x: k.x, y: k.y });
    at += r.end - r.start;
    out.push({ t: at, ...cropAt(path, r.end, true) });
  }
  return out;
}

/**
 * A corner coordinate as an expression of `t`: holds before the first keyframe and after the
 * last, linear in between, a balanced `if(lt(t,..))` tree over the pieces (log2(n) comparisons a
 * frame). A piece starts FRAME_EPSILON early, so a frame exactly at a cut takes the new position.
 */
function coordinate(keyframes: readonly CropKeyframe[], of: 'x' | 'y', max: number): string {
  const clamp = (v: number) => Math.min(Math.max(v, 0), max);
  const pieces: { start: number; expr: string }[] = [{ start: -Infinity, expr: sec(clamp(keyframes[0]![of])) }];
  for (const [i, a] of keyframes.entries()) {
    const b = keyframes[i + 1];
    if (!b) pieces.push({ start: a.t, expr: sec(clamp(a[of])) });
    else if (b.t > a.t) {
      const slope = (clamp(b[of]) - clamp(a[of])) / (b.t - a.t);
      pieces.push({ start: a.t, expr: slope === 0 ? sec(clamp(a[of])) : `${sec(clamp(a[of]))}+${sec(slope)}*(t-${sec(a.t)})` });
    }
  }
  // A piece the same function as the one before it (a hold after a hold) only lengthens it.
  const merged = pieces.filter((p, i) => i === 0 || p.expr !== pieces[i - 1]!.expr);
  return byTime(
    merged.length,
    't',
    (i) => merged[i]!.start - FRAME_EPSILON,
    (i) => merged[i]!.expr,
  );
}

/**
 * The window cropped from the decoded source (after the edit's cut, so on the output timeline
 * when `keep` is given), then scaled to `out` (cover + centre crop when the window's aspect is a
 * little off). `exact=1` keeps odd corners (4:2:0 would round them down to even), and each corner
 * is rounded to the nearest pixel: the window is where the path says within half a source pixel.
 */
export function cropFilters(path: CropPath, source: Size, out: Size, keep?: readonly TimeSpan[]): string[] {
  const { width, height } = path;
  if (!(Number.isInteger(width) && Number.isInteger(height) && width >= 2 && height >= 2 && width <= source.width && height <= source.height)) {
    throw new RenderError('render-failed', `Crop window ${width}x${height} is not a whole-pixel window inside the ${source.width}x${source.height} source`);
  }
  const k = path.keyframes;
  if (k.length === 0 || k.some((f, i) => !(Number.isFinite(f.t) && Number.isFinite(f.x) && Number.isFinite(f.y)) || (i > 0 && f.t < k[i - 1]!.t))) {
    throw new TypeError('renderRenditions: a crop path needs keyframes with finite t, x, y in ascending t');
  }
  const keyframes = keep ? cropPathOnOutput(path, keep) : k;
  const x = coordinate(keyframes, 'x', source.width - width);
  const y = coordinate(keyframes, 'y', source.height - height);
  return [`crop=w=${width}:h=${height}:x='round(${x})':y='round(${y})':exact=1`, ...sizeFilters({ width, height }, out)];
}
