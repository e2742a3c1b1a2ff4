import express from 'express';
import { ApiError } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';
import type { Logger } from '@captionfarm/log';
import type { ControlPlaneConfig } from '../config.ts';
import { mountAgentAdmin } from '../agents/admin-routes.ts';
import type { createAgentsService } from '../agents/service.ts';
import { dashboardApi } from '../dashboard/routes.ts';
import type { SignInLimits } from '../dashboard/sign-in-limits.ts';
import { dashboardPages } from '../dashboard/static.ts';
import type { UsersService } from '../dashboard/users.ts';
import type { Metrics } from '../metrics.ts';
import { buildOpenApiDocument } from '../openapi.ts';
import type { PreviewPool } from '../preview-pool.ts';
import { adminRoutes } from '../routes/admin.ts';
import { publicRoutes } from '../routes/public.ts';
import type { AccountsService } from '../services/accounts.ts';
import type { FontsService } from '../services/fonts.ts';
import type { JobsService } from '../jobs/service.ts';
import type { TemplatesService } from '../services/templates.ts';
import type { TranscriptsService } from '../services/transcripts.ts';
import type { EditsService } from '../services/edits.ts';
import type { OutputsService } from '../services/outputs.ts';
import type { ProfanityWordsService } from '../services/profanity-words.ts';
import type { UploadsService } from '../services/uploads.ts';
import type { TranscriptWork } from '../transcript-work.ts';
import type { Webhooks } from '../webhooks/index.ts';
import type { AuthFailureLimiter } from './auth-failures.ts';
import type { ClientAddress } from './client-address.ts';
import { errorHandler } from './errors.ts';
import { hotRoutes } from './hot-routes.ts';
import {
  adminTokenAuth,
  apiKeyAuth,
  callerOf,
  declaredLengthLimit,
  jsonBody,
  rateLimit,
  refuseLargeBody,
  requestId,
  requestLog,
  type RequestLogLine,
} from './middleware.ts';

export interface HttpAppDeps {
  config: Readonly<ControlPlaneConfig>;
  db: Db;
  now: () => Date;
  log: (msg: string, extra?: unknown) => void;
  logger: Logger;
  metrics: Metrics;
  adminToken: string;
  /** The URL clients reach this control plane at (known once it listens). */
  baseUrl: () => string;
  authFailures: AuthFailureLimiter;
  clientAddress: ClientAddress;
  services: {
    accounts: AccountsService;
    jobs: JobsService;
    uploads: UploadsService;
    templates: TemplatesService;
    previews: PreviewPool;
    transcripts: TranscriptsService;
    edits: EditsService;
    outputs: OutputsService;
    profanityWords: ProfanityWordsService;
    fonts: FontsService;
    transcriptWork: TranscriptWork;
    webhooks: Webhooks;
    users: UsersService;
    agents: ReturnType<typeof createAgentsService>;
  };
  dashboardDir?: string | undefined;
  signInLimits?: SignInLimits | undefined;
}

/**
 * The HTTP surfaces: the public API (/v1, with the two hot routes served outside Express), the
 * admin API (/admin/v1), the dashboard's API (/app/api) and pages, /metrics, /healthz and the
 * OpenAPI document. Returns the Express app, the hot routes (the HTTP server tries them first) and
 * the /metrics handler (the private metrics listener serves it too).
 */
