import { Router } from 'express';
import { z } from 'zod';
import { ApiError, PlanIdSchema, issuesToDetails } from '@captionfarm/contracts';
import type { AccountsService } from '../services/accounts.ts';
import type { Db } from '@captionfarm/db';
import { queueStats } from '../dashboard/queue.ts';
import { inviteLink, type UsersService } from '../dashboard/users.ts';

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new ApiError('invalid_request', 'Invalid admin request: see details.', { details: issuesToDetails(r.error.issues) });
  return r.data;
}

export interface AdminRoutesDeps {
  db: Db;
  accounts: AccountsService;
  users: UsersService;
  /** Base URL of this control plane (invite links point at its dashboard). */
  baseUrl: () => string;
  now: () => Date;
  extend?: (router: Router) => void;
}

/** The admin surface the `captionfarm admin` CLI talks to (admin token auth runs before). */
export function adminRoutes(deps: AdminRoutesDeps): Router {
  const r = Router();
  const { accounts } = deps;
  r.post('/accounts', async (req, res) => {
    const body = parse(z.strictObject({ name: z.string().min(1).max(200), plan: PlanIdSchema.default('free') }), req.body);
    res.status(201).json(await accounts.create(body));
  });
  r.get('/accounts', async (_req, res) => {
    res.json({ accounts: await accounts.list() });
  });
  r.get('/accounts/:id', async (req, res) => {
    const a = await accounts.get(String(req.params.id));
    res.json({ id: a.id, name: a.name, plan: a.plan, createdAt: a.created_at });
  });
  r.post('/accounts/:id/plan', async (req, res) => {
    const body = parse(z.strictObject({ plan: PlanIdSchema }), req.body);
    res.json(await accounts.setPlan(String(req.params.id), body.plan));
  });
  r.post('/accounts/:id/minutes', async (req, res) => {
    const body = parse(z.strictObject({ minutes: z.number().int(), note: z.string().max(500).optional() }), req.body);
    await accounts.get(String(req.params.id));
    res.json(await accounts.grantMinutes(String(req.params.id), body.minutes, body.note ?? null));
  });
  r.get('/accounts/:id/minutes', async (req, res) => {
    res.json(await accounts.showMinutes(String(req.params.id)));
  });
  r.post('/accounts/:id/keys', async (req, res) => {
    res.status(201).json(await accounts.createKey(String(req.params.id)));
  });
  r.get('/accounts/:id/keys', async (req, res) => {
    res.json({ keys: await accounts.listKeys(String(req.params.id)) });
  });
  r.post('/keys/:id/revoke', async (req, res) => {
    res.json(await accounts.revokeKey(String(req.params.id)));
  });
  r.get('/accounts/:id/webhook-secret', async (req, res) => {
    res.json(await accounts.showWebhookSecret(String(req.params.id)));
  });
  r.post('/accounts/:id/webhook-secret/rotate', async (req, res) => {
    res.json(await accounts.rotateWebhookSecret(String(req.params.id)));
  });
  // Dashboard users: one-time invite links (72 h), list, remove (their sessions end at once).
  r.post('/users/invites', async (req, res) => {
    const body = parse(
      z.strictObject({ email: z.string().max(254), accountId: z.string().min(1).nullable().default(null), admin: z.boolean().default(false) }),
      req.body,
    );
    const inv = await deps.users.invite(body);
    res.status(201).json({ ...inv, link: inviteLink(deps.baseUrl(), inv.token) });
  });
  r.get('/users', async (req, res) => {
    const account = typeof req.query.account === 'string' && req.query.account !== '' ? req.query.account : undefined;
    res.json({ users: await deps.users.list(account ? { accountId: account } : {}) });
  });
  r.delete('/users/:id', async (req, res) => {
    res.json(await deps.users.remove(String(req.params.id)));
  });
  r.get('/queue', async (_req, res) => {
    res.json(await queueStats(deps.db, deps.now()));
  });
  deps.extend?.(r);
  return r;
}
