import type { Server } from 'node:http';
import path from 'node:path';
import { createAgentsService, type AgentTimings } from './agents/service.ts';
import { agentTimingsOf, attachAgents, createAgentLink } from './agents/wiring.ts';
import type { Db } from '@captionfarm/db';
import type { ObjectStore } from '@captionfarm/storage';
import type { ControlPlaneConfig } from './config.ts';
import { createHttpApp } from './http/app.ts';
import { createHttpServer } from './http/server.ts';
import { createBaseUrl, createLifecycle } from './lifecycle.ts';
import { createMetricsServer } from './metrics-server.ts';
import { createControlPlaneStore } from './object-store.ts';
import { openControlPlaneBase } from './setup.ts';
import { createSweeps, deleteSpentRows } from './sweeps.ts';
import { createAuthFailureLimiter } from './http/auth-failures.ts';
import { createClientAddress, parseTrustedProxies } from './http/client-address.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { createPreviewPool, type PreviewPool } from './preview-pool.ts';
import { createAccountsService } from './services/accounts.ts';
import { createAdmission } from './jobs/admission.ts';
import { createJobsService, type UrlPolicy } from './jobs/service.ts';
import { probeUpload } from './jobs/probe-upload.ts';
import { wireJobEvents } from './jobs/events.ts';
import { createTemplatesService, type TemplateCatalog } from './services/templates.ts';
import { createTranscriptsService } from './services/transcripts.ts';
import { createEditsService } from './services/edits.ts';
import { createOutputsService } from './services/outputs.ts';
import { createProfanityWordsService } from './services/profanity-words.ts';
import { createTranscriptWork, type TranscriptWork } from './transcript-work.ts';
import { createUploadsService } from './services/uploads.ts';
import { createFontsService, fontIdsOf } from './services/fonts.ts';
import { defaultTemplateCatalog } from './template-catalog.ts';
import { createUrlPolicy } from './url-policy.ts';
import { createWebhooks, type Webhooks, type WebhookTimings } from './webhooks/index.ts';
import { createPasswords, type Passwords } from './dashboard/passwords.ts';
import type { SignInLimits } from './dashboard/sign-in-limits.ts';
import { createUsersService } from './dashboard/users.ts';
import type { LookupFn } from '@captionfarm/net';
import type { Logger } from '@captionfarm/log';

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
  /** Built dashboard to serve at `/` (default: apps/dashboard/dist). */
  dashboardDir?: string;
  /** Sign-in limits (tests lower the window's counts; the defaults are 5 failures per email and address, 30 per address, 15 min). */
  signInLimits?: SignInLimits;
  /** Where log lines go (default: stderr, unless config.log is 'silent'); tests capture them. */
  log?: (msg: string, extra?: unknown) => void;
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
    fonts: ReturnType<typeof createFontsService>;
    users: ReturnType<typeof createUsersService>;
    passwords: Passwords;
    transcriptWork: TranscriptWork;
    previews: PreviewPool;
  };
  listen(port?: number, host?: string): Promise<string>;
  /** One pass of the sweepers (expired uploads, ...); also run on a timer once listening. */
  sweep(): Promise<void>;
  close(): Promise<void>;
}

