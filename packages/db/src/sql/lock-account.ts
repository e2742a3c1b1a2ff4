import type { Kysely, Transaction } from 'kysely';
import { dialectOf } from '../dialect.ts';
import type { Database } from '../schema.ts';

/**
 * Serialises the read-then-write transactions of one account (balance checks before a reserve,
 * the monthly top-up, the daily upload quota) across control planes: on PostgreSQL the account
 * row is locked until the transaction ends. On SQLite a write transaction already excludes every
 * other writer, so there is nothing to do.
 */
export async function lockAccount(trx: Transaction<Database> | Kysely<Database>, accountId: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}
