import type { Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

/**
 * A heartbeat: extends every lease the node still holds, in one UPDATE. Returns the ids it
 * extended; a lease not among them is no longer the node's (ended, swept, or taken over).
 */
export async function extendLeases(
  db: Kysely<Database>,
  a: { nodeId: string; leases: readonly { jobId: string; leaseId: string }[]; until: string },
): Promise<string[]> {
  if (a.leases.length === 0) return [];
  const rows = await db
    .updateTable('jobs')
    .set({ lease_expires_at: a.until })
    .where('status', '=', 'running')
    .where('lease_owner', '=', a.nodeId)
    .where((eb) => eb.or(a.leases.map((l) => eb.and([eb('id', '=', l.jobId), eb('lease_id', '=', l.leaseId)]))))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
