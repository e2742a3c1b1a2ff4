import type { Rect } from '@captionfarm/captions';
import type { CropPath } from '@captionfarm/contracts';
import { cropFilters } from './crop-path.ts';
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
   * Where the caller wrote the graph's text (runGraph): ffmpeg reads the graph from that file
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

/** A subtitle track muxed into an output: a WebVTT file on the output timeline, its language as ISO 639-2 (or null). */
interface SubtitleTrack {
  path: string;
  language: string | null;
}

/** One output of a run: its file, encoder, size, and what goes over its picture. */
export interface OutputArgs {
  output: string;
  format: OutputFormat;
  quality: Quality;
  encoder: VideoEncoder;
  out: Size;
  /** This output's encoder threads; default the encoder's own choice. */
  threads?: number | undefined;
  /** Where its caption band goes (its own Matroska stream on the next pipe from fd 3); null: no band. */
  band: Rect | null;
  overlay?: boolean | undefined;
  image?: ImageOverlay | undefined;
  /** The reframe window (source pixels and seconds); absent: cover + centre crop. */
  crop?: CropPath | undefined;
  subtitles?: SubtitleTrack | undefined;
}

/** One ffmpeg run: the source decoded once, the edit's cut and audio made once, then each output's chain. */
export interface RunArgsInput {
  input: string;
  /** Decoded source size (rotation applied). */
  source: Size;
  sourceAudioCodec: string | null;
  edit?: EditGraph | undefined;
  /** As RenderArgsInput's: the graph read from this file. */
  graphScript?: string | undefined;
  outputs: OutputArgs[];
}

/** The one-output run of a RenderArgsInput. */
function single(opts: RenderArgsInput): RunArgsInput {
  const { input, source, sourceAudioCodec, edit, graphScript, ...output } = opts;
  return { input, source, sourceAudioCodec, edit, graphScript, outputs: [output] };
}

