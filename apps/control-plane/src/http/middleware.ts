import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, PLANS } from '@captionfarm/contracts';
import { countRequest, type Db } from '@captionfarm/db';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Caller, CountInTransaction } from '../jobs/service.ts';
import { safeEqual } from '../crypto.ts';
import type { AuthFailureLimiter } from './auth-failures.ts';
import type { ClientAddress } from './client-address.ts';

/** A request's id: its X-Request-Id header, its error bodies' `requestId`, its log lines. */
export function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, '')}`;
}

/** The one log line of each request (server.ts): ids as fields, the path without its query string. */
export interface RequestLogLine {
  requestId: string;
  accountId: string | undefined;
  jobId: string | undefined;
  method: string;
  path: string;
  status: number;
  ms: number;
}

export function requestId(): RequestHandler {
  return (_req, res, next) => {
    const id = newRequestId();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}

export function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

/** One log line per request: ids as fields, the route pattern and path without its query string. */
export function requestLog(logRequest: (line: RequestLogLine) => void): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      const caller = res.locals.caller as { accountId?: string } | undefined;
      const jobId =
        (res.locals.jobId as string | undefined) ?? (req.params?.id && req.route?.path?.includes('automation-jobs') ? String(req.params.id) : undefined);
      logRequest({
        requestId: String(res.locals.requestId),
        accountId: caller?.accountId,
        jobId,
        method: req.method,
        path: req.path,
        status: res.statusCode,
        ms: Math.round(performance.now() - started),
      });
    });
    next();
  };
}

/** The admin API's auth: the admin token, compared in constant time; failures count like API keys'. */
export function adminTokenAuth(adminToken: string, failures: AuthFailureLimiter, clientAddress: ClientAddress): RequestHandler {
  return (req, res, next) => {
    const token = bearer(req);
    if (token && safeEqual(token, adminToken)) return next();
    const what = {
      kind: 'admin-token' as const,
      reason: token ? 'wrong' : 'missing',
      requestId: String(res.locals.requestId ?? ''),
      path: req.originalUrl.split('?')[0]!,
    };
    next(failures.refuse(clientAddress(req), what, 'Send the admin token as "Authorization: Bearer ..." (captionfarm admin reads it from the data dir).'));
  };
}

/**
 * API key auth: 401 with the error body when the key is missing, unknown or revoked. The key is
 * always checked: a valid key is answered whatever else its address sent. Failures are logged and
 * counted per client address, whose wrong keys get 429 past the limit (http/auth-failures.ts).
 */
export function apiKeyAuth(authenticate: (key: string) => Promise<Caller | null>, failures: AuthFailureLimiter, clientAddress: ClientAddress): RequestHandler {
  return (req, res, next) => {
    const key = bearer(req);
    const fail = (reason: string, message: string) =>
      next(
        failures.refuse(
          clientAddress(req),
          { kind: 'api-key', reason, requestId: String(res.locals.requestId ?? ''), path: req.originalUrl.split('?')[0]! },
          message,
        ),
      );
    if (!key) return fail('missing', 'Send your API key as "Authorization: Bearer cf_live_...".');
    authenticate(key)
      .then((caller) => {
        if (!caller) return fail('unknown or revoked', 'The API key is unknown or revoked; create a new key.');
        res.locals.caller = caller;
        next();
      })
      .catch(next);
  };
}

export function callerOf(res: Response): Caller {
  return res.locals.caller as Caller;
}

interface RateWindow {
  /** The row that counts it (rate_windows). */
  key: { accountId: string; windowStart: string };
  limit: number;
  retryAfterSeconds: number;
}

/** The rate-limit headers for `count` requests in the window; rate_limited past the limit. */
function verdict(res: ServerResponse, w: RateWindow, count: number): ApiError | undefined {
  res.setHeader('X-RateLimit-Limit', String(w.limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, w.limit - count)));
  if (count <= w.limit) return undefined;
  return new ApiError('rate_limited', `More than ${w.limit} requests in a minute; slow down and retry after the Retry-After delay.`, {
    retryAfterSeconds: w.retryAfterSeconds,
  });
}

/** A request counted in the transaction of the work it asks for (jobs/service.ts CountInTransaction), until that commits. */
export interface Deferred extends CountInTransaction {
  window: RateWindow;
  pending: boolean;
}

/** The count a route writes in its own transaction (POST /v1/automation-jobs), or undefined. */
export function countInTransactionOf(res: Response): CountInTransaction | undefined {
  return res.locals.rateCount as Deferred | undefined;
}

/**
 * Per-account requests per minute (fixed one-minute windows). The count lives in the database
 * (rate_windows), so the limit holds across every control plane of a farm. 429 rate_limited with
 * Retry-After to the window's end.
 *
 * `inTransaction` routes ("METHOD /path" relative to the mount point) count the request in their
 * own write transaction (a job create: one write per create, not two; measured with bench:api).
 * One that crosses the limit there is refused and creates nothing. Once this process has refused
 * an account in a window, its further requests of that window are counted and refused here,
 * before their body is read: the process remembers the window (a count only grows within it), so
 * the common create asks nothing before its transaction. A request that fails before its
 * transaction commits (a bad body, a refused URL) is counted by `countOnError`, mounted after the
 * routes, and a rate_limited answer takes the place of its error, as when the count came first; a
 * request that ends without either is counted when its answer is sent. Every request counts once.
 */
export function rateLimit(db: Db, now: () => Date, inTransaction: ReadonlySet<string> = new Set()) {
  const windowOf = (caller: Caller): RateWindow => {
    const t = now().getTime();
    const start = Math.floor(t / 60_000) * 60_000;
    return {
      key: { accountId: caller.accountId, windowStart: new Date(start).toISOString() },
      limit: PLANS[caller.plan].requestsPerMinute,
      retryAfterSeconds: Math.max(1, Math.ceil((start + 60_000 - t) / 1000)),
    };
  };
  /** Account -> the window in which this process last refused it. */
  const refusedIn = new Map<string, string>();
  const judge = (res: ServerResponse, w: RateWindow, count: number) => {
    const refused = verdict(res, w, count);
    if (refused) refusedIn.set(w.key.accountId, w.key.windowStart);
    return refused;
  };
  /** The count the work writes in its own transaction; undefined when this process refused the account in this window (count it now). */
  const deferTo = (res: ServerResponse, caller: Caller): Deferred | undefined => {
    const w = windowOf(caller);
    const lastRefused = refusedIn.get(w.key.accountId);
    if (lastRefused === w.key.windowStart) return undefined;
    if (lastRefused !== undefined) refusedIn.delete(w.key.accountId);
    const deferred: Deferred = {
      window: w,
      pending: true,
      async count(trx) {
        const refused = judge(res, w, await countRequest(trx, w.key));
        if (refused) throw refused;
      },
      committed() {
        deferred.pending = false;
      },
    };
    res.once('finish', () => {
      if (deferred.pending) void countRequest(db, w.key).catch(() => undefined);
    });
    return deferred;
  };
  /** The error a request answers when it failed before its deferred count committed: counted now, rate_limited takes the place of `err` past the limit. */
  const failed = async (res: ServerResponse, deferred: Deferred | undefined, err: unknown): Promise<unknown> => {
    if (!deferred?.pending) return err;
    deferred.pending = false;
    return judge(res, deferred.window, await countRequest(db, deferred.window.key)) ?? err;
  };
  /**
   * Counts a request as it starts: in the work's own transaction when `deferrable` (the returned
   * count, for the work to write), else now; rejects with rate_limited past the limit.
   */
  const start = async (res: ServerResponse, caller: Caller, deferrable: boolean): Promise<Deferred | undefined> => {
    const deferred = deferrable ? deferTo(res, caller) : undefined;
    if (deferred) return deferred;
    const w = windowOf(caller);
    const refused = judge(res, w, await countRequest(db, w.key));
    if (refused) throw refused;
    return undefined;
  };
  const count: RequestHandler = (req, res, next) => {
    start(res, callerOf(res), inTransaction.has(`${req.method} ${req.path.replace(/\/+$/, '')}`)).then((deferred) => {
      res.locals.rateCount = deferred;
      next();
    }, next);
  };
  const countOnError: ErrorRequestHandler = (err, _req, res, next) => {
    failed(res, res.locals.rateCount as Deferred | undefined, err).then(next, next);
  };
  return { count, countOnError, start, failed };
}

/**
 * Ends the connection once the response is out, without reading the rest of the request body: the
 * write side closes first (FIN) so the client reads the answer, and the socket is destroyed a
 * moment later (an immediate close with unread input would reset the connection and could lose
 * the answer).
 */
function closeAfterResponse(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  res.once('finish', () => {
    const socket = req.socket;
    socket.end();
    // Discard what still arrives until then instead of buffering it.
    req.resume();
    setTimeout(() => socket.destroy(), 2000).unref();
  });
}

/**
 * Refuses a large body of `routes` ("METHOD /path" relative to the mount point) from the headers
 * alone when `refusal` gives an error for it (transcript-work.ts: the account's large bodies in
 * work are at their cap): the body is not read, and the connection closes after the answer.
 */
export function refuseLargeBody(routes: ReadonlySet<string>, inlineBytes: number, refusal: (res: Response) => ApiError | undefined): RequestHandler {
  return (req, res, next) => {
    if (!(Number(req.headers['content-length'] ?? 0) > inlineBytes) || !routes.has(`${req.method} ${req.path.replace(/\/+$/, '')}`)) return next();
    const err = refusal(res);
    if (!err) return next();
    closeAfterResponse(req, res);
    next(err);
  };
}

/** Per-route body limits: "METHOD /path" relative to the mount point -> bytes. */
export type RouteLimits = Record<string, number>;

function limitFor(req: Request, limitBytes: number, routes: RouteLimits): number {
  return routes[`${req.method} ${req.path.replace(/\/+$/, '')}`] ?? limitBytes;
}

/**
 * 413 from the headers alone: a declared Content-Length over the limit is refused before a byte of
 * the body is read (mount it before the credential check), and the connection is closed.
 */
export function declaredLengthLimit(limitBytes: number, routes: RouteLimits = {}): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    const limit = limitFor(req, limitBytes, routes);
    if (declared > limit) {
      closeAfterResponse(req, res);
      return next(new ApiError('payload_too_large', `The request body is ${declared} bytes; the limit is ${limit} bytes.`));
    }
    next();
  };
}

export interface BodyTimeouts {
  /** The whole body must arrive within this (ms). */
  totalMs: number;
  /** At most this long (ms) without a byte of the body. */
  idleMs: number;
}

/**
 * Arms a body's deadlines: once it stalls longer than `idleMs` or takes longer than `totalMs`,
 * `timedOut` gets a 408 `request_timeout` (once) and the connection is closed after the answer.
 * The returned function disarms them.
 */
function bodyDeadlines(req: IncomingMessage, res: ServerResponse, timeouts: BodyTimeouts, timedOut: (err: ApiError) => void): () => void {
  let idle: NodeJS.Timeout | undefined;
  let armed = true;
  const fire = (what: string) => {
    if (!armed) return;
    disarm();
    closeAfterResponse(req, res);
    timedOut(new ApiError('request_timeout', `The request body ${what}; send the whole body promptly.`));
  };
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => fire(`stalled for more than ${timeouts.idleMs / 1000} s`), timeouts.idleMs);
  };
  const total = setTimeout(() => fire(`took longer than ${timeouts.totalMs / 1000} s`), timeouts.totalMs);
  const disarm = () => {
    armed = false;
    clearTimeout(total);
    clearTimeout(idle);
    req.off('data', armIdle);
  };
  req.on('data', armIdle);
  armIdle();
  return disarm;
}

/** An error of the kinds toApiError (errors.ts) knows from body-parser: the same answer either way. */
const bodyError = (type: 'entity.parse.failed' | 'request.aborted') => Object.assign(new Error(type), { type });

/**
 * The body of a request whose headers promise plain UTF-8 JSON of a declared length (the hot
 * routes, http/hot-routes.ts, take no other), parsed as `jsonBody` parses it: the same deadlines,
 * a byte-order mark skipped, the same errors.
 */
export function readPlainJson(req: IncomingMessage, res: ServerResponse, timeouts: BodyTimeouts): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const disarm = bodyDeadlines(req, res, timeouts, reject);
    const aborted = () => {
      disarm();
      reject(bodyError('request.aborted'));
    };
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('aborted', aborted);
    req.once('error', aborted);
    req.once('end', () => {
      disarm();
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text));
      } catch {
        reject(bodyError('entity.parse.failed'));
      }
    });
  });
}

/**
 * JSON bodies only: 415 for another Content-Type when a body is sent, 413 past the size limit
 * (mount declaredLengthLimit before it for the 413 from the headers alone), 400 for malformed
 * JSON, 408 `request_timeout` (and the connection closed) for a body that stalls longer than
 * `idleMs` or takes longer than `totalMs`. A request without a body gets `undefined`. `routes`
 * gives some routes ("METHOD /path" relative to the mount point) their own limit; the `raw` ones
 * among them get the body's bytes (a Buffer), for a route that parses a large body off the event
 * loop (transcript-work.ts).
 */
export function jsonBody(limitBytes: number, timeouts: BodyTimeouts, routes: RouteLimits = {}, raw: ReadonlySet<string> = new Set()): RequestHandler[] {
  const parser = (limit: number) => express.json({ limit, strict: false, type: () => true });
  const general = parser(limitBytes);
  const special = new Map(Object.entries(routes).map(([route, limit]) => [route, raw.has(route) ? express.raw({ limit, type: () => true }) : parser(limit)]));
  return [
    (req: Request, res: Response, next: NextFunction) => {
      const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      if (!hasBody) return next();
      const [mediaType = '', ...params] = String(req.headers['content-type'] ?? '').split(';');
      const type = mediaType.trim().toLowerCase();
      if (type !== 'application/json' && !/^application\/[a-z0-9.+-]*\+json$/.test(type)) {
        return next(new ApiError('unsupported_media_type', 'Send request bodies as JSON with "Content-Type: application/json".'));
      }
      const route = `${req.method} ${req.path.replace(/\/+$/, '')}`;
      const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(p)?.[1]?.toLowerCase()).find(Boolean);
      if (raw.has(route) && charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
        return next(new ApiError('unsupported_media_type', 'Send the body as UTF-8 JSON.'));
      }
      let done = false;
      // raw-body is still waiting for the rest after a timeout; its later abort error is ignored (done).
      const disarm = bodyDeadlines(req, res, timeouts, (err) => {
        done = true;
        next(err);
      });
      const parse = special.get(route) ?? general;
      parse(req, res, (err?: unknown) => {
        if (done) return;
        done = true;
        disarm();
        next(err);
      });
    },
  ];
}
