// The new-job form's framing and renditions (issue 43), as the user set them, turned into the
// create request's fields: reframe, safeArea, placement, poster and subtitles only when not their
// defaults; one rendition is the job's own format and resolution, several are `outputs` (the first
// being the job's, the top-level resolution then left out: the API refuses both).
import { MAX_OUTPUTS, type JobOutputs, type OutputRequest, type PosterRequest } from '@captionfarm/contracts';

/** The sizes most platforms take: 9:16, 16:9, 1:1, 4:5. */
export const SIZE_PRESETS = ['1080x1920', '1920x1080', '1080x1080', '1080x1350'] as const;

/** One row of the renditions list, as typed. */
export interface RenditionRow {
  /** '': the source's size; a preset (`WxH`); 'custom': `width` and `height`. */
  size: string;
  width: string;
  height: string;
  format: string;
  /** '': the job's reframe; else center or subject. */
  reframe: string;
}

export interface FramingFields {
  reframe: string;
  safeArea: string;
  placement: string;
  renditions: RenditionRow[];
  /** off, chosen (the agent picks the frame) or at (`posterAt` output seconds). */
  poster: string;
  posterAt: string;
  subtitles: string;
}

export const FRAMING_START: FramingFields = {
  reframe: 'center',
  safeArea: 'none',
  placement: 'fixed',
  renditions: [{ size: '', width: '', height: '', format: 'mp4', reframe: '' }],
  poster: 'off',
  posterAt: '',
  subtitles: 'burn',
};

/** A row's size in pixels (undefined: the source's). Odd or small sizes go as typed: the API says what is wrong. */
function rowResolution(row: RenditionRow): { width: number; height: number } | undefined {
  if (row.size === '') return undefined;
  if (row.size === 'custom') return { width: Number(row.width), height: Number(row.height) };
  const [width, height] = row.size.split('x').map(Number) as [number, number];
  return { width, height };
}

/** The rows with one more: the first preset no row has yet (a repeated rendition is refused), in the job's format. */
export function withRowAdded(rows: RenditionRow[]): RenditionRow[] {
  if (rows.length >= MAX_OUTPUTS) return rows;
  const size = SIZE_PRESETS.find((p) => !rows.some((r) => r.size === p)) ?? 'custom';
  return [...rows, { size, width: '', height: '', format: rows[0]?.format ?? 'mp4', reframe: '' }];
}

function posterRequest(f: FramingFields): PosterRequest | undefined {
  if (f.poster === 'chosen') return true;
  if (f.poster === 'at') return { at: f.posterAt.trim() === '' ? Number.NaN : Number(f.posterAt) };
  return undefined;
}

/**
 * The request's format, resolution and issue 43 fields from the form's framing: only what the user
 * set. An overlay (the captions alone, laid over the untouched source) has one rendition and no
 * reframe, poster or subtitle track: the form disables those, and they are not sent.
 */
export function framingOptions(f: FramingFields, o: { overlay: boolean }): Record<string, unknown> {
  const [first, ...more] = f.renditions as [RenditionRow, ...RenditionRow[]];
  const options: Record<string, unknown> = { format: first.format };
  if (f.safeArea !== 'none') options.safeArea = f.safeArea;
  if (f.placement !== 'fixed') options.placement = f.placement;
  if (o.overlay) {
    const resolution = rowResolution(first);
    return resolution ? { ...options, resolution } : options;
  }
  if (more.length === 0) {
    const resolution = rowResolution(first);
    if (resolution) options.resolution = resolution;
    // The job's reframe is the row's when the row says one.
    const reframe = first.reframe || f.reframe;
    if (reframe !== 'center') options.reframe = reframe;
  } else {
    if (f.reframe !== 'center') options.reframe = f.reframe;
    options.outputs = f.renditions.map((row): OutputRequest => {
      const out: OutputRequest = { format: row.format as 'mp4' | 'webm' };
      const resolution = rowResolution(row);
      if (resolution) out.resolution = resolution;
      if (row.reframe) out.reframe = row.reframe as 'center' | 'subject';
      return out;
    });
  }
  const poster = posterRequest(f);
  if (poster !== undefined) options.poster = poster;
  if (f.subtitles !== 'burn') options.subtitles = f.subtitles;
  return options;
}

/**
 * A job's framing as the form's fields ("Render again": the new job frames the video as this one
 * did), from GET .../outputs: each rendition as a row with its own reframe, the safe area,
 * placement and subtitles. A poster is asked for again as `chosen` (the agent picks the frame
 * again: after other cuts the old time may not show the same moment).
 */
export function framingFieldsOf(o: JobOutputs): FramingFields {
  const renditions = o.outputs.map((out): RenditionRow => {
    const r = out.requestedResolution;
    const preset = r && (SIZE_PRESETS as readonly string[]).includes(`${r.width}x${r.height}`) ? `${r.width}x${r.height}` : null;
    return {
      size: r ? (preset ?? 'custom') : '',
      width: r && !preset ? String(r.width) : '',
      height: r && !preset ? String(r.height) : '',
      format: out.format,
      reframe: out.reframe,
    };
  });
  return {
    ...FRAMING_START,
    renditions,
    safeArea: o.safeArea,
    placement: o.placement,
    subtitles: o.subtitles,
    poster: o.poster ? 'chosen' : 'off',
  };
}

/**
 * Where the API's messages about row `i` are: under outputs.i (its size, format, reframe, or the
 * row as a repeat) when the job has several renditions; at the top-level resolution when it has one.
 */
export function rowErrorPath(rows: number, i: number): string {
  return rows > 1 ? `outputs.${i}` : 'resolution';
}
