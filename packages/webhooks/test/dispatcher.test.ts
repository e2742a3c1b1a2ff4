import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createWebhookDispatcher, type DispatcherEvent, type WebhookDispatcherOptions } from '../src/dispatcher.ts';
import { RETRY_OFFSETS_MS, retryJitterBoundMs } from '../src/retry-schedule.ts';
import { createSafeFetch, type SafeFetch, type SafeFetchFn } from '@captionfarm/net';
import { generateWebhookId, generateWebhookSecret } from '../src/signing.ts';
import { verifyWebhookSignature } from '../../sdk/src/webhooks.ts';
import { createFakeLookup } from '../../net/test/helpers/fake-dns.ts';
import { createMemoryStore, type MemoryStore } from './helpers/memory-store.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../../net/test/helpers/receiver.ts';
import { createTestCertificates, TEST_HOSTNAME, type TestCertificates } from '../../net/test/helpers/test-ca.ts';

const H = 3_600_000;
const T0 = Date.UTC(2025, 5, 1, 12);

let certs: TestCertificates;
let receiver: Receiver;
let fetch: SafeFetch;
const secret = generateWebhookSecret();

function manualClock(start = T0): { t: number; now(): number } {
  return {
    t: start,
    now() {
      return this.t;
    },
  };
}

function enqueue(store: MemoryStore, createdAt: number, overrides: Partial<{ id: string; url: string; accountId: string }> = {}): string {
  const id = overrides.id ?? generateWebhookId();
  store.enqueue({
    id,
    accountId: overrides.accountId ?? 'acc_1',
    url: overrides.url ?? `https://${TEST_HOSTNAME}:${receiver.port}/hook`,
    body: JSON.stringify({ id: `job_${id}`, status: 'succeeded' }),
    createdAt,
  });
  return id;
}

function dispatcher(store: MemoryStore, clock: { now(): number }, extra: Partial<WebhookDispatcherOptions> = {}) {
  return createWebhookDispatcher({
    store,
    fetch,
    clock,
    secretsFor: () => [secret],
    random: () => 0,
    deliveryTimeoutMs: 2000,
    leaseMs: 60_000,
    ...extra,
  });
}

function requestsFor(id: string): ReceivedRequest[] {
  return receiver.requests.filter((r) => r.headers['webhook-id'] === id);
}

/** Resolves on the first event matching `pick`, or rejects after timeoutMs (no sleeps). */
function eventWaiter(timeoutMs = 15_000) {
  const listeners: Array<(e: DispatcherEvent) => void> = [];
  return {
    onEvent: (e: DispatcherEvent) => {
      for (const l of listeners) l(e);
    },
    next(pick: (e: DispatcherEvent) => boolean): Promise<DispatcherEvent> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('event did not come in time')), timeoutMs);
        listeners.push((e) => {
          if (pick(e)) {
            clearTimeout(timer);
            resolve(e);
          }
        });
      });
    },
  };
}

beforeAll(async () => {
  certs = await createTestCertificates();
  receiver = await startReceiver(certs, (_req, res) => res.end());
  fetch = createSafeFetch({ allowLoopbackForTests: true, ca: certs.ca, lookup: createFakeLookup() });
});
beforeEach(() => receiver.setHandler((_req, res) => res.writeHead(200).end()));
afterAll(async () => {
  await fetch?.close();
  await receiver?.close();
  certs?.cleanup();
});

