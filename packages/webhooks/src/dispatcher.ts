import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { deliverWebhook, WEBHOOK_DEADLINE_MS, type DeliveryResult } from './deliver.ts';
import { nextAttemptAt } from './retry-schedule.ts';
import type { SafeFetchFn } from '@captionfarm/net';

/** A webhook waiting to be delivered, as `claimDue` returns it. One row per job event. */
export interface WebhookDelivery {
  /** `webhook-id`: stable across retries (e.g. from generateWebhookId()). */
  id: string;
  accountId: string;
  url: string;
  /** Raw JSON (the job record), sent and signed byte for byte on every attempt. */
  body: string;
  /** Attempts recorded so far; 0 for a new delivery. */
  attemptCount: number;
  /** Epoch ms when attempt 1 started; null before it. */
  firstAttemptAt: number | null;
  /** Epoch ms when the next attempt is due. */
  nextAttemptAt: number;
}

export interface ClaimDueArgs {
  /** Clock time of the dispatcher: compare with THIS, not the database's own clock. */
  now: number;
  limit: number;
  /** Lease owner to write; every later update is guarded by it. */
  owner: string;
  /** Lease expiry to write (now + leaseMs). */
  leaseUntil: number;
}

/** What one finished attempt records. */
export interface AttemptRecord {
  deliveryId: string;
  /** Guard: update only if the row is still leased by this owner... */
  owner: string;
  /** ...and its attempt count is still attemptNumber - 1. 1-based. */
  attemptNumber: number;
  /** Epoch ms of attempt 1 (set it on the row when attemptNumber is 1). */
  firstAttemptAt: number;
  /** Epoch ms (dispatcher clock) when this attempt started. */
  startedAt: number;
  durationMs: number;
  outcome: DeliveryResult['outcome'];
  statusCode: number | null;
  error: DeliveryResult['error'];
}

type MaybePromise<T> = T | Promise<T>;

/**
 * Persistence the dispatcher needs; the control plane implements it on its database. Every
 * method taking an AttemptRecord does, in ONE transaction: insert the attempt into the attempt
 * log, and update the delivery row only `where id = deliveryId and lease_owner = owner and
 * attempt_count = attemptNumber - 1 and state = 'pending'`, clearing the lease. It returns
 * false (and writes nothing) when the guard does not match: the lease was lost. See README.
 */
export interface WebhookStore {
  /**
   * Atomically lease up to `limit` deliveries with state 'pending', next_attempt_at <= now,
   * and no live lease (lease_until is null or <= now), oldest next_attempt_at first: set
   * lease_owner = owner, lease_until = leaseUntil, return them. Two concurrent calls never
   * return the same row (one UPDATE ... RETURNING; SKIP LOCKED on PostgreSQL).
   */
  claimDue(args: ClaimDueArgs): MaybePromise<WebhookDelivery[]>;
  /** Failed attempt, more to come: attempt_count = attemptNumber, next_attempt_at = nextAttemptAt. */
  recordAttempt(args: AttemptRecord & { nextAttemptAt: number }): MaybePromise<boolean>;
  /** 2xx: state = 'delivered'. Never claimed again. */
  markDelivered(args: AttemptRecord): MaybePromise<boolean>;
  /** 410, or the schedule is exhausted: state = 'exhausted' (reason recorded). Never claimed again. */
  markExhausted(args: AttemptRecord & { reason: 'gone' | 'attempts_exhausted' }): MaybePromise<boolean>;
}

export interface Clock {
  /** Epoch ms. */
  now(): number;
}

export type DispatcherEvent =
  | {
      type: 'attempt';
      deliveryId: string;
      accountId: string;
      url: string;
      attemptNumber: number;
      result: DeliveryResult;
      state: 'delivered' | 'retrying' | 'exhausted';
      nextAttemptAt: number | null;
      /** false: the store's guard refused the update (lease lost); someone else owns it now. */
      applied: boolean;
    }
  | {
      type: 'error';
      stage: 'claim' | 'secrets' | 'deliver' | 'record';
      deliveryId?: string;
      error: unknown;
    };

