import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openDatabase, type Db, type OpenDatabaseOptions } from '../src/index.ts';
import { freshTestDatabase, type TestDatabase } from '../src/testing.ts';

/**
 * A migrated database for this test file, opened before its tests and removed after them: a fresh
 * PostgreSQL database when CAPTIONFARM_TEST_DATABASE_URL names a server, else SQLite in a temp dir.
 * `get()` is the open database (inside the tests), `options()` what opens it again.
 */
export function useFreshDatabase(prefix: string): { get(): Db; options(): OpenDatabaseOptions } {
  let dir: string;
  let testDb: TestDatabase;
  let db: Db | undefined;
  let options: OpenDatabaseOptions;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
    testDb = await freshTestDatabase();
    options = testDb.url ? { url: testDb.url } : { path: path.join(dir, 'captionfarm.db') };
    db = await openDatabase(options);
  });
  afterAll(async () => {
    await db?.destroy();
    await testDb?.drop();
    await rm(dir, { recursive: true, force: true });
  });
  return { get: () => db!, options: () => options };
}
