import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { copyDatabase, isPostgresUrl, openDatabase } from '@captionfarm/db';
import type { CliEnv } from '../env.ts';
import { CliError } from '../output.ts';

export const MIGRATE_USAGE = `captionfarm admin migrate-to-postgres [--to URL] [--from FILE] [--json]

Copies an embedded farm's SQLite database (accounts, keys, users and sessions, templates, fonts,
uploads, jobs and transcripts, the minutes ledger, webhook deliveries and attempts, agent tokens
and nodes) into an empty PostgreSQL database, ids kept, in one transaction. Stop the control
plane first. Then start every control plane with CAPTIONFARM_DATABASE_URL set to the same URL.

  --to URL     postgres://... (default: CAPTIONFARM_DATABASE_URL); migrated here if new
  --from FILE  the SQLite file (default: CAPTIONFARM_DATA_DIR/captionfarm.sqlite)`;

/** `captionfarm admin migrate-to-postgres`: a local command (it reads the data dir, not the API). */
export async function migrateToPostgresCommand(argv: string[], env: CliEnv, processEnv: Record<string, string | undefined> = process.env): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { to: { type: 'string' }, from: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } }, strict: true, allowPositionals: false });
  if (values.help) {
    process.stdout.write(`${MIGRATE_USAGE}\n`);
    return;
  }
  const to = values.to ?? processEnv.CAPTIONFARM_DATABASE_URL;
  if (!to || !isPostgresUrl(to)) throw new CliError(`--to (or CAPTIONFARM_DATABASE_URL) must be a postgres:// URL\n\n${MIGRATE_USAGE}`, 2);
  const from = path.resolve(env.cwd, values.from ?? path.join(env.dataDir, 'captionfarm.sqlite'));
  if (!existsSync(from)) throw new CliError(`no SQLite database at ${from}: pass --from, or run this where CAPTIONFARM_DATA_DIR (${env.dataDir}) holds the embedded farm's data`);
  // Both opened through the migrator: the source is brought to this version's schema first.
  const src = await openDatabase({ path: from });
  try {
    const dst = await openDatabase({ url: to, poolSize: 2 });
    try {
      const counts = await copyDatabase(src, dst);
      if (values.json) process.stdout.write(`${JSON.stringify({ from, copied: counts })}\n`);
      else {
        const width = Math.max(...Object.keys(counts).map((k) => k.length));
        process.stdout.write(`copied ${from} into PostgreSQL:\n${Object.entries(counts).map(([t, n]) => `  ${t.padEnd(width)}  ${n}`).join('\n')}\n`);
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
