import { failJobsWhere, openDatabase, type Db } from '@captionfarm/db';
import type { QueryId, RootOperationNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expiredOutputs } from '../src/agents/sweeper.ts';
import { accountsWithWaitingJobs } from '../src/jobs/admission.ts';
import { endedOutputs } from '../src/jobs/ended-outputs.ts';

/**
 * The sweeps run every 30 s in every control plane, with the event loop stopped while SQLite
 * answers. None may read the queued or succeeded jobs one by one: with 16,000 jobs queued
 * (bench:api) a sweep took 47-124 ms, and the API's p99 paid for it. The plans are SQLite's
 * (EXPLAIN QUERY PLAN of the statements the sweeps compile); PostgreSQL picks its plans from table
 * statistics, so this suite runs on SQLite only.
 */
describe('sweep plans (SQLite)', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDatabase({ path: ':memory:' });
  });
  afterAll(async () => {
    await db.destroy();
  });

  type Compiled = ReturnType<ReturnType<Db['getExecutor']>['compileQuery']>;
  const plan = async (c: Compiled) => (await db.executeQuery<{ detail: string }>({ ...c, sql: `explain query plan ${c.sql}` })).rows.map((r) => r.detail);

  /** The statement failJobsWhere runs for the past-deadline sweep (on an empty table: it changes nothing), as it was compiled. */
  async function compiledFailSweep(): Promise<Compiled> {
    let node: RootOperationNode | undefined;
    let queryId: QueryId | undefined;
    const capture = db.withPlugin({
      transformQuery: (args) => {
        node = args.node;
        queryId = args.queryId;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    await failJobsWhere(capture, { sweep: { kind: 'past-deadline' }, now: '2026-11-23T00:00:00.000Z', failureCode: 'timed-out', failureReason: 'test' });
    return db.getExecutor().compileQuery(node!, queryId!);
  }

  it('admission finds the accounts with a waiting job by one index seek per account, not by reading every queued job', async () => {
    const steps = await plan(accountsWithWaitingJobs(db).compile());
    expect(steps).toContainEqual(
      expect.stringMatching(/^SEARCH jobs EXISTS USING COVERING INDEX jobs_account_waiting \(account_id=\? AND status=\? AND reserved_at=\?\)/),
    );
    expect(steps.join(' | ')).not.toMatch(/SCAN jobs|jobs_status_created/);
  });

  it('the past-deadline sweep reads only the jobs past their deadline', async () => {
    expect(await plan(await compiledFailSweep())).toEqual([
      expect.stringMatching(/^SEARCH jobs USING (COVERING )?INDEX jobs_status_deadline \(status=\? AND deadline_at<\?\)/),
    ]);
  });

  it('the expired-output sweep reads only the jobs whose output is still kept', async () => {
    expect(await plan(expiredOutputs(db, '2026-11-23T00:00:00.000Z').compile())).toEqual([
      expect.stringMatching(/^SEARCH jobs USING INDEX jobs_output_kept \(output_expires_at<\?\)/),
    ]);
  });

  it('the sweep of outputs of jobs that did not succeed reads only the jobs with an output and no expiry', async () => {
    expect(await plan(endedOutputs(db).compile())).toEqual([expect.stringMatching(/^SEARCH jobs USING INDEX jobs_output_kept \(output_expires_at=\?\)/)]);
  });
});
