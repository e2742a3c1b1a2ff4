import type { Transaction } from 'kysely';
import { prepared } from '../prepared.ts';
import type { Database, LedgerKind } from '../schema.ts';
import { lockAccount } from './lock-account.ts';
import { minutesBalance } from './minutes-balance.ts';

/**
 * Appends a row to the account's ledger with the account's balance after it (the balance before,
 * read from the newest row, plus `minutes`). Under the account's lock, in the caller's
 * transaction: two appends for one account, from any control plane, never start from the same
 * balance (on SQLite the write transaction already excludes every other writer). A caller that
 * read the balance in this same transaction, under the lock, passes it as `balanceBefore` (a job
 * create's reservation: one statement fewer).
 */
export async function appendLedger(
  trx: Transaction<Database>,
  row: { accountId: string; jobId?: string | null; kind: LedgerKind; minutes: number; note?: string | null; now: Date; balanceBefore?: number },
): Promise<void> {
  await lockAccount(trx, row.accountId);
  const before = row.balanceBefore ?? (await minutesBalance(trx, row.accountId));
  await insert(trx, {
    account_id: row.accountId,
    job_id: row.jobId ?? null,
    kind: row.kind,
    minutes: row.minutes,
    note: row.note ?? null,
    created_at: row.now.toISOString(),
    balance_after: before + row.minutes,
  });
}

// Every job create and end writes one or two: compiled once (prepared.ts).
const insert = prepared(
  (db, a: { account_id: string; job_id: string | null; kind: LedgerKind; minutes: number; note: string | null; created_at: string; balance_after: number }) =>
    db.insertInto('minutes_ledger').values(a),
);
