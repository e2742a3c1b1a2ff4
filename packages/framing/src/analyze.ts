/**
 * analyzeFraming: what is in the picture, a few times a second, for the reframe, the caption
 * placement and the poster. One ffmpeg run decodes the source once at low resolution (sample.ts);
 * each sample gets its faces (detect.ts), else its salient region, and its motion (salient.ts);
 * the shot changes come from the same run, found on every frame.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Box } from '@captionfarm/contracts';
import { runProcess, withHeapMalloc } from '@captionfarm/process';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { type DetectFaces, faceDetector } from './detect.ts';
import { lumaOf, meanAbsDiff, salientBox } from './salient.ts';
import type { FrameSample, FramingAnalysis } from './plan/types.ts';
import { frameSplitter, parseShotTimes, sampleArgs, sampleSize } from './sample.ts';

export interface AnalyzeFramingOptions {
  input: string;
  /** The probed source (packages/renderer's probeMedia gives these). */
  source: { width: number; height: number; durationSeconds: number; fps: number };
  /** Kills ffmpeg and rejects with an AbortError. */
  signal?: AbortSignal | undefined;
  /** Samples a second; default 4. */
  sampleFps?: number | undefined;
  /** ffmpeg's decoding threads; default ffmpeg's choice. */
  threads?: number | undefined;
}

const DEFAULT_SAMPLE_FPS = 4;

function abortError(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason instanceof DOMException && reason.name === 'AbortError' ? reason : new DOMException('The framing analysis was aborted', 'AbortError');
}

/** Turns sampled frames into FrameSamples: faces (or the salient region) and motion, boxes scaled to the source. */
function sampler(detect: DetectFaces, size: { width: number; height: number }, source: { width: number; height: number }, sampleFps: number) {
  const pixels = size.width * size.height;
  const sx = source.width / size.width;
  const sy = source.height / size.height;
  let previous: Uint8Array | null = null;
  const samples: FrameSample[] = [];
  const toSource = (b: Box): Box => ({ x: b.x * sx, y: b.y * sy, width: b.width * sx, height: b.height * sy });
  const onFrame = (rgb: Uint8Array): void => {
    const luma = lumaOf(rgb, pixels);
    const motion = previous ? meanAbsDiff(luma, previous) : 0;
    const faces = detect(rgb, size.width, size.height).map((f) => ({ ...toSource(f), score: f.score }));
    const salient = faces.length ? null : salientBox(luma, previous, size.width, size.height);
    samples.push({ t: samples.length / sampleFps, faces, salient: salient && toSource(salient), motion });
    previous = luma;
  };
  return { onFrame, samples };
}

/**
 * Samples the source `sampleFps` times a second and reports the faces (else the salient region)
 * and motion of each sample, and the shot changes found on every frame. The face model is loaded
 * once per process, on the first call. Rejects with an Error carrying ffmpeg's stderr when the
 * source cannot be decoded, and with an AbortError (ffmpeg killed) when `signal` fires.
 */
export async function analyzeFraming(opts: AnalyzeFramingOptions): Promise<FramingAnalysis> {
  const { signal, source } = opts;
  if (signal?.aborted) throw abortError(signal);
  const sampleFps = opts.sampleFps ?? DEFAULT_SAMPLE_FPS;
  if (!(sampleFps > 0)) throw new Error(`framing: sampleFps must be above 0, got ${sampleFps}`);
  const detect = await faceDetector();
  if (signal?.aborted) throw abortError(signal);
  const size = sampleSize(source);
  const work = await mkdtemp(join(tmpdir(), 'captionfarm-framing-'));
  try {
    const shotsFile = join(work, 'shots.txt');
    const { onFrame, samples } = sampler(detect, size, source, sampleFps);
    const run = runProcess(ffmpegPaths().ffmpeg, {
      args: sampleArgs({ input: opts.input, size, sampleFps, shotsFile, threads: opts.threads }),
      signal,
      env: withHeapMalloc(),
      onStdoutBytes: frameSplitter(size.width * size.height * 3, onFrame),
    });
    const result = await run.done.catch((err: unknown) => {
      throw signal?.aborted ? abortError(signal) : err;
    });
    if (result.exitCode !== 0) {
      throw new Error(`framing: ffmpeg exited with code ${result.exitCode ?? result.exitSignal} on ${opts.input}: ${result.stderrTail.trim() || 'no output'}`);
    }
    const shotsText = await readFile(shotsFile, 'utf8').catch(() => '');
    return {
      width: source.width,
      height: source.height,
      durationSeconds: source.durationSeconds,
      sampleFps,
      samples,
      shots: parseShotTimes(shotsText, source.fps),
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
