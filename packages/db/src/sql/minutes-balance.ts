import { sql, type Kysely, type Transaction } from 'kysely';
import { prepared } from '../prepared.ts';
import type { Database } from '../schema.ts';

type Q = Kysely<Database> | Transaction<Database>;

/**
 * The account's balance: the `balance_after` of its newest ledger row (0 before its first), one
 * seek of ledger_account however long the ledger (appendLedger keeps it; it equals the sum of the
 * account's rows).
 */
export async function minutesBalance(db: Q, accountId: string): Promise<number> {
  const [row] = await balanceOf(db, { accountId });
  return row ? Number(row.balance_after) : 0;
}

// Every job create reads it: compiled once (prepared.ts).
const balanceOf = prepared((db, a: { accountId: string }) =>
  db.selectFrom('minutes_ledger').select('balance_after').where('account_id', '=', a.accountId).orderBy('id', 'desc').limit(1),
);

/** Minutes a job still holds: what it reserved, trued up, minus what was refunded (0 once ended). */
export async function jobHeldMinutes(db: Q, jobId: string): Promise<number> {
  const row = await db
    .selectFrom('minutes_ledger')
    .select(sql<number>`coalesce(-sum(minutes), 0)`.as('held'))
    .where('job_id', '=', jobId)
    .where('kind', 'in', ['reserve', 'true_up', 'refund'])
    .executeTakeFirstOrThrow();
  return Number(row.held);
}
