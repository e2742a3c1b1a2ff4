import { sql, type Expression, type Kysely, type RawBuilder } from 'kysely';
import { dialectOf } from '../../dialect.ts';
import type { Database, Job } from '../../schema.ts';

/** What the lease needs per plan: its concurrency limit and the deadline a job of it gets at its first lease. */
export interface PlanQueueRules {
  plan: string;
  concurrentJobs: number;
  /** ISO time: the deadline of a job of this plan first leased now. */
  firstDeadlineAt: string;
}

export interface LeaseNextJobArgs {
  nodeId: string;
  leaseId: string;
  now: string;
  leaseExpiresAt: string;
  plans: readonly PlanQueueRules[];
  /** Concurrency of an account whose plan is not in `plans` (none in practice). */
  defaultConcurrency: number;
}

/** The leased job with its account's plan. */
export type LeasedRow = Job & { plan: string | null };

// Any constant: the key of the PostgreSQL advisory lock that orders leases (see below).
const LEASE_LOCK_KEY = 7_313_001;

/**
 * Leases the oldest queued job that holds its minutes (a `reserve` ledger row; jobs waiting for
 * minutes stay queued) and whose account is below its plan's concurrency, in one statement:
 * `UPDATE jobs ... WHERE id = (SELECT ... LIMIT 1 [FOR UPDATE OF j SKIP LOCKED]) AND status =
 * 'queued' RETURNING *`. The attempt counter, the lease (id, owner, expiry), started_at and, at the
 * first lease, the deadline are set together.
 *
 * On PostgreSQL, SKIP LOCKED lets concurrent leases (other agents, other control planes) pass a
 * row one of them is taking instead of queueing behind it. The per-account running count is read
 * from the statement's snapshot, so two leases of the same account from two processes could both
 * see room for one more: a transaction-scoped advisory lock taken before the statement orders the
 * leases (each is one short statement), so the concurrency limit holds across processes. SQLite
 * runs the statement under its single writer lock.
 */
export async function leaseNextJob(db: Kysely<Database>, args: LeaseNextJobArgs): Promise<LeasedRow | undefined> {
  if (dialectOf(db) === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${sql.lit(LEASE_LOCK_KEY)})`.execute(trx);
      return statement(trx, args, true);
    });
  }
  return statement(db, args, false);
}

async function statement(db: Kysely<Database>, a: LeaseNextJobArgs, postgres: boolean): Promise<LeasedRow | undefined> {
  // Per-plan values as CASE expressions over the account's plan; the numbers are our own integers,
  // inlined as literals so that PostgreSQL types the CASE as an integer.
  const planCase = <T>(ref: Expression<string | null>, value: (p: PlanQueueRules) => RawBuilder<T>, otherwise: RawBuilder<T>) =>
    sql<T>`case ${ref} ${sql.join(
      a.plans.map((p) => sql`when ${p.plan} then ${value(p)}`),
      sql` `,
    )} else ${otherwise} end`;
  return db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'running',
      phase: 'ingesting',
      percent: null,
      lease_id: a.leaseId,
      lease_owner: a.nodeId,
      lease_expires_at: a.leaseExpiresAt,
      attempts: eb('attempts', '+', 1),
      started_at: eb.fn.coalesce('started_at', eb.val(a.now)),
      deadline_at: eb.fn.coalesce(
        'deadline_at',
        planCase<string | null>(
          eb.selectFrom('accounts').select('plan').whereRef('accounts.id', '=', 'jobs.account_id').$asScalar(),
          (p) => sql<string>`${p.firstDeadlineAt}`,
          sql<null>`null`,
        ),
      ),
      updated_at: a.now,
    }))
    .where('id', '=', (eb) =>
      eb
        .selectFrom('jobs as j')
        .innerJoin('accounts as a', 'a.id', 'j.account_id')
        .select('j.id')
        .where('j.status', '=', 'queued')
        .where(({ exists, selectFrom }) =>
          exists(selectFrom('minutes_ledger as l').select('l.id').whereRef('l.job_id', '=', 'j.id').where('l.kind', '=', 'reserve')),
        )
        .where(
          (w) =>
            w
              .selectFrom('jobs as r')
              .select((c) => c.fn.countAll<number>().as('n'))
              .whereRef('r.account_id', '=', 'j.account_id')
              .where('r.status', '=', 'running'),
          '<',
          planCase<number>(sql.ref('a.plan'), (p) => sql.lit(p.concurrentJobs), sql.lit(a.defaultConcurrency)),
        )
        .orderBy('j.created_at')
        .orderBy('j.id')
        .limit(1)
        .$if(postgres, (q) => q.forUpdate('j').skipLocked()),
    )
    .where('status', '=', 'queued')
    .returningAll()
    .returning((eb) => eb.selectFrom('accounts').select('plan').whereRef('accounts.id', '=', 'jobs.account_id').as('plan'))
    .executeTakeFirst();
}
