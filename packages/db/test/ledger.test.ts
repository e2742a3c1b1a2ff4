import { beforeAll, describe, expect, it } from 'vitest';
import { appendLedger, minutesBalance, openDatabase, type Db } from '../src/index.ts';
import { useFreshDatabase } from './fresh-db.ts';

// The minutes ledger keeps each account's running balance (balance_after, migration
// 0017-ledger-balance), so reading a balance costs one index seek however long the ledger. The
// balance must stay the sum of the account's rows: appended one by one, from concurrent
// transactions (on PostgreSQL they wait for the account's lock), and filled in by the migration
// for the rows a farm wrote before it. SQLite here; CI runs this file on PostgreSQL too.

const fresh = useFreshDatabase('cf-db-ledger-');
let db: Db;
const account = (id: string) => ({
  id,
  name: id,
  plan: 'pro' as const,
  webhook_secret: 'whsec_test',
  webhook_secret_prev: null,
  webhook_secret_prev_expires_at: null,
  created_at: '2026-11-23T00:00:00.000Z',
});
beforeAll(async () => {
  db = fresh.get();
  await db
    .insertInto('accounts')
    .values([account('l1'), account('l2'), account('l3')])
    .execute();
});

/** The account's rows in ledger order, with the sum of the rows up to each one beside its balance_after. */
async function rowsOf(accountId: string) {
  const rows = await db.selectFrom('minutes_ledger').select(['minutes', 'balance_after']).where('account_id', '=', accountId).orderBy('id').execute();
  let sum = 0;
  return rows.map((r) => {
    sum += Number(r.minutes);
    return { balanceAfter: Number(r.balance_after), sum };
  });
}

const append = (accountId: string, minutes: number) =>
  db.transaction().execute((trx) => appendLedger(trx, { accountId, kind: minutes >= 0 ? 'grant' : 'reserve', minutes, now: new Date() }));

describe('the minutes ledger', () => {
  it('keeps the balance after each row, which is the sum of the rows; an account with no row has 0', async () => {
    expect(await minutesBalance(db, 'l1')).toBe(0);
    for (const [a, m] of [
      ['l1', 100],
      ['l2', 7],
      ['l1', -30],
      ['l1', 0],
      ['l2', -2],
      ['l1', 5],
    ] as const)
      await append(a, m);
    expect(await minutesBalance(db, 'l1')).toBe(75);
    expect(await minutesBalance(db, 'l2')).toBe(5);
    expect((await rowsOf('l1')).map((r) => r.balanceAfter)).toEqual([100, 70, 70, 75]);
  });

  it('stays the sum when 40 transactions append to one account at once', async () => {
    const minutes = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? 50 : -(i % 7)));
    await Promise.all(minutes.map((m) => append('l3', m)));
    const rows = await rowsOf('l3');
    expect(rows).toHaveLength(40);
    for (const r of rows) expect(r.balanceAfter).toBe(r.sum);
    expect(await minutesBalance(db, 'l3')).toBe(minutes.reduce((a, b) => a + b, 0));
  });

  it('migration 0017 fills in the balances of the rows written before it, account by account in ledger order', async () => {
    const expected = { l1: await rowsOf('l1'), l2: await rowsOf('l2'), l3: await rowsOf('l3') };
    // Back to the schema of a farm that ran every migration before 0017-ledger-balance.
    await db.schema.alterTable('minutes_ledger').dropColumn('balance_after').execute();
    await db
      .deleteFrom('kysely_migration' as never)
      .where('name' as never, '=', '0017-ledger-balance' as never)
      .execute();
    // Reopened, as a control plane starting on the upgraded code: the migration runs.
    const again = await openDatabase(fresh.options());
    try {
      for (const [id, rows] of Object.entries(expected)) {
        const now = await again.selectFrom('minutes_ledger').select('balance_after').where('account_id', '=', id).orderBy('id').execute();
        expect(now.map((r) => Number(r.balance_after))).toEqual(rows.map((r) => r.sum));
        expect(await minutesBalance(again, id)).toBe(rows.at(-1)!.sum);
      }
    } finally {
      await again.destroy();
    }
  });
});
