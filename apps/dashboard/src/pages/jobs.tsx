import { JOB_STATUSES } from '@captionfarm/contracts';
import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, type JobRecord } from '../api.ts';
import { ago, duration, shortId } from '../format.ts';
import { Card, Empty, Field, PageHeader, QueryRows, StatusBadge, Table } from '../ui.tsx';

const PAGE_SIZE = 20;

export function JobsPage() {
  const [params, setParams] = useSearchParams();
  const status = JOB_STATUSES.find((s) => s === params.get('status'));
  // Keyset pagination: the cursors of the pages before this one.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const q = useQuery({
    queryKey: ['jobs', status ?? 'all', cursor ?? ''],
    queryFn: () => {
      const sp = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (status) sp.set('status', status);
      if (cursor) sp.set('cursor', cursor);
      return api<{ jobs: JobRecord[]; nextCursor: string | null }>('GET', `/jobs?${sp}`);
    },
    placeholderData: keepPreviousData,
    // Live: status, phase and percent update without a reload.
    refetchInterval: 2000,
  });
  return (
    <>
      <PageHeader
        title="Jobs"
        subtitle="Updates live."
        actions={
          <Link className="btn primary" to="/jobs/new">
            New job
          </Link>
        }
      />
      <Card>
        <div className="toolbar">
          <Field label="Status">
            {(id) => (
              <select
                id={id}
                value={status ?? ''}
                onChange={(e) => {
                  setCursors([]);
                  setParams(e.target.value ? { status: e.target.value } : {});
                }}
              >
                <option value="">All</option>
                {JOB_STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {s[0]!.toUpperCase() + s.slice(1)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <QueryRows
          query={q}
          rows={(d) => d.jobs}
          retry
          empty={
            <Empty title={status ? `No ${status} jobs` : 'No jobs yet'}>
              {status ? 'Try another status.' : <Link to="/jobs/new">Caption your first video.</Link>}
            </Empty>
          }
        >
          {(rows) => (
            <Table columns={['Job', 'Status', 'Template', 'Input', 'Created']} className="jobs-table">
              {rows.map((j) => (
                <tr key={j.id} data-job-id={j.id}>
                  <td>
                    <Link to={`/jobs/${j.id}`}>
                      <code>{shortId(j.id)}</code>
                    </Link>
                  </td>
                  <td>
                    <StatusBadge status={j.status} phase={j.phase} percent={j.percent} />
                  </td>
                  <td>{j.templateId}</td>
                  <td>{duration(j.quotedSeconds)}</td>
                  <td title={j.createdAt}>{ago(j.createdAt)}</td>
                </tr>
              ))}
            </Table>
          )}
        </QueryRows>
        <div className="pager">
          <button type="button" className="btn small" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer
          </button>
          <span className="muted small">Page {cursors.length + 1}</span>
          <button
            type="button"
            className="btn small"
            disabled={!q.data?.nextCursor}
            onClick={() => q.data?.nextCursor && setCursors([...cursors, q.data.nextCursor])}
          >
            Older
          </button>
        </div>
      </Card>
    </>
  );
}
