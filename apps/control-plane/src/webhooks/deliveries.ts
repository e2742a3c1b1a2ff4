import { ApiError } from '@captionfarm/contracts';
import type { Db, DeliveryState } from '@captionfarm/db';

/** One attempt as the deliveries endpoints show it. */
export interface WebhookAttemptView {
  /** 1-based; keeps counting across admin redeliveries. */
  attempt: number;
  startedAt: string;
  durationMs: number;
  /** 'success' (2xx), 'retry' (any other status, timeout, network or address error), 'gone' (410). */
  outcome: string;
  statusCode: number | null;
  error: { code: string; message: string } | null;
}

/** A job's webhook delivery: what was tried, what came back, and what happens next. */
export interface WebhookDeliveryView {
  /** The `webhook-id` header: the same on every attempt and redelivery. */
  id: string;
  jobId: string;
  url: string;
  state: DeliveryState;
  /** Set when state is 'exhausted': 'gone' (receiver answered 410) or 'attempts_exhausted'. */
  exhaustedReason: string | null;
  attemptCount: number;
  /** When the next attempt is due; null once delivered or exhausted. */
  nextAttemptAt: string | null;
  firstAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  deliveredAt: string | null;
  /** When an admin last re-queued it. */
  requeuedAt: string | null;
  createdAt: string;
  attempts: WebhookAttemptView[];
}

export interface AdminWebhookDeliveryView extends WebhookDeliveryView {
  accountId: string;
}

export interface ListDeliveriesFilter {
  jobId?: string;
  accountId?: string;
  state?: DeliveryState;
  limit?: number;
}

export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Reads for the deliveries endpoints, the admin re-queue, and the retention sweep. */
export function createDeliveriesService(deps: { db: Db; now: () => Date }) {
  const { db } = deps;

  async function list(filter: ListDeliveriesFilter): Promise<AdminWebhookDeliveryView[]> {
    let q = db.selectFrom('webhook_deliveries').selectAll();
    if (filter.jobId !== undefined) q = q.where('job_id', '=', filter.jobId);
    if (filter.accountId !== undefined) q = q.where('account_id', '=', filter.accountId);
    if (filter.state !== undefined) q = q.where('status', '=', filter.state);
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 100)
      .execute();
    if (rows.length === 0) return [];
    const attempts = await db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where(
        'delivery_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      jobId: r.job_id,
      url: r.url,
      state: r.status,
      exhaustedReason: r.exhausted_reason,
      attemptCount: r.attempts,
      nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
      firstAttemptAt: r.first_attempt_at,
      lastAttemptAt: r.last_attempt_at,
      lastStatusCode: r.last_status_code,
      deliveredAt: r.delivered_at,
      requeuedAt: r.requeued_at,
      createdAt: r.created_at,
      attempts: attempts
        .filter((a) => a.delivery_id === r.id)
        .map((a) => ({
          attempt: a.attempt,
          startedAt: a.started_at,
          durationMs: a.duration_ms,
          outcome: a.outcome,
          statusCode: a.status_code,
          error: a.error_code !== null || a.error !== null ? { code: a.error_code ?? 'unknown', message: a.error ?? '' } : null,
        })),
    }));
  }

  async function get(id: string): Promise<AdminWebhookDeliveryView> {
    const row = await db.selectFrom('webhook_deliveries').select(['id', 'job_id']).where('id', '=', id).executeTakeFirst();
    const [view] = row ? await list({ jobId: row.job_id }).then((all) => all.filter((d) => d.id === id)) : [];
    if (!view) throw new ApiError('not_found', `No webhook delivery ${id}; list a job's deliveries with GET /admin/v1/webhooks?job=JOB_ID.`);
    return view;
  }

  /**
   * Re-queues a delivery now, keeping its id (the `webhook-id`) and body. A pending one is just
   * made due now (an attempt in flight keeps its lease and records as usual). A delivered or
   * exhausted one starts a fresh retry schedule: the attempt log keeps numbering on, and the
   * dispatcher counts attempts from `attempt_base`. Guarded by the state and count it read, so
   * a concurrent write makes this fail instead of clobbering it.
   */
  async function redeliver(id: string): Promise<AdminWebhookDeliveryView> {
    // A dispatcher may record an attempt between our read and our write: read again and retry.
    for (let tries = 0; tries < 5; tries += 1) {
      const t = deps.now().toISOString();
      const row = await db.selectFrom('webhook_deliveries').select(['id', 'status', 'attempts']).where('id', '=', id).executeTakeFirst();
      if (!row) throw new ApiError('not_found', `No webhook delivery ${id}; list a job's deliveries with GET /admin/v1/webhooks?job=JOB_ID.`);
      const base = db.updateTable('webhook_deliveries').where('id', '=', id).where('status', '=', row.status).where('attempts', '=', row.attempts);
      const res =
        row.status === 'pending'
          ? await base.set({ next_attempt_at: t, requeued_at: t }).executeTakeFirst()
          : await base
              .set({
                status: 'pending',
                attempt_base: row.attempts,
                first_attempt_at: null,
                next_attempt_at: t,
                exhausted_reason: null,
                delivered_at: null,
                lease_owner: null,
                claimed_until: null,
                requeued_at: t,
              })
              .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 1) return get(id);
    }
    throw new ApiError('internal', `Webhook delivery ${id} kept changing while it was being re-queued; try again.`);
  }

  /** Deletes delivered deliveries (and their attempts) older than 30 days. Returns how many. */
  async function sweep(): Promise<number> {
    const cutoff = new Date(deps.now().getTime() - DELIVERY_RETENTION_MS).toISOString();
    return db.transaction().execute(async (trx) => {
      const old = trx.selectFrom('webhook_deliveries').select('id').where('status', '=', 'delivered').where('delivered_at', '<', cutoff);
      await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', old).execute();
      const res = await trx.deleteFrom('webhook_deliveries').where('status', '=', 'delivered').where('delivered_at', '<', cutoff).executeTakeFirst();
      return Number(res.numDeletedRows);
    });
  }

  return { list, get, redeliver, sweep };
}
export type DeliveriesService = ReturnType<typeof createDeliveriesService>;
