import { sql, type Kysely } from 'kysely';

/**
 * Issue 13, several control planes on one database:
 * - `jobs.seq`: the job's place in its account's creation order (1, 2, ...), set under the
 *   account lock when the job is created. Two jobs created in the same millisecond used to list
 *   in the order of their random ids; the list and its cursor now follow `seq`.
 * - `rate_windows`: per-account request counts per one-minute window, shared by every control
 *   plane (the limit held per process while it was in memory).
 * - `lease_replies`: what a lease answered, by (node, request id), so a lease re-sent after a
 *   reconnect, to any control plane, returns the same jobs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('seq', 'integer').execute();
  // Existing jobs: their rank in the account by (created_at, id), the order the list had.
  await sql`update jobs set seq = (select count(*) from jobs j2 where j2.account_id = jobs.account_id and (j2.created_at < jobs.created_at or (j2.created_at = jobs.created_at and j2.id <= jobs.id)))`.execute(
    db,
  );
  await db.schema.createIndex('jobs_account_seq').on('jobs').columns(['account_id', 'seq']).unique().execute();

  await db.schema
    .createTable('rate_windows')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('window_start', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_windows_pk', ['account_id', 'window_start'])
    .execute();

  await db.schema
    .createTable('lease_replies')
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('reply_json', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('lease_replies_pk', ['node_id', 'request_id'])
    .execute();
  await db.schema.createIndex('lease_replies_created').on('lease_replies').column('created_at').execute();
}
