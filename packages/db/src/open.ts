import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, type Driver, type Migration, type MigrationProvider } from 'kysely';
import * as initial from './migrations/0001-initial.ts';
import * as webhookStore from './migrations/0002-webhook-store.ts';
import * as transcripts from './migrations/0010-transcripts.ts';
import * as uploadDuration from './migrations/0011-upload-duration.ts';
import * as users from './migrations/0012-users.ts';
import * as fonts from './migrations/0016-fonts.ts';
import type { Database } from './schema.ts';

const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-webhook-store': webhookStore,
  '0010-transcripts': transcripts,
  '0011-upload-duration': uploadDuration,
  '0012-users': users,
  '0016-fonts': fonts,
};

/**
 * On SQLITE_FULL (a full disk) and some I/O errors SQLite rolls the transaction back itself;
 * kysely's ROLLBACK then fails with "cannot rollback - no transaction is active", and that error
 * replaced the real one (clients got 500 instead of 503 "the disk is full"). Skip the ROLLBACK
 * when SQLite has none open, so the statement's own error (with its code) reaches the caller.
 */
class KeepCauseSqliteDialect extends SqliteDialect {
  constructor(private readonly sqlite: SQLite.Database) {
    super({ database: sqlite });
  }
  override createDriver(): Driver {
    const driver = super.createDriver();
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection) => {
      if (this.sqlite.inTransaction) await rollback(connection);
    };
    return driver;
  }
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export interface OpenDatabaseOptions {
  /** A file path, or ':memory:'. */
  path: string;
}

export type Db = Kysely<Database>;

/** Opens (and migrates) the SQLite database: WAL, foreign keys, a busy timeout for other processes. */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<Db> {
  const sqlite = new SQLite(opts.path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new KeepCauseSqliteDialect(sqlite) });
  const { error, results } = await new Migrator({ db, provider: new StaticMigrationProvider() }).migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return db;
}
