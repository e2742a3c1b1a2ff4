import { ApiError, issuesToDetails, ListJobsQuerySchema, type JobList, type JobStatus } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';
import { signToken, verifyToken } from '../crypto.ts';
import { toJobRecord } from './record.ts';
import type { Caller } from './service.ts';

/**
 * GET /v1/automation-jobs: the account's jobs, newest first, a page at a time. `filter.status`:
 * the dashboard's status filter (the public list has none).
 */
export async function listJobs(deps: { db: Db; cursorKey: string }, caller: Caller, query: unknown, filter: { status?: JobStatus } = {}): Promise<JobList> {
  const { db, cursorKey } = deps;
  const parsed = ListJobsQuerySchema.safeParse(query);
  if (!parsed.success) throw new ApiError('invalid_request', 'Invalid list query: see details.', { details: issuesToDetails(parsed.error.issues) });
  const { cursor, limit } = parsed.data;
  // The cursor is the last listed job's place in the account's creation order (jobs.seq):
  // jobs created in the same millisecond keep their creation order, on SQLite and PostgreSQL.
  let after: number | undefined;
  if (cursor) {
    const v = verifyToken(cursor, cursorKey) as { a?: string; s?: number; c?: string; i?: string } | undefined;
    if (v && v.a === caller.accountId && typeof v.s === 'number') after = v.s;
    else if (v && v.a === caller.accountId && typeof v.c === 'string' && typeof v.i === 'string')
      after = await seqAfterOldCursor(db, caller.accountId, v.c, v.i);
    else throw new ApiError('invalid_request', 'cursor is not valid: pass nextCursor from a previous response unchanged.');
  }
  let q = db.selectFrom('jobs').selectAll().where('account_id', '=', caller.accountId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (after !== undefined) q = q.where('seq', '<', after);
  const rows = await q
    .orderBy('seq', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    jobs: page.map(toJobRecord),
    nextCursor: rows.length > limit && last ? signToken({ a: caller.accountId, s: last.seq ?? 0 }, cursorKey) : null,
  };
}

/**
 * A cursor signed before `jobs.seq` (migration 0013) names its last job by (created_at, id), the
 * list's order then. Migration 0013 numbered the jobs in that same order, so the page goes on
 * before that job's number: a client paging across the upgrade neither skips nor repeats a job.
 * A job deleted since does not end its walk: the newest job that came before its place is found
 * by reading the account's jobs (once per walk; no index keeps that old order any more).
 */
async function seqAfterOldCursor(db: Db, accountId: string, createdAt: string, jobId: string): Promise<number> {
  const named = await db
    .selectFrom('jobs')
    .select('seq')
    .where('id', '=', jobId)
    .where('account_id', '=', accountId)
    .where('created_at', '=', createdAt)
    .executeTakeFirst();
  if (named?.seq != null) return named.seq;
  const prev = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', jobId)])]))
    .executeTakeFirst();
  // Nothing before it: an empty page, as the old cursor would have given.
  return (prev?.seq ?? 0) + 1;
}
