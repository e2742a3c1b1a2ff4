import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Driver, type Migration, type MigrationProvider, type SqliteDatabase } from 'kysely';
import pg from 'pg';
import * as initial from './migrations/0001-initial.ts';
import * as webhookStore from './migrations/0002-webhook-store.ts';
import * as transcripts from './migrations/0010-transcripts.ts';
import * as uploadDuration from './migrations/0011-upload-duration.ts';
import * as users from './migrations/0012-users.ts';
import * as scaleOut from './migrations/0013-scale-out.ts';
import * as createPages from './migrations/0018-create-pages.ts';
import * as sweepIndexes from './migrations/0013-sweep-indexes.ts';
import * as waitingJobs from './migrations/0013-waiting-jobs.ts';
import * as fonts from './migrations/0016-fonts.ts';
import * as ledgerBalance from './migrations/0017-ledger-balance.ts';
import * as recognitionWords from './migrations/0019-recognition-words.ts';
import * as edit from './migrations/0020-edit.ts';
import * as framing from './migrations/0021-framing.ts';
import { checkpointInBackground, WAL_SAFETY_NET_PAGES } from './checkpointer.ts';
import type { Database } from './schema.ts';

const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-webhook-store': webhookStore,
  '0010-transcripts': transcripts,
  '0011-upload-duration': uploadDuration,
  '0012-users': users,
  '0013-scale-out': scaleOut,
  '0013-waiting-jobs': waitingJobs,
  '0013-sweep-indexes': sweepIndexes,
  '0016-fonts': fonts,
  '0017-ledger-balance': ledgerBalance,
  '0018-create-pages': createPages,
  '0019-recognition-words': recognitionWords,
  '0020-edit': edit,
  '0021-framing': framing,
};

/** Distinct statements kept prepared (the application has a few hundred; dynamic IN lists add more). */
const STATEMENT_CACHE_SIZE = 1000;

/**
 * kysely's SQLite driver prepares every statement it runs, and compiling the SQL cost more than
 * running it (the request path's lookups: most of their database time, measured with bench:api).
 * The same SQL text gets the same prepared statement back (least recently used ones are dropped):
 * kysely runs a statement to completion (all/run) before the next one, and SQLite re-prepares a
 * statement by itself when a migration changes the schema under it.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let stmt = cache.get(text);
      if (stmt) cache.delete(text);
      else {
        stmt = sqlite.prepare(text);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(text, stmt);
      return stmt;
    },
  };
}

/**
 * On SQLITE_FULL (a full disk) and some I/O errors SQLite rolls the transaction back itself;
 * kysely's ROLLBACK then fails with "cannot rollback - no transaction is active", and that error
 * replaced the real one (clients got 500 instead of 503 "the disk is full"). Skip the ROLLBACK
 * when SQLite has none open, so the statement's own error (with its code) reaches the caller.
 */
class KeepCauseSqliteDialect extends SqliteDialect {
  /** Runs before the connection closes (the background checkpointer lets go of the file). */
  beforeClose: () => Promise<void> = async () => undefined;
  constructor(private readonly sqlite: SQLite.Database) {
    super({ database: withStatementCache(sqlite) });
  }
  override createDriver(): Driver {
    const driver = super.createDriver();
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection) => {
      if (this.sqlite.inTransaction) await rollback(connection);
    };
    const destroy = driver.destroy.bind(driver);
    driver.destroy = async () => {
      await this.beforeClose();
      await destroy();
    };
    return driver;
  }
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export type OpenDatabaseOptions =
  /** SQLite: a file path, or ':memory:'. */
  | { path: string; url?: undefined }
  /** PostgreSQL: a postgres:// (or postgresql://) connection URL. */
  | { url: string; path?: undefined; poolSize?: number };

export type Db = Kysely<Database>;

/** Is this a PostgreSQL connection URL (what CAPTIONFARM_DATABASE_URL accepts)? */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

// int8 (bigint columns, count(*), sum()) and numeric come back as strings from pg by default;
// every such value here is a byte size, a count or minutes, far below 2^53.
const toNumber = (v: string) => Number(v);
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return toNumber;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

function openSqlite(file: string): { db: Db; dialect: KeepCauseSqliteDialect; sqlite: SQLite.Database } {
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Checkpoints happen on the checkpointer's thread (checkpointer.ts); this is the safety net.
  if (!sqlite.memory) sqlite.pragma(`wal_autocheckpoint = ${WAL_SAFETY_NET_PAGES}`);
  const dialect = new KeepCauseSqliteDialect(sqlite);
  return { db: new Kysely<Database>({ dialect }), dialect, sqlite };
}

function openPostgres(url: string, poolSize: number): Db {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, types: pgTypes, connectionTimeoutMillis: 10_000 });
  // An idle client that loses its server (a restart) emits 'error' on the pool; the pool drops it
  // and the next query opens a new one. Unhandled, it would crash the process.
  pool.on('error', () => undefined);
  // A client checked out of the pool has no such listener: a transaction awaiting other work (an
  // object store HEAD, say) when PostgreSQL ends its connection (a restart: 57P01) crashed the
  // control plane with an unhandled 'error' event (bench:farm lost one that way). Its next query
  // fails instead, the transaction rejects, and the pool drops the client on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Opens (and migrates) the database: SQLite at `path` (WAL, foreign keys, a busy timeout for other
 * processes), or PostgreSQL at `url` (a pool; several control planes migrate safely at once:
 * kysely's migrator holds a lock row while it runs).
 */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<Db> {
  const sqlite = opts.url === undefined ? openSqlite(opts.path) : undefined;
  const db = opts.url !== undefined ? openPostgres(opts.url, opts.poolSize ?? 10) : sqlite!.db;
  // Names start with their issue's number, not with a date: 0013-waiting-jobs came after
  // 0016-fonts, so a database migrated before it runs it last (kysely refuses that by default).
  const { error, results } = await new Migrator({ db, provider: new StaticMigrationProvider(), allowUnorderedMigrations: true }).migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (sqlite && opts.path !== ':memory:' && opts.path !== '') {
    const writer = sqlite.sqlite;
    // The worker found the WAL long: checkpoint here, between transactions (checkpointer.ts).
    const checkpoints = await checkpointInBackground(opts.path!, () => {
      if (!writer.open || writer.inTransaction) return;
      try {
        writer.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // Busy (the worker is checkpointing): the worker asks again half a second later.
      }
    });
    sqlite.dialect.beforeClose = () => checkpoints.release();
  }
  return db;
}
