import type { Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

/** The source's duration a create measured by probing its upload, before the job ends at once (source too long). */
export async function quoteProbedJob(db: Kysely<Database>, a: { jobId: string; quotedSeconds: number }): Promise<void> {
  await db.updateTable('jobs').set({ quoted_seconds: a.quotedSeconds }).where('id', '=', a.jobId).execute();
}

/** The source's duration the lease holder measured at ingest, guarded by its lease. */
export async function quoteIngestedJob(db: Kysely<Database>, a: { jobId: string; leaseId: string; quotedSeconds: number; now: string }): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ quoted_seconds: a.quotedSeconds, updated_at: a.now })
    .where('id', '=', a.jobId)
    .where('lease_id', '=', a.leaseId)
    .execute();
}

/** The job's deadline once ingest knows the source's length, guarded by the lease. */
export async function setJobDeadline(db: Kysely<Database>, a: { jobId: string; leaseId: string; deadlineAt: string }): Promise<void> {
  await db.updateTable('jobs').set({ deadline_at: a.deadlineAt }).where('id', '=', a.jobId).where('lease_id', '=', a.leaseId).execute();
}
