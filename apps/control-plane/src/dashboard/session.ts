import { randomBytes } from 'node:crypto';
import { ApiError, type PlanId } from '@captionfarm/contracts';
import type { Session, User } from '@captionfarm/db';
import type { Request, RequestHandler, Response } from 'express';
import { safeEqual } from '../crypto.ts';
import { createHostAllowlist, HOST_HELP } from '../http/allowed-hosts.ts';
import type { Caller } from '../jobs/service.ts';
import { SESSION_ABSOLUTE_MS, type UsersService } from './users.ts';

export const SESSION_COOKIE = 'cf_session';
/** Before sign-in there is no session to hold the CSRF token: a double-submit cookie does. */
const CSRF_COOKIE = 'cf_csrf';
const CSRF_HEADER = 'x-csrf-token';

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!(name in out)) out[name] = value;
  }
  return out;
}

/** Secure when the browser reaches us over HTTPS (a public https:// URL, or TLS on this socket). */
function isHttps(req: Request, publicUrl: string | undefined): boolean {
  return publicUrl?.startsWith('https:') === true || (req.socket as { encrypted?: boolean }).encrypted === true;
}

export function setCookie(res: Response, req: Request, o: { name: string; value: string; maxAgeMs: number | null; publicUrl: string | undefined }): void {
  const parts = [`${o.name}=${o.value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (o.maxAgeMs !== null) parts.push(`Max-Age=${Math.max(0, Math.floor(o.maxAgeMs / 1000))}`);
  if (isHttps(req, o.publicUrl)) parts.push('Secure');
  res.append('Set-Cookie', parts.join('; '));
}

export interface DashboardAuth {
  session: Session;
  user: User;
}

export function authOf(res: Response): DashboardAuth | undefined {
  return res.locals.dashboard as DashboardAuth | undefined;
}

/** Loads the session of the cookie, if any (never rejects: routes decide what needs one). */
export function loadSession(users: UsersService): RequestHandler {
  return (req, res, next) => {
    const token = parseCookies(req.headers.cookie)[SESSION_COOKIE];
    if (!token) return next();
    users
      .session(token)
      .then((s) => {
        if (s) res.locals.dashboard = s;
        next();
      })
      .catch(next);
  };
}

/** The CSRF token the browser must echo: the session's, or the pre-sign-in cookie's. */
function expectedCsrf(req: Request, res: Response): string | undefined {
  return authOf(res)?.session.csrf_token ?? parseCookies(req.headers.cookie)[CSRF_COOKIE];
}

/** A CSRF token for a browser without a session (sign-in and invite pages), kept in a cookie. */
export function ensureAnonymousCsrf(req: Request, res: Response, publicUrl: string | undefined): string {
  const existing = parseCookies(req.headers.cookie)[CSRF_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  setCookie(res, req, { name: CSRF_COOKIE, value: token, maxAgeMs: SESSION_ABSOLUTE_MS, publicUrl });
  return token;
}

/**
 * Every request names an allowed Host (http/allowed-hosts.ts: a DNS-rebinding page is same-origin
 * with itself, so the Origin check below alone would let it sign in). Every state-changing request:
 * the Origin must be this site (the Host the browser addressed, or the public URL), and the
 * X-CSRF-Token header must equal the token the page got from GET /app/api/session. A cross-site
 * form or fetch fails the first; a same-site attacker the second.
 */
export function csrfProtection(publicUrl: string | undefined, allowedHosts: readonly string[] = []): RequestHandler {
  const publicOrigin = publicUrl ? new URL(publicUrl).origin : undefined;
  const hostAllowed = createHostAllowlist({ publicUrl, allowedHosts });
  return (req, res, next) => {
    if (!hostAllowed(req.headers.host)) return next(new ApiError('forbidden', `This Host is not one of the dashboard's: ${HOST_HELP}`));
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    const origin = req.headers.origin;
    const own = new Set<string>();
    if (publicOrigin) own.add(publicOrigin);
    if (req.headers.host) own.add(`${isHttps(req, undefined) ? 'https' : 'http'}://${req.headers.host}`);
    if (!origin || !own.has(origin)) {
      return next(new ApiError('forbidden', 'Cross-site request refused: the Origin is not this dashboard.'));
    }
    const sent = req.headers[CSRF_HEADER];
    const expected = expectedCsrf(req, res);
    if (typeof sent !== 'string' || !expected || !safeEqual(sent, expected)) {
      return next(new ApiError('forbidden', 'Missing or stale CSRF token: reload the page and try again.'));
    }
    next();
  };
}

/** Pages for account members: a signed-in user with an account. Sets the caller the services take. */
export function requireMember(accountPlan: (accountId: string) => Promise<PlanId>): RequestHandler {
  return (_req, res, next) => {
    const auth = authOf(res);
    if (!auth) return next(new ApiError('unauthenticated', 'Sign in to the dashboard first.'));
    const accountId = auth.user.account_id;
    if (!accountId) return next(new ApiError('forbidden', 'This user belongs to no account; the operator console is under Admin.'));
    accountPlan(accountId)
      .then((plan) => {
        const caller: Caller = { accountId, plan };
        res.locals.caller = caller;
        next();
      })
      .catch(next);
  };
}

export function requireAdmin(): RequestHandler {
  return (_req, res, next) => {
    const auth = authOf(res);
    if (!auth) return next(new ApiError('unauthenticated', 'Sign in to the dashboard first.'));
    if (auth.user.is_admin !== 1) return next(new ApiError('forbidden', 'Only administrators can use the operator console.'));
    next();
  };
}
