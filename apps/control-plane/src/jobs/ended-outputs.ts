import { forgetEndedOutput, type Db } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import { OUTPUT_KEY_COLUMNS, outputKeysOf } from './renditions.ts';

/** How long the agent's presigned output PUT URL lives (agents/reports.ts outputUploadUrl). */
export const OUTPUT_PUT_URL_TTL_SECONDS = 3600;

/**
 * Ended jobs that did not succeed but whose output may be in the store: the agent asked for the
 * output URL (which marks `output_key`) and the job was cancelled, failed or timed out before its
 * completion was accepted. Only a succeeded job sets `output_expires_at`, so the partial index of
 * kept outputs (jobs_output_kept) is read by `output_expires_at is null`, not every ended job
 * ever (sweep-plans.test.ts checks the plan); running jobs in it are left by the status.
 */
export const endedOutputs = (db: Db) =>
  db
    .selectFrom('jobs')
    .select([...OUTPUT_KEY_COLUMNS, 'output_key', 'finished_at'])
    .where('output_key', 'is not', null)
    .where('output_expires_at', 'is', null)
    .where('status', 'in', ['failed', 'cancelled']);

/**
 * Deletes the outputs of ended jobs that did not succeed (one job when `jobId` is given, when its
 * agent's completion was refused; all of them on a sweep). A PUT already under way may still land
 * after a delete, so the mark stays until the URL has expired: each sweep deletes again until then
 * (deleting a missing object is a no-op), and only then the mark goes.
 */
export async function deleteEndedOutputs(deps: { db: Db; store: ObjectStore; now: () => Date }, jobId?: string): Promise<number> {
  const { db, store, now } = deps;
  let q = endedOutputs(db);
  if (jobId) q = q.where('id', '=', jobId);
  const ended = await q.execute();
  const urlsExpiredBefore = new Date(now().getTime() - OUTPUT_PUT_URL_TTL_SECONDS * 1000).toISOString();
  for (const job of ended) {
    // Every rendition and the poster (issue 43): the mark is rendition 0's key, set for any of them.
    if (job.output_key) for (const key of outputKeysOf(job)) await store.delete(key);
    if (job.finished_at !== null && job.finished_at < urlsExpiredBefore) {
      await forgetEndedOutput(db, { jobId: job.id });
    }
  }
  return ended.length;
}
