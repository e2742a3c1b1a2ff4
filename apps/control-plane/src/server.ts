import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer } from 'ws';
import { createAgentHub } from './agents/hub.ts';
import { mountAgentAdmin } from './agents/admin-routes.ts';
import { createAgentRouter } from './agents/router.ts';
import { createAgentsService, DEFAULT_AGENT_TIMINGS, type AgentTimings } from './agents/service.ts';
import { ApiError } from '@captionfarm/contracts';
import { openDatabase, type Db } from '@captionfarm/db';
import { createBuiltinStore, createS3Store, type BuiltinStore, type ObjectStore } from '@captionfarm/storage';
import type { ControlPlaneConfig } from './config.ts';
import { safeEqual } from './crypto.ts';
import { errorHandler } from './http/errors.ts';
import { apiKeyAuth, bearer, jsonBody, rateLimit, requestId } from './http/middleware.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { adminRoutes } from './routes/admin.ts';
import { publicRoutes } from './routes/public.ts';
import { loadOrCreateSecrets } from './secrets.ts';
import { createAccountsService } from './services/accounts.ts';
import { createJobsService, type UrlPolicy } from './services/jobs.ts';
import { createTemplatesService, type TemplateCatalog } from './services/templates.ts';
import { createTranscriptsService } from './services/transcripts.ts';
import { createUploadsService } from './services/uploads.ts';
import { defaultTemplateCatalog } from './template-catalog.ts';
import { createUrlPolicy } from './url-policy.ts';
import { createWebhooks, type Webhooks, type WebhookTimings } from './webhooks/index.ts';
import type { LookupFn } from '@captionfarm/webhooks';
import { createLogger, type Logger } from '@captionfarm/log';

export interface ControlPlaneOptions {
  /** Injectable clock (tests compress time). */
  now?: () => Date;
  catalog?: TemplateCatalog;
  checkPublicUrl?: UrlPolicy;
  /** DNS resolver for URL checks (tests resolve public-looking names without the internet). */
  lookup?: LookupFn;
  /** Lease, attempts and deadline timings (tests shorten them). */
  agentTimings?: Partial<AgentTimings>;
  /** Webhook dispatcher poll interval, lease, jitter (tests shorten them; time itself comes from `now`). */
  webhookTimings?: WebhookTimings;
  /** Structured logger; default JSON on stdout (pretty on a TTY) at CAPTIONFARM_LOG's level. */
  logger?: Logger;
}

export interface ControlPlane {
  readonly config: Readonly<ControlPlaneConfig>;
  readonly db: Db;
  readonly adminToken: string;
  /** Base URL once listening (the public URL when configured). */
  readonly url: string;
  readonly store: ObjectStore;
  readonly server: Server;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly services: {
    accounts: ReturnType<typeof createAccountsService>;
    jobs: ReturnType<typeof createJobsService>;
    uploads: ReturnType<typeof createUploadsService>;
    templates: ReturnType<typeof createTemplatesService>;
    agents: ReturnType<typeof createAgentsService>;
    webhooks: Webhooks;
  };
  listen(port?: number, host?: string): Promise<string>;
  /** One pass of the sweepers (expired uploads, ...); also run on a timer once listening. */
  sweep(): Promise<void>;
  close(): Promise<void>;
}

