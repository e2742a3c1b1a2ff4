import { randomUUID } from 'node:crypto';
import { rename, rm, statfs, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { bandImageBytes, bandImages } from './band-images.ts';
import { runFf } from './call-ff.ts';
import { nvencAvailable } from './detect-nvenc.ts';
import { editGraph, type EditGraph, type RenderEdit } from './edit-graph.ts';
import type { OutputFormat, Quality, VideoEncoder } from './encoder-args.ts';
import { abortError, RenderError } from './errors.ts';
import { MATROSKA_FRAME_PREFIX_MAX, matroskaFramePrefix, matroskaHeader, type BandPixelFormat } from './matroska-stream.ts';
import type { BandPainter, BandRect } from './paint/types.ts';
import { createProgressReporter } from './parse-ffmpeg-progress.ts';
import { captionStep, planCaptionFrames, type CaptionFrame } from './plan-caption-frames.ts';
import { planOutputSize, type Size } from './plan-output-size.ts';
import { probeMedia, type MediaInfo } from './probe-media.ts';
import { bandPixelFormat, plainReencodeArgs, runArgs, runGraph, type OutputArgs, type RunArgsInput } from './render-args.ts';

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
  /** Output size; an upscale (more pixels, or a longer side, than the source: largerThanSource) -> RenderError 'output-larger-than-source'. */
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
  /**
   * The painter, or a factory called with the output frame (captions are laid out in output
   * pixels). Exactly one of `painter` and `captionStream`.
   */
  painter?: BandPainter | ((frame: OutputFrame) => BandPainter) | undefined;
  /**
   * Captions whose words are still being recognized (overlapped stages): the render starts with
   * the band fixed, and each image is painted once its time is final. Called with the output frame.
   */
  captionStream?: ((frame: OutputFrame) => CaptionStream) | undefined;
  /**
   * Only the captions on transparent frames, at the output size, frame rate and duration, no
   * audio: `webm` is VP9 with alpha (yuva420p), `mov` ProRes 4444 with alpha. Required for `mov`.
   */
  overlay?: boolean | undefined;
  /**
   * Issue 42: the output is the concatenation of `keep` (source seconds, ascending, frame-aligned);
   * zooms and bleeps in OUTPUT seconds. The captions (painter) are laid out on the output
   * timeline; progress and `durationSeconds` are the output's. Not with `captionStream` or
   * `overlay` (TypeError).
   */
  edit?: RenderEdit | undefined;
  /**
   * An image over the output from 0 to `until` s (the hook title), painted at the output size by
   * the factory; drawn after the zoom, so never scaled, and under the captions. It fades out over
   * the last 0.2 s before `until`. null: no image.
   */
  overlayImage?: ((frame: OutputFrame) => OverlayImage | null) | undefined;
}

/** A still image laid over the output's first seconds: a PNG (straight alpha) and its top-left corner in output pixels. */
export interface OverlayImage {
  png: Buffer;
  x: number;
  y: number;
  until: number;
}

/**
 * Captions that become final part by part while the video renders: the band first, then
 * painters, each final for the times before its `until`. ffmpeg waits on the caption stream
 * where the words are not final yet, so the encode runs as far as the words allow.
 */
export interface CaptionStream {
  /** Fixed for the whole render; every painter must use it. */
  band: BandRect;
  /**
   * The next painter and the time (seconds) before which its images are final; `until` Infinity
   * for the last. A painter paints what the painters before it painted before their `until`.
   * A rejection stops the render, which then rejects with that same error.
   */
  next(): Promise<{ painter: BandPainter; until: number }>;
}

/** A caption stream's painter disagreed with what an earlier one painted: the images already sent are wrong. */
export class CaptionsChanged extends Error {
  override readonly name = 'CaptionsChanged';
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
  if ((opts.painter === undefined) === (opts.captionStream === undefined)) throw new TypeError('renderVideo: give exactly one of painter and captionStream');
  // The overlapped render streams captions on the source's timeline before the cut is known.
  if (opts.edit && opts.captionStream) throw new TypeError('renderVideo: an edit needs the final words (painter), not a captionStream');
  // An overlay is laid over the untouched source later: nothing of it may be cut (the API refuses it too).
  if (opts.edit && opts.overlay) throw new TypeError('renderVideo: an overlay cannot be edited');
  return transcode(opts, (source, out, durationSeconds) => {
    const frame = { ...out, fps: source.fps };
    if (opts.captionStream) {
      const stream = opts.captionStream(frame);
      checkBand(stream.band, out);
      return { band: stream.band, parts: new Replay(streamedParts(stream, source.durationSeconds, source.fps)) };
    }
    return painterCaptions(opts.painter!, frame, durationSeconds);
  });
}

