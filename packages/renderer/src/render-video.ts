import { randomUUID } from 'node:crypto';
import { rename, rm, statfs } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { bandImages } from './band-images.ts';
import { runFf } from './call-ff.ts';
import { nvencAvailable } from './detect-nvenc.ts';
import type { OutputFormat, Quality, VideoEncoder } from './encoder-args.ts';
import { abortError, RenderError } from './errors.ts';
import { matroskaFramePrefix, matroskaHeader } from './matroska-stream.ts';
import type { BandPainter } from './paint/types.ts';
import { createProgressReporter } from './parse-ffmpeg-progress.ts';
import { planCaptionFrames, type CaptionFrame } from './plan-caption-frames.ts';
import { planOutputSize, type Size } from './plan-output-size.ts';
import { probeMedia, type MediaInfo } from './probe-media.ts';
import { plainReencodeArgs, renderArgs, type RenderArgsInput } from './render-args.ts';

/** What a painter factory is told: the output frame it paints for. */
export interface OutputFrame extends Size {
  /** The source's average frame rate: the grid caption animations should step on. */
  fps: number;
}

export interface ReencodeOptions {
  input: string;
  output: string;
  format: OutputFormat;
  quality: Quality;
  /** Output size; larger than the source in either dimension -> RenderError 'output-larger-than-source'. */
  resolution?: Size | undefined;
  /** Plan frame budget (pixels), used when resolution is omitted: bigger sources are scaled down to fit. */
  maxPixels?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Whole percents 0..100, increasing only; 100 once the output file is in place. */
  onProgress?: ((percent: number) => void) | undefined;
  /** 'auto' (default): NVENC when a GPU works for this ffmpeg (mp4 only), else CPU; NVENC failures retry on CPU. */
  encoder?: 'auto' | 'cpu' | 'nvenc' | undefined;
  /** The source's probe, when the caller already has it (the agent probes at ingest). */
  source?: MediaInfo | undefined;
  /** CPU encoder threads (the agent's hardware plan); default the encoder's own choice. */
  threads?: number | undefined;
}

export interface RenderVideoOptions extends ReencodeOptions {
  /** The painter, or a factory called with the output frame (captions are laid out in output pixels). */
  painter: BandPainter | ((frame: OutputFrame) => BandPainter);
  /**
   * Only the captions on transparent frames, at the output size, frame rate and duration, no
   * audio: `webm` is VP9 with alpha (yuva420p), `mov` ProRes 4444 with alpha. Required for `mov`.
   */
  overlay?: boolean | undefined;
}

export interface RenderResult {
  width: number;
  height: number;
  durationSeconds: number;
  /** The encoder that produced the output. */
  encoder: VideoEncoder;
}

/**
 * Burns captions into a video: the painter draws only the caption band, and only at the times
 * the band changes; ffmpeg overlays that sparse stream onto the decoded video and encodes it.
 * The output appears at `output` only when complete. Rejects with RenderError, or with an
 * AbortError once ffmpeg is dead and temp files are gone when `signal` fires.
 */
export function renderVideo(opts: RenderVideoOptions): Promise<RenderResult> {
  return transcode(opts, (source, out) => {
    let captions: Captions;
    try {
      const painter = typeof opts.painter === 'function' ? opts.painter({ ...out, fps: source.fps }) : opts.painter;
      captions = { painter, frames: planCaptionFrames({ keyAt: (t) => painter.keyAt(t), durationSeconds: source.durationSeconds, fps: source.fps }) };
    } catch (cause) {
      throw new RenderError('render-failed', `The caption painter failed: ${String(cause)}`, { cause });
    }
    checkBand(captions.painter.band, out);
    return captions;
  });
}

/** The same pipeline without captions: what renderVideo costs on top of a plain re-encode (the bench's baseline). */
export function reencodeVideo(opts: ReencodeOptions): Promise<RenderResult> {
  return transcode(opts, () => null);
}

interface Captions {
  painter: BandPainter;
  frames: CaptionFrame[];
}

