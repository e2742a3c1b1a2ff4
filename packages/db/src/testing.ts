import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Test support: the suites run on SQLite by default and on PostgreSQL when
 * CAPTIONFARM_TEST_DATABASE_URL names a server (a role that may CREATE DATABASE, e.g.
 * postgres://captionfarm:captionfarm@127.0.0.1:5432/captionfarm; scripts/postgres sets one up).
 * Each control plane a test builds gets a database of its own, dropped at the end.
 */
export interface TestDatabase {
  /** The environment to add to the control plane's: CAPTIONFARM_DATABASE_URL, or nothing for SQLite. */
  env: Record<string, string>;
  url: string | undefined;
  drop(): Promise<void>;
}

export function testDatabaseServerUrl(): string | undefined {
  return process.env.CAPTIONFARM_TEST_DATABASE_URL || undefined;
}

export async function freshTestDatabase(): Promise<TestDatabase> {
  const server = testDatabaseServerUrl();
  if (!server) return { env: {}, url: undefined, drop: async () => undefined };
  const name = `cf_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(server, `create database ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    env: { CAPTIONFARM_DATABASE_URL: url.toString() },
    url: url.toString(),
    drop: () => dropDatabase(server, name),
  };
}

async function adminQuery(server: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * Drops a test database, ending its connections. A backend that is neither ours nor one we may
 * signal (an autovacuum worker, on a role without pg_signal_backend) makes the forced drop fail;
 * such workers finish in moments, so the drop is tried again before it gives up.
 */
async function dropDatabase(server: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await adminQuery(server, `drop database if exists ${name} with (force)`);
      return;
    } catch (err) {
      if (attempt >= 10) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}