/** A painter's captions for one output: the painter built for its frame, its images planned over `durationSeconds`. */
export function painterCaptions(painterOrFactory: BandPainter | ((frame: OutputFrame) => BandPainter), frame: OutputFrame, durationSeconds: number): Captions {
  let part: CaptionPart;
  try {
    const painter = typeof painterOrFactory === 'function' ? painterOrFactory(frame) : painterOrFactory;
    part = { painter, frames: planCaptionFrames({ keyAt: (t) => painter.keyAt(t), durationSeconds, fps: frame.fps }) };
  } catch (cause) {
    throw new RenderError('render-failed', `The caption painter failed: ${String(cause)}`, { cause });
  }
  checkBand(part.painter.band, frame);
  return { band: part.painter.band, parts: [part] };
}

/**
 * A caption stream as parts: each painter with the images it adds, planned on the same sample
 * grid as a whole-video plan (planCaptionFrames), so the images and their times are the ones a
 * render with every word known from the start sends. Each part but the last ends with the image
 * on screen repeated at its last final sample: ffmpeg overlays a frame only once it has seen
 * the next caption image, so without it the encode would wait at the part's last change.
 */
async function* streamedParts(stream: CaptionStream, durationSeconds: number, fps: number): AsyncGenerator<CaptionPart, void, void> {
  const step = captionStep(fps);
  // The whole-video plan's last sample is at durationSeconds; every part but the last stops before it.
  const lastInner = Math.ceil(durationSeconds / step - 1e-9) - 1;
  let fromStep = 0;
  let lastKey: string | null = null;
  for (;;) {
    const { painter, until } = await stream.next();
    const b = painter.band;
    if (b.x !== stream.band.x || b.y !== stream.band.y || b.width !== stream.band.width || b.height !== stream.band.height) {
      throw new CaptionsChanged(`A caption stream painter has band ${JSON.stringify(b)}, not the stream's ${JSON.stringify(stream.band)}`);
    }
    const last = until === Infinity;
    // The last sample strictly before `until`: a word starting at `until` may still change.
    const toStep = last ? Infinity : Math.min(Math.ceil(until / step - 1e-9) - 1, lastInner);
    // Nothing new is final: wait for the next painter.
    if (!last && (lastKey === null ? toStep < 0 : toStep <= fromStep)) continue;
    const frames = planCaptionFrames({ keyAt: (t) => painter.keyAt(t), durationSeconds, fps, fromStep, toStep });
    if (lastKey !== null) {
      // The first sample is the last one already sent: the new painter must show the same there.
      if (frames[0]!.key !== lastKey) throw new CaptionsChanged(`The captions at ${(fromStep * step).toFixed(3)} s changed after they were sent`);
      frames.shift();
    }
    if (last) {
      yield { painter, frames };
      return;
    }
    lastKey = frames.at(-1)?.key ?? lastKey!;
    const hold = toStep * step;
    if (hold > (frames.at(-1)?.start ?? fromStep * step)) frames.push({ start: hold, paintAt: hold, key: lastKey });
    fromStep = toStep;
    yield { painter, frames };
  }
}

/** An async iterable that can be gone through again from the start (an NVENC attempt that failed is redone on the CPU). */
class Replay<T> implements AsyncIterable<T> {
  private readonly seen: T[] = [];
  private pending: Promise<IteratorResult<T>> | null = null;

  constructor(private readonly source: AsyncIterator<T>) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, void> {
    for (let i = 0; ; i++) {
      if (i < this.seen.length) {
        yield this.seen[i]!;
        continue;
      }
      this.pending ??= this.source.next().finally(() => (this.pending = null));
      const r = await this.pending;
      if (r.done) return;
      if (this.seen.length === i) this.seen.push(r.value);
      yield this.seen[i]!;
    }
  }
}

/** The same pipeline without captions: what renderVideo costs on top of a plain re-encode (the bench's baseline). */
export function reencodeVideo(opts: ReencodeOptions): Promise<RenderResult> {
  return transcode(opts, () => null);
}

/** One painter and the caption images it paints. */
interface CaptionPart {
  painter: BandPainter;
  frames: CaptionFrame[];
}

export interface Captions {
  band: BandRect;
  parts: Iterable<CaptionPart> | AsyncIterable<CaptionPart>;
}

/**
 * Probes, plans the output and encodes once (again on the CPU where NVENC failed). `captionsFor`
 * gets the output's duration: the source's, or an edit's kept length.
 */
