import type { Kysely } from 'kysely';

/**
 * Issue 13, job creation that stays cheap as an account's history grows (bench:api):
 * - `jobs.reserved_at`: when the job's `reserve` ledger row was written (null: the job still
 *   waits for minutes), set in the same transaction. The admission pass looked for waiting jobs
 *   by testing every job of the account against the ledger, on every create; with the index below
 *   it reads the waiting ones only (the ledger stays the record: the pass still checks it).
 * - the monthly top-up row of an account is found by (account, kind, note) instead of by reading
 *   the account's whole ledger.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('reserved_at', 'text').execute();
  const k = db as Kysely<{
    jobs: { id: string; reserved_at: string | null };
    minutes_ledger: { job_id: string | null; kind: string; created_at: string };
  }>;
  await k
    .updateTable('jobs')
    .set((eb) => ({
      reserved_at: eb
        .selectFrom('minutes_ledger')
        .select((l) => l.fn.min('minutes_ledger.created_at').as('t'))
        .whereRef('minutes_ledger.job_id', '=', 'jobs.id')
        .where('minutes_ledger.kind', '=', 'reserve'),
    }))
    .execute();
  await db.schema.createIndex('jobs_account_waiting').on('jobs').columns(['account_id', 'status', 'reserved_at', 'created_at', 'id']).execute();
  await db.schema.createIndex('ledger_account_kind_note').on('minutes_ledger').columns(['account_id', 'kind', 'note']).execute();
}
