import { sql, type Kysely } from 'kysely';

/**
 * Issue 13, fewer pages written by a job create (0018: it runs after the 0013 migrations that made these indexes). Every index a row enters is one more page in
 * the create's commit (a WAL frame on SQLite), and a create wrote about 15 of them. Three of
 * those indexes had nothing to find in a new job's entry:
 * - `jobs_account_created` served the list's order before `jobs.seq`; only a cursor signed before
 *   that reads (created_at, id) now, and it finds its job by id (apps/control-plane/src/jobs/list.ts).
 * - `jobs_status_deadline` is read for jobs past their deadline; a queued job has none, so the
 *   index keeps only the jobs that have one (`deadline_at < ?` implies it, on both databases).
 * - `ledger_account_kind_note` finds an account's monthly top-up by its note; reserve, settle
 *   and refund rows have none.
 * Measured with the control plane under 400 creates a second (rounds alternated in one process):
 * 1,499 (1,384-1,772) -> 1,309 (1,272-1,354) us of CPU per create.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_account_created').execute();
  await db.schema.dropIndex('jobs_status_deadline').execute();
  await db.schema.createIndex('jobs_status_deadline').on('jobs').columns(['status', 'deadline_at']).where(sql.ref('deadline_at'), 'is not', null).execute();
  await db.schema.dropIndex('ledger_account_kind_note').execute();
  await db.schema
    .createIndex('ledger_account_kind_note')
    .on('minutes_ledger')
    .columns(['account_id', 'kind', 'note'])
    .where(sql.ref('note'), 'is not', null)
    .execute();
}