describe('webhook dispatcher on a compressed clock', () => {
  it('retries a 500 on the exact schedule, then gives up after 24 h', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const id = enqueue(store, clock.t);
    const verified: boolean[] = [];
    receiver.setHandler((req, res) => {
      // The SDK's verifier (it throws on a bad delivery), at the compressed clock's time.
      try {
        verifyWebhookSignature({ body: req.body, headers: req.headers, secret, now: clock.t });
        verified.push(true);
      } catch {
        verified.push(false);
      }
      res.writeHead(500).end();
    });
    const d = dispatcher(store, clock);
    const row = store.rows.get(id)!;
    while (row.state === 'pending') {
      clock.t = row.nextAttemptAt - 1;
      expect((await d.tick()).claimed).toBe(0); // not due yet
      clock.t = row.nextAttemptAt;
      expect((await d.tick()).claimed).toBe(1);
    }
    expect(store.attempts.map((a) => a.startedAt - T0)).toEqual(RETRY_OFFSETS_MS);
    expect(store.attempts.map((a) => a.attemptNumber)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(store.attempts.every((a) => a.statusCode === 500 && a.error?.code === 'http_status')).toBe(true);
    expect(row).toMatchObject({ state: 'exhausted', exhaustedReason: 'attempts_exhausted', attemptCount: 8, firstAttemptAt: T0 });
    const reqs = requestsFor(id);
    expect(reqs).toHaveLength(8);
    // webhook-id stable, webhook-timestamp = the attempt's own time, each verifies then.
    expect(new Set(reqs.map((r) => r.headers['webhook-id']))).toEqual(new Set([id]));
    expect(reqs.map((r) => Number(r.headers['webhook-timestamp']) * 1000 - T0)).toEqual(RETRY_OFFSETS_MS);
    expect(verified).toEqual(Array(8).fill(true));
    clock.t += 100 * H;
    expect((await d.tick()).claimed).toBe(0);
  });

  it('retries receiver timeouts, with jitter inside its documented bound', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const id = enqueue(store, clock.t);
    receiver.setHandler(() => undefined); // never answers
    const d = dispatcher(store, clock, { deliveryTimeoutMs: 150, random: () => 0.999 });
    const row = store.rows.get(id)!;
    while (row.state === 'pending') {
      clock.t = row.nextAttemptAt;
      await d.tick();
    }
    expect(store.attempts).toHaveLength(8);
    expect(store.attempts.every((a) => a.error?.code === 'timeout' && a.statusCode === null)).toBe(true);
    store.attempts.forEach((a, i) => {
      const nominal = RETRY_OFFSETS_MS[i]!;
      const offset = a.startedAt - T0;
      expect(offset).toBeLessThanOrEqual(nominal);
      expect(offset).toBeGreaterThanOrEqual(nominal - retryJitterBoundMs(i + 1));
    });
    expect(row.state).toBe('exhausted');
  });

  it('stops after a success: no repeat once recorded', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const id = enqueue(store, clock.t);
    let calls = 0;
    receiver.setHandler((_req, res) => res.writeHead(++calls <= 2 ? 503 : 200).end());
    const d = dispatcher(store, clock);
    const row = store.rows.get(id)!;
    for (let i = 0; i < 3; i += 1) {
      clock.t = row.nextAttemptAt;
      await d.tick();
    }
    expect(row.state).toBe('delivered');
    expect(store.attempts.map((a) => a.kind)).toEqual(['retry', 'retry', 'delivered']);
    for (let i = 0; i < 5; i += 1) {
      clock.t += 25 * H;
      expect((await d.tick()).claimed).toBe(0);
    }
    expect(requestsFor(id)).toHaveLength(3);
  });

  it('410 Gone stops retries at once', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const id = enqueue(store, clock.t);
    receiver.setHandler((_req, res) => res.writeHead(410).end());
    const d = dispatcher(store, clock);
    expect(await d.tick()).toMatchObject({ claimed: 1, exhausted: 1 });
    expect(store.rows.get(id)).toMatchObject({ state: 'exhausted', exhaustedReason: 'gone', attemptCount: 1 });
    clock.t += 25 * H;
    expect((await d.tick()).claimed).toBe(0);
    expect(requestsFor(id)).toHaveLength(1);
  });

  it('a 3xx is a failed attempt, retried, never followed', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const id = enqueue(store, clock.t);
    receiver.setHandler((_req, res) => res.writeHead(301, { location: '/new' }).end());
    const d = dispatcher(store, clock);
    expect(await d.tick()).toMatchObject({ retrying: 1 });
    expect(store.attempts[0]).toMatchObject({ statusCode: 301, error: { code: 'redirect' } });
    expect(receiver.requests.filter((r) => r.url === '/new')).toHaveLength(0);
    expect(store.rows.get(id)!.nextAttemptAt).toBe(T0 + 5000);
  });

  it('signs with every active secret (rotation) and the official library verifies each', async () => {
    const store = createMemoryStore();
    const clock = { now: () => Date.now() };
    const previous = generateWebhookSecret();
    const id = enqueue(store, Date.now(), { accountId: 'acc_rot' });
    const d = dispatcher(store, clock, {
      secretsFor: (accountId) => (accountId === 'acc_rot' ? [secret, previous] : []),
    });
    expect(await d.tick()).toMatchObject({ delivered: 1 });
    const req = requestsFor(id)[0]!;
    expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const s of [secret, previous]) {
      expect(() => new Webhook(s).verify(req.body, req.headers as Record<string, string>)).not.toThrow();
    }
  });
});

