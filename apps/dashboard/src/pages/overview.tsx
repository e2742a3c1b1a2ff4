import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, type DashboardOverview, type JobStatus } from '../api.ts';
import { bytes } from '../format.ts';
import { Card, ErrorState, Loading, PageHeader, StatusBadge } from '../ui.tsx';

export function OverviewPage() {
  const q = useQuery({ queryKey: ['overview'], queryFn: () => api<DashboardOverview>('GET', '/overview'), refetchInterval: 10_000 });
  return (
    <>
      <PageHeader
        title="Overview"
        actions={
          <Link className="btn primary" to="/jobs/new">
            New job
          </Link>
        }
      />
      {q.isPending ? <Loading /> : q.isError ? <ErrorState error={q.error} retry={() => void q.refetch()} /> : <OverviewBody o={q.data} />}
    </>
  );
}

function OverviewBody({ o }: { o: DashboardOverview }) {
  const total = Object.values(o.jobsByStatus).reduce((a, b) => a + b, 0);
  return (
    <div className="grid">
      <Card>
        <div className="stat">
          <span className="muted">Minutes left</span>
          <strong data-testid="balance">{o.balance}</strong>
          <span className="muted small">
            {o.plan.minutesPerMonth} a month on the {o.plan.id} plan
          </span>
        </div>
      </Card>
      <Card>
        <div className="stat">
          <span className="muted">Used this month</span>
          <strong>{o.usedThisMonth} min</strong>
          <span className="muted small">from the minutes ledger</span>
        </div>
      </Card>
      <Card>
        <div className="stat">
          <span className="muted">Jobs</span>
          <strong>{total}</strong>
          <span className="muted small">all time</span>
        </div>
      </Card>
      <Card title="Use this month" className="span-2">
        <UsageChart usage={o.usage} />
      </Card>
      <Card title="Jobs by status">
        <ul className="plain">
          {(Object.keys(o.jobsByStatus) as JobStatus[]).map((s) => (
            <li key={s} className="row-between">
              <Link to={`/jobs?status=${s}`}>
                <StatusBadge status={s} />
              </Link>
              <span>{o.jobsByStatus[s]}</span>
            </li>
          ))}
        </ul>
      </Card>
      <Card title="Plan limits" className="span-3">
        <dl className="limits">
          <div>
            <dt>Minutes per month</dt>
            <dd>{o.plan.minutesPerMonth}</dd>
          </div>
          <div>
            <dt>Longest input</dt>
            <dd>{o.plan.maxInputSeconds / 60} min</dd>
          </div>
          <div>
            <dt>Uploads per day</dt>
            <dd>{o.plan.uploadsPerDay}</dd>
          </div>
          <div>
            <dt>Largest upload</dt>
            <dd>{bytes(o.plan.maxUploadBytes)}</dd>
          </div>
          <div>
            <dt>Frame budget</dt>
            <dd>{o.plan.frameBudget.toLocaleString()} px</dd>
          </div>
          <div>
            <dt>Concurrent jobs</dt>
            <dd>{o.plan.concurrentJobs}</dd>
          </div>
          <div>
            <dt>API requests per minute</dt>
            <dd>{o.plan.requestsPerMinute}</dd>
          </div>
        </dl>
      </Card>
    </div>
  );
}

/** Minutes per day as an SVG bar chart (no chart library: thirty rectangles). */
function UsageChart({ usage }: { usage: { day: string; minutes: number }[] }) {
  const max = Math.max(1, ...usage.map((u) => u.minutes));
  const w = 600;
  const h = 160;
  const bw = w / usage.length;
  const total = usage.reduce((a, u) => a + u.minutes, 0);
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${w} ${h + 18}`} role="img" aria-label={`Minutes used per day this month, ${total} in total`}>
        <line x1="0" x2={w} y1={h} y2={h} className="axis" />
        {usage.map((u, i) => {
          const bh = (u.minutes / max) * (h - 8);
          return (
            <g key={u.day}>
              <rect x={i * bw + 2} y={h - bh} width={Math.max(1, bw - 4)} height={bh} rx="2" className="bar">
                <title>{`${u.day}: ${u.minutes} min`}</title>
              </rect>
              {(i === 0 || (i + 1) % 5 === 0) && (
                <text x={i * bw + bw / 2} y={h + 14} textAnchor="middle" className="tick">
                  {Number(u.day.slice(8))}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="muted small">{total === 0 ? 'No minutes used yet this month.' : `Peak day: ${max} min.`}</figcaption>
    </figure>
  );
}
