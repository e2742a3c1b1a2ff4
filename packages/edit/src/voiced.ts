// Voice-energy regions of mono PCM: where the audio is louder than its own noise floor. The planner
// uses them to pad words whose recognized times are off and to find sounds no word covers.

/** Analysis hop: a 20 ms window centred on each 10 ms block. */
const HOP_SECONDS = 0.01;
/** The noise floor is this percentile of the frames' levels (a talking head is quiet at least 10% of the time). */
const FLOOR_PERCENTILE = 0.1;
/** A region starts at floor + 9 dB (and within 40 dB of the loudest frame), and lasts while above floor + 4 dB / on - 8 dB. */
const ON_ABOVE_FLOOR = 9;
const ON_BELOW_PEAK = 40;
const OFF_ABOVE_FLOOR = 4;
const OFF_BELOW_ON = 8;
const MERGE_GAP = 0.1;
const MIN_BLOB = 0.06;

/**
 * Voice-energy regions of mono PCM (e.g. 16 kHz), in seconds, ascending: 20 ms frames every 10 ms,
 * a noise floor from the quietest 10% of frames, hysteresis (a region starts above floor + 9 dB and
 * within 40 dB of the peak, extends back and forward while above the lower threshold), gaps under
 * 100 ms merged, blobs under 60 ms dropped. Audio with less than 12 dB between floor and peak has
 * no regions (nothing stands out).
 */
export function voicedRegions(samples: Float32Array, sampleRate: number): { start: number; end: number }[] {
  const hop = Math.max(1, Math.round(sampleRate * HOP_SECONDS));
  const levels = frameLevels(samples, hop);
  if (levels.length === 0) return [];
  const sorted = Float64Array.from(levels).sort();
  const floor = sorted[Math.floor((sorted.length - 1) * FLOOR_PERCENTILE)]!;
  const peak = sorted[sorted.length - 1]!;
  const on = Math.max(floor + ON_ABOVE_FLOOR, peak - ON_BELOW_PEAK);
  const off = Math.max(floor + OFF_ABOVE_FLOOR, on - OFF_BELOW_ON);
  if (on > peak - 3) return [];
  const seconds = hop / sampleRate;
  const raw: { start: number; end: number }[] = [];
  let i = 0;
  while (i < levels.length) {
    if (levels[i]! < on) {
      i++;
      continue;
    }
    let first = i;
    const previousEnd = raw.length ? Math.round(raw[raw.length - 1]!.end / seconds) : 0;
    while (first > previousEnd && levels[first - 1]! >= off) first--;
    let last = i;
    while (last + 1 < levels.length && levels[last + 1]! >= off) last++;
    raw.push({ start: first * seconds, end: (last + 1) * seconds });
    i = last + 1;
  }
  const merged: { start: number; end: number }[] = [];
  for (const r of raw) {
    const prev = merged[merged.length - 1];
    if (prev && r.start - prev.end < MERGE_GAP) prev.end = r.end;
    else merged.push({ ...r });
  }
  const duration = samples.length / sampleRate;
  return merged.filter((r) => r.end - r.start >= MIN_BLOB).map((r) => ({ start: round(r.start), end: round(Math.min(r.end, duration)) }));
}

/** The level in dB (full scale 0) of a 20 ms window centred on each hop-long block. */
function frameLevels(samples: Float32Array, hop: number): Float64Array {
  const blocks = Math.floor(samples.length / hop);
  const energy = new Float64Array(blocks);
  for (let b = 0; b < blocks; b++) {
    let sum = 0;
    for (let j = b * hop, end = j + hop; j < end; j++) sum += samples[j]! * samples[j]!;
    energy[b] = sum;
  }
  const levels = new Float64Array(blocks);
  for (let b = 0; b < blocks; b++) {
    const sum = energy[b]! + ((energy[b - 1] ?? energy[b]!) + (energy[b + 1] ?? energy[b]!)) / 2;
    levels[b] = 10 * Math.log10(sum / (2 * hop) + 1e-12);
  }
  return levels;
}

const round = (t: number) => Math.round(t * 1000) / 1000;