async function transcode(opts: ReencodeOptions, captionsFor: (source: MediaInfo, out: Size) => Captions | null): Promise<RenderResult> {
  const { signal } = opts;
  if (signal?.aborted) throw abortError(signal);
  const overlay = 'overlay' in opts && opts.overlay === true;
  if (opts.format === 'mov' && !overlay) throw new RenderError('render-failed', 'mov output exists only as a transparent overlay (overlay: true)');
  const source = opts.source ?? (await probeMedia(opts.input, { signal }));
  const out = planOutputSize({ source, resolution: opts.resolution, maxPixels: opts.maxPixels });
  const captions = captionsFor(source, out);

  const report = createProgressReporter(source.durationSeconds, (p) => opts.onProgress?.(p));
  const wanted = opts.encoder ?? 'auto';
  const encoder: VideoEncoder = opts.format === 'mp4' && !overlay && (wanted === 'nvenc' || (wanted === 'auto' && (await nvencAvailable()))) ? 'nvenc' : 'cpu';
  const attempt = (enc: VideoEncoder): Promise<void> =>
    encodeOnce({
      opts,
      captions,
      onStdout: report,
      args: {
        input: opts.input,
        format: opts.format,
        quality: opts.quality,
        encoder: enc,
        source,
        out,
        sourceAudioCodec: source.hasAudio ? source.audioCodec : null,
        threads: opts.threads,
        overlay,
      },
    });
  let used = encoder;
  try {
    await attempt(encoder);
  } catch (err) {
    // A GPU can be present yet refuse a session (consumer cards allow few at once): redo on CPU.
    if (encoder !== 'nvenc' || wanted === 'nvenc' || signal?.aborted || !(err instanceof RenderError)) throw err;
    used = 'cpu';
    await attempt('cpu');
  }
  const result = await probeMedia(opts.output, { signal }).catch(async (cause: unknown) => {
    // ffmpeg can exit 0 after a failed write (ENOSPC while finishing an mp4): the truncated file goes.
    const full = await diskFull(dirname(opts.output));
    await rm(opts.output, { force: true });
    if (signal?.aborted) throw abortError(signal);
    throw new RenderError('render-failed', `ffmpeg finished but its output is not readable${full ? `: ${full}` : ''}`, { cause });
  });
  opts.onProgress?.(100);
  return { width: result.width, height: result.height, durationSeconds: result.durationSeconds, encoder: used };
}

function checkBand(band: BandPainter['band'], out: Size): void {
  const ok =
    [band.x, band.y, band.width, band.height].every((n) => Number.isInteger(n) && n % 2 === 0) &&
    band.width > 0 &&
    band.height > 0 &&
    band.x >= 0 &&
    band.y >= 0 &&
    band.x + band.width <= out.width &&
    band.y + band.height <= out.height;
  if (!ok) {
    throw new RenderError('render-failed', `Caption band ${JSON.stringify(band)} is not an even-aligned rectangle inside the ${out.width}x${out.height} frame`);
  }
}

interface EncodeJob {
  opts: ReencodeOptions;
  /** Everything but the output path, which is a fresh temp name per attempt, and the band. */
  args: Omit<RenderArgsInput, 'band' | 'output'>;
  captions: Captions | null;
  onStdout: (chunk: string) => void;
}

/** One ffmpeg run into a temp file next to the output, renamed into place on success and removed otherwise. */
async function encodeOnce(job: EncodeJob): Promise<void> {
  const { opts, captions } = job;
  // Next to the output, so the final rename never crosses file systems.
  const partial = join(dirname(opts.output), `.${basename(opts.output)}.${randomUUID().slice(0, 8)}.partial`);
  // Our own reason to stop ffmpeg: the painter threw. Without it ffmpeg would see the caption
  // stream end, keep the last caption to the end and report success.
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const args = { ...job.args, output: partial };
  const run = runFf({
    bin: 'ffmpeg',
    args: captions ? renderArgs({ ...args, band: captions.painter.band }) : plainReencodeArgs(args),
    signal,
    inputPipe: captions !== null,
    onStdout: job.onStdout,
    nice: ENCODE_NICE,
  });
  // Pipe errors (ffmpeg died or stopped reading) are ignored here: ffmpeg's exit status tells.
  let painterError: unknown;
  const feeding = !captions
    ? Promise.resolve()
    : feedCaptions(run.input!, captions, signal).catch((err: unknown) => {
        if (err instanceof PainterFailure) {
          painterError = err.cause;
          stop.abort();
        }
      });
  let ok = false;
  try {
    const [result] = await Promise.all([run.done, feeding]);
    if (result.exitCode !== 0) {
      const full = await diskFull(dirname(partial));
      throw new RenderError('render-failed', `ffmpeg failed (${result.exitSignal ?? `exit ${result.exitCode}`})${full ? `: ${full}` : ''}`, {
        stderrTail: result.stderrTail,
      });
    }
    await rename(partial, opts.output);
    ok = true;
  } catch (err) {
    if (opts.signal?.aborted) throw abortError(opts.signal);
    if (painterError !== undefined) throw new RenderError('render-failed', `The caption painter failed: ${String(painterError)}`, { cause: painterError });
    throw err;
  } finally {
    if (!ok) {
      await feeding;
      await rm(partial, { force: true });
    }
  }
}

class PainterFailure extends Error {}

