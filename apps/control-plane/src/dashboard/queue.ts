import { JOB_STATUSES } from '@captionfarm/contracts';
import type { Db } from '@captionfarm/db';

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
    byStatus: Object.fromEntries(JOB_STATUSES.map((s) => [s, Number(counts.find((c) => c.status === s)?.n ?? 0)])),
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
