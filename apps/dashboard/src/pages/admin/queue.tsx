import { useQuery } from '@tanstack/react-query';
import { api, type JobStatus, type QueueStats } from '../../api.ts';
import { duration, shortId, when } from '../../format.ts';
import { Card, ErrorState, Loading, PageHeader, StatusBadge } from '../../ui.tsx';

export function QueuePage() {
  const q = useQuery({ queryKey: ['admin', 'queue'], queryFn: () => api<QueueStats>('GET', '/admin/queue'), refetchInterval: 3000 });
  return (
    <>
      <PageHeader title="Queue" subtitle="All accounts." />
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : (
        <div className="grid">
          <Card title="Jobs by status">
            <ul className="plain">
              {(Object.keys(q.data.byStatus) as JobStatus[]).map((s) => (
                <li key={s} className="row-between">
                  <StatusBadge status={s} />
                  <span>{q.data.byStatus[s]}</span>
                </li>
              ))}
            </ul>
          </Card>
          <Card title="Oldest waiting job">
            {q.data.oldestQueued ? (
              <div className="stat">
                <strong>{duration(q.data.oldestQueued.ageSeconds)}</strong>
                <span className="muted small">
                  job <code>{shortId(q.data.oldestQueued.id)}</code>, queued {when(q.data.oldestQueued.createdAt)}
                </span>
              </div>
            ) : (
              <p className="muted">Nothing is waiting.</p>
            )}
          </Card>
          <Card title="Webhook backlog">
            <div className="stat">
              <strong>{q.data.webhookBacklog.pending}</strong>
              <span className="muted small">
                {q.data.webhookBacklog.pending ? `pending since ${when(q.data.webhookBacklog.oldestCreatedAt)}` : 'all delivered'}
              </span>
            </div>
          </Card>
          <Card title="Running per node" className="span-3">
            {q.data.runningPerNode.length === 0 ? (
              <p className="muted">No job is running.</p>
            ) : (
              <ul className="plain">
                {q.data.runningPerNode.map((n) => (
                  <li key={n.nodeId ?? 'none'} className="row-between">
                    <span>{n.nodeName ?? n.nodeId ?? 'unassigned'}</span>
                    <span>{n.running}</span>
                  </li>
                ))}
              </ul>
            )}
          </Card>
        </div>
      )}
    </>
  );
}