export interface WebhookDispatcherOptions {
  store: WebhookStore;
  /** A safeFetch instance. */
  fetch: SafeFetchFn;
  /** Active secrets of the account (current, plus previous during a rotation). */
  secretsFor(accountId: string): MaybePromise<readonly string[]>;
  /** Default: Date.now. Inject to compress time in tests. */
  clock?: Clock;
  /** Jitter source for the retry schedule, uniform [0, 1). Default Math.random. */
  random?: () => number;
  /** Lease owner id. Default `<hostname>:<pid>:<random>`. */
  owner?: string;
  /** Deliveries claimed per tick, sent concurrently. Default 8. */
  concurrency?: number;
  /** Lease length; must exceed deliveryTimeoutMs. Default 60 s. */
  leaseMs?: number;
  /** Per-attempt deadline. Default 10 s (spec). */
  deliveryTimeoutMs?: number;
  /** Real-time pause between ticks of start()'s loop when nothing was due. Default 1 s. */
  pollIntervalMs?: number;
  /** Logging / metrics hook. Must not throw. */
  onEvent?: (event: DispatcherEvent) => void;
}

export interface TickSummary {
  claimed: number;
  delivered: number;
  retrying: number;
  exhausted: number;
  /** Not attempted this tick (secrets unavailable, bad secret); its lease expires and it is retried. */
  skipped: number;
  leaseLost: number;
}

export interface WebhookDispatcher {
  readonly owner: string;
  /** Claims what is due now and attempts it; resolves when those attempts are recorded. */
  tick(): Promise<TickSummary>;
  /** Ticks in a loop until stop(). */
  start(): void;
  /** Ends the loop after the in-flight tick (at most one delivery deadline). */
  stop(): Promise<void>;
  /** Runs the next tick now (e.g. right after a job ends and queues its webhook). */
  wake(): void;
}

export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const clock = options.clock ?? { now: () => Date.now() };
  const random = options.random ?? Math.random;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const concurrency = options.concurrency ?? 8;
  const deliveryTimeoutMs = options.deliveryTimeoutMs ?? WEBHOOK_DEADLINE_MS;
  const leaseMs = options.leaseMs ?? 60_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  if (!(leaseMs > deliveryTimeoutMs)) {
    throw new RangeError('leaseMs must exceed deliveryTimeoutMs, or a slow attempt loses its lease.');
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be >= 1');
  const d: DispatcherConfig = {
    options,
    clock,
    random,
    owner,
    concurrency,
    deliveryTimeoutMs,
    leaseMs,
    emit: (event) => {
      try {
        options.onEvent?.(event);
      } catch {
        // A logging hook must not break delivery.
      }
    },
  };
  // Ticks never overlap within one dispatcher (a manual tick() waits for the loop's).
  let chain: Promise<unknown> = Promise.resolve();
  const runTick = (): Promise<TickSummary> => runTickOf(d);
  const tick = (): Promise<TickSummary> => {
    const run = chain.then(runTick, runTick);
    chain = run.catch(() => undefined);
    return run;
  };

  let loop: Promise<void> | undefined;
  let stopping = false;
  let wakeSleeper: (() => void) | undefined;
  let wakeRequested = false;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (wakeRequested || stopping) {
        wakeRequested = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wakeSleeper = undefined;
        wakeRequested = false;
        resolve();
      }
      wakeSleeper = done;
    });

  return {
    owner,
    tick,
    start() {
      if (loop) return;
      stopping = false;
      loop = (async () => {
        while (!stopping) {
          const summary = await tick();
          // A full batch means more may be due: go again at once.
          if (summary.claimed >= concurrency && summary.skipped === 0) continue;
          await sleep(pollIntervalMs);
        }
      })();
    },
    async stop() {
      stopping = true;
      wakeSleeper?.();
      await loop;
      loop = undefined;
    },
    wake() {
      wakeRequested = true;
      wakeSleeper?.();
    },
  };
}

