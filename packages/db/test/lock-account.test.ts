import {
  SelectQueryNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { lockAccount, type Db } from '../src/index.ts';
import { dialectOf } from '../src/dialect.ts';
import { testDatabaseServerUrl } from '../src/testing.ts';
import { useFreshDatabase } from './fresh-db.ts';

// lockAccount (sql/lock-account.ts): on PostgreSQL the account row stays locked until the
// transaction ends, so another transaction's lock waits for it; a second lock of the same account
// in the same transaction is not sent again. PostgreSQL only (on SQLite the single writer already
// serialises): CI runs this file with CAPTIONFARM_TEST_DATABASE_URL.

const fresh = useFreshDatabase('cf-db-lock-');
let db: Db;
beforeAll(async () => {
  db = fresh.get();
  for (const id of ['a1', 'a2'])
    await db
      .insertInto('accounts')
      .values({
        id,
        name: id,
        plan: 'pro',
        webhook_secret: 'whsec_test',
        webhook_secret_prev: null,
        webhook_secret_prev_expires_at: null,
        created_at: '2026-11-23T00:00:00.000Z',
      })
      .execute();
});

/** Counts the statements that lock an account row (SELECT ... FOR UPDATE on accounts). */
class CountLocks implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (SelectQueryNode.is(node) && node.endModifiers?.some((m) => m.modifier === 'ForUpdate')) this.count++;
    return node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

describe.skipIf(!testDatabaseServerUrl())('lockAccount on PostgreSQL', () => {
  it('holds the row until the transaction ends; locking the same account again in it sends nothing', async () => {
    expect(dialectOf(db)).toBe('postgres');
    const locks = new CountLocks();
    const counted = db.withPlugin(locks);
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const first = new Promise<void>((r) => (locked = r));
    const a = counted.transaction().execute(async (trx) => {
      await lockAccount(trx, 'a1');
      await lockAccount(trx, 'a1');
      await lockAccount(trx, 'a2');
      await lockAccount(trx, 'a1');
      locked();
      await held;
      order.push('first commits');
    });
    await first;
    expect(locks.count).toBe(2);
    // Another transaction waits for a1 until the first one ends.
    const b = db.transaction().execute(async (trx) => {
      await lockAccount(trx, 'a1');
      order.push('second locked');
    });
    release();
    await Promise.all([a, b]);
    expect(order).toEqual(['first commits', 'second locked']);
    // A new transaction locks again; outside a transaction nothing is remembered.
    await counted.transaction().execute((trx) => lockAccount(trx, 'a1'));
    await lockAccount(counted, 'a2');
    await lockAccount(counted, 'a2');
    expect(locks.count).toBe(2 + 1 + 2);
  });
});
