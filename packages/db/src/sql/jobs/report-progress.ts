import type { RunningPhase } from '@captionfarm/contracts';
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../../dialect.ts';
import type { Database } from '../../schema.ts';

/**
 * The lease holder's phase and percent, guarded by the lease (id and owner) and a running job.
 * `percent` only grows within rendering; a phase change resets it. True when the row was written.
 */
export async function reportProgress(
  db: Kysely<Database>,
  a: { jobId: string; leaseId: string; nodeId: string; phase: RunningPhase; percent: number | null; now: string },
): Promise<boolean> {
  // The two-argument maximum is max() on SQLite and greatest() on PostgreSQL.
  const greatest = dialectOf(db) === 'postgres' ? 'greatest' : 'max';
  const res = await db
    .updateTable('jobs')
    .set((eb) => ({
      phase: a.phase,
      percent:
        a.phase === 'rendering'
          ? eb.fn<number>(greatest, [
              eb.fn.coalesce(eb.case().when('phase', '=', 'rendering').then(eb.ref('percent')).end(), sql.lit(0)),
              eb.val(a.percent ?? 0),
            ])
          : null,
      updated_at: a.now,
    }))
    .where('id', '=', a.jobId)
    .where('lease_id', '=', a.leaseId)
    .where('lease_owner', '=', a.nodeId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
