import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { ApiError, JobStatusSchema, PLANS, issuesToDetails, type PlanId } from '@captionfarm/contracts';
import { minutesBalance, type Db } from '@captionfarm/db';
import { callerOf, type rateLimit } from '../http/middleware.ts';
import type { ClientAddress } from '../http/client-address.ts';
import { TemplateSchema } from '@captionfarm/captions';
import type { PreviewPool } from '../preview-pool.ts';
import type { AccountsService } from '../services/accounts.ts';
import type { JobsService } from '../jobs/service.ts';
import type { TemplatesService } from '../services/templates.ts';
import { fontIdsOf, type FontsService } from '../services/fonts.ts';
import type { Webhooks } from '../webhooks/index.ts';
import { SESSION_COOKIE, authOf, csrfProtection, ensureAnonymousCsrf, loadSession, parseCookies, requireAdmin, requireMember, setCookie } from './session.ts';
import { countsByStatus } from './queue.ts';
import { createSignInLimiter, type SignInLimits } from './sign-in-limits.ts';
import { SESSION_ABSOLUTE_MS, toUserView, type UsersService } from './users.ts';
import type { DashboardOverview, DashboardSession } from '../views.ts';

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new ApiError('invalid_request', 'Invalid request: see details.', { details: issuesToDetails(r.error.issues) });
  return r.data;
}

export interface DashboardApiDeps {
  db: Db;
  users: UsersService;
  accounts: AccountsService;
  jobs: JobsService;
  templates: TemplatesService;
  webhooks: Webhooks;
  previews: PreviewPool;
  /** Uploaded fonts, for previews of templates that name one. */
  fonts: FontsService;
  publicUrl: string | undefined;
  /** CAPTIONFARM_ALLOWED_HOSTS: Host names answered besides the public URL's, localhost and IP literals (http/allowed-hosts.ts). */
  allowedHosts?: readonly string[];
  now: () => Date;
  /** The public API's routes (jobs, uploads, templates, deliveries, ...), mounted again for members. */
  publicRoutes: () => Router;
  /** The admin API's routes (accounts, keys, minutes, nodes, webhooks), mounted again for administrators. */
  adminRoutes: () => Router;
  signInLimits?: SignInLimits | undefined;
  /** The address failed sign-ins are counted against (the forwarded client behind a trusted proxy). */
  clientAddress: ClientAddress;
  /** The public API's per-account rate limit: the member pages' /v1 calls count against the plan as an API key's do. */
  rateLimit: Pick<ReturnType<typeof rateLimit>, 'count' | 'countOnError'>;
  log: (msg: string, extra?: unknown) => void;
}

const SignIn = z.strictObject({ email: z.string().min(1).max(254), password: z.string().min(1).max(200) });
const InviteToken = z.strictObject({ token: z.string().min(10).max(200) });
const AcceptInvite = InviteToken.extend({ password: z.string().max(200) }).strict();
const ListQuery = z.strictObject({ status: JobStatusSchema.optional(), cursor: z.string().optional(), limit: z.string().optional() });
const PreviewBody = z.strictObject({
  template: z.unknown(),
  text: z.string().min(1).max(300).default('Your captions will look exactly like this'),
  width: z.number().int().min(64).max(1920).default(540),
  height: z.number().int().min(64).max(1920).default(960),
  at: z.number().min(0).max(600).default(2),
});

/**
 * The dashboard's JSON API under /app/api: sessions, then the member pages (the public API's own
 * routes behind a session instead of an API key, plus keys, secret and overview), then the
 * operator console (the admin API's routes behind an administrator's session). Every
 * state-changing request passes the CSRF check.
 */
