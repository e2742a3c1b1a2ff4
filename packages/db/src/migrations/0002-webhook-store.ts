import type { Kysely } from 'kysely';

/**
 * What the webhook dispatcher's store contract (packages/webhooks README) needs beyond 0001:
 * - `lease_owner`: every write after a claim is guarded by it (`claimed_until` is the lease end);
 * - `exhausted_reason`: 'gone' (410) or 'attempts_exhausted';
 * - `attempt_base`: attempts made before the last admin redelivery. The retry schedule restarts
 *   at a redelivery while the attempt log keeps numbering on, so the dispatcher sees
 *   `attempts - attempt_base` as the delivery's attempt count;
 * - `requeued_at`: when an admin last redelivered it;
 * - `webhook_attempts.error_code`: the closed SafeFetchError code (or 'http_status') next to the
 *   message in `error`;
 * - one log row per (delivery, attempt number): a second writer for the same attempt fails.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('lease_owner', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('exhausted_reason', 'text').execute();
  await db.schema
    .alterTable('webhook_deliveries')
    .addColumn('attempt_base', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('requeued_at', 'text').execute();
  await db.schema.alterTable('webhook_attempts').addColumn('error_code', 'text').execute();
  await db.schema.createIndex('webhook_attempts_delivery_attempt').on('webhook_attempts').columns(['delivery_id', 'attempt']).unique().execute();
  // Admin listing and the retention sweep.
  await db.schema.createIndex('webhook_deliveries_account_created').on('webhook_deliveries').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('webhook_deliveries_delivered').on('webhook_deliveries').columns(['status', 'delivered_at']).execute();
}
