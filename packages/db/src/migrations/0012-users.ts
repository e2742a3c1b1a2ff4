import type { Kysely } from 'kysely';

/**
 * Dashboard sign-in (issue 12):
 * - `users`: account members and administrators. `account_id` is null for an administrator who
 *   belongs to no account; `password_hash` is null until the invite is accepted
 *   (`scrypt$N$r$p$salt$hash`, parameters kept with the hash so they can be raised later).
 *   Emails are stored lower-cased, one user per email.
 * - `user_invites`: one-time links (sha256 of the token, 72 h). `used_at` marks the one use.
 * - `sessions`: sha256 of the cookie value, the CSRF token, idle (`last_seen_at`) and absolute
 *   (`expires_at`) expiry, `revoked_at` set by sign-out.
 * - `api_keys.name`: keys created in the dashboard carry a name.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_sign_in_at', 'text')
    .execute();
  await db.schema.createIndex('users_account').on('users').column('account_id').execute();

  await db.schema
    .createTable('user_invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

  await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
}
