import type { FailureCode } from '@captionfarm/contracts';
import type { Kysely } from 'kysely';
import type { Database, Job } from '../../schema.ts';

/** How a job ends: cancelled, failed with its code and reason, or succeeded with its output. */
export type JobEnding =
  | { status: 'cancelled' }
  | { status: 'failed'; failureCode: FailureCode; failureReason: string }
  | {
      status: 'succeeded';
      outputKey: string;
      outputBytes: number;
      width: number;
      height: number;
      downloadUrl: string;
      outputExpiresAt: string;
      /** JSON of every rendition made (`jobs.outputs_made_json`, 0021). */
      outputsMadeJson: string;
      /** JSON of the poster made, or null: none asked for (`jobs.poster_made_json`, 0021). */
      posterMadeJson: string | null;
    };

/**
 * Ends one queued or running job: its status and phase, its lease cleared, its failure or its
 * output (a success is settled now). With `leaseId`, only while that lease holds it. Returns the
 * ended row, or undefined when the job had already ended (or another lease holds it). The caller
 * writes the refund or settle and the webhook row in the same transaction (`finishJob` in the
 * control plane).
 */
export async function endJob(
  db: Kysely<Database>,
  a: { jobId: string; ending: JobEnding; now: string; leaseId?: string | undefined },
): Promise<Job | undefined> {
  const { ending, now: t } = a;
  let q = db
    .updateTable('jobs')
    .set({
      status: ending.status,
      phase: ending.status,
      percent: null,
      updated_at: t,
      finished_at: t,
      lease_id: null,
      lease_owner: null,
      lease_expires_at: null,
      ...(ending.status === 'failed' ? { failure_code: ending.failureCode, failure_reason: ending.failureReason } : {}),
      ...(ending.status === 'succeeded'
        ? {
            output_key: ending.outputKey,
            output_bytes: ending.outputBytes,
            out_width: ending.width,
            out_height: ending.height,
            download_url: ending.downloadUrl,
            output_expires_at: ending.outputExpiresAt,
            outputs_made_json: ending.outputsMadeJson,
            poster_made_json: ending.posterMadeJson,
            settled_at: t,
          }
        : {}),
    })
    .where('id', '=', a.jobId)
    .where('status', 'in', ['queued', 'running']);
  if (a.leaseId !== undefined) q = q.where('lease_id', '=', a.leaseId);
  return q.returningAll().executeTakeFirst();
}
