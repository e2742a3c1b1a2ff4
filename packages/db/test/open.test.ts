import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectOf, isPostgresUrl, openDatabase, type Db, type OpenDatabaseOptions } from '../src/index.ts';
import { freshTestDatabase, type TestDatabase } from '../src/testing.ts';

// The database every control plane opens: migrated on open, on SQLite (the embedded default) and
// on PostgreSQL when CAPTIONFARM_TEST_DATABASE_URL names a server (CI runs this file on both).

let dir: string;
let testDb: TestDatabase;
let target: OpenDatabaseOptions;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cf-db-'));
  testDb = await freshTestDatabase();
  target = testDb.url ? { url: testDb.url } : { path: path.join(dir, 'captionfarm.db') };
});
afterAll(async () => {
  await testDb.drop();
  await rm(dir, { recursive: true, force: true });
});

const applied = async (db: Db) =>
  (
    await db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .orderBy('name' as never)
      .execute()
  ).map((r) => (r as { name: string }).name);

describe('openDatabase', () => {
  it('migrates a new database to the latest schema, in name order; opening it again applies nothing and keeps its rows', async () => {
    const db = await openDatabase(target);
    expect(dialectOf(db)).toBe(testDb.url ? 'postgres' : 'sqlite');
    const names = await applied(db);
    // Issue-number prefixes keep the order stable whoever lands first.
    expect(names[0]).toBe('0001-initial');
    expect(names).toEqual([...names].sort());
    expect(names.every((n) => /^\d{4}-[a-z0-9-]+$/.test(n))).toBe(true);
    const id = randomUUID();
    await db
      .insertInto('accounts')
      .values({
        id,
        name: 'kept',
        plan: 'pro',
        webhook_secret: 'whsec_test',
        webhook_secret_prev: null,
        webhook_secret_prev_expires_at: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    await db.destroy();

    const again = await openDatabase(target);
    try {
      expect(await applied(again)).toEqual(names);
      const row = await again.selectFrom('accounts').select(['name', 'plan']).where('id', '=', id).executeTakeFirst();
      expect(row).toEqual({ name: 'kept', plan: 'pro' });
    } finally {
      await again.destroy();
    }
  });

  it('a database that is not ours fails naming the migration that could not run, and is left as it was', async () => {
    // Someone else's SQLite file with an `accounts` table of its own.
    const file = path.join(dir, 'foreign.db');
    const foreign = new SQLite(file);
    foreign.exec('create table accounts (owner text)');
    foreign.close();
    await expect(openDatabase({ path: file })).rejects.toThrow(/^database migration 0001-initial failed: .*accounts/);
    const after = new SQLite(file);
    try {
      const tables = after.prepare(`select name from sqlite_master where type = 'table' and name not like 'kysely_%' order by name`).all() as {
        name: string;
      }[];
      expect(tables.map((t) => t.name)).toEqual(['accounts']);
    } finally {
      after.close();
    }
  });

  it('tells a PostgreSQL URL from a SQLite path', () => {
    expect(isPostgresUrl('postgres://u:p@127.0.0.1:5432/cf')).toBe(true);
    expect(isPostgresUrl('POSTGRESQL://127.0.0.1/cf')).toBe(true);
    expect(isPostgresUrl('/var/lib/captionfarm/postgres://x.db')).toBe(false);
    expect(isPostgresUrl('captionfarm.db')).toBe(false);
    expect(isPostgresUrl('mysql://127.0.0.1/cf')).toBe(false);
  });
});