export async function createControlPlane(config: Readonly<ControlPlaneConfig>, opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const { now, secrets, adminToken, db, logger, log } = await openControlPlaneBase(config, opts);
  const authFailures = createAuthFailureLimiter({ perMinute: config.authFailuresPerMinute, now, log });
  const clientAddress = createClientAddress(parseTrustedProxies(config.trustedProxies));

  const baseUrl = createBaseUrl(config.publicUrl);
  const objects = createControlPlaneStore({ config, secrets, now, baseUrl: baseUrl.get, beforePut: (key) => uploads.refusePut(key) });
  const { store } = objects;

  const accounts = createAccountsService({ db, now });
  const fonts = createFontsService({ db, store, now, cacheDir: path.join(config.dataDir, 'font-cache') });
  const requireFonts = (accountId: string, template: unknown, path: string) => fonts.requireReady(accountId, fontIdsOf(template), path);
  // One thread hashes passwords (about 5 sign-ins a second), addresses taking turns (passwords.ts).
  const passwords = createPasswords({ threads: 1 });
  const users = createUsersService({ db, now, passwords });
  const templates = createTemplatesService({ db, catalog: opts.catalog ?? defaultTemplateCatalog(), now, requireFonts });
  const checkPublicUrl = opts.checkPublicUrl ?? createUrlPolicy(config, opts.lookup);
  const admission = createAdmission({ db, now, onReserved: (jobId) => jobs.events.emit('queued', jobId), onEnded: (job) => jobs.events.emit('ended', job) });
  const jobs = createJobsService({
    db,
    store,
    templates,
    checkPublicUrl,
    requireFonts,
    cursorKey: secrets.cursorKey,
    now,
    probeUpload: (key) => probeUpload(store, key),
    admit: (accountId) => admission.admit(accountId),
  });
  const uploads = createUploadsService({ db, store, now });
  // Large transcripts are parsed, validated and exported on a thread of their own (transcript-work.ts).
  const transcriptWork = createTranscriptWork({ threads: 1 });
  const transcripts = createTranscriptsService({ db, jobs, work: transcriptWork });
  const edits = createEditsService({ db, jobs });
  const outputs = createOutputsService({ jobs, now });
  const profanityWords = createProfanityWordsService({ db });
  const agentLink = createAgentLink({ databaseUrl: config.databaseUrl, db, log });
  const timings = agentTimingsOf(config, opts.agentTimings);
  const agents = createAgentsService({
    db,
    store,
    hub: agentLink.hub,
    jobs,
    now,
    timings,
    onEnded: (job) => jobs.events.emit('ended', job),
    leasedFonts: (accountId, template) => fonts.leasedFonts(accountId, fontIdsOf(template)),
    onMinutesFreed: (accountId) => void admission.admit(accountId).catch((err: unknown) => log('admission failed', err)),
  });
  const metrics = createMetrics({ db, now });
  const webhooks = createWebhooks({
    db,
    config,
    accounts,
    jobs,
    now,
    log,
    lookup: opts.lookup,
    timings: opts.webhookTimings,
    onAttempt: (e) => metrics.webhookAttempt({ outcome: e.result.outcome, state: e.state, applied: e.applied }),
  });
  wireJobEvents(jobs.events, { hub: agentLink.hub, metrics, logger, log, webhooks, uploads, admission });

  const previews = createPreviewPool({ threads: config.previewThreads });
  const shared = { config, db, now, log, logger, metrics, authFailures, clientAddress };
  const services = { accounts, jobs, uploads, templates, agents, webhooks, previews, users, fonts, passwords, transcriptWork };
  const http = createHttpApp({
    ...shared,
    adminToken,
    baseUrl: baseUrl.get,
    services: { ...services, transcripts, edits, outputs, profanityWords },
    dashboardDir: opts.dashboardDir,
    signInLimits: opts.signInLimits,
  });
  const server = createHttpServer({ headersTimeoutSeconds: config.headersTimeoutSeconds, store: objects.handle, hot: http.hot, app: http.app });
  const agentEndpoint = attachAgents({ ...shared, link: agentLink, agents, server, graceMs: timings.disconnectGraceMs });
  const metricsServer = createMetricsServer(config.metricsListen, http.serveMetrics);
  // Part files of PUTs that a killed process left behind; none of this process is in flight yet.
  await objects.removeKilledParts();
  const sweeps = createSweeps({
    sweepers: [
      () => uploads.sweepUnclaimed(),
      () => fonts.sweepPending(),
      () => uploads.deleteEndedSources(),
      () => objects.sweepIdleParts(),
      () => agents.sweep(),
      () => admission.admitAll(),
      () => webhooks.sweep(),
      () => deleteSpentRows(db, now),
    ],
    intervalSeconds: config.sweepSeconds,
    log,
  });
  const lifecycle = createLifecycle({
    server,
    baseUrl,
    afterListen: [() => sweeps.start(), () => metricsServer.listen(), () => webhooks.start()],
    beforeClose: [sweeps, agentEndpoint],
    afterClose: [metricsServer, webhooks, previews, passwords, transcriptWork, agentLink.bus, { close: () => db.destroy() }],
  });

  return {
    config,
    db,
    adminToken,
    get url() {
      return baseUrl.get();
    },
    store,
    server,
    metrics,
    logger,
    services,
    listen: (port = config.port, host = config.host) => lifecycle.listen(port, host),
    sweep: () => sweeps.sweep(),
    close: () => lifecycle.close(),
  };
}
