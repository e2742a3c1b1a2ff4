import type { Router } from 'express';
import { z } from 'zod';
import { ApiError, issuesToDetails } from '@captionfarm/contracts';
import { callerOf } from '../http/middleware.ts';
import type { JobsService } from '../jobs/service.ts';
import type { DeliveriesService } from './deliveries.ts';

/** `GET /v1/automation-jobs/:id/webhook-deliveries`: the job's owner only (404 for anyone else, like GET job). */
export function mountPublicWebhookRoutes(r: Router, deps: { jobs: JobsService; deliveries: DeliveriesService }): void {
  r.get('/automation-jobs/:id/webhook-deliveries', async (req, res) => {
    const job = await deps.jobs.get(callerOf(res), String(req.params.id));
    const deliveries = await deps.deliveries.list({ jobId: job.id });
    res.json({ jobId: job.id, deliveries: deliveries.map(({ accountId: _accountId, ...d }) => d) });
  });
}

const AdminListQuery = z.strictObject({
  job: z.string().min(1).max(100).optional(),
  account: z.string().min(1).max(100).optional(),
  state: z.enum(['pending', 'delivered', 'exhausted']).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/**
 * Admin: `GET /webhooks?job=ID` (also `account`, `state`, `limit`), `GET /webhooks/:deliveryId`,
 * `POST /webhooks/:deliveryId/redeliver` (re-queues it now with the same webhook-id).
 */
export function mountAdminWebhookRoutes(r: Router, deps: { deliveries: DeliveriesService; wake: () => void }): void {
  r.get('/webhooks', async (req, res) => {
    const q = AdminListQuery.safeParse(req.query);
    if (!q.success) throw new ApiError('invalid_request', 'Invalid webhooks query: see details.', { details: issuesToDetails(q.error.issues) });
    const { job, account, state, limit } = q.data;
    res.json({ deliveries: await deps.deliveries.list({ jobId: job?.toLowerCase(), accountId: account, state, limit }) });
  });
  r.get('/webhooks/:deliveryId', async (req, res) => {
    res.json(await deps.deliveries.get(String(req.params.deliveryId)));
  });
  r.post('/webhooks/:deliveryId/redeliver', async (req, res) => {
    const view = await deps.deliveries.redeliver(String(req.params.deliveryId));
    deps.wake();
    res.json(view);
  });
}
