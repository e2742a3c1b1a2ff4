import type { FailureCode } from '@captionfarm/contracts';
import type { Kysely } from 'kysely';
import type { Database, Job } from '../../schema.ts';

export type FailSweep =
  /** Running jobs whose lease expired with no attempts left. */
  | { kind: 'leases-exhausted'; maxAttempts: number; owner?: string }
  /** Queued or running jobs past their deadline. */
  | { kind: 'past-deadline' };

/**
 * The failing sweepers, set-based: one UPDATE ... RETURNING ends every job the sweep matches, with
 * the given failure. The caller writes each returned job's refund and webhook in the same
 * transaction (`finishEnded` in the control plane). `lease_owner` is kept, so the caller can tell
 * the node that held a timed-out job to stop.
 */
export async function failJobsWhere(
  db: Kysely<Database>,
  a: { sweep: FailSweep; now: string; failureCode: FailureCode; failureReason: string },
): Promise<Job[]> {
  let q = db.updateTable('jobs').set({
    status: 'failed',
    phase: 'failed',
    percent: null,
    failure_code: a.failureCode,
    failure_reason: a.failureReason,
    lease_id: null,
    lease_expires_at: null,
    updated_at: a.now,
    finished_at: a.now,
  });
  if (a.sweep.kind === 'leases-exhausted') {
    const owner = a.sweep.owner;
    q = q.where('status', '=', 'running').where('attempts', '>=', a.sweep.maxAttempts);
    q = owner === undefined ? q.where('lease_expires_at', '<', a.now) : q.where('lease_owner', '=', owner);
  } else {
    q = q.where('status', 'in', ['queued', 'running']).where('deadline_at', '<', a.now);
  }
  return q.returningAll().execute();
}
