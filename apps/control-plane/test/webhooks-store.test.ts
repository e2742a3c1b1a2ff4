import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '@captionfarm/contracts';
import { openDatabase, type Db, type DeliveryState } from '@captionfarm/db';
import { freshTestDatabase, type TestDatabase } from '@captionfarm/db/testing';
import type { AttemptRecord, WebhookStore } from '@captionfarm/webhooks';
import { iso } from '../src/webhooks/iso-time.ts';
import { createDeliveriesService, createSqlWebhookStore, DELIVERY_RETENTION_MS } from '../src/webhooks/index.ts';

// The store contract of packages/webhooks (README "The store contract"), against real SQLite files
// (or a real PostgreSQL database with CAPTIONFARM_TEST_DATABASE_URL).

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const LEASE = 60_000;
const DAY = 24 * 60 * 60 * 1000;

let dir: string;
let db: Db;
let testDb: TestDatabase;
/** The same database again, as another process would open it. */
const openSame = () => (testDb.url ? openDatabase({ url: testDb.url }) : openDatabase({ path: path.join(dir, 'db.sqlite') }));
let store: WebhookStore;
let seq = 0;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cf-whstore-'));
  testDb = await freshTestDatabase();
  db = await openSame();
  store = createSqlWebhookStore(db);
});
afterEach(async () => {
  await db.destroy();
  await testDb.drop();
  await rm(dir, { recursive: true, force: true });
});

async function insertDelivery(over: { status?: DeliveryState; nextAt?: number | null; deliveredAt?: number; createdAt?: number } = {}): Promise<string> {
  seq += 1;
  const id = `msg_test${seq}`;
  await db
    .insertInto('webhook_deliveries')
    .values({
      id,
      job_id: `job-${seq}`,
      account_id: 'acct-1',
      url: 'https://hooks.example.com/x',
      payload: `{"id":"job-${seq}"}`,
      status: over.status ?? 'pending',
      first_attempt_at: null,
      next_attempt_at: over.nextAt === null ? null : iso(over.nextAt ?? T0),
      last_attempt_at: null,
      last_status_code: null,
      last_error: null,
      claimed_until: null,
      created_at: iso(over.createdAt ?? T0),
      delivered_at: over.deliveredAt === undefined ? null : iso(over.deliveredAt),
    })
    .execute();
  return id;
}

function attempt(deliveryId: string, owner: string, attemptNumber: number, at: number, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    deliveryId,
    owner,
    attemptNumber,
    firstAttemptAt: at,
    startedAt: at,
    durationMs: 12,
    outcome: 'retry',
    statusCode: 500,
    error: { code: 'http_status', message: 'the receiver answered HTTP 500' },
    ...over,
  };
}

const row = (id: string) => db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const attemptsOf = (id: string) => db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('attempt').execute();

describe('claimDue', () => {
  it('leases pending, due, unleased rows, oldest first, at most `limit`, with time from the arguments', async () => {
    const late = await insertDelivery({ nextAt: T0 + 1000 });
    const early = await insertDelivery({ nextAt: T0 - 5000 });
    const future = await insertDelivery({ nextAt: T0 + 60_000 });
    await insertDelivery({ status: 'delivered', nextAt: T0 - 9000 });
    await insertDelivery({ status: 'exhausted', nextAt: T0 - 9000 });

    const got = await store.claimDue({ now: T0 + 1000, limit: 10, owner: 'A', leaseUntil: T0 + 1000 + LEASE });
    expect(got.map((d) => d.id)).toEqual([early, late]);
    expect(got[0]).toEqual({
      id: early,
      accountId: 'acct-1',
      url: 'https://hooks.example.com/x',
      body: expect.stringContaining('"id"'),
      attemptCount: 0,
      firstAttemptAt: null,
      nextAttemptAt: T0 - 5000,
    });
    expect(await row(early)).toMatchObject({ lease_owner: 'A', claimed_until: iso(T0 + 1000 + LEASE) });
    expect((await row(future)).lease_owner).toBeNull();

    // Leased rows are not claimed again while the lease lasts, and limit holds.
    expect(await store.claimDue({ now: T0 + 2000, limit: 10, owner: 'B', leaseUntil: T0 + 2000 + LEASE })).toEqual([]);
    const more = await store.claimDue({ now: T0 + 60_000, limit: 1, owner: 'B', leaseUntil: T0 + 60_000 + LEASE });
    expect(more.map((d) => d.id)).toEqual([future]);
  });

  it('two database connections (two processes) claiming at once never get the same row', async () => {
    const other = await openSame();
    try {
      const otherStore = createSqlWebhookStore(other);
      const ids = [];
      for (let i = 0; i < 30; i += 1) ids.push(await insertDelivery({ nextAt: T0 - i }));
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? store : otherStore).claimDue({ now: T0, limit: 3, owner: `owner-${i}`, leaseUntil: T0 + LEASE })),
      );
      const claimed = claims.flat().map((d) => d.id);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.sort()).toEqual([...ids].sort());
    } finally {
      await other.destroy();
    }
  });

  it('an expired lease is claimed again; the first owner then loses its write, the new owner records', async () => {
    const id = await insertDelivery();
    expect(await store.claimDue({ now: T0, limit: 1, owner: 'A', leaseUntil: T0 + LEASE })).toHaveLength(1);
    expect(await store.claimDue({ now: T0 + LEASE - 1, limit: 1, owner: 'B', leaseUntil: T0 + 2 * LEASE })).toHaveLength(0);
    expect(await store.claimDue({ now: T0 + LEASE, limit: 1, owner: 'B', leaseUntil: T0 + 2 * LEASE })).toHaveLength(1);

    expect(await store.markDelivered(attempt(id, 'A', 1, T0, { outcome: 'success', statusCode: 200, error: null }))).toBe(false);
    expect(await attemptsOf(id)).toEqual([]);
    expect((await row(id)).status).toBe('pending');

    expect(await store.recordAttempt({ ...attempt(id, 'B', 1, T0 + LEASE), nextAttemptAt: T0 + LEASE + 5000 })).toBe(true);
    expect(await attemptsOf(id)).toHaveLength(1);
  });
});