export function createHttpApp(d: HttpAppDeps) {
  const { config, db, now, log, logger, metrics, adminToken, authFailures, clientAddress } = d;
  const { accounts, jobs, uploads, templates, previews, transcripts, edits, outputs, profanityWords, fonts, transcriptWork, webhooks, users, agents } =
    d.services;
  const bodyTimeouts = { totalMs: config.bodyTotalSeconds * 1000, idleMs: config.bodyIdleSeconds * 1000 };
  const app = express();
  app.disable('x-powered-by');
  // Every answer of the app is JSON made for one request: the weak ETag that Express computes
  // hashed each body (sha1, about 3% of a job create's CPU in its profile) for conditional requests
  // that no API client makes. The dashboard's static files keep theirs (express.static).
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestId());
  app.use(metrics.http());
  const logRequest = (line: RequestLogLine) => logger.info(line, 'request');
  app.use(requestLog(logRequest));
  const adminOnly = adminTokenAuth(adminToken, authFailures, clientAddress);
  const serveMetrics: express.RequestHandler = (_req, res, next) => {
    metrics.registry.metrics().then((text) => {
      res.setHeader('content-type', metrics.registry.contentType);
      res.send(text);
    }, next);
  };
  app.get('/metrics', adminOnly, serveMetrics);
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(buildOpenApiDocument(d.baseUrl()));
  });
  // A job may carry a transcript (up to 20,000 words): its route takes a larger, still bounded, body.
  const publicBodyLimits = { 'POST /automation-jobs': config.maxJobJsonBytes };
  // One factory per surface: the dashboard mounts the same routes behind a session.
  const makePublicRoutes = () =>
    publicRoutes({
      jobs,
      uploads,
      templates,
      previews,
      transcripts,
      edits,
      outputs,
      profanityWords,
      fonts,
      transcriptWork,
      inlineJobBytes: config.maxJsonBytes,
      extend: (r) => webhooks.mountPublic(r),
    });
  const makeAdminRoutes = () =>
    adminRoutes({
      db,
      accounts,
      users,
      now,
      baseUrl: d.baseUrl,
      extend(r) {
        webhooks.mountAdmin(r);
        mountAgentAdmin(r, agents);
      },
    });
  // A create counts its request in its own transaction: one write per create (http/middleware.ts).
  const publicRateLimit = rateLimit(db, now, new Set(['POST /automation-jobs']));
  // The two routes clients call in a loop skip Express (http/hot-routes.ts), with the same parts.
  const hot = hotRoutes({
    authenticate: (key) => accounts.authenticate(key),
    limiter: publicRateLimit,
    jobs,
    // Larger bodies (transcripts) go to Express, which parses them on the transcript worker.
    maxJobJsonBytes: config.maxJsonBytes,
    bodyTimeouts,
    metrics,
    logRequest,
    log,
  });
  app.use(
    '/v1',
    declaredLengthLimit(config.maxJsonBytes, publicBodyLimits),
    apiKeyAuth(async (key) => accounts.authenticate(key), authFailures, clientAddress),
    publicRateLimit.count,
    refuseLargeBody(new Set(Object.keys(publicBodyLimits)), config.maxJsonBytes, (res) => transcriptWork.refusal(callerOf(res).accountId)),
    ...jsonBody(config.maxJsonBytes, bodyTimeouts, publicBodyLimits, new Set(Object.keys(publicBodyLimits))),
    makePublicRoutes(),
    publicRateLimit.countOnError,
  );
  app.use('/admin/v1', declaredLengthLimit(config.maxJsonBytes), adminOnly, ...jsonBody(config.maxJsonBytes, bodyTimeouts), makeAdminRoutes());
  app.use(
    '/app/api',
    declaredLengthLimit(config.maxJsonBytes, { 'POST /v1/automation-jobs': config.maxJobJsonBytes }),
    ...jsonBody(config.maxJsonBytes, bodyTimeouts, { 'POST /v1/automation-jobs': config.maxJobJsonBytes }, new Set(['POST /v1/automation-jobs'])),
    dashboardApi({
      db,
      users,
      accounts,
      jobs,
      templates,
      webhooks,
      previews,
      fonts,
      publicUrl: config.publicUrl,
      allowedHosts: config.allowedHosts,
      now,
      publicRoutes: makePublicRoutes,
      adminRoutes: makeAdminRoutes,
      signInLimits: d.signInLimits,
      clientAddress,
      rateLimit: publicRateLimit,
      log,
    }),
  );
  app.use(
    dashboardPages({
      dir: d.dashboardDir,
      storeOrigin: config.s3.kind === 'external' ? new URL(config.s3.endpoint).origin : undefined,
      publicUrl: config.publicUrl,
      allowedHosts: config.allowedHosts,
    }),
  );
  app.use((req, _res, next) => next(new ApiError('not_found', `No route ${req.method} ${req.path}.`)));
  app.use(errorHandler(log));
  return { app, hot, serveMetrics };
}
