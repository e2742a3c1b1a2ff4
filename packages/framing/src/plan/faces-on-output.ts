import { cropAt, type Box, type CropPath, type TimedBox } from '@captionfarm/contracts';
import type { FramingAnalysis, Size, ToOutput } from './types.ts';

/**
 * The faces a rendition shows, in its OUTPUT pixels over its OUTPUT time, for captions to keep
 * off: each face of each sample seen through the crop window at the sample's time (the part
 * inside the window, scaled to the output; a face wholly outside is dropped), lasting until the
 * next sample, equal boxes of consecutive samples merged into one. With `toOutput` (an edited
 * job), times are mapped to the output and samples the edit cut are dropped.
 */
export function facesOnOutput(o: { analysis: FramingAnalysis; crop: CropPath; out: Size; toOutput?: ToOutput }): TimedBox[] {
  const { analysis, crop, out } = o;
  const toOutput: ToOutput = o.toOutput ?? ((t) => t);
  const samples = [...analysis.samples].sort((a, b) => a.t - b.t);
  const step = analysis.sampleFps > 0 ? 1 / analysis.sampleFps : 0;
  const sx = out.width / crop.width;
  const sy = out.height / crop.height;
  const result: TimedBox[] = [];
  let open = new Map<string, TimedBox>();
  samples.forEach((sample, i) => {
    const next = samples[i + 1]?.t ?? Math.min(sample.t + step, Math.max(analysis.durationSeconds, sample.t));
    const span = outputSpan(toOutput, sample.t, next);
    // A sample the edit cut leaves the open boxes open: the kept sides of a cut join up.
    if (!span) return;
    const stillOpen = new Map<string, TimedBox>();
    const at = cropAt(crop, sample.t);
    for (const face of sample.faces) {
      const box = onOutput(face, at, crop, { sx, sy }, out);
      if (!box) continue;
      const key = `${box.x},${box.y},${box.width},${box.height}`;
      const prev = open.get(key);
      if (prev && Math.abs(prev.end - span.start) < 1e-5) {
        prev.end = span.end;
        stillOpen.set(key, prev);
      } else if (!stillOpen.has(key)) {
        const timed = { start: span.start, end: span.end, box };
        result.push(timed);
        stillOpen.set(key, timed);
      }
    }
    open = stillOpen;
  });
  return result.sort((a, b) => a.start - b.start || a.box.x - b.box.x || a.box.y - b.box.y);
}

/** A source box seen through the window at `at`, clipped to it, in whole output pixels (rounded outward); null when none of it shows. */
function onOutput(face: Box, at: { x: number; y: number }, crop: CropPath, s: { sx: number; sy: number }, out: Size): Box | null {
  const x0 = Math.max(face.x, at.x);
  const y0 = Math.max(face.y, at.y);
  const x1 = Math.min(face.x + face.width, at.x + crop.width);
  const y1 = Math.min(face.y + face.height, at.y + crop.height);
  if (x1 - x0 <= 0 || y1 - y0 <= 0) return null;
  const ox0 = Math.max(0, Math.floor((x0 - at.x) * s.sx));
  const oy0 = Math.max(0, Math.floor((y0 - at.y) * s.sy));
  const ox1 = Math.min(out.width, Math.ceil((x1 - at.x) * s.sx));
  const oy1 = Math.min(out.height, Math.ceil((y1 - at.y) * s.sy));
  if (ox1 <= ox0 || oy1 <= oy0) return null;
  return { x: ox0, y: oy0, width: ox1 - ox0, height: oy1 - oy0 };
}

/**
 * The output span of the source span [a, b): from a's output time to b's (shorter than b - a
 * when the edit cut something between them); when b itself was cut, to the last kept moment
 * before it (found by bisection). Null when a was cut.
 */
function outputSpan(toOutput: ToOutput, a: number, b: number): { start: number; end: number } | null {
  const start = toOutput(a);
  if (start === null) return null;
  let end = toOutput(b);
  if (end === null || end < start || end - start > b - a + 1e-6) {
    let lo = a;
    let hi = b;
    for (let k = 0; k < 30; k++) {
      const mid = (lo + hi) / 2;
      const m = toOutput(mid);
      if (m !== null && m >= start && m - start <= mid - a + 1e-6) lo = mid;
      else hi = mid;
    }
    end = toOutput(lo) ?? start + (lo - a);
  }
  // Microseconds: the bisection's last bits are noise.
  const us = (v: number) => Math.round(v * 1e6) / 1e6;
  return end > start ? { start: us(start), end: us(end) } : null;
}
