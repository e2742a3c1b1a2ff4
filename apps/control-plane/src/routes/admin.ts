import { Router } from 'express';
import { z } from 'zod';
import { ApiError, PlanIdSchema, issuesToDetails } from '@captionfarm/contracts';
import type { AccountsService } from '../services/accounts.ts';
import { asyncRoute } from '../http/async-route.ts';


function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new ApiError('invalid_request', 'Invalid admin request: see details.', { details: issuesToDetails(r.error.issues) });
  return r.data;
}

export interface AdminRoutesDeps {
  accounts: AccountsService;
  extend?: (router: Router) => void;
}

/** The admin surface the `captionfarm admin` CLI talks to (admin token auth runs before). */
export function adminRoutes(deps: AdminRoutesDeps): Router {
  const r = Router();
  const { accounts } = deps;
  r.post('/accounts', asyncRoute(async (req, res) => {
    const body = parse(z.strictObject({ name: z.string().min(1).max(200), plan: PlanIdSchema.default('free') }), req.body);
    res.status(201).json(await accounts.create(body));
  }));
  r.get('/accounts', asyncRoute(async (_req, res) => {
    res.json({ accounts: await accounts.list() });
  }));
  r.get('/accounts/:id', asyncRoute(async (req, res) => {
    const a = await accounts.get(String(req.params.id));
    res.json({ id: a.id, name: a.name, plan: a.plan, createdAt: a.created_at });
  }));
  r.post('/accounts/:id/plan', asyncRoute(async (req, res) => {
    const body = parse(z.strictObject({ plan: PlanIdSchema }), req.body);
    res.json(await accounts.setPlan(String(req.params.id), body.plan));
  }));
  r.post('/accounts/:id/minutes', asyncRoute(async (req, res) => {
    const body = parse(z.strictObject({ minutes: z.number().int(), note: z.string().max(500).optional() }), req.body);
    await accounts.get(String(req.params.id));
    res.json(await accounts.grantMinutes(String(req.params.id), body.minutes, body.note ?? null));
  }));
  r.get('/accounts/:id/minutes', asyncRoute(async (req, res) => {
    res.json(await accounts.showMinutes(String(req.params.id)));
  }));
  r.post('/accounts/:id/keys', asyncRoute(async (req, res) => {
    res.status(201).json(await accounts.createKey(String(req.params.id)));
  }));
  r.get('/accounts/:id/keys', asyncRoute(async (req, res) => {
    res.json({ keys: await accounts.listKeys(String(req.params.id)) });
  }));
  r.post('/keys/:id/revoke', asyncRoute(async (req, res) => {
    res.json(await accounts.revokeKey(String(req.params.id)));
  }));
  r.get('/accounts/:id/webhook-secret', asyncRoute(async (req, res) => {
    res.json(await accounts.showWebhookSecret(String(req.params.id)));
  }));
  r.post('/accounts/:id/webhook-secret/rotate', asyncRoute(async (req, res) => {
    res.json(await accounts.rotateWebhookSecret(String(req.params.id)));
  }));
  deps.extend?.(r);
  return r;
}
