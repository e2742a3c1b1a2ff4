import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '@captionfarm/process';
import { dialectOf, isPostgresUrl, openDatabase, type Db, type OpenDatabaseOptions } from '../src/index.ts';
import { freshTestDatabase, testDatabaseServerUrl, type TestDatabase } from '../src/testing.ts';

// The database every control plane opens: migrated on open, on SQLite (the embedded default) and
// on PostgreSQL when CAPTIONFARM_TEST_DATABASE_URL names a server (CI runs this file on both).

let dir: string;
let testDb: TestDatabase;
let target: OpenDatabaseOptions;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cf-db-'));
  testDb = await freshTestDatabase();
  target = testDb.url ? { url: testDb.url } : { path: path.join(dir, 'captionfarm.db') };
});
afterAll(async () => {
  await testDb.drop();
  await rm(dir, { recursive: true, force: true });
});

const applied = async (db: Db) =>
  (
    await db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .orderBy('name' as never)
      .execute()
  ).map((r) => (r as { name: string }).name);

describe('openDatabase', () => {
  it('migrates a new database to the latest schema, in name order; opening it again applies nothing and keeps its rows', async () => {
    const db = await openDatabase(target);
    expect(dialectOf(db)).toBe(testDb.url ? 'postgres' : 'sqlite');
    const names = await applied(db);
    // Issue-number prefixes keep the order stable whoever lands first.
    expect(names[0]).toBe('0001-initial');
    expect(names).toEqual([...names].sort());
    expect(names.every((n) => /^\d{4}-[a-z0-9-]+$/.test(n))).toBe(true);
    const id = randomUUID();
    await db
      .insertInto('accounts')
      .values({
        id,
        name: 'kept',
        plan: 'pro',
        webhook_secret: 'whsec_test',
        webhook_secret_prev: null,
        webhook_secret_prev_expires_at: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    await db.destroy();

    const again = await openDatabase(target);
    try {
      expect(await applied(again)).toEqual(names);
      const row = await again.selectFrom('accounts').select(['name', 'plan']).where('id', '=', id).executeTakeFirst();
      expect(row).toEqual({ name: 'kept', plan: 'pro' });
    } finally {
      await again.destroy();
    }
  });

  it('a database that is not ours fails naming the migration that could not run, and is left as it was', async () => {
    // Someone else's SQLite file with an `accounts` table of its own.
    const file = path.join(dir, 'foreign.db');
    const foreign = new SQLite(file);
    foreign.exec('create table accounts (owner text)');
    foreign.close();
    await expect(openDatabase({ path: file })).rejects.toThrow(/^database migration 0001-initial failed: .*accounts/);
    const after = new SQLite(file);
    try {
      const tables = after.prepare(`select name from sqlite_master where type = 'table' and name not like 'kysely_%' order by name`).all() as {
        name: string;
      }[];
      expect(tables.map((t) => t.name)).toEqual(['accounts']);
    } finally {
      after.close();
    }
  });

  it('a database migrated before 0013-waiting-jobs (issue numbers, not dates, order the names) gets it last, with reserved_at from its ledger', async () => {
    const db = await openDatabase(target);
    const accountId = randomUUID();
    const [reserved, waiting] = [randomUUID(), randomUUID()];
    try {
      await db
        .insertInto('accounts')
        .values({
          id: accountId,
          name: 'older',
          plan: 'pro',
          webhook_secret: 'whsec_test',
          webhook_secret_prev: null,
          webhook_secret_prev_expires_at: null,
          created_at: '2026-11-01T00:00:00.000Z',
        })
        .execute();
      for (const [seq, id] of [reserved, waiting].entries()) {
        await db
          .insertInto('jobs')
          .values({
            ...{ id, account_id: accountId, status: 'queued', phase: 'queued', template_id: 't', template_json: '{}', format: 'mp4', quality: 'high' },
            ...{ video_url: 'https://v.example.com/a.mp4', upload_id: null, req_width: null, req_height: null, language: null, detected_language: null },
            ...{ webhook_url: null, quoted_seconds: null, out_width: null, out_height: null, percent: null, output_key: null, output_bytes: null },
            ...{ download_url: null, output_expires_at: null, failure_code: null, failure_reason: null, settled_at: null, style_json: null },
            ...{ created_at: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z', started_at: null, finished_at: null },
            ...{ deadline_at: null, seq: seq + 1, lease_id: null, lease_owner: null, lease_expires_at: null, reserved_at: null },
          })
          .execute();
      }
      await db
        .insertInto('minutes_ledger')
        .values({
          account_id: accountId,
          job_id: reserved,
          kind: 'reserve',
          minutes: -3,
          note: null,
          created_at: '2026-11-01T00:00:01.000Z',
          balance_after: -3,
        })
        .execute();
      // Back to the schema of a farm that ran 0016-fonts before 0013-waiting-jobs existed.
      await db.schema.dropIndex('jobs_account_waiting').execute();
      await db.schema.dropIndex('ledger_account_kind_note').execute();
      await db.schema.alterTable('jobs').dropColumn('reserved_at').execute();
      await db
        .deleteFrom('kysely_migration' as never)
        .where('name' as never, '=', '0013-waiting-jobs' as never)
        .execute();
      expect(await applied(db)).toContain('0016-fonts');
    } finally {
      await db.destroy();
    }

    const again = await openDatabase(target);
    try {
      expect(await applied(again)).toContain('0013-waiting-jobs');
      const rows = await again.selectFrom('jobs').select(['id', 'reserved_at']).where('account_id', '=', accountId).execute();
      expect(Object.fromEntries(rows.map((r) => [r.id, r.reserved_at]))).toEqual({ [reserved]: '2026-11-01T00:00:01.000Z', [waiting]: null });
    } finally {
      await again.destroy();
    }
  });

  it.skipIf(!testDatabaseServerUrl())(
    'PostgreSQL: a connection the server ends while its transaction waits on other work fails that transaction, not the process',
    async () => {
      // What a PostgreSQL restart does to a control plane mid-transaction (57P01 on every backend).
      // Unhandled, the client's 'error' event is an uncaught exception: vitest fails the run.
      const db = await openDatabase({ url: testDb.url!, poolSize: 2 });
      try {
        const tx = db.transaction().execute(async (trx) => {
          const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
          await sql`select pg_terminate_backend(${pid})`.execute(db);
          // The transaction's connection is idle (no query of ours on it) when the server ends it.
          const end = Date.now() + 10_000;
          while ((await sql`select 1 from pg_stat_activity where pid = ${pid}`.execute(db)).rows.length > 0) {
            if (Date.now() > end) throw new Error(`backend ${pid} still there`);
          }
          await sql`select 1`.execute(trx);
        });
        await expect(tx).rejects.toThrow();
        // The pool dropped the dead client: the next statements get a live one.
        expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
      } finally {
        await db.destroy();
      }
    },
  );

  it.skipIf(testDatabaseServerUrl())(
    'SQLite: the WAL is checkpointed in the background, not by the commit that writes it, and closing lets go of the file',
    async () => {
      const file = path.join(dir, 'checkpoints.db');
      const db = await openDatabase({ path: file });
      const size = async () => (await stat(file)).size;
      try {
        // The writer's own threshold is the far-off safety net: its commits never checkpoint here.
        expect((await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows[0]).toEqual({ wal_autocheckpoint: 10_000 });
        await sql`create table filler (x text)`.execute(db);
        const before = await size();
        // About 2,000 pages of WAL: past SQLite's default threshold (1,000), below the safety net.
        for (let i = 0; i < 200; i++) await sql`insert into filler values (${'x'.repeat(40_000)})`.execute(db);
        // The checkpoint worker copies them into the database file within a few of its periods.
        const deadline = Date.now() + 20_000;
        while ((await size()) < before + 4_000_000) {
          if (Date.now() > deadline) throw new Error(`no checkpoint: the database file stayed at ${await size()} bytes`);
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        await db.destroy();
      }
      // The last connection to close removes the WAL: the worker's connection was closed too.
      await expect(stat(`${file}-wal`)).rejects.toThrow(/ENOENT/);
    },
  );

  it.skipIf(testDatabaseServerUrl())(
    'SQLite: under a steady stream of commits the WAL still starts over, so the writer never reaches its own checkpoint threshold',
    async () => {
      const file = path.join(dir, 'steady.db');
      const db = await openDatabase({ path: file });
      let highWater = 0;
      try {
        await sql`create table steady (id text primary key, a text, b integer, c text)`.execute(db);
        await sql`create index steady_a on steady (a, b)`.execute(db);
        await sql`create index steady_c on steady (c)`.execute(db);
        // 5,000 commits of four pages each (a row and three index entries), paced at up to 1,000 a
        // second (bench:api's 500 creates a second wrote about 2,500 frames a second): 20,000
        // frames. A passive checkpoint never catches up with such a stream, and the WAL grew to the
        // writer's 10,000-frame safety net (measured: 10,000 frames here without the FULL checkpoints).
        let n = 0;
        while (n < 5_000) {
          for (let i = 0; i < 10; i++, n++) {
            await db.transaction().execute((trx) => sql`insert into steady values (${randomUUID()}, ${`a${n % 97}`}, ${n}, ${randomUUID()})`.execute(trx));
          }
          highWater = Math.max(highWater, (await stat(`${file}-wal`)).size);
          await new Promise((r) => setTimeout(r, 10));
        }
        const frames = Math.round(highWater / (4096 + 24));
        expect(frames).toBeLessThan(8_000);
      } finally {
        await db.destroy();
      }
    },
    60_000,
  );

  it.skipIf(testDatabaseServerUrl())(
    'SQLite: a process that opened and closed a database exits on its own (the checkpoint worker holds it only while it answers)',
    async () => {
      const script = path.join(dir, 'open-close.mts');
      const src = new URL('../src/index.ts', import.meta.url).href;
      await writeFile(
        script,
        `import { openDatabase } from ${JSON.stringify(src)};\n` +
          `const db = await openDatabase({ path: ${JSON.stringify(path.join(dir, 'exits.db'))} });\n` +
          `await db.destroy();\nconsole.log('closed');\n`,
      );
      let out = '';
      let closedAt = 0;
      const child = runProcess(process.execPath, {
        args: ['--import', 'tsx', script],
        onStdout: (b) => {
          out += b;
          if (out.includes('closed')) closedAt ||= Date.now();
        },
      });
      let exited = false;
      const exit = child.done.then((r) => {
        exited = true;
        return r.exitCode;
      });
      // Once the database is closed nothing is left to do: a process still alive 30 s later is held by a handle.
      const held = (async () => {
        for (;;) {
          await new Promise((r) => setTimeout(r, 100));
          if (exited) return false;
          if (closedAt && Date.now() - closedAt > 30_000) return true;
        }
      })();
      if (await held) {
        child.kill('SIGKILL');
        throw new Error('the process closed its database but did not exit: something (the checkpoint worker?) keeps it alive');
      }
      // 0, and not 13 (a top-level await left unsettled because the worker was let go while it was awaited).
      expect(await exit).toBe(0);
      expect(out).toBe('closed\n');
    },
    120_000,
  );

  it('tells a PostgreSQL URL from a SQLite path', () => {
    expect(isPostgresUrl('postgres://u:p@127.0.0.1:5432/cf')).toBe(true);
    expect(isPostgresUrl('POSTGRESQL://127.0.0.1/cf')).toBe(true);
    expect(isPostgresUrl('/var/lib/captionfarm/postgres://x.db')).toBe(false);
    expect(isPostgresUrl('captionfarm.db')).toBe(false);
    expect(isPostgresUrl('mysql://127.0.0.1/cf')).toBe(false);
  });
});
