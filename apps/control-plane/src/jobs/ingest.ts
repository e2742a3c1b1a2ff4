import { PLANS, billableMinutes, type AgentIngestedInput } from '@captionfarm/contracts';
import { appendLedger, jobHeldMinutes, lockAccount, minutesBalance, quoteIngestedJob, setJobDeadline, type Db, type Job } from '@captionfarm/db';
import type { AgentTimings } from '../agents/timings.ts';
import { givenTranscriptOutOfRange } from '../services/transcripts.ts';
import { deadlineAt, editOutOfRange, minutesExhausted, minutesText, outputLargerThanSource, sourceTooLong } from './decisions.ts';
import type { Ending } from './finish.ts';
import { renditionsOf } from './renditions.ts';

type Failure = Extract<Ending, { status: 'failed' }>;

/**
 * Ingest of a job whose lease holder measured its source (agents/reports.ts checked the lease):
 * quotedSeconds, the plan's duration, the resolution against the source, a given transcript and
 * the job's own edit.keep against the duration, and the minutes trued up to the measured duration (more if the balance
 * allows). Returns the failure that ends the job, or null when it goes on, its deadline set from
 * the measured duration. Every write is guarded by the lease.
 */
export async function ingestJob(
  deps: { db: Db; timings: AgentTimings; now: () => Date; onMinutesFreed?: (accountId: string) => void },
  job: Job,
  input: AgentIngestedInput,
): Promise<Failure | null> {
  const { db, now } = deps;
  const account = await db.selectFrom('accounts').select('plan').where('id', '=', job.account_id).executeTakeFirstOrThrow();
  const seconds = Math.ceil(input.durationSeconds);
  await quoteIngestedJob(db, { jobId: job.id, leaseId: input.leaseId, quotedSeconds: seconds, now: now().toISOString() });
  const tooLong = sourceTooLong(PLANS[account.plan].id, input.durationSeconds);
  if (tooLong) return tooLong;
  const larger = outputLargerThanSource(renditionsOf(job), input);
  if (larger) return larger;
  const outOfRange = await givenTranscriptOutOfRange(db, job.id, input.durationSeconds);
  if (outOfRange) return { status: 'failed', failureCode: 'transcript-out-of-range', failureReason: outOfRange };
  const editOutside = editOutOfRange(job, input.durationSeconds);
  if (editOutside) return editOutside;
  const needed = billableMinutes(input.durationSeconds);
  const short = await trueUp(db, job, needed, `${seconds} s`, now());
  if (short) return minutesExhausted(minutesText(needed), short.balance);
  deps.onMinutesFreed?.(job.account_id);
  const deadline = deadlineAt(Date.parse(job.started_at ?? now().toISOString()), deps.timings, input.durationSeconds);
  await setJobDeadline(db, { jobId: job.id, leaseId: input.leaseId, deadlineAt: deadline });
  return null;
}

/**
 * Trues the job's reservation up to `needed` minutes, under the account's lock. Returns the
 * balance (with what the job holds) when the account cannot cover the difference, else null.
 */
async function trueUp(db: Db, job: Job, needed: number, note: string, now: Date): Promise<{ balance: number } | null> {
  return db.transaction().execute(async (trx) => {
    await lockAccount(trx, job.account_id);
    const held = await jobHeldMinutes(trx, job.id);
    if (needed === held) return null;
    if (needed > held) {
      const balance = await minutesBalance(trx, job.account_id);
      if (balance < needed - held) return { balance: balance + held };
    }
    await appendLedger(trx, { accountId: job.account_id, jobId: job.id, kind: 'true_up', minutes: held - needed, note, now });
    return null;
  });
}
