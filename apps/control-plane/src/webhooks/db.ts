import type { Database, Db, WebhookAttemptsTable, WebhookDeliveriesTable } from '@captionfarm/db';
import type { Generated, Kysely } from 'kysely';

/**
 * The webhook tables with the columns migration 0002 adds (packages/db's schema.ts types 0001
 * only). Everything in this folder goes through `webhookDb(db)`.
 */
export interface WebhookTables {
  webhook_deliveries: WebhookDeliveriesTable & {
    /** Dispatcher that holds the lease until `claimed_until`; every write after a claim checks it. */
    lease_owner: string | null;
    /** 'gone' (the receiver answered 410) or 'attempts_exhausted'; set with status 'exhausted'. */
    exhausted_reason: string | null;
    /** `attempts` at the last admin redelivery: the dispatcher's attempt count is attempts - attempt_base. */
    attempt_base: Generated<number>;
    requeued_at: string | null;
  };
  webhook_attempts: WebhookAttemptsTable & {
    error_code: string | null;
  };
}

export type WebhookDb = Kysely<Omit<Database, keyof WebhookTables> & WebhookTables>;

export function webhookDb(db: Db): WebhookDb {
  return db as unknown as WebhookDb;
}

/** Delivery states (the `status` column). */
export type DeliveryState = 'pending' | 'delivered' | 'exhausted';

/** The database stores ISO 8601 text (fixed width, so text order is time order); the dispatcher speaks epoch ms. */
export const iso = (ms: number): string => new Date(ms).toISOString();
export const epochMs = (text: string): number => Date.parse(text);
