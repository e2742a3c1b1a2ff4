import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { openDatabase, type Db } from '@captionfarm/db';
import { createLogger, type Logger } from '@captionfarm/log';
import type { ControlPlaneConfig } from './config.ts';
import { loadOrCreateSecrets, type Secrets } from './secrets.ts';

export interface ControlPlaneBase {
  /** The clock: the given one (tests compress time), else the system's. */
  now: () => Date;
  secrets: Secrets;
  /** config.adminToken, else the one in the data folder's secrets. */
  adminToken: string;
  db: Db;
  logger: Logger;
  /** A line to the logger: an error with its stack, anything else as its detail. */
  log: (msg: string, extra?: unknown) => void;
}

/**
 * What everything else stands on: the clock, the data folder (created when missing) and its secrets, the
 * database (PostgreSQL when configured, else SQLite in the data folder) and the logs (the given
 * logger and log function replace the defaults).
 */
export async function openControlPlaneBase(
  config: Readonly<ControlPlaneConfig>,
  opts: { now?: (() => Date) | undefined; logger?: Logger | undefined; log?: ((msg: string, extra?: unknown) => void) | undefined },
): Promise<ControlPlaneBase> {
  mkdirSync(config.dataDir, { recursive: true });
  const secrets = loadOrCreateSecrets(config.dataDir);
  const adminToken = config.adminToken ?? secrets.adminToken;
  const db = await openDatabase(
    config.databaseUrl ? { url: config.databaseUrl, poolSize: config.databasePool } : { path: path.join(config.dataDir, 'captionfarm.sqlite') },
  );
  const logger = opts.logger ?? createLogger({ name: 'control-plane', level: config.log });
  const log =
    opts.log ??
    ((msg: string, extra?: unknown) => {
      if (extra instanceof Error) logger.error({ err: extra }, msg);
      else if (extra !== undefined) logger.info({ detail: extra }, msg);
      else logger.info(msg);
    });
  return { now: opts.now ?? (() => new Date()), secrets, adminToken, db, logger, log };
}
