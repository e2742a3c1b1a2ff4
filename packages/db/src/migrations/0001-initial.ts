import { sql, type Kysely } from 'kysely';
import { autoIdColumn } from '../dialect.ts';

/**
 * Portable between SQLite and PostgreSQL: kysely's schema builder, text timestamps (ISO 8601),
 * `bigint` for byte sizes (PostgreSQL's integer is 32-bit; SQLite stores both alike) and
 * `autoIdColumn` for generated keys.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const autoId = autoIdColumn(db);
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('webhook_secret', 'text', (c) => c.notNull())
    .addColumn('webhook_secret_prev', 'text')
    .addColumn('webhook_secret_prev_expires_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();

  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('phase', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('template_json', 'text', (c) => c.notNull())
    .addColumn('video_url', 'text')
    .addColumn('upload_id', 'text')
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('quality', 'text', (c) => c.notNull())
    .addColumn('req_width', 'integer')
    .addColumn('req_height', 'integer')
    .addColumn('language', 'text')
    .addColumn('detected_language', 'text')
    .addColumn('webhook_url', 'text')
    .addColumn('quoted_seconds', 'integer')
    .addColumn('out_width', 'integer')
    .addColumn('out_height', 'integer')
    .addColumn('percent', 'integer')
    .addColumn('output_key', 'text')
    .addColumn('output_bytes', 'bigint')
    .addColumn('download_url', 'text')
    .addColumn('output_expires_at', 'text')
    .addColumn('failure_code', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('settled_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('deadline_at', 'text')
    .addColumn('lease_id', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('jobs_account_created').on('jobs').columns(['account_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('jobs_status_created').on('jobs').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('jobs_upload').on('jobs').column('upload_id').unique().where(sql.ref('upload_id'), 'is not', null).execute();

  await db.schema
    .createTable('uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('object_key', 'text', (c) => c.notNull().unique())
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('url_expires_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addColumn('claimed_by_job_id', 'text')
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('uploads_account_created').on('uploads').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('minutes_ledger')
    .addColumn('id', 'integer', autoId)
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('job_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('minutes', 'integer', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ledger_account').on('minutes_ledger').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('ledger_job').on('minutes_ledger').columns(['job_id', 'kind']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('first_attempt_at', 'text')
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('claimed_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'integer', autoId)
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();

  await db.schema
    .createTable('agent_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();

  await db.schema
    .createTable('agent_nodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_id', 'text', (c) => c.notNull())
    .addColumn('capabilities', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('drain', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('connected_at', 'text')
    .addColumn('last_heartbeat_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('templates_pk', ['account_id', 'id'])
    .execute();
}
