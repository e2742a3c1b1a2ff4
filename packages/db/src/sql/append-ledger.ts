import type { Kysely, Transaction } from 'kysely';
import { prepared } from '../prepared.ts';
import type { Database, LedgerKind } from '../schema.ts';

export async function appendLedger(
  db: Kysely<Database> | Transaction<Database>,
  row: { accountId: string; jobId?: string | null; kind: LedgerKind; minutes: number; note?: string | null; now: Date },
): Promise<void> {
  await insert(db, {
    account_id: row.accountId,
    job_id: row.jobId ?? null,
    kind: row.kind,
    minutes: row.minutes,
    note: row.note ?? null,
    created_at: row.now.toISOString(),
  });
}

// Every job create and end writes one or two: compiled once (prepared.ts).
const insert = prepared((db, a: { account_id: string; job_id: string | null; kind: LedgerKind; minutes: number; note: string | null; created_at: string }) =>
  db.insertInto('minutes_ledger').values(a),
);