export async function createControlPlane(config: Readonly<ControlPlaneConfig>, opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const now = opts.now ?? (() => new Date());
  mkdirSync(config.dataDir, { recursive: true });
  const secrets = loadOrCreateSecrets(config.dataDir);
  const adminToken = config.adminToken ?? secrets.adminToken;
  const db = await openDatabase({ path: path.join(config.dataDir, 'captionfarm.sqlite') });
  const logger = opts.logger ?? createLogger({ name: 'control-plane', level: config.log });
  const log = (msg: string, extra?: unknown) => {
    if (extra instanceof Error) logger.error({ err: extra }, msg);
    else if (extra !== undefined) logger.info({ detail: extra }, msg);
    else logger.info(msg);
  };

  let baseUrl = config.publicUrl?.replace(/\/+$/, '') ?? '';
  // The built-in store presigns against the URL we listen on, known only after listen().
  let builtin: BuiltinStore | undefined;
  const getBuiltin = () => {
    if (!builtin) {
      if (!baseUrl) throw new Error('the control plane is not listening yet');
      builtin = createBuiltinStore({
        dir: path.join(config.dataDir, 'objects'),
        publicUrl: baseUrl,
        bucket: config.bucket,
        accessKeyId: secrets.storeAccessKeyId,
        secretAccessKey: secrets.storeSecretAccessKey,
        now,
      });
    }
    return builtin;
  };
  const store: ObjectStore =
    config.s3.kind === 'external'
      ? createS3Store(config.s3)
      : {
          presignPut: (o) => getBuiltin().presignPut(o),
          presignGet: (o) => getBuiltin().presignGet(o),
          head: (k) => getBuiltin().head(k),
          delete: (k) => getBuiltin().delete(k),
        };

  const accounts = createAccountsService({ db, now });
  const templates = createTemplatesService({ db, catalog: opts.catalog ?? defaultTemplateCatalog(), now });
  const checkPublicUrl = opts.checkPublicUrl ?? createUrlPolicy(config, opts.lookup);
  const jobs = createJobsService({ db, store, templates, checkPublicUrl, cursorKey: secrets.cursorKey, now });
  const uploads = createUploadsService({ db, store, now });
  const transcripts = createTranscriptsService({ db, jobs });
  const hub = createAgentHub();
  const onlineNodes = new Set<string>();
  const agents = createAgentsService({
    db,
    store,
    hub,
    jobs,
    now,
    timings: { ...DEFAULT_AGENT_TIMINGS, leaseMs: config.leaseSeconds * 1000, deadlineBaseMs: config.deadlineBaseSeconds * 1000, ...opts.agentTimings },
    onEnded: (job) => jobs.events.emit('ended', job),
  });
  jobs.events.on('queued', () => {
    for (const nodeId of onlineNodes) hub.push(nodeId, { type: 'work-available' });
  });
  jobs.events.on('cancelled', (job) => {
    if (job.lease_owner) hub.push(job.lease_owner, { type: 'cancel', jobId: job.id });
  });
  const metrics = createMetrics({ db, now });
  jobs.events.on('ended', (job: { id: string; account_id: string; lease_owner: string | null; status: string; failure_code: string | null }) => {
    metrics.jobEnded(job);
    logger.info({ jobId: job.id, accountId: job.account_id, nodeId: job.lease_owner ?? undefined, status: job.status, failureCode: job.failure_code ?? undefined }, `job ${job.status}`);
  });
  const agentRouter = createAgentRouter({
    agents,
    hub,
    onCompleted: (input) => {
      if (!input.phaseSeconds) return;
      const phaseSeconds = input.phaseSeconds;
      void Promise.all([
        db.selectFrom('agent_nodes').select('name').where('id', '=', input.nodeId).executeTakeFirst(),
        db.selectFrom('jobs').select('quoted_seconds').where('id', '=', input.jobId).executeTakeFirst(),
      ]).then(
        ([node, job]) => metrics.jobCompleted({ node: node?.name ?? input.nodeId, phaseSeconds, mediaSeconds: job?.quoted_seconds ?? null }),
        (err: unknown) => log('metrics: job completion lookup failed', err),
      );
    },
  });
  // 'ended' fires after the transaction that queued the webhook row (finishJob) committed.
  const webhooks = createWebhooks({ db, config, accounts, jobs, now, log, lookup: opts.lookup, timings: opts.webhookTimings, onAttempt: (e) => metrics.webhookAttempt({ outcome: e.result.outcome, state: e.state, applied: e.applied }) });
  jobs.events.on('ended', () => webhooks.wake());

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(requestId());
  app.use(metrics.http());
  // One line per request: ids as fields, the route pattern and path without its query string.
  app.use((req, res, next) => {
    const started = performance.now();
    res.on('finish', () => {
      const caller = res.locals.caller as { accountId?: string } | undefined;
      const jobId = (res.locals.jobId as string | undefined) ?? (req.params?.id && req.route?.path?.includes('automation-jobs') ? req.params.id : undefined);
      logger.info(
        { requestId: res.locals.requestId, accountId: caller?.accountId, jobId, method: req.method, path: req.path, status: res.statusCode, ms: Math.round(performance.now() - started) },
        'request',
      );
    });
    next();
  });
  const adminOnly: express.RequestHandler = (req, _res, next) => {
    const token = bearer(req);
    next(token && safeEqual(token, adminToken) ? undefined : new ApiError('unauthenticated', 'Send the admin token as "Authorization: Bearer ..." (captionfarm admin reads it from the data dir).'));
  };
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
    res.json(buildOpenApiDocument(baseUrl));
  });
  app.use(
    '/v1',
    apiKeyAuth(async (key) => accounts.authenticate(key)),
    rateLimit(now),
    // A job may carry a transcript (up to 20,000 words): its route takes a larger, still bounded, body.
    ...jsonBody(config.maxJsonBytes, { 'POST /automation-jobs': config.maxJobJsonBytes }),
    publicRoutes({ jobs, uploads, templates, transcripts, extend: (r) => webhooks.mountPublic(r) }),
  );
  app.use(
    '/admin/v1',
    adminOnly,
    ...jsonBody(config.maxJsonBytes),
    adminRoutes({
      accounts,
      extend(r) {
        webhooks.mountAdmin(r);
        mountAgentAdmin(r, agents);
      },
    }),
  );
  app.use((req, _res, next) => next(new ApiError('not_found', `No route ${req.method} ${req.path}.`)));
  app.use(errorHandler(log));

  const server = createServer((req, res) => {
    if (config.s3.kind === 'builtin' && (req.url === '/s3' || req.url?.startsWith('/s3/'))) {
      getBuiltin().handle(req, res);
      return;
    }
    app(req, res);
  });
  server.requestTimeout = 0; // uploads of large files take long; the store enforces sizes.
  server.headersTimeout = 30_000;

  // Agents: tRPC over a websocket on the same server, authenticated by connectionParams.token.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  server.on('upgrade', (req, socket, head) => {
    if (req.url?.split('?')[0] !== '/agent') {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  const wsHandler = applyWSSHandler({
    wss,
    router: agentRouter,
    createContext: async ({ info }) => {
      const token = info.connectionParams?.token;
      const auth = typeof token === 'string' ? await agents.authenticate(token) : null;
      return { tokenId: auth?.tokenId ?? null };
    },
    keepAlive: { enabled: true, pingMs: 10_000, pongWaitMs: 5_000 },
  });
  agents.onRegistered = (nodeId: string) => onlineNodes.add(nodeId);

  // CAPTIONFARM_METRICS_LISTEN: /metrics alone, without the admin token, on an address the operator keeps private.
  let metricsServer: Server | undefined;
  if (config.metricsListen) {
    const metricsApp = express();
    metricsApp.disable('x-powered-by');
    metricsApp.get('/metrics', serveMetrics);
    metricsApp.use((_req, res) => res.status(404).end());
    metricsServer = createServer(metricsApp);
  }

  let timer: NodeJS.Timeout | undefined;
  async function sweep(): Promise<void> {
    await uploads.sweepUnclaimed();
    await agents.sweep();
    await webhooks.sweep();
  }

  const cp: ControlPlane = {
    config,
    db,
    adminToken,
    get url() {
      return baseUrl;
    },
    store,
    server,
    metrics,
    logger,
    services: { accounts, jobs, uploads, templates, agents, webhooks },
    async listen(port = config.port, host = config.host) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const addr = server.address() as AddressInfo;
      const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      if (!config.publicUrl) baseUrl = `http://${h === '0.0.0.0' || h === '[::]' ? '127.0.0.1' : h}:${addr.port}`;
      timer = setInterval(() => {
        sweep().catch((err) => log('sweep failed', err));
      }, config.sweepSeconds * 1000);
      timer.unref();
      if (metricsServer && config.metricsListen) {
        const { host: mHost, port: mPort } = config.metricsListen;
        await new Promise<void>((resolve, reject) => {
          metricsServer!.once('error', reject);
          metricsServer!.listen(mPort, mHost, () => resolve());
        });
      }
      webhooks.start();
      return baseUrl;
    },
    sweep,
    async close() {
      if (timer) clearInterval(timer);
      wsHandler.broadcastReconnectNotification();
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      if (metricsServer?.listening) await new Promise<void>((r) => metricsServer!.close(() => r()));
      await webhooks.close();
      await db.destroy();
    },
  };
  return cp;
}
