import { randomUUID } from 'node:crypto';
import { testDatabaseServerUrl } from '@captionfarm/db/testing';
import { minutesBalance } from '@captionfarm/db';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserveWaiting } from '../src/jobs/admission.ts';
import { finishJob } from '../src/jobs/finish.ts';
import { startHarness, until, type Harness } from './harness.ts';

// Admission on PostgreSQL, where a cancel can come from another control plane while admission
// reserves the account's waiting jobs: a job cancelled after admission read it as waiting gets no
// reservation (a reserve row on a cancelled job is never refunded: minutes lost). PostgreSQL only
// (on SQLite one writer at a time already orders the two); CI runs it with CAPTIONFARM_TEST_DATABASE_URL.

let h: Harness;
beforeAll(async () => {
  if (testDatabaseServerUrl()) h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe.skipIf(!testDatabaseServerUrl())('admission against a concurrent cancel (PostgreSQL)', () => {
  it('a job cancelled while admission reserves it keeps no reservation and the balance is untouched', async () => {
    const { accountId } = await h.account('pro');
    const db = h.cp.db;
    const jobId = randomUUID();
    const t = '2026-11-23T00:00:00.000Z';
    await db
      .insertInto('jobs')
      .values({
        ...{ id: jobId, account_id: accountId, status: 'queued', phase: 'queued', template_id: 't', template_json: '{}', format: 'mp4', quality: 'high' },
        ...{ video_url: 'https://v.example.com/a.mp4', upload_id: null, req_width: null, req_height: null, language: null, detected_language: null },
        ...{ webhook_url: null, quoted_seconds: null, out_width: null, out_height: null, percent: null, output_key: null, output_bytes: null },
        ...{ download_url: null, output_expires_at: null, failure_code: null, failure_reason: null, settled_at: null, style_json: null, overlay: 0 },
        ...{ created_at: t, updated_at: t, started_at: null, finished_at: null, deadline_at: null, seq: 1 },
        ...{ lease_id: null, lease_owner: null, lease_expires_at: null, reserved_at: null },
      })
      .execute();
    const before = await minutesBalance(db, accountId);
    expect(before).toBeGreaterThan(0);

    // The cancel has ended the row and holds it, not yet committed...
    let commitCancel!: () => void;
    const committed = new Promise<void>((r) => (commitCancel = r));
    let ended!: () => void;
    const cancelled = new Promise<void>((r) => (ended = r));
    const cancel = db.transaction().execute(async (trx) => {
      expect(await finishJob(trx, { id: jobId }, { status: 'cancelled' }, new Date())).not.toBeNull();
      ended();
      await committed;
    });
    await cancelled;
    // ...when admission reads the job as waiting (the cancel is not visible yet) and waits for the row.
    const admission = db.transaction().execute((trx) => reserveWaiting(trx, accountId, 'pro', new Date(), false));
    await until(
      async () => {
        const waiting = await sql<{
          n: string;
        }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
        return Number(waiting.rows[0]!.n) > 0;
      },
      10_000,
      'admission waiting for the cancelled row',
    );
    commitCancel();
    await cancel;
    expect((await admission).reserved).toEqual([]);

    const job = await db.selectFrom('jobs').select(['status', 'reserved_at']).where('id', '=', jobId).executeTakeFirstOrThrow();
    expect(job).toEqual({ status: 'cancelled', reserved_at: null });
    const rows = await db.selectFrom('minutes_ledger').select('kind').where('job_id', '=', jobId).execute();
    expect(rows).toEqual([]);
    expect(await minutesBalance(db, accountId)).toBe(before);
  });
});
