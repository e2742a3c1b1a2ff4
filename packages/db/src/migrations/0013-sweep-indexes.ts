import { sql, type Kysely } from 'kysely';

/**
 * Issue 13, sweeps that stay cheap as jobs pile up. bench:api leaves 16,000 jobs queued, and a
 * sweep then stopped the event loop for 90-180 ms every 30 s (the API's p99 with it): two of its
 * queries read every queued or every succeeded job through jobs_status_created.
 * - The past-deadline sweep (14 ms at 16,000 queued): (status, deadline_at) reads only the jobs
 *   past their deadline.
 * - The expired-output sweep, over every succeeded job ever: a partial index holds only the jobs
 *   whose output is still kept, by expiry (only a succeeded job has an output).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('jobs_status_deadline').on('jobs').columns(['status', 'deadline_at']).execute();
  await db.schema.createIndex('jobs_output_kept').on('jobs').column('output_expires_at').where(sql.ref('output_key'), 'is not', null).execute();
}