/** Arguments every ffmpeg run starts with: errors only on stderr, machine progress on stdout. */
function commonArgs(): string[] {
  return ['-hide_banner', '-nostdin', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1', '-stats_period', '0.5'];
}

/** Output side shared by the render, the overlay and the plain re-encode (a render's overlay has no audio). */
function outputArgs(o: Omit<OutputArgs, 'band'>, run: Pick<RunArgsInput, 'sourceAudioCodec' | 'edit'>, subtitles: number | null): string[] {
  const audio = !o.overlay;
  return [
    ...videoEncoderArgs(o),
    ...(audio ? audioEncoderArgs({ format: o.format, sourceAudioCodec: run.sourceAudioCodec, filtered: run.edit !== undefined }) : []),
    ...(subtitles === null ? [] : subtitleArgs(o.format, o.subtitles!.language)),
    // Keep the source's timestamps (variable frame rate stays variable); drop only exact duplicates.
    '-fps_mode',
    'vfr',
    ...muxerArgs(o.format),
    '-y',
    toFileUrl(o.output),
  ];
}

/** The subtitle track's codec: mov_text is MP4's text track, WebM carries WebVTT itself. */
function subtitleArgs(format: OutputFormat, language: string | null): string[] {
  return ['-c:s', format === 'mp4' ? 'mov_text' : 'webvtt', ...(language ? ['-metadata:s:s:0', `language=${language}`] : [])];
}

/** Where each output's extra inputs are: its caption stream (and pipe fd), its image, its subtitle file. */
interface OutputInputs {
  band: number | null;
  pipe: number | null;
  image: number | null;
  subtitles: number | null;
}

/** Input 0 is the source; then, output by output, its band pipe, its image, its subtitles. */
function inputLayout(outputs: readonly OutputArgs[]): OutputInputs[] {
  let next = 1;
  let pipe = 3;
  return outputs.map((o) => ({
    band: o.band ? next++ : null,
    pipe: o.band ? pipe++ : null,
    image: o.image ? next++ : null,
    subtitles: o.subtitles ? next++ : null,
  }));
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
  return runArgs(single(opts));
}

/**
 * Every output of one run: after the source, each output's inputs (its caption stream on its own
 * pipe, fd 3, 4, ... in output order; its image; its subtitle file), the one graph, then each
 * output's maps, encoders and file.
 */
export function runArgs(run: RunArgsInput): string[] {
  const layout = inputLayout(run.outputs);
  const inputs: string[] = [];
  for (const [i, o] of run.outputs.entries()) {
    const at = layout[i]!;
    // Raw pixels need no probing: don't wait for 5 MB (2-3 frames) of the stream before starting.
    if (at.pipe !== null) inputs.push('-probesize', '32', '-analyzeduration', '0', '-f', 'matroska', '-i', `pipe:${at.pipe}`);
    // The image as a stream of frames up to `until`, each read from the one file.
    const image = o.image;
    if (image)
      inputs.push('-f', 'image2', '-pattern_type', 'none', '-loop', '1', '-framerate', sec(image.fps), '-t', sec(image.until), '-i', toFileUrl(image.path));
    if (o.subtitles) inputs.push('-f', 'webvtt', '-i', toFileUrl(o.subtitles.path));
  }
  const many = run.outputs.length > 1;
  const outputs = run.outputs.flatMap((o, i) => {
    const sfx = many ? String(i) : '';
    const audio = o.overlay ? ['-an'] : run.edit && run.sourceAudioCodec !== null ? ['-map', `[a${sfx}]`] : ['-map', '0:a:0?'];
    const subtitles = layout[i]!.subtitles;
    return ['-map', `[v${sfx}]`, ...audio, ...(subtitles === null ? [] : ['-map', `${subtitles}:0`]), ...outputArgs(o, run, subtitles)];
  });
  return [
    ...commonArgs(),
    '-i',
    toFileUrl(run.input),
    ...inputs,
    ...(run.graphScript ? ['-filter_complex_script', toFileUrl(run.graphScript)] : ['-filter_complex', runGraph(run)]),
    ...outputs,
  ];
}

/**
 * The render's filter graph: the source cut (edit), scaled (or cropped to its reframe window) to
 * the output size, zoomed (edit), the image laid over it (never zoomed), then the caption band
 * over everything; with an edit and audio, the audio cut, faded at the joins and bleeped. One output: `[0:v:0]` cut, sized, zoomed `[base]`, image `[imaged]`, band
 * `[v]`, audio `[a]`. Several: the cut once, then `split` into each output's chain, labels
 * suffixed with its index (`[v0]`, `[v1]`, ...), and the edited audio made once and `asplit`.
 */
export function runGraph(run: RunArgsInput): string {
  const { edit, outputs } = run;
  const layout = inputLayout(outputs);
  const many = outputs.length > 1;
  const cut = edit ? cutVideoFilters(edit.keep) : [];
  const chains: string[] = [];
  if (many) chains.push(`[0:v:0]${[...cut, `split=${outputs.length}`].join(',')}${outputs.map((_o, i) => `[c${i}]`).join('')}`);
  for (const [i, o] of outputs.entries()) {
    const sfx = many ? String(i) : '';
    const picture = o.crop ? cropFilters(o.crop, run.source, o.out, edit?.keep) : sizeFilters(run.source, o.out);
    const base = [...(many ? [] : cut), ...picture, ...(edit ? zoomFilters(edit.zooms, o.out) : [])];
    const blend = blendOf(o);
    if (o.overlay) base.push(`format=${blend.replace('yuv', 'yuva')}p`, 'lutyuv=y=16:u=128:v=128:a=0');
    const at = layout[i]!;
    let last = at.image === null && at.band === null ? `v${sfx}` : `base${sfx}`;
    chains.push(`${many ? `[c${i}]` : '[0:v:0]'}${base.length ? base.join(',') : 'null'}[${last}]`);
    const { image } = o;
    if (image && at.image !== null) {
      const fade = Math.min(IMAGE_FADE_SECONDS, image.until);
      const imaged = at.band === null ? `v${sfx}` : `imaged${sfx}`;
      chains.push(
        `[${at.image}:v]format=${blend.replace('yuv', 'yuva')}p,fade=t=out:st=${sec(image.until - fade)}:d=${sec(fade)}:alpha=1[image${sfx}]`,
        // pass: once the image's frames end at `until`, the video goes on without it.
        `[${last}][image${sfx}]overlay=x=${Math.round(image.x)}:y=${Math.round(image.y)}:format=${blend}:eof_action=pass[${imaged}]`,
      );
      last = imaged;
    }
    // A yuva420p band (bandPixelFormat) goes to the 4:2:0 blend as it is; ffmpeg converts an RGBA one itself.
    if (o.band && at.band !== null) chains.push(`[${last}][${at.band}:v]overlay=x=${o.band.x}:y=${o.band.y}:format=${blend}:eof_action=repeat[v${sfx}]`);
  }
  const audible = outputs.flatMap((o, i) => (o.overlay ? [] : [many ? `[a${i}]` : '[a]']));
  if (edit && run.sourceAudioCodec !== null && audible.length > 0) {
    if (audible.length === 1) chains.push(editAudioGraph(edit, '[0:a:0]', audible[0]!));
    else chains.push(editAudioGraph(edit, '[0:a:0]', '[edited]'), `[edited]asplit=${audible.length}${audible.join('')}`);
  }
  return chains.join(';');
}

/** The overlay's blend: 4:4:4 for ProRes 4444's transparent overlay, else 4:2:0. */
function blendOf(opts: Pick<OutputArgs, 'overlay' | 'format'>): 'yuv420' | 'yuv444' {
  return opts.overlay && opts.format === 'mov' ? 'yuv444' : 'yuv420';
}

/**
 * The pixel format the band is sent in: yuva420p where the blend is 4:2:0, so ffmpeg overlays it
 * without converting it (YuvaBand), and straight RGBA for the 4:4:4 blend, which keeps full chroma.
 */
export function bandPixelFormat(opts: Pick<OutputArgs, 'overlay' | 'format'>): BandPixelFormat {
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
    ...outputArgs(opts, opts, null),
  ];
}
