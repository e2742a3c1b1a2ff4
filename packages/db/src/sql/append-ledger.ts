import type { Kysely, Transaction } from 'kysely';
import type { Database, LedgerKind } from '../schema.ts';

export async function appendLedger(
  db: Kysely<Database> | Transaction<Database>,
  row: { accountId: string; jobId?: string | null; kind: LedgerKind; minutes: number; note?: string | null; now: Date },
): Promise<void> {
  await db
    .insertInto('minutes_ledger')
    .values({
      account_id: row.accountId,
      job_id: row.jobId ?? null,
      kind: row.kind,
      minutes: row.minutes,
      note: row.note ?? null,
      created_at: row.now.toISOString(),
    })
    .execute();
}
