import type { Rect } from '@captionfarm/captions';
import { cutVideoFilters, editAudioGraph, sec, zoomFilters, type EditGraph } from './edit-graph.ts';
import { audioEncoderArgs, muxerArgs, videoEncoderArgs, type OutputFormat, type Quality, type VideoEncoder } from './encoder-args.ts';
import { sizeFilters, type Size } from './plan-output-size.ts';
import { toFileUrl } from './probe-media.ts';
import type { BandPixelFormat } from './matroska-stream.ts';

export interface RenderArgsInput {
  input: string;
  output: string;
  format: OutputFormat;
  quality: Quality;
  encoder: VideoEncoder;
  /** Decoded source size (rotation applied) and output size. */
  source: Size;
  out: Size;
  sourceAudioCodec: string | null;
  /** Encoder threads (libx264 / libvpx); default the encoder's own choice. */
  threads?: number | undefined;
  /** Where the caption band goes in the output frame. */
  band: Rect;
  /** Only the captions, on transparent frames (webm: VP9 + alpha, mov: ProRes 4444), no audio. */
  overlay?: boolean | undefined;
  /** Issue 42: the cuts, zooms and bleeps (edit-graph.ts); the audio is then encoded, never copied. */
  edit?: EditGraph | undefined;
  /** A still image over the output's first seconds (the hook title): a PNG file, where it goes, until when, at what frame rate. */
  image?: ImageOverlay | undefined;
  /**
   * Where the caller wrote renderGraph's text: ffmpeg reads the graph from that file
   * (`-filter_complex_script`), for graphs too long for one argument (Linux takes 128 KiB; an
   * edit of 2,000 ranges is about 300 kB).
   */
  graphScript?: string | undefined;
}

interface ImageOverlay {
  path: string;
  x: number;
  y: number;
  /** Seconds on the output timeline; the image fades out over the last IMAGE_FADE_SECONDS before. */
  until: number;
  /** The rate its frames are made at (the output's), so the fade steps with the video. */
  fps: number;
}

/** The hook title's fade out, ending at its `until`. */
const IMAGE_FADE_SECONDS = 0.2;

