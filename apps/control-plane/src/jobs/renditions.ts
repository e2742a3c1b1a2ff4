import type { Format, LeasedJob, ReframeMode } from '@captionfarm/contracts';
import type { Job } from '@captionfarm/db';

/**
 * Issue 43: a job's renditions and poster as its columns keep them (migration 0021), and the keys
 * of their objects in the store. Rendition 0 is the job's own (format, req_width/req_height,
 * reframe, output_key, download_url); `outputs_json` lists every rendition only when the request
 * had `outputs`. Keys are derived from the job, so every path that deletes a job's output (the
 * expiry sweep, the debris of a job that did not succeed) deletes every rendition and the poster.
 */

/** One rendition as a job keeps it (`jobs.outputs_json`); null sizes: the source's. */
export interface Rendition {
  format: Format;
  reframe: ReframeMode;
  width: number | null;
  height: number | null;
}

/** One rendition as the agent completed it (`jobs.outputs_made_json`). */
export interface MadeRendition {
  index: number;
  width: number;
  height: number;
  bytes: number;
  downloadUrl: string;
}

/** The poster as the agent completed it (`jobs.poster_made_json`). */
export interface MadePoster {
  at: number;
  width: number;
  height: number;
  bytes: number;
  downloadUrl: string;
}

type RenditionColumns = Pick<Job, 'format' | 'req_width' | 'req_height' | 'reframe' | 'outputs_json'>;

/** Every rendition of the job, the first being its own format, requested size and reframe. */
export function renditionsOf(job: RenditionColumns): Rendition[] {
  if (job.outputs_json !== null) return JSON.parse(job.outputs_json) as Rendition[];
  return [{ format: job.format, reframe: job.reframe, width: job.req_width, height: job.req_height }];
}

/** The poster the job asked for: null none; `at` null: the agent chooses the frame. */
export function posterOf(job: Pick<Job, 'poster_json'>): { at: number | null } | null {
  return job.poster_json === null ? null : (JSON.parse(job.poster_json) as { at: number | null });
}

/** A rendition's object key: rendition 0 keeps the key outputs always had, so nothing that reads it changes. */
export function renditionKey(jobId: string, index: number, format: Format): string {
  return index === 0 ? `outputs/${jobId}.${format}` : `outputs/${jobId}.${index}.${format}`;
}

export function posterKey(jobId: string): string {
  return `outputs/${jobId}.poster.jpg`;
}

/** Every object key the job's agent may have written: each rendition's, and the poster's when it asked for one. */
export function outputKeysOf(job: RenditionColumns & Pick<Job, 'id' | 'poster_json'>): string[] {
  const keys = renditionsOf(job).map((r, i) => renditionKey(job.id, i, r.format));
  if (job.poster_json !== null) keys.push(posterKey(job.id));
  return keys;
}

/** The columns outputKeysOf reads, for the sweeps' selects. */
export const OUTPUT_KEY_COLUMNS = ['id', 'format', 'req_width', 'req_height', 'reframe', 'outputs_json', 'poster_json'] as const;

/** What the lease tells the agent to make: every rendition (never empty), the app's zones, placement, poster and subtitles. */
export function framingOfJob(
  job: RenditionColumns & Pick<Job, 'safe_area' | 'placement' | 'poster_json' | 'subtitles'>,
): Pick<LeasedJob, 'outputs' | 'safeArea' | 'placement' | 'poster' | 'subtitles'> {
  return {
    outputs: renditionsOf(job).map((r) => ({
      resolution: r.width !== null && r.height !== null ? { width: r.width, height: r.height } : null,
      format: r.format,
      reframe: r.reframe,
    })),
    safeArea: job.safe_area,
    placement: job.placement,
    poster: posterOf(job),
    subtitles: job.subtitles,
  };
}