async function transcode(
  opts: ReencodeOptions & Pick<RenderVideoOptions, 'edit' | 'overlayImage'>,
  captionsFor: (source: MediaInfo, out: Size, durationSeconds: number) => Captions | null,
): Promise<RenderResult> {
  const { signal } = opts;
  if (signal?.aborted) throw abortError(signal);
  const overlay = 'overlay' in opts && opts.overlay === true;
  if (opts.format === 'mov' && !overlay) throw new RenderError('render-failed', 'mov output exists only as a transparent overlay (overlay: true)');
  const source = opts.source ?? (await probeMedia(opts.input, { signal }));
  const out = planOutputSize({ source, resolution: opts.resolution, maxPixels: opts.maxPixels });
  const edit = opts.edit ? editGraph(opts.edit, source.durationSeconds) : undefined;
  const durationSeconds = edit?.outputSeconds ?? source.durationSeconds;
  const captions = captionsFor(source, out, durationSeconds);
  const image = opts.overlayImage ? imageFor(opts.overlayImage, { ...out, fps: source.fps }) : null;
  const [result] = await encodeRun({
    input: opts.input,
    source,
    edit,
    durationSeconds,
    signal,
    onProgress: opts.onProgress,
    encoder: opts.encoder ?? 'auto',
    plain: captions === null,
    outputs: [{ output: opts.output, format: opts.format, quality: opts.quality, out, threads: opts.threads, overlay, captions, image }],
  });
  return result!;
}

/** One output of a run as planned: its file, encode, size, and what goes over its picture. */
export interface PlannedOutput extends Omit<OutputArgs, 'encoder' | 'band' | 'image'> {
  /** Its caption band and images; null: none (no pipe). */
  captions: Captions | null;
  /** Written next to its partial output for ffmpeg to read, and removed with it. */
  image: (OverlayImage & { fps: number }) | null;
}

/** One ffmpeg run: the source, its edit, and every output it writes. */
export interface PlannedRun {
  input: string;
  source: MediaInfo;
  edit: EditGraph | undefined;
  /** The outputs' duration (the source's, or the edit's kept length): progress runs over it. */
  durationSeconds: number;
  signal?: AbortSignal | undefined;
  onProgress?: ((percent: number) => void) | undefined;
  encoder: 'auto' | 'cpu' | 'nvenc';
  /** The bench's plain re-encode (one output, no captions, no graph). */
  plain: boolean;
  outputs: PlannedOutput[];
}

/**
 * Runs ffmpeg once for every output (again on the CPU, all of them, where an NVENC attempt
 * failed), then probes each output: every file is in place, or none is.
 */
export async function encodeRun(run: PlannedRun): Promise<RenderResult[]> {
  const { signal } = run;
  const report = createProgressReporter(run.durationSeconds, (p) => run.onProgress?.(p));
  const encoders = await Promise.all(run.outputs.map((o) => pickEncoder(o.format, run.encoder, o.overlay === true)));
  let used = encoders;
  try {
    await encodeOnce(run, encoders, report);
  } catch (err) {
    // A GPU can be present yet refuse a session (consumer cards allow few at once): redo on CPU.
    if (!encoders.includes('nvenc') || run.encoder === 'nvenc' || signal?.aborted || !(err instanceof RenderError)) throw err;
    used = encoders.map(() => 'cpu');
    await encodeOnce(run, used, report);
  }
  const results = await Promise.all(run.outputs.map((o) => probeMedia(o.output, { signal }))).catch(async (cause: unknown) => {
    // ffmpeg can exit 0 after a failed write (ENOSPC while finishing an mp4): the truncated files go.
    const full = await diskFull(dirname(run.outputs[0]!.output));
    await Promise.all(run.outputs.map((o) => rm(o.output, { force: true })));
    if (signal?.aborted) throw abortError(signal);
    throw new RenderError('render-failed', `ffmpeg finished but its output is not readable${full ? `: ${full}` : ''}`, { cause });
  });
  run.onProgress?.(100);
  return results.map((r, i) => ({ width: r.width, height: r.height, durationSeconds: r.durationSeconds, encoder: used[i]! }));
}

/** The overlay image at the output size, or null; a factory that throws fails the render like a painter that does. */
export function imageFor(factory: NonNullable<RenderVideoOptions['overlayImage']>, frame: OutputFrame): (OverlayImage & { fps: number }) | null {
  let image: OverlayImage | null;
  try {
    image = factory(frame);
  } catch (cause) {
    throw new RenderError('render-failed', `The overlay image failed: ${String(cause)}`, { cause });
  }
  if (image === null || !(image.until > 0)) return null;
  // Its frames at the video's rate (a bogus VFR rate capped), so the fade out steps with the frames.
  return { ...image, fps: Math.min(frame.fps > 0 ? frame.fps : 30, 60) };
}

