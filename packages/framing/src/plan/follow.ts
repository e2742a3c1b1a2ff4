/** The frame rate the crop's motion is simulated and bounded at. */
export const FOLLOW_FPS = 30;

/** One axis of the crop window within one shot: where the subject wants the window's centre, and how it may move. */
export interface AxisInput {
  /** Sample times (source seconds, ascending, inside the shot) and the window centre each one asks for. */
  times: readonly number[];
  wanted: readonly number[];
  /** The shot (source seconds). */
  start: number;
  end: number;
  /** The range the window's centre may take (the window inside the source). */
  lo: number;
  hi: number;
  /** Half the dead band: the window holds while the wanted centre stays this close to where it holds. */
  band: number;
  /** A chase ends (the window settles) once the subject is this close to the window's centre. */
  settle: number;
  /** Pixels per second, pixels per second squared. */
  maxSpeed: number;
  accel: number;
}

/**
 * The window's centre at each frame of the shot (t = start + k/FOLLOW_FPS, the last at `end`).
 *
 * Holding: the window stays put while the subject stays inside the dead band. Once it leaves, the
 * window chases it (the target is the subject's latest position) until the subject is back within
 * `settle` of the centre, then holds where its braking brings it to rest. The motion is a
 * trapezoid of speed: it accelerates at `accel` up to `maxSpeed` and brakes to stop on the target
 * (eased in and out), so no frame moves more than maxSpeed / FOLLOW_FPS pixels.
 */
export function followAxis(a: AxisInput): number[] {
  const clamp = (v: number) => Math.min(a.hi, Math.max(a.lo, v));
  if (a.hi - a.lo < 0.5) return frameTimes(a.start, a.end).map(() => a.lo);
  const opening = a.wanted.filter((_, i) => a.times[i]! < a.start + 1);
  let x = clamp(median(opening.length > 0 ? opening : a.wanted.slice(0, 1)) ?? (a.lo + a.hi) / 2);
  let v = 0;
  let target = x;
  let chasing = false;
  let next = 0;
  const times = frameTimes(a.start, a.end);
  const out: number[] = [];
  let prevT = a.start;
  for (const t of times) {
    for (; next < a.times.length && a.times[next]! <= t; next++) {
      const wanted = clamp(a.wanted[next]!);
      if (!chasing && Math.abs(wanted - target) > a.band) chasing = true;
      if (chasing && Math.abs(wanted - x) <= a.settle) {
        chasing = false;
        target = clamp(x + (Math.sign(v) * v * v) / (2 * a.accel));
      } else if (chasing) target = wanted;
    }
    const dt = t - prevT;
    prevT = t;
    if (dt > 0) [x, v] = step(x, v, target, dt, a);
    out.push(x);
  }
  return out;
}

function step(x: number, v: number, target: number, dt: number, a: AxisInput): [number, number] {
  const err = target - x;
  if (Math.abs(err) < 0.5 && Math.abs(v) <= a.accel * dt) return [target, 0];
  // The speed from which braking at `accel` stops exactly on the target.
  const stopSpeed = Math.sqrt(2 * a.accel * Math.abs(err));
  const wanted = Math.sign(err) * Math.min(a.maxSpeed, stopSpeed);
  const dv = Math.max(-a.accel * dt, Math.min(a.accel * dt, wanted - v));
  const nv = v + dv;
  const nx = x + nv * dt;
  // Braking is discrete: stop on the target rather than pass it and come back.
  if (Math.sign(target - nx) !== Math.sign(err)) return [target, 0];
  return [Math.min(a.hi, Math.max(a.lo, nx)), nv];
}

/** The frame times of a shot: start, start + 1/FOLLOW_FPS, ..., and `end` itself. */
export function frameTimes(start: number, end: number): number[] {
  const times: number[] = [];
  for (let k = 0; start + k / FOLLOW_FPS < end - 1e-9; k++) times.push(start + k / FOLLOW_FPS);
  times.push(end);
  return times;
}

/** Frames between keyframe candidates: 8 at 30 fps, 3.75 keyframes a second at most. */
const GRID_FRAMES = 8;

/**
 * Few keyframes for a shot's frame-by-frame path: candidates every GRID_FRAMES frames (and the
 * last frame), then only those the path needs to stay within `tolerance` pixels of the linear
 * interpolation (Ramer-Douglas-Peucker). A chord between two points of the path moves at the
 * path's average speed over that span, never faster than its fastest frame.
 */
export function keyframesOf(times: readonly number[], xs: readonly number[], ys: readonly number[], tolerance = 1): number[] {
  const last = times.length - 1;
  // The shot's first and last frames always; between them, a candidate too close to the end
  // would make a short chord where rounding shows.
  const candidates: number[] = [0];
  for (let i = GRID_FRAMES; i < last - GRID_FRAMES / 2; i += GRID_FRAMES) candidates.push(i);
  if (last > 0) candidates.push(last);
  const keep = new Set([candidates[0]!, candidates.at(-1)!]);
  const stack: [number, number][] = [[0, candidates.length - 1]];
  while (stack.length > 0) {
    const [ia, ib] = stack.pop()!;
    const a = candidates[ia]!;
    const b = candidates[ib]!;
    let worst = -1;
    let worstErr = tolerance;
    for (let ic = ia + 1; ic < ib; ic++) {
      const c = candidates[ic]!;
      const f = (times[c]! - times[a]!) / (times[b]! - times[a]!);
      const err = Math.max(Math.abs(xs[a]! + (xs[b]! - xs[a]!) * f - xs[c]!), Math.abs(ys[a]! + (ys[b]! - ys[a]!) * f - ys[c]!));
      if (err > worstErr) {
        worstErr = err;
        worst = ic;
      }
    }
    if (worst >= 0) {
      keep.add(candidates[worst]!);
      stack.push([ia, worst], [worst, ib]);
    }
  }
  return [...keep].sort((p, q) => p - q);
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const s = [...values].sort((p, q) => p - q);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1]! + s[m]!) / 2;
}
