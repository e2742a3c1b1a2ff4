import type { Kysely, Transaction } from 'kysely';
import { dialectOf } from '../dialect.ts';
import type { Database } from '../schema.ts';

/**
 * The accounts each open transaction has locked. A row lock holds until its transaction ends, so
 * locking the same account again in the same transaction (a create, then its admission, then the
 * monthly top-up: three callers that each need the lock when called alone) would be a round trip
 * to PostgreSQL for nothing. Each transaction is its own object (kysely makes one per
 * `transaction().execute`); weak, so an ended one is forgotten.
 */
const lockedBy = new WeakMap<Kysely<Database>, Set<string>>();

/**
 * Serialises the read-then-write transactions of one account (balance checks before a reserve,
 * the monthly top-up, the daily upload quota) across control planes: on PostgreSQL the account
 * row is locked until the transaction ends. On SQLite a write transaction already excludes every
 * other writer, so there is nothing to do.
 */
export async function lockAccount(trx: Transaction<Database> | Kysely<Database>, accountId: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  const held = trx.isTransaction ? lockedBy.get(trx) : undefined;
  if (held?.has(accountId)) return;
  await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
  if (!trx.isTransaction) return;
  if (held) held.add(accountId);
  else lockedBy.set(trx, new Set([accountId]));
}