describe('dispatcher leases and failures (at-least-once)', () => {
  it('two dispatchers on one store never send the same delivery twice', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const ids = Array.from({ length: 12 }, () => enqueue(store, clock.t));
    const a = dispatcher(store, clock, { concurrency: 4, owner: 'a' });
    const b = dispatcher(store, clock, { concurrency: 4, owner: 'b' });
    while ([...store.rows.values()].some((r) => r.state === 'pending')) {
      await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
    }
    for (const id of ids) expect(requestsFor(id)).toHaveLength(1);
    const owners = new Set(store.attempts.map((x) => x.owner));
    expect(owners).toEqual(new Set(['a', 'b']));
  });

  it('an attempt that outlives its lease is not recorded over the new owner', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const id = enqueue(store, clock.t);
    let release!: () => void;
    const slowFetch: SafeFetchFn = async (url, init) => {
      await new Promise<void>((r) => (release = r));
      return fetch(url, init);
    };
    const events: DispatcherEvent[] = [];
    const slow = dispatcher(store, clock, { fetch: slowFetch, owner: 'slow', leaseMs: 30_000, onEvent: (e) => events.push(e) });
    const fast = dispatcher(store, clock, { owner: 'fast', leaseMs: 30_000 });
    const slowTick = slow.tick();
    await new Promise<void>((r) => setImmediate(r));
    expect(store.rows.get(id)!.leaseOwner).toBe('slow');
    clock.t += 30_001; // slow's lease expired
    expect(await fast.tick()).toMatchObject({ claimed: 1, delivered: 1 });
    release();
    expect(await slowTick).toMatchObject({ claimed: 1, leaseLost: 1, delivered: 0 });
    expect(events).toContainEqual(expect.objectContaining({ type: 'attempt', applied: false }));
    expect(store.attempts).toHaveLength(1);
    expect(store.attempts[0]!.owner).toBe('fast');
    // At-least-once: the receiver may see it twice, deduplicating by webhook-id.
    expect(requestsFor(id).length).toBe(2);
  });

  it('a send whose result could not be recorded is sent again after the lease expires', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const id = enqueue(store, clock.t);
    const original = store.markDelivered.bind(store);
    let failOnce = true;
    store.markDelivered = (a) => {
      if (failOnce) {
        failOnce = false;
        throw new Error('database is locked');
      }
      return original(a);
    };
    const events: DispatcherEvent[] = [];
    const d = dispatcher(store, clock, { onEvent: (e) => events.push(e) });
    expect(await d.tick()).toMatchObject({ claimed: 1, skipped: 1 });
    expect(events).toContainEqual(expect.objectContaining({ type: 'error', stage: 'record', deliveryId: id }));
    expect((await d.tick()).claimed).toBe(0); // still leased
    clock.t += 60_000;
    expect(await d.tick()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(requestsFor(id)).toHaveLength(2);
    expect(store.rows.get(id)).toMatchObject({ state: 'delivered', attemptCount: 1 });
  });

  it('sends nothing when the account secret cannot be read, and tries again later', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const id = enqueue(store, clock.t);
    let broken = true;
    const events: DispatcherEvent[] = [];
    const d = dispatcher(store, clock, {
      secretsFor: () => {
        if (broken) throw new Error('secret store down');
        return [secret];
      },
      onEvent: (e) => events.push(e),
    });
    expect(await d.tick()).toMatchObject({ claimed: 1, skipped: 1 });
    expect(requestsFor(id)).toHaveLength(0);
    expect(events[0]).toMatchObject({ type: 'error', stage: 'secrets' });
    broken = false;
    clock.t += 60_000;
    expect(await d.tick()).toMatchObject({ delivered: 1 });
    expect(store.rows.get(id)!.attemptCount).toBe(1);
  });

  it('keeps going when the store fails to claim, and a throwing onEvent hook does not matter', async () => {
    const store = createMemoryStore();
    const clock = manualClock();
    const original = store.claimDue.bind(store);
    store.claimDue = () => {
      throw new Error('disk full');
    };
    const d = dispatcher(store, clock, {
      onEvent: () => {
        throw new Error('logger broke');
      },
    });
    expect(await d.tick()).toMatchObject({ claimed: 0 });
    store.claimDue = original;
    enqueue(store, clock.t);
    expect(await d.tick()).toMatchObject({ delivered: 1 });
  });

  it('rejects a lease no longer than the delivery deadline', () => {
    expect(() => dispatcher(createMemoryStore(), manualClock(), { leaseMs: 10_000, deliveryTimeoutMs: 10_000 })).toThrow(RangeError);
  });
});

