import type { Rect } from '@captionfarm/captions';
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
}

/** Arguments every ffmpeg run starts with: errors only on stderr, machine progress on stdout. */
function commonArgs(): string[] {
  return ['-hide_banner', '-nostdin', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1', '-stats_period', '0.5'];
}

/** Output side shared by the render, the overlay and the plain re-encode (a render's overlay has no audio). */
function outputArgs(opts: Omit<RenderArgsInput, 'band'>, o: { audio: boolean }): string[] {
  return [
    ...videoEncoderArgs(opts),
    ...(o.audio ? audioEncoderArgs({ format: opts.format, sourceAudioCodec: opts.sourceAudioCodec }) : []),
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
  const { band } = opts;
  const blend = blendOf(opts);
  const base = sizeFilters(opts.source, opts.out);
  if (opts.overlay) base.push(`format=${blend.replace('yuv', 'yuva')}p`, 'lutyuv=y=16:u=128:v=128:a=0');
  // A yuva420p band (bandPixelFormat) goes to the 4:2:0 blend as it is; ffmpeg converts an RGBA one itself.
  const graph = [
    `[0:v:0]${base.length ? base.join(',') : 'null'}[base]`,
    `[base][1:v]overlay=x=${band.x}:y=${band.y}:format=${blend}:eof_action=repeat[v]`,
  ].join(';');
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
    '-filter_complex',
    graph,
    '-map',
    '[v]',
    ...(opts.overlay ? ['-an'] : ['-map', '0:a:0?']),
    ...outputArgs(opts, { audio: !opts.overlay }),
  ];
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
