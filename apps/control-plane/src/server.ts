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
import { buildOpenApiDocument } from './openapi.ts';
import { adminRoutes } from './routes/admin.ts';
import { publicRoutes } from './routes/public.ts';
import { loadOrCreateSecrets } from './secrets.ts';
import { createAccountsService } from './services/accounts.ts';
import { createJobsService, type UrlPolicy } from './services/jobs.ts';
import { createTemplatesService, type TemplateCatalog } from './services/templates.ts';
import { createTranscriptsService } from './services/transcripts.ts';
import { createUploadsService } from './services/uploads.ts';
import { createFontsService, fontIdsOf } from './services/fonts.ts';
import { defaultTemplateCatalog } from './template-catalog.ts';
import { createUrlPolicy } from './url-policy.ts';
import { createWebhooks, type Webhooks, type WebhookTimings } from './webhooks/index.ts';
import type { LookupFn } from '@captionfarm/webhooks';

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
}

export interface ControlPlane {
  readonly config: Readonly<ControlPlaneConfig>;
  readonly db: Db;
  readonly adminToken: string;
  /** Base URL once listening (the public URL when configured). */
  readonly url: string;
  readonly store: ObjectStore;
  readonly server: Server;
  readonly services: {
    accounts: ReturnType<typeof createAccountsService>;
    jobs: ReturnType<typeof createJobsService>;
    uploads: ReturnType<typeof createUploadsService>;
    templates: ReturnType<typeof createTemplatesService>;
    agents: ReturnType<typeof createAgentsService>;
    webhooks: Webhooks;
    fonts: ReturnType<typeof createFontsService>;
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
  const log = (msg: string, extra?: unknown) => {
    if (config.log !== 'silent') console.error(`[control-plane] ${msg}`, extra ?? '');
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
  const fonts = createFontsService({ db, store, now });
  const requireFonts = (accountId: string, template: unknown, path: string) => fonts.requireReady(accountId, fontIdsOf(template), path);
  const templates = createTemplatesService({ db, catalog: opts.catalog ?? defaultTemplateCatalog(), now, requireFonts });
  const checkPublicUrl = opts.checkPublicUrl ?? createUrlPolicy(config, opts.lookup);
  const jobs = createJobsService({ db, store, templates, checkPublicUrl, requireFonts, cursorKey: secrets.cursorKey, now });
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
    leasedFonts: (accountId, template) => fonts.leasedFonts(accountId, fontIdsOf(template)),
  });
  jobs.events.on('queued', () => {
    for (const nodeId of onlineNodes) hub.push(nodeId, { type: 'work-available' });
  });
  jobs.events.on('cancelled', (job) => {
    if (job.lease_owner) hub.push(job.lease_owner, { type: 'cancel', jobId: job.id });
  });
  const agentRouter = createAgentRouter({ agents, hub });
  // 'ended' fires after the transaction that queued the webhook row (finishJob) committed.
  const webhooks = createWebhooks({ db, config, accounts, jobs, now, log, lookup: opts.lookup, timings: opts.webhookTimings });
  jobs.events.on('ended', () => webhooks.wake());

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(requestId());
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
    publicRoutes({ jobs, uploads, templates, transcripts, fonts, extend: (r) => webhooks.mountPublic(r) }),
  );
  app.use(
    '/admin/v1',
    (req, _res, next) => {
      const token = bearer(req);
      next(token && safeEqual(token, adminToken) ? undefined : new ApiError('unauthenticated', 'Send the admin token as "Authorization: Bearer ..." (captionfarm admin reads it from the data dir).'));
    },
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
    services: { accounts, jobs, uploads, templates, agents, webhooks, fonts },
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
      await webhooks.close();
      await db.destroy();
    },
  };
  return cp;
}
