/**
 * The analysis's one ffmpeg run: decode the source once, scale every frame to a small size
 * (fast bilinear), find shot changes on every frame with `scdet` (their times are printed to a
 * file by `metadata=print`), then keep `sampleFps` frames a second and write them as raw RGB24 to
 * stdout. Pure argument builders and parsers here; analyze.ts runs it.
 */

/** The sampled frames' long side in pixels: BlazeFace sees a 256x256 letterbox of the frame, so more would be decoded for nothing. */
const SAMPLE_LONG_SIDE = 256;

/**
 * scdet's threshold (0-100, the frame-to-frame difference score, after its mean over the previous
 * frame's score is taken off). ffmpeg's default is 10; at 10 the cut between two photographs in
 * test/analyze.test.ts scored 30, and a slow pan or a speaker's gestures score under 1.
 */
const SHOT_THRESHOLD = 10;

/** The sampled frames' size for a source: long side SAMPLE_LONG_SIDE, aspect kept, even sides. */
export function sampleSize(source: { width: number; height: number }): { width: number; height: number } {
  const long = Math.max(source.width, source.height);
  const scale = Math.min(1, SAMPLE_LONG_SIDE / long);
  const even = (n: number) => Math.max(2, 2 * Math.round((n * scale) / 2));
  return { width: even(source.width), height: even(source.height) };
}

/** A path written into a filtergraph option; refused if it would need escaping (ours come from mkdtemp in the temp dir). */
function filterPath(path: string): string {
  if (!/^[\w/.+-]+$/.test(path)) throw new Error(`framing: the shot list's path "${path}" has characters a filtergraph would need escaped`);
  return path;
}

export interface SampleArgsOptions {
  input: string;
  size: { width: number; height: number };
  sampleFps: number;
  /** Where `metadata=print` writes the shot changes. */
  shotsFile: string;
  /** ffmpeg's decoder and filter threads; default ffmpeg's choice. */
  threads?: number | undefined;
}

/** ffmpeg's argv for the analysis: raw RGB24 frames of `size` at `sampleFps` on stdout, shot changes in `shotsFile`. */
export function sampleArgs(o: SampleArgsOptions): string[] {
  const threads = o.threads ? ['-threads', String(o.threads)] : [];
  const filters = [
    `scale=${o.size.width}:${o.size.height}:flags=fast_bilinear`,
    `scdet=threshold=${SHOT_THRESHOLD}`,
    `metadata=mode=print:key=lavfi.scd.time:file=${filterPath(o.shotsFile)}`,
    `fps=fps=${o.sampleFps}:round=near`,
    'format=rgb24',
  ].join(',');
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    ...threads,
    // Decoder shortcuts that only cost picture quality nobody sees at 256 px: no deblocking, and
    // H.264's non-spec-compliant fast paths. The analysis's ffmpeg on a 60 s 1080p clip (12 Mbit/s):
    // 12.2 CPU-s without, 10.4 with (README "Cost").
    '-skip_loop_filter',
    'all',
    '-flags2',
    '+fast',
    '-i',
    o.input,
    '-map',
    '0:v:0',
    '-an',
    '-sn',
    '-dn',
    ...(o.threads ? ['-filter_threads', String(o.threads)] : []),
    '-vf',
    filters,
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    'pipe:1',
  ];
}

/**
 * The shot starts in `metadata=print`'s output (lines `lavfi.scd.time=2.0333`), in seconds
 * snapped to the source's frame grid, ascending, without 0.
 */
export function parseShotTimes(text: string, fps: number): number[] {
  const times = new Set<number>();
  for (const m of text.matchAll(/^lavfi\.scd\.time=([\d.]+)\s*$/gm)) {
    const t = Number(m[1]);
    if (!Number.isFinite(t)) continue;
    const snapped = fps > 0 ? Math.round(t * fps) / fps : t;
    if (snapped > 0) times.add(Number(snapped.toFixed(6)));
  }
  return [...times].sort((a, b) => a - b);
}

/** Cuts a byte stream into frames of `frameBytes`, calling `onFrame` with each whole one (a view valid only during the call). */
export function frameSplitter(frameBytes: number, onFrame: (frame: Uint8Array) => void): (chunk: Buffer) => void {
  const frame = new Uint8Array(frameBytes);
  let filled = 0;
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      const n = Math.min(frameBytes - filled, chunk.length - at);
      frame.set(chunk.subarray(at, at + n), filled);
      filled += n;
      at += n;
      if (filled === frameBytes) {
        filled = 0;
        onFrame(frame);
      }
    }
  };
}
