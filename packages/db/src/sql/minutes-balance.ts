import { sql, type Kysely, type Transaction } from 'kysely';
import { prepared } from '../prepared.ts';
import type { Database } from '../schema.ts';

type Q = Kysely<Database> | Transaction<Database>;

/** The balance is derived from the ledger, never stored. */
export async function minutesBalance(db: Q, accountId: string): Promise<number> {
  const [row] = await balanceOf(db, { accountId });
  return Number(row!.balance);
}

// Every job create reads it: compiled once (prepared.ts).
const balanceOf = prepared((db, a: { accountId: string }) =>
  db.selectFrom('minutes_ledger').select(sql<number>`coalesce(sum(minutes), 0)`.as('balance')).where('account_id', '=', a.accountId),
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
