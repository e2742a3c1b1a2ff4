import { existsSync } from 'node:fs';
import path from 'node:path';
import { copyDatabase, isPostgresUrl, openDatabase } from '@captionfarm/db';
import type { CliEnv } from '../env.ts';
import { CliError, UsageError } from '../output.ts';

/**
 * `captionfarm admin migrate-to-postgres`: copies an embedded farm's SQLite database into an
 * empty PostgreSQL database (packages/db copy.ts), ids kept, in one transaction. A local command:
 * it reads the data dir, not the admin API.
 */
export async function migrateToPostgres(
  values: { to?: string; from?: string; json?: boolean },
  env: CliEnv,
  processEnv: Record<string, string | undefined> = process.env,
): Promise<void> {
  const to = values.to ?? processEnv.CAPTIONFARM_DATABASE_URL;
  if (!to || !isPostgresUrl(to)) throw new UsageError('--to (or CAPTIONFARM_DATABASE_URL) must be a postgres:// URL');
  const from = path.resolve(env.cwd, values.from ?? path.join(env.dataDir, 'captionfarm.sqlite'));
  if (!existsSync(from))
    throw new CliError(`no SQLite database at ${from}: pass --from, or run this where CAPTIONFARM_DATA_DIR (${env.dataDir}) holds the embedded farm's data`);
  // Both opened through the migrator: the source is brought to this version's schema first.
  const src = await openDatabase({ path: from });
  try {
    const dst = await openDatabase({ url: to, poolSize: 2 });
    try {
      const counts = await copyDatabase(src, dst);
      if (values.json) process.stdout.write(`${JSON.stringify({ from, copied: counts })}\n`);
      else {
        const width = Math.max(...Object.keys(counts).map((k) => k.length));
        process.stdout.write(
          `copied ${from} into PostgreSQL:\n${Object.entries(counts)
            .map(([t, n]) => `  ${t.padEnd(width)}  ${n}`)
            .join('\n')}\n`,
        );
      }
    } catch (err) {
      throw new CliError(`migration failed, nothing was copied: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await dst.destroy();
    }
  } finally {
    await src.destroy();
  }
}
