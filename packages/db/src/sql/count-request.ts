import type { Kysely } from 'kysely';
import { prepared } from '../prepared.ts';
import type { Database } from '../schema.ts';

/**
 * Counts one request of an account in its one-minute window and returns the window's count, in
 * one upsert: every control plane counts into the same row, so the plan's requests per minute
 * hold across processes.
 */
export async function countRequest(db: Kysely<Database>, args: { accountId: string; windowStart: string }): Promise<number> {
  const [row] = await upsert(db, args);
  return Number(row!.count);
}

// Every request of the public API runs it: compiled once (prepared.ts).
const upsert = prepared((db, a: { accountId: string; windowStart: string }) =>
  db
    .insertInto('rate_windows')
    .values({ account_id: a.accountId, window_start: a.windowStart, count: 1 })
    .onConflict((oc) => oc.columns(['account_id', 'window_start']).doUpdateSet((eb) => ({ count: eb('rate_windows.count', '+', 1) })))
    .returning('count'),
);

/** Forgets the windows that started before `before` (the sweeper). */
export async function deleteRateWindows(db: Kysely<Database>, before: string): Promise<void> {
  await db.deleteFrom('rate_windows').where('window_start', '<', before).execute();
}
