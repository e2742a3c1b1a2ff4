import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JobsService, Caller } from '../jobs/service.ts';
import type { Metrics } from '../metrics.ts';
import { sendError, sendJson, toApiError } from './errors.ts';
import { bearer, newRequestId, readPlainJson, type BodyTimeouts, type Deferred, type rateLimit, type RequestLogLine } from './middleware.ts';

export interface HotRoutesDeps {
  authenticate: (key: string) => Promise<Caller | null>;
  /** The same limiter the Express stack counts with (one per process: it remembers refusals). */
  limiter: Pick<ReturnType<typeof rateLimit>, 'start' | 'failed'>;
  jobs: Pick<JobsService, 'create' | 'get'>;
  /** The largest create body served here (config.maxJsonBytes); larger ones, transcripts, go to Express and the transcript worker. */
  maxJobJsonBytes: number;
  bodyTimeouts: BodyTimeouts;
  metrics: Pick<Metrics, 'httpTimer'>;
  logRequest: (line: RequestLogLine) => void;
  log: (msg: string, extra?: unknown) => void;
}

const JOB_PATH = /^\/v1\/automation-jobs\/([0-9a-fA-F-]{36})$/;
/** JSON that needs no decoding: no parameter but a UTF-8 charset. */
const PLAIN_JSON = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/**
 * POST /v1/automation-jobs and GET /v1/automation-jobs/:id served on node:http, outside Express:
 * the two requests an API client sends in a loop. Express's router, its per-request prototype
 * swaps (V8's property lookups then miss their caches: a fifth of the control plane's CPU under
 * create load, by perf) and its middleware chain cost about a quarter of a create's CPU: 1,871
 * against 1,438 us a create with a first version of this path, rounds alternated in one process
 * at 400/s (README, Performance). At 500 creates a second on two cores every such microsecond is
 * queueing.
 *
 * The hot path takes only the plain, well-formed request: the exact path without a query string,
 * a key that authenticates, and for a create a declared length within the
 * limit of plain UTF-8 JSON (no transfer or content encoding). Anything else, including each
 * refused credential, goes to the Express stack untouched (the body is not read before the key is
 * known), so every error that can come before the body keeps its one implementation there. From
 * the authenticated request on, both paths call the same parts in the same order: request id,
 * the rate limiter (a create counts itself in its own transaction), the body's deadlines, the
 * jobs service, the error body, the metrics histogram and the request's log line; hot-routes.test.ts
 * compares their answers.
 *
 * Returns false when the request is not one of these (serve it with Express); otherwise it is
 * served here, or handed to `fallback` once its key fails to authenticate.
 */
export function hotRoutes(deps: HotRoutesDeps): (req: IncomingMessage, res: ServerResponse, fallback: () => void) => boolean {
  async function serve(req: IncomingMessage, res: ServerResponse, caller: Caller, route: string, id: string | undefined): Promise<void> {
    const requestId = newRequestId();
    const started = performance.now();
    const observe = deps.metrics.httpTimer();
    const method = req.method!;
    let jobId = id;
    // Until the rate limiter lets it through, a refusal is one Express answers before routing,
    // under the mount's label (metrics.ts routeLabels): so here too. Express reads a create's body
    // as bytes and parses it in the route, so a body that is no JSON has the route's label on both.
    let label = '/v1/*';
    res.setHeader('X-Request-Id', requestId);
    res.once('finish', () => {
      observe({ method, route: label, status: String(res.statusCode) });
      deps.logRequest({
        requestId,
        accountId: caller.accountId,
        jobId,
        method,
        path: req.url!,
        status: res.statusCode,
        ms: Math.round(performance.now() - started),
      });
    });
    let deferred: Deferred | undefined;
    try {
      if (id !== undefined) {
        await deps.limiter.start(res, caller, false);
        label = route;
        sendJson(res, 200, await deps.jobs.get(caller, id));
        return;
      }
      deferred = await deps.limiter.start(res, caller, true);
      label = route;
      const job = await deps.jobs.create(caller, await readPlainJson(req, res, deps.bodyTimeouts), deferred);
      jobId = job.id;
      sendJson(res, 202, job);
    } catch (err) {
      const answer = await deps.limiter.failed(res, deferred, err).catch((countErr: unknown) => countErr);
      sendError(res, toApiError(answer, deps.log), requestId);
    }
  }

  return (req, res, fallback) => {
    const { method, url, headers } = req;
    let route: string;
    let id: string | undefined;
    if (method === 'POST' && url === '/v1/automation-jobs') {
      const declared = Number(headers['content-length']);
      const plain = headers['transfer-encoding'] === undefined && headers['content-encoding'] === undefined && PLAIN_JSON.test(headers['content-type'] ?? '');
      if (!plain || !(declared > 0 && declared <= deps.maxJobJsonBytes)) return false;
      route = '/v1/automation-jobs';
    } else if (method === 'GET' && url !== undefined) {
      const m = JOB_PATH.exec(url);
      if (!m || Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined) return false;
      route = '/v1/automation-jobs/:id';
      id = m[1];
    } else return false;
    const key = bearer(req);
    if (!key) return false;
    deps.authenticate(key).then(
      (caller) => {
        if (!caller) return fallback();
        serve(req, res, caller, route, id).catch((err: unknown) => deps.log('hot route failed', err));
      },
      () => fallback(),
    );
    return true;
  };
}
