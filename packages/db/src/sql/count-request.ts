import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/**
 * Counts one request of an account in its one-minute window and returns the window's count, in
 * one upsert: every control plane counts into the same row, so the plan's requests per minute
 * hold across processes.
 */
export async function countRequest(db: Kysely<Database>, args: { accountId: string; windowStart: string }): Promise<number> {
  const row = await db
    .insertInto('rate_windows')
    .values({ account_id: args.accountId, window_start: args.windowStart, count: 1 })
    .onConflict((oc) => oc.columns(['account_id', 'window_start']).doUpdateSet((eb) => ({ count: eb('rate_windows.count', '+', 1) })))
    .returning('count')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Forgets the windows that started before `before` (the sweeper). */
export async function deleteRateWindows(db: Kysely<Database>, before: string): Promise<void> {
  await db.deleteFrom('rate_windows').where('window_start', '<', before).execute();
}
