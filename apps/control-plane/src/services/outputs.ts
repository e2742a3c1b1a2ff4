import type { JobOutputs } from '@captionfarm/contracts';
import type { Job } from '@captionfarm/db';
import { posterOf, renditionsOf, type MadePoster, type MadeRendition } from '../jobs/renditions.ts';
import type { Caller, JobsService } from '../jobs/service.ts';

/** The job's columns the outputs are read from. */
type OutputsRow = Pick<
  Job,
  | 'status'
  | 'format'
  | 'req_width'
  | 'req_height'
  | 'reframe'
  | 'outputs_json'
  | 'safe_area'
  | 'placement'
  | 'subtitles'
  | 'poster_json'
  | 'output_key'
  | 'output_expires_at'
  | 'out_width'
  | 'out_height'
  | 'output_bytes'
  | 'download_url'
  | 'outputs_made_json'
  | 'poster_made_json'
>;

/** What the agent made: from outputs_made_json, or (a job that succeeded before issue 43) its one output's columns. */
function madeOf(row: OutputsRow): MadeRendition[] {
  if (row.status !== 'succeeded') return [];
  if (row.outputs_made_json !== null) return JSON.parse(row.outputs_made_json) as MadeRendition[];
  if (row.out_width === null || row.out_height === null || row.output_bytes === null || row.download_url === null) return [];
  return [{ index: 0, width: row.out_width, height: row.out_height, bytes: row.output_bytes, downloadUrl: row.download_url }];
}

/** Links are served while the outputs are kept: the job succeeded, and its 7 days are not over (the sweep then deletes them). */
function linksLive(row: Pick<Job, 'status' | 'output_key' | 'output_expires_at'>, now: Date): row is typeof row & { output_expires_at: string } {
  return row.status === 'succeeded' && row.output_key !== null && row.output_expires_at !== null && Date.parse(row.output_expires_at) > now.getTime();
}

/**
 * GET /v1/automation-jobs/:id/outputs (issue 43): every rendition the job asked for (the first is
 * the job record's format, resolution and downloadUrl) with what was rendered, and the poster, each
 * with its own presigned link and expiry once the job succeeded; null links before, and after the
 * outputs expired. Another account's job, or an unknown one, is 404 like GET .../:id.
 */
export function createOutputsService(deps: { jobs: Pick<JobsService, 'owned'>; now: () => Date }) {
  const { jobs, now } = deps;
  return {
    async get(caller: Caller, id: string): Promise<JobOutputs> {
      // One read: another account's job, or a malformed id, is 404 (as GET .../:id answers).
      const row = await jobs.owned(caller, id);
      const made = madeOf(row);
      const live = linksLive(row, now());
      const poster = row.poster_made_json === null || !live ? null : (JSON.parse(row.poster_made_json) as MadePoster);
      return {
        jobId: row.id,
        safeArea: row.safe_area,
        placement: row.placement,
        subtitles: row.subtitles,
        outputs: renditionsOf(row).map((r, index) => {
          const m = made.find((x) => x.index === index);
          return {
            index,
            format: r.format,
            reframe: r.reframe,
            requestedResolution: r.width !== null && r.height !== null ? { width: r.width, height: r.height } : null,
            resolution: m ? { width: m.width, height: m.height } : null,
            sizeBytes: m ? m.bytes : null,
            downloadUrl: m && live ? m.downloadUrl : null,
            outputExpiresAt: m && live ? row.output_expires_at : null,
          };
        }),
        poster:
          poster && posterOf(row) && live
            ? {
                at: poster.at,
                width: poster.width,
                height: poster.height,
                sizeBytes: poster.bytes,
                downloadUrl: poster.downloadUrl,
                outputExpiresAt: row.output_expires_at!,
              }
            : null,
      };
    },
  };
}
export type OutputsService = ReturnType<typeof createOutputsService>;