describe('dispatcher start/stop loop', () => {
  it('runs the whole 24 h schedule in seconds on a stepped clock', async () => {
    // Virtual time moves one minute each time the dispatcher reads the clock, not with real time,
    // so how late an attempt may be is bounded by the loop's own reads (a claim, then the attempt's
    // start), whatever the load of the machine: 24 h is about 1,500 loop turns.
    const STEP = 60_000;
    let virtual = T0;
    const clock = { now: () => (virtual += STEP) };
    const store = createMemoryStore();
    const id = enqueue(store, T0);
    receiver.setHandler((_req, res) => res.writeHead(500).end());
    const waiter = eventWaiter(30_000);
    // A lease in virtual time must outlast a real-time attempt on this clock.
    const d = dispatcher(store, clock, { pollIntervalMs: 2, leaseMs: 1000 * H, onEvent: waiter.onEvent });
    const done = waiter.next((e) => e.type === 'attempt' && e.state === 'exhausted');
    d.start();
    await done;
    await d.stop();
    expect(store.rows.get(id)).toMatchObject({ state: 'exhausted', attemptCount: 8 });
    const first = store.attempts[0]!.startedAt;
    store.attempts.forEach((a, i) => {
      const offset = a.startedAt - first;
      expect(offset).toBeGreaterThanOrEqual(RETRY_OFFSETS_MS[i]!); // never early (random = 0)
      expect(offset).toBeLessThanOrEqual(RETRY_OFFSETS_MS[i]! + 3 * STEP); // and at most the loop's clock reads late
    });
    expect(requestsFor(id)).toHaveLength(8);
  });

  it('wake() delivers at once without waiting for the poll interval; stop() waits for in-flight work', async () => {
    const store = createMemoryStore();
    const clock = { now: () => Date.now() };
    const waiter = eventWaiter(5000);
    const d = dispatcher(store, clock, { pollIntervalMs: 3_600_000, onEvent: waiter.onEvent });
    d.start();
    d.start(); // idempotent
    const id = enqueue(store, Date.now());
    const delivered = waiter.next((e) => e.type === 'attempt' && e.deliveryId === id);
    d.wake();
    await delivered;
    expect(store.rows.get(id)!.state).toBe('delivered');

    receiver.setHandler((_req, res) => setTimeout(() => res.writeHead(200).end(), 300));
    const id2 = enqueue(store, Date.now());
    d.wake();
    await waitUntil(() => requestsFor(id2).length === 1); // arrived; the answer takes 300 ms
    expect(store.rows.get(id2)!.state).toBe('pending');
    await d.stop();
    expect(store.rows.get(id2)!.state).toBe('delivered'); // the in-flight attempt was recorded
  });
});

async function waitUntil(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
