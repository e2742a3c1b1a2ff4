import type { PlanId } from '@captionfarm/contracts';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { countRequest, prepared, type Db } from '../src/index.ts';
import { testDatabaseServerUrl } from '../src/testing.ts';
import { useFreshDatabase } from './fresh-db.ts';

// Statements compiled once and run many times (prepared.ts), and SQLite's prepared-statement
// cache (open.ts): both must answer exactly as a freshly built statement would. On SQLite, and on
// PostgreSQL when CAPTIONFARM_TEST_DATABASE_URL names a server (CI runs this file on both).

const fresh = useFreshDatabase('cf-db-prepared-');
let db: Db;
beforeAll(() => {
  db = fresh.get();
});

const account = (id: string, name: string, plan: PlanId) => ({
  id,
  name,
  plan,
  webhook_secret: 'whsec_test',
  webhook_secret_prev: null,
  webhook_secret_prev_expires_at: null,
  created_at: '2026-11-22T00:00:00.000Z',
});

describe('prepared', () => {
  const byPlanAndName = prepared((q, a: { plan: PlanId; name: string }) =>
    q.selectFrom('accounts').select(['id', 'name']).where('plan', '=', a.plan).where('name', '=', a.name).orderBy('id'),
  );

  it('binds fresh values on every call, keeps the constants of the statement, and runs inside a transaction', async () => {
    await db
      .insertInto('accounts')
      .values([account('a1', 'alpha', 'pro'), account('a2', 'beta', 'pro'), account('a3', 'alpha', 'starter')])
      .execute();
    expect(await byPlanAndName(db, { plan: 'pro', name: 'alpha' })).toEqual([{ id: 'a1', name: 'alpha' }]);
    expect(await byPlanAndName(db, { plan: 'starter', name: 'alpha' })).toEqual([{ id: 'a3', name: 'alpha' }]);
    expect(await byPlanAndName(db, { plan: 'pro', name: 'gamma' })).toEqual([]);
    // A literal the builder put in (here the 1 of the insert and of `count + 1`) stays a parameter of its own.
    expect(await countRequest(db, { accountId: 'a1', windowStart: 'w1' })).toBe(1);
    expect(await countRequest(db, { accountId: 'a1', windowStart: 'w1' })).toBe(2);
    expect(await countRequest(db, { accountId: 'a2', windowStart: 'w1' })).toBe(1);
    // A count in a transaction that rolls back is undone (a refused create).
    await expect(
      db.transaction().execute(async (trx) => {
        expect(await countRequest(trx, { accountId: 'a1', windowStart: 'w1' })).toBe(3);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await countRequest(db, { accountId: 'a1', windowStart: 'w1' })).toBe(3);

    // A transaction sees its own uncommitted row; once rolled back, nobody does.
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .insertInto('accounts')
          .values(account('a4', 'delta', 'pro'))
          .execute();
        expect(await byPlanAndName(trx, { plan: 'pro', name: 'delta' })).toEqual([{ id: 'a4', name: 'delta' }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await byPlanAndName(db, { plan: 'pro', name: 'delta' })).toEqual([]);
  });

  it('refuses, at its first call, an argument that is not a bound value of the statement', async () => {
    const shaped = prepared((q, a: { plan: PlanId; limit: number }) =>
      // `limit` picks the statement's shape here: compiled once, it would be frozen at its first value.
      q
        .selectFrom('accounts')
        .select('id')
        .where('plan', '=', a.plan)
        .$if(typeof a.limit === 'number', (b) => b.limit(10)),
    );
    await expect(shaped(db, { plan: 'pro', limit: 5 })).rejects.toThrow(/argument\(s\) limit are not bound parameters/);
  });
});

describe.skipIf(testDatabaseServerUrl() !== undefined)('SQLite statement cache (open.ts)', () => {
  it('a cached statement follows a schema change made after it was first prepared', async () => {
    await sql`create table cache_probe (a integer)`.execute(db);
    await sql`insert into cache_probe (a) values (1)`.execute(db);
    const read = () => sql<Record<string, unknown>>`select * from cache_probe`.execute(db).then((r) => r.rows);
    expect(await read()).toEqual([{ a: 1 }]);
    await sql`alter table cache_probe add column b text default 'x'`.execute(db);
    expect(await read()).toEqual([{ a: 1, b: 'x' }]);
  });
});
