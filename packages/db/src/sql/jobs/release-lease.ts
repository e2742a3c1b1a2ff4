import type { Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

const QUEUED = { status: 'queued', phase: 'queued', percent: null, lease_id: null, lease_owner: null, lease_expires_at: null } as const;

/** The holder gives a lease back (it is shutting down): the job is queued again at once. True when it was. */
export async function releaseLease(db: Kysely<Database>, a: { jobId: string; leaseId: string; nodeId: string; now: string }): Promise<boolean> {
  const res = await db
    .updateTable('jobs')
    .set({ ...QUEUED, updated_at: a.now })
    .where('id', '=', a.jobId)
    .where('lease_id', '=', a.leaseId)
    .where('lease_owner', '=', a.nodeId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * The stale-lease sweeper, set-based: every running job whose lease expired and that has attempts
 * left goes back to the queue in one UPDATE. Returns the requeued ids. (Jobs out of attempts are
 * failed by `failJobsWhere`.)
 */
export async function requeueExpiredLeases(db: Kysely<Database>, a: { now: string; maxAttempts: number; owner?: string }): Promise<string[]> {
  const rows = await db
    .updateTable('jobs')
    .set({ ...QUEUED, updated_at: a.now })
    .where('status', '=', 'running')
    // Expired leases; or, with `owner`, every lease of a node known to be gone.
    .$if(a.owner === undefined, (q) => q.where('lease_expires_at', '<', a.now))
    .$if(a.owner !== undefined, (q) => q.where('lease_owner', '=', a.owner ?? ''))
    .where('attempts', '<', a.maxAttempts)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
