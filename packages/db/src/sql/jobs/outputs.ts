import type { Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

/** Marks the output key before its presigned PUT URL exists, guarded by the lease: should the job not succeed, its output is debris. */
export async function markOutputKey(db: Kysely<Database>, a: { jobId: string; leaseId: string; outputKey: string }): Promise<void> {
  await db.updateTable('jobs').set({ output_key: a.outputKey }).where('id', '=', a.jobId).where('lease_id', '=', a.leaseId).execute();
}

/** Forgets the output of a job that ended without success, once its object is deleted and its PUT URL has expired. */
export async function forgetEndedOutput(db: Kysely<Database>, a: { jobId: string }): Promise<void> {
  await db.updateTable('jobs').set({ output_key: null }).where('id', '=', a.jobId).where('status', 'in', ['failed', 'cancelled']).execute();
}

/** Forgets the outputs of the given jobs (expired outputs, their objects deleted). */
export async function forgetOutputs(db: Kysely<Database>, jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return;
  await db.updateTable('jobs').set({ output_key: null }).where('id', 'in', jobIds).execute();
}
