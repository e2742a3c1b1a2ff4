import { sql } from 'kysely';
import { dialectOf } from './dialect.ts';
import type { Db } from './open.ts';
import type { Database } from './schema.ts';

/**
 * Every table a farm keeps, parents before children (foreign keys). A table the source has and
 * that is in neither list stops the copy: a table added later must be named here, not dropped.
 */
export const COPIED_TABLES = [
  'accounts',
  'api_keys',
  'users',
  'user_invites',
  'sessions',
  'templates',
  'fonts',
  'uploads',
  'jobs',
  'job_transcripts',
  'minutes_ledger',
  'webhook_deliveries',
  'webhook_attempts',
  'agent_tokens',
  'agent_nodes',
] as const satisfies readonly (keyof Database)[];
/** Short-lived state, rebuilt by the running farm: request counts per minute, lease answers. */
const SKIPPED_TABLES = ['rate_windows', 'lease_replies'];
const BATCH = 500;

export type CopyCounts = Record<(typeof COPIED_TABLES)[number], number>;

/**
 * Copies an embedded farm's SQLite database into an empty, migrated PostgreSQL database (the
 * `captionfarm admin migrate-to-postgres` command): every row of every table, ids kept, in one
 * PostgreSQL transaction (a failure leaves the target empty) from one SQLite read transaction (a
 * consistent snapshot). Identity sequences continue after the copied ids.
 */
export async function copyDatabase(from: Db, to: Db, onTable?: (table: string, rows: number) => void): Promise<CopyCounts> {
  if (dialectOf(from) !== 'sqlite' || dialectOf(to) !== 'postgres') throw new Error('copyDatabase copies a SQLite database into a PostgreSQL one');
  const present = (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(from)).rows.map((r) => r.name);
  const unknown = present.filter(
    (t) => !t.startsWith('sqlite_') && !t.startsWith('kysely_') && !(COPIED_TABLES as readonly string[]).includes(t) && !SKIPPED_TABLES.includes(t),
  );
  if (unknown.length > 0)
    throw new Error(`the SQLite database has tables this version does not know how to copy: ${unknown.join(', ')}; use the captionfarm version that wrote it`);
  for (const table of ['accounts', 'jobs'] as const) {
    const { n } = await to
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(n) > 0) throw new Error(`the PostgreSQL database is not empty (${table} has ${n} rows): migrate into a new database`);
  }
  const counts = {} as CopyCounts;
  await from.transaction().execute(async (src) => {
    await to.transaction().execute(async (dst) => {
      for (const table of COPIED_TABLES) {
        let copied = 0;
        for (let offset = 0; ; offset += BATCH) {
          // rowid: every table here is an ordinary rowid table, so pages neither skip nor repeat.
          const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by rowid limit ${BATCH} offset ${offset}`.execute(src)).rows;
          if (rows.length === 0) break;
          await dst
            .insertInto(table)
            .values(rows as never)
            .execute();
          copied += rows.length;
          if (rows.length < BATCH) break;
        }
        counts[table] = copied;
        onTable?.(table, copied);
      }
      // Generated ids (identity columns) go on after the largest copied one.
      const identities = await sql<{
        table_name: string;
        column_name: string;
      }>`select table_name, column_name from information_schema.columns where table_schema = current_schema() and is_identity = 'YES'`.execute(dst);
      for (const { table_name, column_name } of identities.rows) {
        await sql`select setval(pg_get_serial_sequence(${table_name}, ${column_name}), coalesce((select max(${sql.ref(column_name)}) from ${sql.table(table_name)}), 0) + 1, false)`.execute(
          dst,
        );
      }
    });
  });
  return counts;
}
