import type { AttemptRecord, ClaimDueArgs, WebhookDelivery, WebhookStore } from '@captionfarm/webhooks';
import { dialectOf, type Db, type WebhookDeliveriesTable } from '@captionfarm/db';
import type { Updateable } from 'kysely';
import { iso, epochMs } from './iso-time.ts';

type DeliveryUpdate = Omit<Updateable<WebhookDeliveriesTable>, 'id' | 'attempts'>;

/**
 * The dispatcher's store on the control plane's SQLite database (the contract and its reasons
 * are in packages/webhooks/README.md). Times always come from the arguments, never from the
 * database clock, so an injected clock works. claimDue is one `UPDATE ... RETURNING`: SQLite
 * serialises writers, so it is atomic even between processes sharing the file; on PostgreSQL the
 * inner select skips rows another claim has locked (SKIP LOCKED), and the outer WHERE repeats the
 * due/unleased conditions, which PostgreSQL re-checks on the newest row version after a wait.
 */
export function createSqlWebhookStore(db: Db): WebhookStore {
  const postgres = dialectOf(db) === 'postgres';

  async function claimDue(args: ClaimDueArgs): Promise<WebhookDelivery[]> {
    const now = iso(args.now);
    const rows = await db
      // A CTE is evaluated once: with SKIP LOCKED a subquery that the planner re-ran could lock
      // rows in one run and update those of another, leaving the first ones locked and unclaimed.
      .with('picked', (w) =>
        w
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          .where((e) => e.or([e('claimed_until', 'is', null), e('claimed_until', '<=', now)]))
          .orderBy('next_attempt_at')
          .limit(args.limit)
          .$if(postgres, (q) => q.forUpdate().skipLocked()),
      )
      .updateTable('webhook_deliveries')
      .set({ lease_owner: args.owner, claimed_until: iso(args.leaseUntil) })
      .where('id', 'in', (eb) => eb.selectFrom('picked').select('picked.id'))
      .where('status', '=', 'pending')
      .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<=', now)]))
      .returning(['id', 'account_id', 'url', 'payload', 'attempts', 'attempt_base', 'first_attempt_at', 'next_attempt_at'])
      .execute();
    return rows
      .map((r) => ({
        id: r.id,
        accountId: r.account_id,
        url: r.url,
        body: r.payload,
        // The schedule restarts at an admin redelivery; the log keeps numbering on (see guardedWrite).
        attemptCount: r.attempts - r.attempt_base,
        firstAttemptAt: r.first_attempt_at === null ? null : epochMs(r.first_attempt_at),
        nextAttemptAt: r.next_attempt_at === null ? args.now : epochMs(r.next_attempt_at),
      }))
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt);
  }

  /**
   * One transaction: the guarded update (lease owner, attempt count, still pending; NOT the lease
   * end, since an attempt that overran its lease without being re-claimed was still sent), then
   * the attempt log row. Nothing is written when the guard misses: the lease went to another
   * dispatcher, whose record wins.
   */
  async function guardedWrite(rec: AttemptRecord, set: DeliveryUpdate): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          ...set,
          attempts: eb('attempt_base', '+', rec.attemptNumber),
          first_attempt_at: eb.fn.coalesce('first_attempt_at', eb.val(iso(rec.firstAttemptAt))),
          last_attempt_at: iso(rec.startedAt),
          last_status_code: rec.statusCode,
          last_error: rec.error ? `${rec.error.code}: ${rec.error.message}` : null,
          lease_owner: null,
          claimed_until: null,
        }))
        .where('id', '=', rec.deliveryId)
        .where('lease_owner', '=', rec.owner)
        .where((eb) => eb(eb('attempts', '-', eb.ref('attempt_base')), '=', rec.attemptNumber - 1))
        .where('status', '=', 'pending')
        .returning('attempts')
        .executeTakeFirst();
      if (!row) return false;
      await trx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: rec.deliveryId,
          attempt: row.attempts,
          started_at: iso(rec.startedAt),
          duration_ms: Math.max(0, Math.round(rec.durationMs)),
          status_code: rec.statusCode,
          outcome: rec.outcome,
          error_code: rec.error?.code ?? null,
          error: rec.error?.message ?? null,
        })
        .execute();
      return true;
    });
  }

  return {
    claimDue,
    recordAttempt: (rec) => guardedWrite(rec, { next_attempt_at: iso(rec.nextAttemptAt) }),
    markDelivered: (rec) => guardedWrite(rec, { status: 'delivered', next_attempt_at: null, delivered_at: iso(rec.startedAt + rec.durationMs) }),
    markExhausted: (rec) => guardedWrite(rec, { status: 'exhausted', next_attempt_at: null, exhausted_reason: rec.reason }),
  };
}
