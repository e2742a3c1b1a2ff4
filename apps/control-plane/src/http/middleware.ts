import { randomUUID } from 'node:crypto';
import { ApiError, PLANS, type PlanId } from '@captionfarm/contracts';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Caller } from '../services/jobs.ts';

export function requestId(): RequestHandler {
  return (_req, res, next) => {
    const id = `req_${randomUUID().replace(/-/g, '')}`;
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}

export function bearer(req: Request): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

/** API key auth: 401 with the error body when the key is missing, unknown or revoked. */
export function apiKeyAuth(authenticate: (key: string) => Promise<Caller | null>): RequestHandler {
  return (req, res, next) => {
    const key = bearer(req);
    if (!key) return next(new ApiError('unauthenticated', 'Send your API key as "Authorization: Bearer cf_live_...".'));
    authenticate(key)
      .then((caller) => {
        if (!caller) return next(new ApiError('unauthenticated', 'The API key is unknown or revoked; create a new key.'));
        res.locals.caller = caller;
        next();
      })
      .catch(next);
  };
}

export function callerOf(res: Response): Caller {
  return res.locals.caller as Caller;
}

/**
 * Per-account requests per minute (fixed one-minute windows, in memory: a control plane is one
 * process today). 429 rate_limited with Retry-After to the window's end.
 */
export function rateLimit(now: () => Date): RequestHandler {
  const windows = new Map<string, { start: number; count: number }>();
  return (_req, res, next) => {
    const caller = callerOf(res);
    const t = now().getTime();
    const start = Math.floor(t / 60_000) * 60_000;
    let w = windows.get(caller.accountId);
    if (!w || w.start !== start) {
      if (windows.size > 10_000) for (const [k, v] of windows) if (v.start !== start) windows.delete(k);
      w = { start, count: 0 };
      windows.set(caller.accountId, w);
    }
    const limit = PLANS[caller.plan as PlanId].requestsPerMinute;
    w.count++;
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - w.count)));
    if (w.count > limit) {
      return next(new ApiError('rate_limited', `More than ${limit} requests in a minute; slow down and retry after the Retry-After delay.`, { retryAfterSeconds: Math.max(1, Math.ceil((start + 60_000 - t) / 1000)) }));
    }
    next();
  };
}

/**
 * JSON bodies only: 415 for another Content-Type when a body is sent, 413 past the size limit,
 * 400 for malformed JSON. A request without a body gets `undefined`. `routes` gives some routes
 * ("METHOD /path" relative to the mount point) their own limit.
 */
export function jsonBody(limitBytes: number, routes: Record<string, number> = {}): RequestHandler[] {
  const parser = (limit: number) => express.json({ limit, strict: false, type: () => true });
  const general = parser(limitBytes);
  const special = new Map(Object.entries(routes).map(([route, limit]) => [route, parser(limit)]));
  return [
    (req: Request, _res: Response, next: NextFunction) => {
      const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      if (!hasBody) return next();
      const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json' && !/^application\/[a-z0-9.+-]*\+json$/.test(type)) {
        return next(new ApiError('unsupported_media_type', 'Send request bodies as JSON with "Content-Type: application/json".'));
      }
      (special.get(`${req.method} ${req.path.replace(/\/+$/, '')}`) ?? general)(req, _res, next);
    },
  ];
}
