import { randomUUID } from 'node:crypto';
import type { FailureCode } from '@captionfarm/contracts';
import { appendLedger, endJob, failJobsWhere, jobHeldMinutes, type Database, type Db, type FailSweep, type Job, type JobEnding } from '@captionfarm/db';
import type { Transaction } from 'kysely';
import { toJobRecord } from './record.ts';

/** How a job ends (the statement's `JobEnding`): cancelled, failed with its code and reason, succeeded with its output. */
export type Ending = JobEnding;

/**
 * Ends a job in one transaction with its minutes and its webhook: a refund of what it holds on
 * cancel/failure, a settle on success, and the webhook delivery row (an outbox: the dispatcher
 * sends it later, so a crash between the two can lose nothing). Returns the ended row, or null
 * when the job had already ended (or another owner holds it): then nothing is written.
 */
export async function finishJob(trx: Transaction<Database>, job: Pick<Job, 'id'>, ending: Ending, now: Date, guard?: { leaseId: string }): Promise<Job | null> {
  const ended = await endJob(trx, { jobId: job.id, ending, now: now.toISOString(), leaseId: guard?.leaseId });
  if (!ended) return null;
  await recordEnding(trx, ended, ending.status, now);
  return ended;
}

/**
 * Ends every job a sweep matches (agents/sweeper.ts: leases lost too often, deadlines passed) with
 * one failure, in one transaction with each one's refund and webhook row. Returns the ended rows
 * (`lease_owner` kept: the node that held a timed-out job is told to stop).
 */
export async function finishSwept(db: Db, a: { sweep: FailSweep; failureCode: FailureCode; failureReason: string }, now: Date): Promise<Job[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await failJobsWhere(trx, { ...a, now: now.toISOString() });
    // Each refund takes its account's lock (appendLedger): in account order, so two sweeps ending
    // jobs of the same accounts (two control planes on PostgreSQL) cannot wait for each other.
    const byAccount = [...rows].sort((x, y) => (x.account_id < y.account_id ? -1 : x.account_id > y.account_id ? 1 : 0));
    for (const job of byAccount) await recordEnding(trx, job, 'failed', now);
    return rows;
  });
}

/**
 * What every ended job writes beside its row, in the transaction that ended it: the refund of what
 * it holds (cancelled/failed) or the settle (succeeded), and its webhook delivery row (the outbox).
 * Also for the set-based sweeps, which end many rows in one UPDATE (finishSwept).
 */
async function recordEnding(trx: Transaction<Database>, ended: Job, status: Ending['status'], now: Date): Promise<void> {
  const t = now.toISOString();
  const held = await jobHeldMinutes(trx, ended.id);
  if (status === 'succeeded') {
    await appendLedger(trx, { accountId: ended.account_id, jobId: ended.id, kind: 'settle', minutes: 0, note: `charged ${held} min`, now });
  } else if (held > 0) {
    await appendLedger(trx, { accountId: ended.account_id, jobId: ended.id, kind: 'refund', minutes: held, note: status, now });
  }

  if (ended.webhook_url) {
    await trx
      .insertInto('webhook_deliveries')
      .values({
        id: `msg_${randomUUID().replace(/-/g, '')}`,
        job_id: ended.id,
        account_id: ended.account_id,
        url: ended.webhook_url,
        payload: JSON.stringify(toJobRecord(ended)),
        status: 'pending',
        first_attempt_at: null,
        next_attempt_at: t,
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        claimed_until: null,
        created_at: t,
        delivered_at: null,
      })
      .execute();
  }
}
