import { PLANS, billableMinutes, type PlanId } from '@captionfarm/contracts';
import { appendLedger, lockAccount, markReserved, minutesBalance, prepared, type Database, type Db, type Job } from '@captionfarm/db';
import { minutesExhausted, minutesText } from './decisions.ts';
import type { ExpressionBuilder, Transaction } from 'kysely';
import { ensureMonthlyAllowance } from '../services/accounts.ts';
import { finishJob } from './finish.ts';

type Trx = Transaction<Database>;

/**
 * What a job reserves: an upload its probed duration (exact, so `floor` = `need`); a URL source
 * its plan's longest input until ingest trues it up, but it can start with as little as one
 * minute (a short video needs no more; a long one fails at ingest if the balance lacks the rest).
 */
async function needOf(trx: Trx, job: Waiting, plan: PlanId): Promise<{ need: number; floor: number }> {
  const max = billableMinutes(PLANS[plan].maxInputSeconds);
  if (job.upload_id) {
    const upload = await trx.selectFrom('uploads').select('duration_seconds').where('id', '=', job.upload_id).executeTakeFirst();
    const need = upload?.duration_seconds != null ? Math.min(max, billableMinutes(upload.duration_seconds)) : max;
    return { need, floor: need };
  }
  return { need: max, floor: 1 };
}

/** A job waiting for its minutes: queued, and no reservation yet (`reserved_at` unset, no reserve row in the ledger). */
const waitingForMinutes = (eb: ExpressionBuilder<Database, 'jobs'>) =>
  eb.and([
    eb('status', '=', 'queued'),
    eb('reserved_at', 'is', null),
    eb.not(
      eb.exists(
        eb
          .selectFrom('minutes_ledger')
          .select('minutes_ledger.id')
          .whereRef('minutes_ledger.job_id', '=', 'jobs.id')
          .where('minutes_ledger.kind', '=', 'reserve'),
      ),
    ),
  ]);

/** What admission reads of a waiting job. */
type Waiting = Pick<Job, 'id' | 'upload_id'>;

/**
 * Queued jobs of an account that hold no reservation yet, oldest first (every job create looks:
 * compiled once, prepared). `reserved_at` (index jobs_account_waiting) leads to them without
 * reading the account's other jobs; the ledger, the record of reservations, is checked too. Only
 * the columns admission uses: a whole row carries its template (about 1 KB of JSON).
 */
const waitingJobs = prepared((db, a: { accountId: string }) =>
  db.selectFrom('jobs').select(['id', 'upload_id']).where('account_id', '=', a.accountId).where(waitingForMinutes).orderBy('created_at').orderBy('id'),
);

/**
 * Accounts with a job waiting for minutes: account by account, each an index seek to its waiting
 * jobs (jobs_account_waiting). A scan of the jobs for waiting ones read every queued job: 33 ms of
 * a stopped event loop at 16,000 queued, every sweep (sweep-plans.test.ts checks the plan).
 */
export const accountsWithWaitingJobs = (db: Db) =>
  db
    .selectFrom('accounts')
    .select('id')
    .where(({ exists, selectFrom }) => exists(selectFrom('jobs').select('jobs.id').whereRef('jobs.account_id', '=', 'accounts.id').where(waitingForMinutes)));

/** Active jobs of an account that hold minutes: each may still give some back (true-up, failure, cancel). */
async function holders(trx: Trx, accountId: string): Promise<number> {
  const row = await trx
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('status', 'in', ['queued', 'running'])
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('minutes_ledger').select('minutes_ledger.id').whereRef('minutes_ledger.job_id', '=', 'jobs.id').where('minutes_ledger.kind', '=', 'reserve'),
      ),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Reserves minutes for the account's waiting jobs, oldest first, each exactly once (one
 * `reserve` ledger row per job). Returns the jobs that got their reservation. A job that cannot
 * be covered stays `queued` (agents skip it) while another job of the account holds minutes that
 * may come back; `failExhausted` then fails it, which only admit() does, never a create.
 */
export async function reserveWaiting(
  trx: Trx,
  accountId: string,
  plan: PlanId,
  now: Date,
  failExhausted: boolean,
): Promise<{ reserved: string[]; ended: Job[] }> {
  const reserved: string[] = [];
  const ended: Job[] = [];
  // Before the read: two passes for one account (two control planes) must not both see a job
  // as waiting and reserve it twice.
  await lockAccount(trx, accountId);
  const waiting = await waitingJobs(trx, { accountId });
  if (waiting.length === 0) return { reserved, ended };
  await ensureMonthlyAllowance(trx, accountId, plan, now);
  let balance = await minutesBalance(trx, accountId);
  for (const job of waiting) {
    const { need, floor } = await needOf(trx, job, plan);
    if (balance >= floor) {
      const minutes = Math.min(need, balance);
      // The mark first: a job cancelled since the read gets no reserve row, which nothing would refund.
      if ((await markReserved(trx, { id: job.id, at: now.toISOString() })).length === 0) continue;
      await appendLedger(trx, { accountId, jobId: job.id, kind: 'reserve', minutes: -minutes, now, balanceBefore: balance });
      balance -= minutes;
      reserved.push(job.id);
      continue;
    }
    if (!failExhausted || (await holders(trx, accountId)) > 0) continue;
    const row = await finishJob(trx, job, minutesExhausted(job.upload_id ? minutesText(floor) : 'at least 1 minute', balance), now);
    if (row) ended.push(row);
  }
  return { reserved, ended };
}

/**
 * Admission: gives waiting jobs their minutes when minutes come back (a job ended or was trued
 * up, a new month, a grant), and fails them with `automation-minutes-exhausted` once nothing can
 * give minutes back. Runs after each create (so a create always answers 202 `queued`, and the
 * failure, with its webhook, comes after), after each job end and true-up, and on every sweep.
 * One pass per account at a time in this process.
 */
export function createAdmission(deps: { db: Db; now: () => Date; onReserved: (jobId: string) => void; onEnded: (job: Job) => void }) {
  const { db, now } = deps;
  const chains = new Map<string, Promise<void>>();

  async function pass(accountId: string): Promise<void> {
    const account = await db.selectFrom('accounts').select('plan').where('id', '=', accountId).executeTakeFirst();
    if (!account) return;
    const { reserved, ended } = await db.transaction().execute((trx) => reserveWaiting(trx, accountId, account.plan, now(), true));
    for (const id of reserved) deps.onReserved(id);
    for (const job of ended) deps.onEnded(job);
  }

  function admit(accountId: string): Promise<void> {
    const next = (chains.get(accountId) ?? Promise.resolve()).then(() => pass(accountId));
    const settled = next.catch(() => undefined);
    chains.set(accountId, settled);
    void settled.then(() => {
      if (chains.get(accountId) === settled) chains.delete(accountId);
    });
    return next;
  }

  return {
    admit,
    /** Every account with a job waiting for minutes (the sweeper: grants and new months). */
    async admitAll(): Promise<void> {
      for (const a of await accountsWithWaitingJobs(db).execute()) await admit(a.id);
    },
  };
}
