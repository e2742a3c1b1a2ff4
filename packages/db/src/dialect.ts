import { PostgresAdapter, type ColumnDefinitionBuilder, type Kysely } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/** Which database a Kysely instance (or a migration's) talks to: the few statements that differ branch on it. */
// biome-ignore lint/suspicious/noExplicitAny: any schema (the app's, or a migration's Kysely<any>)
export function dialectOf(db: Kysely<any>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * A generated integer primary key, for migrations: `integer primary key autoincrement` on SQLite,
 * an identity column on PostgreSQL (which has no AUTOINCREMENT).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations get Kysely<any>
export function autoIdColumn(db: Kysely<any>): (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return dialectOf(db) === 'postgres' ? (c) => c.primaryKey().generatedByDefaultAsIdentity() : (c) => c.primaryKey().autoIncrement();
}