describe('guarded writes', () => {
  it('recordAttempt: counts, keeps the first attempt time, sets the next time, clears the lease, logs the attempt', async () => {
    const id = await insertDelivery();
    await store.claimDue({ now: T0, limit: 1, owner: 'A', leaseUntil: T0 + LEASE });
    expect(await store.recordAttempt({ ...attempt(id, 'A', 1, T0), nextAttemptAt: T0 + 5000 })).toBe(true);
    expect(await row(id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      first_attempt_at: iso(T0),
      next_attempt_at: iso(T0 + 5000),
      last_attempt_at: iso(T0),
      last_status_code: 500,
      last_error: 'http_status: the receiver answered HTTP 500',
      lease_owner: null,
      claimed_until: null,
    });

    const [again] = await store.claimDue({ now: T0 + 5000, limit: 1, owner: 'A', leaseUntil: T0 + 5000 + LEASE });
    expect(again).toMatchObject({ attemptCount: 1, firstAttemptAt: T0, nextAttemptAt: T0 + 5000 });
    // A stale attempt number (the row moved on) is refused...
    expect(await store.recordAttempt({ ...attempt(id, 'A', 1, T0 + 5000), nextAttemptAt: T0 + 300_000 })).toBe(false);
    // ...the right one is applied; first_attempt_at is never overwritten.
    expect(
      await store.recordAttempt({
        ...attempt(id, 'A', 2, T0 + 5000, { firstAttemptAt: T0 + 5000, statusCode: null, error: { code: 'timeout', message: 'no answer in 10 s' } }),
        nextAttemptAt: T0 + 300_000,
      }),
    ).toBe(true);
    expect(await row(id)).toMatchObject({ attempts: 2, first_attempt_at: iso(T0), next_attempt_at: iso(T0 + 300_000), last_status_code: null });
    expect(await attemptsOf(id)).toEqual([
      expect.objectContaining({ attempt: 1, started_at: iso(T0), duration_ms: 12, outcome: 'retry', status_code: 500, error_code: 'http_status' }),
      expect.objectContaining({
        attempt: 2,
        started_at: iso(T0 + 5000),
        outcome: 'retry',
        status_code: null,
        error_code: 'timeout',
        error: 'no answer in 10 s',
      }),
    ]);
  });

  it('an attempt that ran past its lease but was not re-claimed is still recorded (no lease_until in the guard)', async () => {
    const id = await insertDelivery();
    await store.claimDue({ now: T0, limit: 1, owner: 'A', leaseUntil: T0 + LEASE });
    expect(await store.markDelivered(attempt(id, 'A', 1, T0, { durationMs: 2 * LEASE, outcome: 'success', statusCode: 204, error: null }))).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'delivered', delivered_at: iso(T0 + 2 * LEASE), next_attempt_at: null });
  });

  it('delivered and exhausted rows are never claimed again', async () => {
    const ok = await insertDelivery();
    const gone = await insertDelivery();
    await store.claimDue({ now: T0, limit: 2, owner: 'A', leaseUntil: T0 + LEASE });
    expect(await store.markDelivered(attempt(ok, 'A', 1, T0, { outcome: 'success', statusCode: 200, error: null }))).toBe(true);
    expect(await store.markExhausted({ ...attempt(gone, 'A', 1, T0, { outcome: 'gone', statusCode: 410 }), reason: 'gone' })).toBe(true);
    expect(await row(gone)).toMatchObject({ status: 'exhausted', exhausted_reason: 'gone', next_attempt_at: null });
    expect(await store.claimDue({ now: T0 + 100 * DAY, limit: 10, owner: 'B', leaseUntil: T0 + 101 * DAY })).toEqual([]);
    // And a late duplicate write for the same attempt changes nothing.
    expect(await store.markDelivered(attempt(ok, 'A', 1, T0, { outcome: 'success', statusCode: 200, error: null }))).toBe(false);
    expect(await attemptsOf(ok)).toHaveLength(1);
  });

  it('the attempt log refuses a second row for the same attempt number', async () => {
    const id = await insertDelivery();
    await db
      .insertInto('webhook_attempts')
      .values({ delivery_id: id, attempt: 1, started_at: iso(T0), duration_ms: 1, status_code: 200, outcome: 'success', error: null, error_code: null })
      .execute();
    await expect(
      db
        .insertInto('webhook_attempts')
        .values({ delivery_id: id, attempt: 1, started_at: iso(T0), duration_ms: 1, status_code: 200, outcome: 'success', error: null, error_code: null })
        .execute(),
    ).rejects.toThrow(/unique/i);
  });
});