/** A dispatcher's settings, resolved once: what its attempts and ticks read. */
interface DispatcherConfig {
  readonly options: WebhookDispatcherOptions;
  readonly clock: Clock;
  readonly random: () => number;
  readonly owner: string;
  readonly concurrency: number;
  readonly deliveryTimeoutMs: number;
  readonly leaseMs: number;
  /** options.onEvent, which never throws. */
  readonly emit: (event: DispatcherEvent) => void;
}

type Step = 'delivered' | 'retrying' | 'exhausted' | 'skipped' | 'leaseLost';

/** One attempt of `delivery`, recorded: what became of it. */
async function attempt(d: DispatcherConfig, delivery: WebhookDelivery): Promise<Step> {
  const { options, clock, emit } = d;
  const startedAt = clock.now();
  let secrets: readonly string[];
  try {
    secrets = await options.secretsFor(delivery.accountId);
    if (secrets.length === 0) throw new Error(`account ${delivery.accountId} has no webhook secret`);
  } catch (error) {
    emit({ type: 'error', stage: 'secrets', deliveryId: delivery.id, error });
    return 'skipped';
  }
  let result: DeliveryResult;
  try {
    result = await deliverWebhook({
      url: delivery.url,
      id: delivery.id,
      timestamp: Math.floor(startedAt / 1000),
      body: delivery.body,
      secrets,
      fetch: options.fetch,
      timeoutMs: d.deliveryTimeoutMs,
    });
  } catch (error) {
    // Bad arguments (malformed secret): nothing was sent. Leave the lease to expire.
    emit({ type: 'error', stage: 'deliver', deliveryId: delivery.id, error });
    return 'skipped';
  }
  const attemptNumber = delivery.attemptCount + 1;
  const record: AttemptRecord = {
    deliveryId: delivery.id,
    owner: d.owner,
    attemptNumber,
    firstAttemptAt: delivery.firstAttemptAt ?? startedAt,
    startedAt,
    durationMs: result.durationMs,
    outcome: result.outcome,
    statusCode: result.statusCode,
    error: result.error,
  };
  let state: 'delivered' | 'retrying' | 'exhausted';
  let next: number | null = null;
  let applied: boolean;
  try {
    if (result.outcome === 'success') {
      state = 'delivered';
      applied = await options.store.markDelivered(record);
    } else if (result.outcome === 'gone') {
      state = 'exhausted';
      applied = await options.store.markExhausted({ ...record, reason: 'gone' });
    } else {
      next = nextAttemptAt({
        firstAttemptAt: record.firstAttemptAt,
        attemptNumber,
        now: clock.now(),
        random: d.random,
      });
      if (next === null) {
        state = 'exhausted';
        applied = await options.store.markExhausted({ ...record, reason: 'attempts_exhausted' });
      } else {
        state = 'retrying';
        applied = await options.store.recordAttempt({ ...record, nextAttemptAt: next });
      }
    }
  } catch (error) {
    // Sent but not recorded: the lease expires and it is sent again (at-least-once).
    emit({ type: 'error', stage: 'record', deliveryId: delivery.id, error });
    return 'skipped';
  }
  emit({
    type: 'attempt',
    deliveryId: delivery.id,
    accountId: delivery.accountId,
    url: delivery.url,
    attemptNumber,
    result,
    state,
    nextAttemptAt: next,
    applied,
  });
  return applied ? state : 'leaseLost';
}

/** Claims what is due now and attempts it, all at once. */
async function runTickOf(d: DispatcherConfig): Promise<TickSummary> {
  const { options, clock, emit, concurrency, owner } = d;
  const summary: TickSummary = { claimed: 0, delivered: 0, retrying: 0, exhausted: 0, skipped: 0, leaseLost: 0 };
  const now = clock.now();
  let due: WebhookDelivery[];
  try {
    due = await options.store.claimDue({ now, limit: concurrency, owner, leaseUntil: now + d.leaseMs });
  } catch (error) {
    emit({ type: 'error', stage: 'claim', error });
    return summary;
  }
  summary.claimed = due.length;
  const steps = await Promise.all(due.map((delivery) => attempt(d, delivery)));
  for (const step of steps) summary[step] += 1;
  return summary;
}
