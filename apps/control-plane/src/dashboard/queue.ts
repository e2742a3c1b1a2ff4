import type { JobStatus } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';

/** Job counts from a `group by status` query, every status present (0 when none). */
export function countsByStatus(counts: readonly { status: JobStatus; n: number }[]): Record<JobStatus, number> {
  const out: Record<JobStatus, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
  for (const c of counts) out[c.status] = c.n;
  return out;
}

/** The operator console's queue view: counts per status, the oldest waiting job, jobs per node, webhook backlog. */
export async function queueStats(db: Db, now: Date) {
  const counts = await db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  const oldest = await db
    .selectFrom('jobs')
    .select(['id', 'account_id', 'created_at'])
    .where('status', '=', 'queued')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  const perNode = await db
    .selectFrom('jobs')
    .leftJoin('agent_nodes', 'agent_nodes.id', 'jobs.lease_owner')
    .select(['jobs.lease_owner as nodeId', 'agent_nodes.name as nodeName', (eb) => eb.fn.countAll<number>().as('n')])
    .where('jobs.status', '=', 'running')
    .groupBy(['jobs.lease_owner', 'agent_nodes.name'])
    .execute();
  const backlog = await db
    .selectFrom('webhook_deliveries')
    .select([
      (eb) => eb.fn.countAll<number>().as('n'),
      (eb) => eb.fn.min('next_attempt_at').as('nextAttemptAt'),
      (eb) => eb.fn.min('created_at').as('oldestCreatedAt'),
    ])
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return {
    byStatus: countsByStatus(counts),
    oldestQueued: oldest
      ? {
          id: oldest.id,
          accountId: oldest.account_id,
          createdAt: oldest.created_at,
          ageSeconds: Math.max(0, Math.round((now.getTime() - new Date(oldest.created_at).getTime()) / 1000)),
        }
      : null,
    runningPerNode: perNode.map((p) => ({ nodeId: p.nodeId, nodeName: p.nodeName, running: Number(p.n) })),
    webhookBacklog: { pending: Number(backlog.n), oldestCreatedAt: backlog.oldestCreatedAt ?? null, nextAttemptAt: backlog.nextAttemptAt ?? null },
  };
}