describe('admin redelivery and retention', () => {
  it('re-queues an exhausted delivery with a fresh schedule; the log keeps numbering on', async () => {
    const deliveries = createDeliveriesService({ db, now: () => new Date(T0 + DAY) });
    const id = await insertDelivery();
    await store.claimDue({ now: T0, limit: 1, owner: 'A', leaseUntil: T0 + LEASE });
    await store.markExhausted({ ...attempt(id, 'A', 1, T0, { outcome: 'gone', statusCode: 410 }), reason: 'gone' });

    const view = await deliveries.redeliver(id);
    expect(view).toMatchObject({
      id,
      state: 'pending',
      exhaustedReason: null,
      attemptCount: 1,
      nextAttemptAt: iso(T0 + DAY),
      firstAttemptAt: null,
      requeuedAt: iso(T0 + DAY),
    });
    const [claimed] = await store.claimDue({ now: T0 + DAY, limit: 1, owner: 'B', leaseUntil: T0 + DAY + LEASE });
    expect(claimed).toMatchObject({ id, attemptCount: 0, firstAttemptAt: null });
    expect(await store.markDelivered(attempt(id, 'B', 1, T0 + DAY, { outcome: 'success', statusCode: 200, error: null }))).toBe(true);
    const after = await deliveries.get(id);
    expect(after).toMatchObject({ state: 'delivered', attemptCount: 2, firstAttemptAt: iso(T0 + DAY) });
    expect(after.attempts.map((a) => [a.attempt, a.outcome, a.statusCode])).toEqual([
      [1, 'gone', 410],
      [2, 'success', 200],
    ]);
  });

  it('re-queues a pending delivery by making it due now, keeping its schedule', async () => {
    const deliveries = createDeliveriesService({ db, now: () => new Date(T0 + 1000) });
    const id = await insertDelivery();
    await store.claimDue({ now: T0, limit: 1, owner: 'A', leaseUntil: T0 + LEASE });
    await store.recordAttempt({ ...attempt(id, 'A', 1, T0), nextAttemptAt: T0 + 300_000 });
    expect(await deliveries.redeliver(id)).toMatchObject({ state: 'pending', attemptCount: 1, nextAttemptAt: iso(T0 + 1000), firstAttemptAt: iso(T0) });
    expect(await store.claimDue({ now: T0 + 1000, limit: 1, owner: 'A', leaseUntil: T0 + 1000 + LEASE })).toEqual([
      expect.objectContaining({ id, attemptCount: 1, firstAttemptAt: T0 }),
    ]);
  });

  it('an unknown delivery is not_found', async () => {
    const deliveries = createDeliveriesService({ db, now: () => new Date(T0) });
    await expect(deliveries.redeliver('msg_nope')).rejects.toMatchObject({ code: 'not_found' });
    await expect(deliveries.get('msg_nope')).rejects.toBeInstanceOf(ApiError);
  });

  it('the sweep deletes delivered deliveries older than 30 days with their attempts, nothing else', async () => {
    const now = T0 + 60 * DAY;
    const deliveries = createDeliveriesService({ db, now: () => new Date(now) });
    const old = await insertDelivery({ status: 'delivered', nextAt: null, deliveredAt: now - DELIVERY_RETENTION_MS - 1 });
    const recent = await insertDelivery({ status: 'delivered', nextAt: null, deliveredAt: now - DELIVERY_RETENTION_MS + 60_000 });
    const exhausted = await insertDelivery({ status: 'exhausted', nextAt: null, createdAt: T0 });
    const pending = await insertDelivery({ createdAt: T0 });
    await db
      .insertInto('webhook_attempts')
      .values({ delivery_id: old, attempt: 1, started_at: iso(T0), duration_ms: 1, status_code: 200, outcome: 'success', error: null, error_code: null })
      .execute();
    expect(await deliveries.sweep()).toBe(1);
    const left = await db.selectFrom('webhook_deliveries').select('id').orderBy('id').execute();
    expect(left.map((r) => r.id).sort()).toEqual([recent, exhausted, pending].sort());
    expect(await attemptsOf(old)).toEqual([]);
  });
});
