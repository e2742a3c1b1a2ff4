import type { Router } from 'express';
import type { Db } from '@captionfarm/db';
import { createSafeFetch, type LookupFn, type SafeFetch } from '@captionfarm/net';
import { createWebhookDispatcher, type DispatcherEvent, type WebhookDispatcher } from '@captionfarm/webhooks';
import type { ControlPlaneConfig } from '../config.ts';
import type { AccountsService } from '../services/accounts.ts';
import type { JobsService } from '../jobs/service.ts';
import { createDeliveriesService, type DeliveriesService } from './deliveries.ts';
import { mountAdminWebhookRoutes, mountPublicWebhookRoutes } from './routes.ts';
import { createSqlWebhookStore } from './sql-store.ts';

export { createSqlWebhookStore } from './sql-store.ts';
export { createDeliveriesService, DELIVERY_RETENTION_MS } from './deliveries.ts';

/** Dispatcher tuning (tests shorten the poll interval and fix the jitter). Defaults: the package's. */
export interface WebhookTimings {
  /** Pause between dispatcher ticks when nothing was due. Default 1 s. */
  pollIntervalMs?: number;
  /** Lease on a claimed delivery; must exceed deliveryTimeoutMs. Default 60 s. */
  leaseMs?: number;
  /** Per-attempt deadline. Default 10 s (spec). */
  deliveryTimeoutMs?: number;
  /** Deliveries attempted concurrently per tick. Default 8. */
  concurrency?: number;
  /** Jitter source of the retry schedule, uniform [0, 1); () => 0 gives the nominal schedule. */
  random?: () => number;
}

export interface Webhooks {
  readonly dispatcher: WebhookDispatcher;
  readonly deliveries: DeliveriesService;
  /** The outbound client deliveries use (SSRF-safe; loopback only with config.unsafeTestNetwork). */
  readonly fetch: SafeFetch;
  /** Starts the dispatcher loop (on listen). */
  start(): void;
  /** Attempts what is due now: call after the transaction that queued a delivery committed. */
  wake(): void;
  /** Retention: delivered rows older than 30 days. */
  sweep(): Promise<number>;
  mountPublic(r: Router): void;
  mountAdmin(r: Router): void;
  /** Stops the loop after the attempt in flight, then closes the client. Idempotent. */
  close(): Promise<void>;
}

/**
 * The control plane's webhook part: the SQLite store, the dispatcher (secrets from the
 * accounts service, time from the control plane's clock), the safeFetch it sends through, and
 * the deliveries endpoints. finishJob queues the rows (the outbox); this sends them.
 */
export function createWebhooks(deps: {
  db: Db;
  config: Pick<ControlPlaneConfig, 'unsafeTestNetwork' | 'allowedPrivateNetworks' | 'log'>;
  accounts: Pick<AccountsService, 'webhookSecrets'>;
  jobs: JobsService;
  now: () => Date;
  log: (msg: string, extra?: unknown) => void;
  /** Injected DNS (tests); every answer is still checked. */
  lookup?: LookupFn;
  timings?: WebhookTimings;
  /** Every delivery attempt (metrics). */
  onAttempt?: (e: Extract<DispatcherEvent, { type: 'attempt' }>) => void;
}): Webhooks {
  const { config } = deps;
  const test = config.unsafeTestNetwork;
  const fetch = createSafeFetch({
    // Only the boolean true from a config object a test built opens loopback (never env).
    ...(test?.allowLoopback === true ? { allowLoopbackForTests: true, ca: test.ca } : {}),
    // The operator's networks (CAPTIONFARM_ALLOWED_PRIVATE_NETWORKS); a private CA: NODE_EXTRA_CA_CERTS.
    allowedNetworks: config.allowedPrivateNetworks,
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
  });
  const deliveries = createDeliveriesService({ db: deps.db, now: deps.now });
  const onEvent = (e: DispatcherEvent): void => {
    if (e.type === 'error') deps.log(`webhook ${e.stage} error${e.deliveryId ? ` (${e.deliveryId})` : ''}`, e.error);
    else deps.onAttempt?.(e);
    if (e.type === 'attempt' && config.log === 'debug') {
      deps.log(
        `webhook ${e.deliveryId} attempt ${e.attemptNumber}: ${e.result.outcome} ${e.result.statusCode ?? e.result.error?.code ?? ''} ` +
          `-> ${e.state}${e.applied ? '' : ' (lease lost)'}`,
      );
    }
  };
  const dispatcher = createWebhookDispatcher({
    store: createSqlWebhookStore(deps.db),
    fetch,
    secretsFor: (accountId) => deps.accounts.webhookSecrets(accountId),
    clock: { now: () => deps.now().getTime() },
    onEvent,
    ...deps.timings,
  });
  let closing: Promise<void> | undefined;
  return {
    dispatcher,
    deliveries,
    fetch,
    start: () => dispatcher.start(),
    wake: () => dispatcher.wake(),
    sweep: () => deliveries.sweep(),
    mountPublic: (r) => mountPublicWebhookRoutes(r, { jobs: deps.jobs, deliveries }),
    mountAdmin: (r) => mountAdminWebhookRoutes(r, { deliveries, wake: () => dispatcher.wake() }),
    close() {
      closing ??= (async () => {
        await dispatcher.stop();
        await fetch.close();
      })();
      return closing;
    },
  };
}