/** Arguments every ffmpeg run starts with: errors only on stderr, machine progress on stdout. */
function commonArgs(): string[] {
  return ['-hide_banner', '-nostdin', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1', '-stats_period', '0.5'];
}

/** Output side shared by the render, the overlay and the plain re-encode (a render's overlay has no audio). */
function outputArgs(opts: Omit<RenderArgsInput, 'band'>, o: { audio: boolean }): string[] {
  return [
    ...videoEncoderArgs(opts),
    ...(o.audio ? audioEncoderArgs({ format: opts.format, sourceAudioCodec: opts.sourceAudioCodec, filtered: opts.edit !== undefined }) : []),
    // Keep the source's timestamps (variable frame rate stays variable); drop only exact duplicates.
    '-fps_mode',
    'vfr',
    ...muxerArgs(opts.format),
    '-y',
    toFileUrl(opts.output),
  ];
}

/**
 * The render: input 0 is the source, input 1 the caption band stream on fd 3 (Matroska,
 * uncompressed in bandPixelFormat's format, one frame per change). The band is overlaid with
 * straight alpha: ffmpeg 5.1's premultiplied overlay drops luma by 16 x alpha on limited-range video (opaque white came out Y=219, not 235;
 * measured with signalstats), and straight alpha has the SIMD blend path.
 *
 * With `overlay`, the transparent overlay: the source's frames (so size, frame rate, timestamps
 * and duration are the source's, after the same scaling as a burned render) are made fully
 * transparent and the caption band is overlaid on them. Onto a transparent pixel ffmpeg's overlay
 * keeps the band's own colour and alpha (straight alpha), so compositing the overlay over the
 * source later gives the burned frame.
 */
export function renderArgs(opts: RenderArgsInput): string[] {
  const audio = !opts.overlay && opts.sourceAudioCodec !== null;
  const image = opts.image;
  return [
    ...commonArgs(),
    '-i',
    toFileUrl(opts.input),
    // Raw pixels need no probing: don't wait for 5 MB (2-3 frames) of the stream before starting.
    '-probesize',
    '32',
    '-analyzeduration',
    '0',
    '-f',
    'matroska',
    '-i',
    'pipe:3',
    // The image as a stream of frames up to `until` (input 2), each read from the one file.
    ...(image
      ? ['-f', 'image2', '-pattern_type', 'none', '-loop', '1', '-framerate', sec(image.fps), '-t', sec(image.until), '-i', toFileUrl(image.path)]
      : []),
    ...(opts.graphScript ? ['-filter_complex_script', toFileUrl(opts.graphScript)] : ['-filter_complex', renderGraph(opts)]),
    '-map',
    '[v]',
    ...(opts.overlay ? ['-an'] : opts.edit && audio ? ['-map', '[a]'] : ['-map', '0:a:0?']),
    ...outputArgs(opts, { audio: !opts.overlay }),
  ];
}

/**
 * The render's filter graph: the source cut (edit), scaled to the output size, zoomed (edit),
 * the image laid over it (never zoomed), then the caption band over everything; with an edit and
 * audio, the audio cut, faded at the joins and bleeped, to `[a]`.
 */
export function renderGraph(opts: RenderArgsInput): string {
  const { band, edit, image } = opts;
  const blend = blendOf(opts);
  const base = [...(edit ? cutVideoFilters(edit.keep) : []), ...sizeFilters(opts.source, opts.out), ...(edit ? zoomFilters(edit.zooms, opts.out) : [])];
  if (opts.overlay) base.push(`format=${blend.replace('yuv', 'yuva')}p`, 'lutyuv=y=16:u=128:v=128:a=0');
  const chains = [`[0:v:0]${base.length ? base.join(',') : 'null'}[base]`];
  if (image) {
    const fade = Math.min(IMAGE_FADE_SECONDS, image.until);
    chains.push(
      `[2:v]format=${blend.replace('yuv', 'yuva')}p,fade=t=out:st=${sec(image.until - fade)}:d=${sec(fade)}:alpha=1[image]`,
      // pass: once the image's frames end at `until`, the video goes on without it.
      `[base][image]overlay=x=${Math.round(image.x)}:y=${Math.round(image.y)}:format=${blend}:eof_action=pass[imaged]`,
    );
  }
  // A yuva420p band (bandPixelFormat) goes to the 4:2:0 blend as it is; ffmpeg converts an RGBA one itself.
  chains.push(`[${image ? 'imaged' : 'base'}][1:v]overlay=x=${band.x}:y=${band.y}:format=${blend}:eof_action=repeat[v]`);
  if (edit && !opts.overlay && opts.sourceAudioCodec !== null) chains.push(editAudioGraph(edit, '[0:a:0]', '[a]'));
  return chains.join(';');
}

/** The overlay's blend: 4:4:4 for ProRes 4444's transparent overlay, else 4:2:0. */
function blendOf(opts: Pick<RenderArgsInput, 'overlay' | 'format'>): 'yuv420' | 'yuv444' {
  return opts.overlay && opts.format === 'mov' ? 'yuv444' : 'yuv420';
}

/**
 * The pixel format the band is sent in: yuva420p where the blend is 4:2:0, so ffmpeg overlays it
 * without converting it (YuvaBand), and straight RGBA for the 4:4:4 blend, which keeps full chroma.
 */
export function bandPixelFormat(opts: Pick<RenderArgsInput, 'overlay' | 'format'>): BandPixelFormat {
  return blendOf(opts) === 'yuv420' ? 'yuva420p' : 'rgba';
}

/** The same encode without captions: the bench's baseline. */
export function plainReencodeArgs(opts: Omit<RenderArgsInput, 'band'>): string[] {
  const base = sizeFilters(opts.source, opts.out);
  return [
    ...commonArgs(),
    '-i',
    toFileUrl(opts.input),
    ...(base.length ? ['-vf', base.join(',')] : []),
    '-map',
    '0:v:0',
    '-map',
    '0:a:0?',
    ...outputArgs(opts, { audio: true }),
  ];
}