export function dashboardApi(deps: DashboardApiDeps): Router {
  const r = Router();
  r.use((_req, res, next) => {
    // JSON answers about one user are never cached by the browser or a proxy.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  r.use(loadSession(deps.users), csrfProtection(deps.publicUrl, deps.allowedHosts));
  sessionRoutes(r, deps);

  // --- operator console -------------------------------------------------------------------
  const admin = Router();
  admin.use(requireAdmin());
  admin.use(deps.adminRoutes());
  r.use('/admin', admin);

  // --- account pages ----------------------------------------------------------------------
  const member = Router();
  member.use(requireMember(async (accountId) => (await deps.accounts.get(accountId)).plan));
  member.get('/overview', async (_req, res) => {
    res.json(await accountOverview(deps.db, callerOf(res), deps.now()));
  });
  keyRoutes(member, deps.accounts);
  jobRoutes(member, deps);
  templateRoutes(member, deps);
  member.use('/v1', deps.rateLimit.count, deps.publicRoutes(), deps.rateLimit.countOnError);
  r.use(member);
  return r;
}

/** Session, sign-in and sign-out, and the invite pages; failed sign-ins and unusable invites count against the address. */
function sessionRoutes(r: Router, deps: DashboardApiDeps): void {
  const { users, accounts } = deps;
  const limiter = createSignInLimiter({ now: deps.now, ...deps.signInLimits });
  const cookieToken = (req: Request) => parseCookies(req.headers.cookie)[SESSION_COOKIE];

  r.get('/session', async (req, res) => {
    const auth = authOf(res);
    if (!auth) {
      const anonymous: DashboardSession = { user: null, account: null, csrfToken: ensureAnonymousCsrf(req, res, deps.publicUrl) };
      res.json(anonymous);
      return;
    }
    const account = auth.user.account_id ? await accounts.get(auth.user.account_id) : null;
    const session: DashboardSession = {
      user: toUserView(auth.user),
      account: account && { id: account.id, name: account.name, plan: account.plan },
      csrfToken: auth.session.csrf_token,
    };
    res.json(session);
  });

  async function startSession(req: Request, res: Response, userId: string) {
    const old = cookieToken(req);
    if (old) await users.endSession(old);
    const s = await users.createSession(userId);
    setCookie(res, req, { name: SESSION_COOKIE, value: s.token, maxAgeMs: SESSION_ABSOLUTE_MS, publicUrl: deps.publicUrl });
    return s;
  }

  r.post('/sign-in', async (req, res) => {
    const body = parse(SignIn, req.body);
    const client = deps.clientAddress(req);
    limiter.check(client, body.email);
    const user = await users.checkPassword(body.email, body.password, client);
    if (!user) {
      limiter.failed(client, body.email);
      deps.log('dashboard sign-in failed', { ip: client, email: body.email.trim().toLowerCase(), requestId: String(res.locals.requestId ?? '') });
      throw new ApiError('unauthenticated', 'The email or password is wrong.');
    }
    limiter.succeeded(client, body.email);
    const s = await startSession(req, res, user.id);
    res.json({ user: toUserView(user), csrfToken: s.csrfToken });
  });

  r.post('/sign-out', async (req, res) => {
    const token = cookieToken(req);
    if (token) await users.endSession(token);
    setCookie(res, req, { name: SESSION_COOKIE, value: '', maxAgeMs: 0, publicUrl: deps.publicUrl });
    res.status(204).end();
  });

  /** An invite route: the address is limited like sign-in's, and an unusable token counts as a failure. */
  const inviteRoute = (handler: (req: Request, res: Response, client: string) => Promise<void>) => async (req: Request, res: Response) => {
    const client = deps.clientAddress(req);
    limiter.check(client);
    try {
      await handler(req, res, client);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') limiter.failed(client);
      throw err;
    }
  };

  r.post(
    '/invite/info',
    inviteRoute(async (req, res) => {
      const info = await users.inviteInfo(parse(InviteToken, req.body).token);
      if (!info) throw new ApiError('not_found', 'This invite link is unknown, used or expired; ask an administrator for a new one.');
      res.json(info);
    }),
  );

  r.post(
    '/invite/accept',
    inviteRoute(async (req, res, client) => {
      const body = parse(AcceptInvite, req.body);
      const user = await users.acceptInvite(body.token, body.password, client);
      const s = await startSession(req, res, user.id);
      res.json({ user: toUserView(user), csrfToken: s.csrfToken });
    }),
  );
}

/** The overview page: the plan, the balance, this UTC month's use per day and the jobs by status. */
async function accountOverview(db: Db, caller: { accountId: string; plan: PlanId }, t: Date): Promise<DashboardOverview> {
  const { accountId, plan } = caller;
  const monthStart = `${t.toISOString().slice(0, 7)}-01T00:00:00.000Z`;
  const ledger = await db
    .selectFrom('minutes_ledger')
    .select(['kind', 'minutes', 'created_at'])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', monthStart)
    .orderBy('id')
    .execute();
  // Use per UTC day: what jobs took (reserve, true-up, settle) net of refunds; grants and the
  // monthly top-up are not use.
  const days = new Map<string, number>();
  for (const l of ledger) {
    if (l.kind === 'grant' || l.kind === 'monthly_reset') continue;
    const day = l.created_at.slice(0, 10);
    days.set(day, (days.get(day) ?? 0) - l.minutes);
  }
  const daysInMonth = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 0)).getUTCDate();
  const usage = Array.from({ length: daysInMonth }, (_, i) => {
    const day = `${t.toISOString().slice(0, 7)}-${String(i + 1).padStart(2, '0')}`;
    return { day, minutes: Math.max(0, days.get(day) ?? 0) };
  });
  const counts = await db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .groupBy('status')
    .execute();
  return {
    plan: PLANS[plan],
    balance: await minutesBalance(db, accountId),
    usedThisMonth: usage.reduce((a, d) => a + d.minutes, 0),
    usage,
    jobsByStatus: countsByStatus(counts),
  };
}

