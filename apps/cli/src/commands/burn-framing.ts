import path from 'node:path';
import type { Command } from 'commander';
import type { CreateJobRequest } from '@captionfarm/sdk';
import { CreateJobRequestSchema, issuesToDetails, PLACEMENTS, REFRAME_MODES, SAFE_AREAS, SUBTITLE_MODES, type OutputRequest } from '@captionfarm/contracts';
import { UsageError } from '../output.ts';

// burn's framing options (issue 43): --reframe, --safe-area, --placement, --outputs, --poster,
// --poster-at, --subtitles, turned into the request fields and the files the renditions are saved to.

/** The framing options' definitions (part of `captionfarm burn --help`). */
export function defineFraming(cmd: Command): Command {
  return cmd
    .option('--reframe <mode>', 'fill another aspect ratio: center (centre-crop, the default) or subject (the crop follows the speaker shot by shot)')
    .option('--safe-area <app>', "none, tiktok, reels or shorts: the captions (and --hook) keep out of that app's buttons and bars")
    .option('--placement <mode>', 'fixed (the template position) or auto: a caption page that would cover a face moves above or below it')
    .option(
      '--outputs <list>',
      'up to 4 renditions from one job, e.g. 1080x1920,1920x1080; each WxH may add :mp4 or :webm and :subject or :center ' +
        '(1080x1920:webm:subject). The first is saved as -o, the others beside it as NAME.WxH.FORMAT',
    )
    .option('--poster', 'also save a JPEG frame with its caption (chosen by faces and stillness) as NAME.poster.jpg')
    .option('--poster-at <seconds>', 'the poster at this time of the output instead')
    .option('--subtitles <mode>', 'burn (the default), track (a subtitle track instead: mov_text in MP4, WebVTT in WebM) or both');
}

/** What commander parsed of the framing options. */
export interface FramingOptions {
  reframe?: string;
  safeArea?: string;
  placement?: string;
  outputs?: string;
  poster?: boolean;
  posterAt?: string;
  subtitles?: string;
}

type FramingFields = Pick<CreateJobRequest, 'reframe' | 'safeArea' | 'placement' | 'outputs' | 'poster' | 'subtitles'>;
const FRAMING_KEYS = ['reframe', 'safeArea', 'placement', 'outputs', 'poster', 'subtitles'] as const;

const oneOf = <T extends string>(flag: string, value: string, allowed: readonly T[]): T => {
  if (!(allowed as readonly string[]).includes(value))
    throw new UsageError(`${flag} must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}, not "${value}"`);
  return value as T;
};

/** "1080x1920:webm:subject,1920x1080" -> [{ resolution, format, reframe }, { resolution }]. */
function parseOutputs(value: string): OutputRequest[] {
  return value.split(',').map((part) => {
    const [size, ...tags] = part.trim().split(':');
    const m = /^(\d{1,5})x(\d{1,5})$/i.exec(size ?? '');
    if (!m)
      throw new UsageError(
        `--outputs takes WxH sizes separated by commas, each optionally :mp4|:webm and :subject|:center, e.g. 1080x1920:webm:subject; "${part}" is not one`,
      );
    const out: OutputRequest = { resolution: { width: Number(m[1]), height: Number(m[2]) } };
    for (const tag of tags) {
      const t = tag.toLowerCase();
      if ((t === 'mp4' || t === 'webm') && out.format === undefined) out.format = t;
      else if ((t === 'subject' || t === 'center') && out.reframe === undefined) out.reframe = t;
      else throw new UsageError(`--outputs: "${tag}" in "${part}" is not mp4, webm, subject or center (at most one format and one reframe each)`);
    }
    return out;
  });
}

/**
 * The framing flags as request fields (only those given), checked as the service checks them with
 * the whole request (`others`: the fields the other flags set), each problem printed with the path
 * and message the API's error body would give.
 */
export function framingRequest(values: FramingOptions, others: Omit<CreateJobRequest, 'uploadId' | 'videoUrl'>): FramingFields {
  const out: FramingFields = {};
  if (values.reframe !== undefined) out.reframe = oneOf('--reframe', values.reframe, REFRAME_MODES);
  if (values.safeArea !== undefined) out.safeArea = oneOf('--safe-area', values.safeArea, SAFE_AREAS);
  if (values.placement !== undefined) out.placement = oneOf('--placement', values.placement, PLACEMENTS);
  if (values.subtitles !== undefined) out.subtitles = oneOf('--subtitles', values.subtitles, SUBTITLE_MODES);
  if (values.outputs !== undefined) out.outputs = parseOutputs(values.outputs);
  if (values.posterAt !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(values.posterAt.trim())) throw new UsageError(`--poster-at must be a number of seconds, not "${values.posterAt}"`);
    out.poster = { at: Number(values.posterAt) };
  } else if (values.poster) {
    out.poster = true;
  }
  if (Object.keys(out).length === 0) return out;
  // The service's own schema on the whole request (a placeholder source): the refusals that need
  // several fields (reframe on an overlay, outputs with --resolution) are caught before any upload.
  const parsed = CreateJobRequestSchema.safeParse({ ...others, ...out, videoUrl: 'https://example.com/source.mp4' });
  if (!parsed.success) {
    const details = issuesToDetails(parsed.error.issues).filter(
      (d) => (FRAMING_KEYS as readonly string[]).includes(d.path.split('.')[0]!) || d.path === 'resolution',
    );
    if (details.length > 0)
      throw new UsageError(`the framing options are refused as the API would refuse them:${details.map((d) => `\n  ${d.path}: ${d.message}`).join('')}`);
  }
  return out;
}

/** Where burn saves each rendition and the poster. */
export interface FramingFiles {
  /** One path per rendition, in the job's order; the first is -o. */
  renditions: string[];
  poster?: string;
}

/**
 * The files of a burn with --outputs or a poster: the first rendition keeps -o, the others go beside
 * it as NAME.WxH.FORMAT (NAME: -o without its extension; `.subject` added where two differ only in
 * reframe; `source` for a rendition at the source's size), the poster as NAME.poster.jpg.
 */
export function framingFiles(output: string, request: Pick<CreateJobRequest, 'outputs' | 'poster' | 'format' | 'reframe'>): FramingFiles | undefined {
  if (!request.outputs && (request.poster ?? false) === false) return undefined;
  const base = output.slice(0, output.length - path.extname(output).length);
  const outputs = request.outputs ?? [{}];
  const key = (o: OutputRequest) => `${o.resolution ? `${o.resolution.width}x${o.resolution.height}` : 'source'}.${o.format ?? request.format ?? 'mp4'}`;
  const renditions = outputs.map((o, i) => {
    if (i === 0) return output;
    const twin = outputs.some((other) => other !== o && key(other) === key(o));
    const reframe = o.reframe ?? request.reframe ?? 'center';
    const [size, format] = key(o).split('.');
    return `${base}.${size}${twin ? `.${reframe}` : ''}.${format}`;
  });
  const files: FramingFiles = { renditions };
  if ((request.poster ?? false) !== false) files.poster = `${base}.poster.jpg`;
  return files;
}