/** The encoder a run starts with: NVENC for a burned mp4 when asked for, or with 'auto' when it works here; else the CPU's. */
export async function pickEncoder(format: OutputFormat, wanted: 'auto' | 'cpu' | 'nvenc', overlay: boolean): Promise<VideoEncoder> {
  return format === 'mp4' && !overlay && (wanted === 'nvenc' || (wanted === 'auto' && (await nvencAvailable()))) ? 'nvenc' : 'cpu';
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

/** One ffmpeg run into temp files next to the outputs, renamed into place on success and removed otherwise. */
async function encodeOnce(run: PlannedRun, encoders: readonly VideoEncoder[], onStdout: (chunk: string) => void): Promise<void> {
  // Next to each output, so the final rename never crosses file systems.
  const partials = run.outputs.map((o) => join(dirname(o.output), `.${basename(o.output)}.${randomUUID().slice(0, 8)}.partial`));
  // Files ffmpeg reads besides the source (the overlay images, a long graph), gone with the run.
  const sideFiles: string[] = [];
  try {
    const ffArgs = await runArgsWithFiles(run, encoders, partials, sideFiles);
    await runEncode(run, partials, ffArgs, onStdout);
  } finally {
    await Promise.all(sideFiles.map((f) => rm(f, { force: true })));
  }
}

/** Past this many characters the graph goes to ffmpeg in a file: Linux caps one argument at 128 KiB. */
const GRAPH_ARG_MAX = 64 * 1024;

/** The run's arguments, with each overlay image (and a graph too long for an argument) written next to the partial outputs. */
async function runArgsWithFiles(run: PlannedRun, encoders: readonly VideoEncoder[], partials: string[], sideFiles: string[]): Promise<string[]> {
  const outputs: OutputArgs[] = [];
  for (const [i, { captions, image, ...o }] of run.outputs.entries()) {
    const output: OutputArgs = { ...o, output: partials[i]!, encoder: encoders[i]!, band: captions?.band ?? null };
    if (image) {
      const { png, fps, ...where } = image;
      const path = `${partials[i]}.image.png`;
      sideFiles.push(path);
      await writeFile(path, png);
      output.image = { path, fps, ...where };
    }
    outputs.push(output);
  }
  const sourceAudioCodec = run.source.hasAudio ? run.source.audioCodec : null;
  if (run.plain) return plainReencodeArgs({ ...outputs[0]!, input: run.input, source: run.source, sourceAudioCodec });
  const input: RunArgsInput = { input: run.input, source: run.source, sourceAudioCodec, edit: run.edit, outputs };
  const graph = runGraph(input);
  if (graph.length > GRAPH_ARG_MAX) {
    input.graphScript = `${partials[0]}.graph`;
    sideFiles.push(input.graphScript);
    await writeFile(input.graphScript, graph);
  }
  return runArgs(input);
}

/** ffmpeg with `ffArgs` writing the partials, each captioned output fed its own caption stream, renamed into place on success. */
async function runEncode(run: PlannedRun, partials: string[], ffArgs: string[], onStdout: (chunk: string) => void): Promise<void> {
  const captioned = run.outputs.filter((o) => o.captions !== null);
  // Our own reason to stop ffmpeg: a painter threw. Without it ffmpeg would see the caption
  // stream end, keep the last caption to the end and report success.
  const stop = new AbortController();
  const signal = run.signal ? AbortSignal.any([run.signal, stop.signal]) : stop.signal;
  const ff = runFf({ bin: 'ffmpeg', args: ffArgs, signal, inputPipes: captioned.length, onStdout, nice: ENCODE_NICE });
  // Pipe errors (ffmpeg died or stopped reading) are ignored here: ffmpeg's exit status tells.
  let painterError: unknown;
  let streamError: unknown;
  const feeding = Promise.all(
    captioned.map((o, k) =>
      feedCaptions(ff.inputs[k]!, o.captions!, bandPixelFormat(o), signal).catch((err: unknown) => {
        if (err instanceof PainterFailure) {
          painterError ??= err.cause;
          stop.abort();
        } else if (err instanceof StreamFailure) {
          streamError ??= err.cause;
          stop.abort();
        }
      }),
    ),
  );
  let ok = false;
  const renamed: string[] = [];
  try {
    const [result] = await Promise.all([ff.done, feeding]);
    if (result.exitCode !== 0) {
      const full = await diskFull(dirname(partials[0]!));
      throw new RenderError('render-failed', `ffmpeg failed (${result.exitSignal ?? `exit ${result.exitCode}`})${full ? `: ${full}` : ''}`, {
        stderrTail: result.stderrTail,
      });
    }
    for (const [i, o] of run.outputs.entries()) {
      await rename(partials[i]!, o.output);
      renamed.push(o.output);
    }
    ok = true;
  } catch (err) {
    if (run.signal?.aborted) throw abortError(run.signal);
    if (streamError !== undefined) throw streamError;
    if (painterError !== undefined) throw new RenderError('render-failed', `The caption painter failed: ${String(painterError)}`, { cause: painterError });
    throw err;
  } finally {
    if (!ok) {
      await feeding;
      // Outputs already renamed into place (a rename that failed part-way) go too: all or none.
      await Promise.all([...partials, ...renamed].map((f) => rm(f, { force: true })));
    }
  }
}

class PainterFailure extends Error {}
/** The caption stream rejected (its words failed, or its captions changed): the render rejects with `cause` itself. */
class StreamFailure extends Error {}

/**
 * The encode's niceness: a CPU left to it and to another job's transcription (two slots, CPU
 * whisper) goes to the transcription first. whisper.cpp's threads meet at a barrier after every
 * operation, so a preempted one stalls its partners, who spin; x264's threads pick up any idle
 * time. Alone on a machine, niceness changes nothing; the painter (this process) keeps ours.
 */
export const ENCODE_NICE = 10;

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
async function feedCaptions(pipe: Writable, { band, parts }: Captions, pixelFormat: BandPixelFormat, signal: AbortSignal): Promise<void> {
  const { width, height } = band;
  const sender = new PooledSender(pipe, signal, bandImageBytes(width, height, pixelFormat));
  await write(pipe, matroskaHeader({ width, height, pixelFormat }), signal);
  const iterator = (Symbol.asyncIterator in parts ? parts[Symbol.asyncIterator]() : parts[Symbol.iterator]()) as
    | AsyncIterator<CaptionPart>
    | Iterator<CaptionPart>;
  // A caption stream can wait for words a long time: an abort, or ffmpeg gone, ends the wait.
  const gone = new Promise<never>((_, reject) => {
    const stop = () => reject(signal.aborted ? abortError(signal) : new Error('caption pipe closed'));
    if (signal.aborted) stop();
    signal.addEventListener('abort', stop, { once: true });
    pipe.once('close', stop);
  });
  gone.catch(() => undefined);
  for (;;) {
    let next: IteratorResult<CaptionPart>;
    try {
      next = await Promise.race([iterator.next(), gone]);
    } catch (cause) {
      if (signal.aborted || pipe.destroyed) throw cause;
      throw new StreamFailure('caption stream failed', { cause });
    }
    if (next.done) break;
    const { painter, frames } = next.value;
    const images = bandImages(painter, frames, pixelFormat);
    for (const frame of frames) {
      let image: Buffer;
      try {
        image = images.next().value!;
      } catch (cause) {
        throw new PainterFailure('painter failed', { cause });
      }
      await sender.send(matroskaFramePrefix(Math.floor(frame.start * 1e6), image.length), image);
    }
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
    this.free = Array.from({ length: PAINT_AHEAD }, () => Buffer.allocUnsafe(MATROSKA_FRAME_PREFIX_MAX + bytes));
    const stop = (err: unknown): void => {
      this.failure ??= err;
      this.wake?.();
    };
    // A dead ffmpeg never takes the rest: stop waiting on it.
    pipe.once('close', () => stop(new Error('caption pipe closed')));
    pipe.on('error', stop);
    signal.addEventListener('abort', () => stop(abortError(signal)), { once: true });
  }

  /**
   * Copies `prefix` and `image` into a pooled buffer (waiting for one while PAINT_AHEAD images are
   * in the pipe) and queues them as one chunk: two writes an image went through the stream's
   * buffering and writev while the previous image was still going out (Node's CPU to send 440
   * images of 334 kB, median of 6 runs each: 0.325 s as two writes, 0.25 s as one).
   */
  async send(prefix: Buffer, image: Buffer): Promise<void> {
    while (this.free.length === 0) await this.waitForRelease();
    if (this.failure !== null) throw this.failure;
    if (this.pipe.destroyed) throw new Error('caption pipe closed');
    const buf = this.free.pop()!;
    prefix.copy(buf);
    image.copy(buf, prefix.length);
    this.inFlight++;
    this.pipe.write(buf.subarray(0, prefix.length + image.length), () => {
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
