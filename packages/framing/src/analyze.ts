/**
 * analyzeFraming: what is in the picture, a few times a second, for the reframe, the caption
 * placement and the poster. One ffmpeg run decodes the source once at low resolution (sample.ts);
 * each sample gets its faces (detect.ts), else its salient region, and its motion (salient.ts);
 * the shot changes come from the same run, found on every frame.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess, withHeapMalloc } from '@captionfarm/process';
import { ffmpegPaths } from '@captionfarm/process/tools';
import { faceDetector } from './detect.ts';
import type { FramingAnalysis } from './plan/types.ts';
import { createSampler } from './sampler.ts';
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
    const sampler = createSampler(detect, size, source, sampleFps);
    // The frames are handled in the pipe's 'data' events: an error there (the detector's) must not
    // escape as an uncaught exception; it stops ffmpeg and is thrown once ffmpeg is gone.
    let failure: { error: unknown } | null = null;
    const run = runProcess(ffmpegPaths().ffmpeg, {
      args: sampleArgs({ input: opts.input, size, sampleFps, shotsFile, threads: opts.threads }),
      signal,
      env: withHeapMalloc(),
      onStdoutBytes: frameSplitter(size.width * size.height * 3, (frame) => {
        if (failure) return;
        try {
          sampler.onFrame(frame);
        } catch (error) {
          failure = { error };
          run.kill('SIGKILL');
        }
      }),
    });
    const result = await run.done.catch((err: unknown) => {
      throw signal?.aborted ? abortError(signal) : err;
    });
    if (failure) throw (failure as { error: unknown }).error;
    if (result.exitCode !== 0) {
      throw new Error(`framing: ffmpeg exited with code ${result.exitCode ?? result.exitSignal} on ${opts.input}: ${result.stderrTail.trim() || 'no output'}`);
    }
    const shotsText = await readFile(shotsFile, 'utf8').catch(() => '');
    return {
      width: source.width,
      height: source.height,
      durationSeconds: source.durationSeconds,
      sampleFps,
      samples: sampler.finish(),
      shots: parseShotTimes(shotsText, source.fps),
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