/** API keys and the webhook signing secret of the member's account. */
function keyRoutes(member: Router, accounts: AccountsService): void {
  member.get('/keys', async (_req, res) => {
    res.json({ keys: await accounts.listKeys(callerOf(res).accountId) });
  });
  member.post('/keys', async (req, res) => {
    const body = parse(z.strictObject({ name: z.string().trim().min(1, 'give the key a name').max(100) }), req.body);
    res.status(201).json(await accounts.createKey(callerOf(res).accountId, body.name));
  });
  member.post('/keys/:id/revoke', async (req, res) => {
    res.json(await accounts.revokeKey(String(req.params.id), callerOf(res).accountId));
  });
  member.get('/webhook-secret', async (_req, res) => {
    res.json(await accounts.showWebhookSecret(callerOf(res).accountId));
  });
  member.post('/webhook-secret/rotate', async (_req, res) => {
    res.json(await accounts.rotateWebhookSecret(callerOf(res).accountId));
  });
}

/** The job list (with a status filter) and a webhook redelivery. */
function jobRoutes(member: Router, deps: Pick<DashboardApiDeps, 'jobs' | 'webhooks'>): void {
  const { jobs, webhooks } = deps;
  member.get('/jobs', async (req, res) => {
    const q = parse(ListQuery, req.query);
    const { status, ...page } = q;
    res.json(await jobs.list(callerOf(res), page, status ? { status } : {}));
  });
  member.post('/jobs/:id/webhook-deliveries/:deliveryId/redeliver', async (req, res) => {
    const job = await jobs.get(callerOf(res), String(req.params.id));
    const delivery = await webhooks.deliveries.get(String(req.params.deliveryId)).catch(() => null);
    if (!delivery || delivery.jobId !== job.id) throw new ApiError('not_found', `No webhook delivery ${String(req.params.deliveryId)} for job ${job.id}.`);
    const { accountId: _a, ...view } = await webhooks.deliveries.redeliver(delivery.id);
    webhooks.wake();
    res.json(view);
  });
}

/** A custom template's update and the editor's live preview of a template not saved yet. */
function templateRoutes(member: Router, deps: Pick<DashboardApiDeps, 'templates' | 'previews' | 'fonts'>): void {
  const { templates, previews } = deps;
  member.put('/templates/:id', async (req, res) => {
    res.json(await templates.update(callerOf(res).accountId, String(req.params.id), req.body));
  });
  // The editor's live preview: a template that is not saved yet.
  member.post('/template-preview', async (req, res) => {
    const body = parse(PreviewBody, req.body);
    const template = TemplateSchema.safeParse(body.template);
    if (!template.success)
      throw new ApiError('invalid_request', 'The template is not valid: see details.', { details: issuesToDetails(template.error.issues) });
    // Same worker pool and per-account cap as the public preview endpoint.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const caller = callerOf(res);
    const fontIds = fontIdsOf(template.data);
    await deps.fonts.requireReady(caller.accountId, fontIds, 'font.fontId');
    const fonts = await deps.fonts.files(caller.accountId, fontIds);
    const png = await previews.render(
      caller,
      { template: template.data, text: body.text, width: body.width, height: body.height, at: body.at, fonts },
      gone.signal,
    );
    res.type('image/png').send(png);
  });
}