/**
 * The encode's niceness: a CPU left to it and to another job's transcription (two slots, CPU
 * whisper) goes to the transcription first. whisper.cpp's threads meet at a barrier after every
 * operation, so a preempted one stalls its partners, who spin; x264's threads pick up any idle
 * time. Alone on a machine, niceness changes nothing; the painter (this process) keeps ours.
 */
const ENCODE_NICE = 10;

/** Free space under which a failed encode is blamed on the disk (x264 writes in blocks of a few hundred kB at most). */
const FULL_BELOW_BYTES = 1 << 20;

/**
 * "the disk is full (N bytes free in DIR)" when the output's file system has (almost) no room
 * left: ffmpeg exits 1 on ENOSPC like on any other error, and its message is locale-dependent
 * text, so the file system itself is asked (the partial output still holds its space here).
 */
async function diskFull(dir: string): Promise<string | null> {
  const fs = await statfs(dir).catch(() => null);
  if (!fs) return null;
  const free = fs.bavail * fs.bsize;
  return free < FULL_BELOW_BYTES ? `the disk is full (${free} bytes free in ${dir}); free space on the agent and retry` : null;
}

/**
 * Images painted ahead of ffmpeg: each is a band-sized buffer of its own while the pipe carries
 * it, so painting the next images overlaps ffmpeg's encoding, and memory stays bounded.
 */
const PAINT_AHEAD = 3;

/** Paints each changed band image and streams it to ffmpeg, at most PAINT_AHEAD images ahead of it. */
async function feedCaptions(pipe: Writable, { painter, frames }: Captions, signal: AbortSignal): Promise<void> {
  const { width, height } = painter.band;
  const sender = new PooledSender(pipe, signal, width * height * 4);
  await write(pipe, matroskaHeader({ width, height }), signal);
  const images = bandImages(painter, frames);
  for (const frame of frames) {
    let image: Buffer;
    try {
      image = images.next().value!;
    } catch (cause) {
      throw new PainterFailure('painter failed', { cause });
    }
    await sender.send(matroskaFramePrefix(Math.floor(frame.start * 1e6), image.length), image);
  }
  await sender.drained();
  pipe.end();
}

/** Writes frames from a pool of PAINT_AHEAD buffers, each back in the pool once the pipe has taken it. */
class PooledSender {
  private readonly free: Buffer[];
  private inFlight = 0;
  private wake: (() => void) | null = null;
  private failure: unknown = null;

  constructor(
    private readonly pipe: Writable,
    signal: AbortSignal,
    bytes: number,
  ) {
    this.free = Array.from({ length: PAINT_AHEAD }, () => Buffer.allocUnsafe(bytes));
    const stop = (err: unknown): void => {
      this.failure ??= err;
      this.wake?.();
    };
    // A dead ffmpeg never takes the rest: stop waiting on it.
    pipe.once('close', () => stop(new Error('caption pipe closed')));
    pipe.on('error', stop);
    signal.addEventListener('abort', () => stop(abortError(signal)), { once: true });
  }

  /** Copies `image` into a pooled buffer (waiting for one while PAINT_AHEAD images are in the pipe) and queues it. */
  async send(prefix: Buffer, image: Buffer): Promise<void> {
    while (this.free.length === 0) await this.waitForRelease();
    if (this.failure !== null) throw this.failure;
    if (this.pipe.destroyed) throw new Error('caption pipe closed');
    const buf = this.free.pop()!;
    image.copy(buf);
    this.inFlight++;
    this.pipe.write(prefix);
    this.pipe.write(buf, () => {
      this.inFlight--;
      this.free.push(buf);
      this.wake?.();
    });
  }

  /** Resolves once every queued image has been handed to the pipe. */
  async drained(): Promise<void> {
    while (this.inFlight > 0) await this.waitForRelease();
    if (this.failure !== null) throw this.failure;
  }

  private async waitForRelease(): Promise<void> {
    if (this.failure !== null) throw this.failure;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    this.wake = null;
  }
}

async function write(pipe: Writable, chunk: Buffer, signal: AbortSignal): Promise<void> {
  if (pipe.destroyed) throw new Error('caption pipe closed');
  if (pipe.write(chunk)) return;
  // 'close' too: a dead ffmpeg never drains.
  await new Promise<void>((resolve, reject) => {
    const settle = (err?: unknown): void => {
      pipe.off('drain', onDrain).off('close', onDrain).off('error', settle);
      signal.removeEventListener('abort', onAbort);
      if (err === undefined) resolve();
      else reject(err);
    };
    const onDrain = (): void => settle();
    const onAbort = (): void => settle(abortError(signal));
    pipe.on('drain', onDrain).on('close', onDrain).on('error', settle);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
