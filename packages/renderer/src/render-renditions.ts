import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { CropPath } from '@captionfarm/contracts';
import { editGraph, type RenderEdit } from './edit-graph.ts';
import { abortError } from './errors.ts';
import type { BandPainter } from './paint/types.ts';
import { planOutputSize, type Size } from './plan-output-size.ts';
import { probeMedia } from './probe-media.ts';
import {
  encodeRun,
  imageFor,
  painterCaptions,
  type OutputFrame,
  type OverlayImage,
  type PlannedOutput,
  type ReencodeOptions,
  type RenderResult,
} from './render-video.ts';
import { subtitleLanguage } from './subtitle-language.ts';

/** At most this many renditions in one run (MAX_OUTPUTS of @captionfarm/contracts). */
const MAX_RENDITIONS = 4;

/** One output of renderRenditions. */
export interface Rendition {
  output: string;
  format: 'mp4' | 'webm';
  /** As ReencodeOptions.resolution: larger than the source in either dimension fails the whole run ('output-larger-than-source'). */
  resolution?: Size | undefined;
  /**
   * The reframe: this window (source pixels, source seconds) cropped, then scaled to the output
   * size. Absent: cover + centre crop.
   */
  crop?: CropPath | undefined;
  /** Its captions, laid out at its size; null or absent: no burned captions (a subtitle track only). */
  painter?: BandPainter | ((frame: OutputFrame) => BandPainter) | null;
  /** The hook title, as renderVideo's. */
  overlayImage?: ((frame: OutputFrame) => OverlayImage | null) | undefined;
  /**
   * A WebVTT file on the OUTPUT timeline muxed as a subtitle track (mov_text in MP4, WebVTT in
   * WebM); `language` a 2-letter code (written as ISO 639-2) or a 3-letter one.
   */
  subtitles?: { path: string; language?: string | null | undefined } | undefined;
}

/**
 * The run's options, as renderVideo's (ReencodeOptions): `maxPixels` is the budget of renditions
 * without a resolution; `onProgress` the one run's percents, 100 once every output is in place; an
 * NVENC failure redoes the whole run on the CPU; `threads` are shared among the renditions by
 * their pixels; `signal` kills ffmpeg and removes every temp file.
 */
export interface RenderRenditionsOptions
  extends Pick<ReencodeOptions, 'input' | 'source' | 'quality' | 'maxPixels' | 'signal' | 'onProgress' | 'encoder' | 'threads'> {
  /** Applied to every rendition (cut once, before the split); zooms and bleeps in OUTPUT seconds. */
  edit?: RenderEdit | undefined;
  renditions: readonly Rendition[];
}

/**
 * Several renditions of one source in ONE ffmpeg run: the source decoded once, the edit's cut and
 * its audio made once, then `split` into each rendition's chain (crop or cover + centre crop,
 * scale, zoom, hook image, its own caption band on its own pipe, its encoder and muxer). Each
 * output appears at its path only when complete, and none does if the run fails. One result per
 * rendition, in order. Rejects with RenderError (an impossible size fails the run before it
 * starts), or an AbortError once ffmpeg is dead and every temp file is gone.
 */
export async function renderRenditions(opts: RenderRenditionsOptions): Promise<RenderResult[]> {
  const { renditions, signal } = opts;
  if (renditions.length < 1 || renditions.length > MAX_RENDITIONS)
    throw new TypeError(`renderRenditions: 1 to ${MAX_RENDITIONS} renditions, not ${renditions.length}`);
  if (new Set(renditions.map((r) => resolve(r.output))).size !== renditions.length)
    throw new TypeError('renderRenditions: each rendition needs its own output path');
  if (signal?.aborted) throw abortError(signal);
  const source = opts.source ?? (await probeMedia(opts.input, { signal }));
  const sizes = renditions.map((r) => planOutputSize({ source, resolution: r.resolution, maxPixels: opts.maxPixels }));
  const edit = opts.edit ? editGraph(opts.edit, source.durationSeconds) : undefined;
  const durationSeconds = edit?.outputSeconds ?? source.durationSeconds;
  const threads = shareThreads(opts.threads, sizes);
  const outputs = renditions.map((r, i): PlannedOutput => {
    const out = sizes[i]!;
    const frame = { ...out, fps: source.fps };
    const subtitles = r.subtitles ? { path: r.subtitles.path, language: subtitleLanguage(r.subtitles.language, r.format) } : undefined;
    return {
      output: r.output,
      format: r.format,
      quality: opts.quality,
      out,
      threads: threads[i],
      crop: r.crop,
      subtitles,
      captions: r.painter ? painterCaptions(r.painter, frame, durationSeconds) : null,
      image: r.overlayImage ? imageFor(r.overlayImage, frame) : null,
    };
  });
  return encodeRun({
    input: opts.input,
    source,
    edit,
    durationSeconds,
    signal,
    onProgress: opts.onProgress,
    encoder: opts.encoder ?? 'auto',
    plain: false,
    outputs,
  });
}

/**
 * Each rendition's encoder threads: the machine's (`threads`, else its cores) shared in
 * proportion to the rendition's pixels, its share of the encoding work, and at least 2 each.
 * The encoders are fed by one decode, so threads that each would take (x264 takes 1.5x the
 * cores) would only queue for the same cores. But never 1: Debian 12's ffmpeg (5.1) calls its
 * encoders one after another from its one main loop, and x264 on one thread encodes inside that
 * call, so three renditions on 1 thread each took one core (20 s of 1080p to 1080x1920, 1920x1080
 * and 1080x1080, 2 cores: 62.6-69.5 s wall); on 2 each x264 encodes on its own threads and the
 * three overlap (38.5 s, 5-10% more CPU). One rendition keeps renderVideo's rule.
 */
export function shareThreads(threads: number | undefined, sizes: readonly Size[]): (number | undefined)[] {
  if (sizes.length === 1) return [threads];
  const total = threads ?? availableParallelism();
  const pixels = sizes.map((s) => s.width * s.height);
  const sum = pixels.reduce((a, b) => a + b, 0);
  return pixels.map((p) => Math.max(2, Math.round((total * p) / sum)));
}
