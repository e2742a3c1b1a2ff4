import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, type JobRecord, type WebhookDeliveryView } from '../api.ts';
import { ago, duration, when } from '../format.ts';
import { Card, Empty, ErrorState, FormError, Loading, PageHeader, Progress, StatusBadge } from '../ui.tsx';
import { EditPanel, RenderAgainButton } from './job-edit.tsx';
import { OutputsPanel } from './job-outputs.tsx';

const PHASES = ['queued', 'ingesting', 'transcribing', 'rendering', 'succeeded'] as const;

/** What to do next, per failure code (the spec's closed set). */
const NEXT_STEP: Record<string, string> = {
  'source-unreachable': 'The video URL could not be fetched. Check that it is public HTTPS and reachable, then create the job again.',
  'source-unreadable': 'The file is not a video we can read. Re-export it as MP4 (H.264 + AAC) or WebM and try again.',
  'source-too-long': 'The video is longer than your plan allows. Trim it, or ask for a plan with longer inputs.',
  'output-larger-than-source': 'The requested resolution is larger than the source. Ask for the source size or smaller.',
  'automation-minutes-exhausted': 'The account has no minutes left. Wait for the monthly allowance or ask for more minutes; nothing was charged.',
  'ingest-failed': 'The video could not be prepared (for example it has no audio track). Check the file has speech audio and retry.',
  'transcription-failed': 'Speech recognition failed. Retry; if it fails again, contact the operator with the job id.',
  'render-failed': 'Drawing the captions failed. Retry, or try another template; report the job id if it persists.',
  'timed-out': 'Processing took longer than its deadline. Retry later, when the farm is less busy.',
  internal: 'Something failed on our side; the minutes were refunded. Retry, and report the job id if it persists.',
};

export function JobPage() {
  const { id = '' } = useParams();
  const qc = useQueryClient();
  const job = useQuery({
    queryKey: ['job', id],
    queryFn: () => api<JobRecord>('GET', `/v1/automation-jobs/${id}`),
    // Every 2 s while it runs: the page's calls count against the plan's requests a minute (60 on free).
    refetchInterval: (q) => (q.state.data && (q.state.data.status === 'queued' || q.state.data.status === 'running') ? 2000 : false),
  });
  const cancel = useMutation({
    mutationFn: () => api<JobRecord>('POST', `/v1/automation-jobs/${id}/cancel`),
    onSuccess: (j) => qc.setQueryData(['job', id], j),
  });
  if (job.isPending) return <Loading />;
  if (job.isError) return <ErrorState error={job.error} retry={() => void job.refetch()} />;
  const j = job.data;
  const active = j.status === 'queued' || j.status === 'running';
  return (
    <>
      <PageHeader
        title={`Job ${j.id.slice(0, 8)}`}
        subtitle={<Link to="/jobs">← All jobs</Link>}
        actions={
          active && (
            <button type="button" className="btn danger" disabled={cancel.isPending} onClick={() => cancel.mutate()}>
              {cancel.isPending ? 'Cancelling…' : 'Cancel job'}
            </button>
          )
        }
      />
      <FormError error={cancel.error} />
      <div className="grid">
        <Card title="Progress" className="span-3">
          <div className="row-between">
            <StatusBadge status={j.status} phase={j.phase} percent={j.percent} />
            <span className="muted small">updated live</span>
          </div>
          <ol className="phases" aria-label="Phases">
            {PHASES.map((p) => {
              const idx = PHASES.indexOf(j.phase as (typeof PHASES)[number]);
              const state = j.phase === p ? 'current' : idx > PHASES.indexOf(p) || j.status === 'succeeded' ? 'done' : 'todo';
              return (
                <li key={p} className={state} aria-current={state === 'current' ? 'step' : undefined}>
                  {p}
                </li>
              );
            })}
          </ol>
          {j.phase === 'rendering' && j.percent !== null && <Progress value={j.percent} label="Render progress" />}
        </Card>
        {j.status === 'succeeded' && j.downloadUrl && <Output job={j} />}
        {j.status === 'succeeded' && <OutputsPanel job={j} />}
        {j.status === 'succeeded' && <EditPanel job={j} />}
        {j.status === 'failed' && (
          <Card title="Why it failed" className="span-3">
            <p>
              <code className="badge failed">{j.failureCode}</code> {j.failureReason}
            </p>
            <p className="notice">
              <strong>What to do next:</strong> {NEXT_STEP[j.failureCode ?? 'internal'] ?? NEXT_STEP.internal}
            </p>
          </Card>
        )}
        <Card title="Record" className="span-2">
          <dl className="record">
            <div>
              <dt>Id</dt>
              <dd>
                <code>{j.id}</code>
              </dd>
            </div>
            <div>
              <dt>Template</dt>
              <dd>{j.templateId}</dd>
            </div>
            <div>
              <dt>Format</dt>
              <dd>
                {j.format}, {j.quality} quality
              </dd>
            </div>
            <div>
              <dt>Resolution</dt>
              <dd>{j.resolution ? `${j.resolution.width}×${j.resolution.height}` : 'as the source'}</dd>
            </div>
            <div>
              <dt>Input length</dt>
              <dd>{duration(j.quotedSeconds)}</dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{when(j.createdAt)}</dd>
            </div>
            <div>
              <dt>Settled</dt>
              <dd>{when(j.settledAt)}</dd>
            </div>
            <div>
              <dt>Output expires</dt>
              <dd>{when(j.outputExpiresAt)}</dd>
            </div>
          </dl>
        </Card>
        <Deliveries jobId={j.id} ended={!active} />
      </div>
    </>
  );
}

function Output({ job }: { job: JobRecord }) {
  return (
    <Card title="Output" className="span-3">
      <div className="player">
        {/* The captions are burned into the picture: there is no separate track to offer. */}
        {/* biome-ignore lint/a11y/useMediaCaption: the captions are in the pixels */}
        <video controls preload="auto" src={job.downloadUrl ?? undefined} data-testid="output-video" aria-label="Captioned output" />
      </div>
      <div className="actions">
        <a className="btn primary" href={job.downloadUrl ?? undefined} download>
          Download {job.format.toUpperCase()}
        </a>
        <a className="btn" href={`/app/api/v1/automation-jobs/${job.id}/transcript?format=srt`} download>
          Transcript (SRT)
        </a>
        <a className="btn" href={`/app/api/v1/automation-jobs/${job.id}/transcript?format=vtt`} download>
          Transcript (VTT)
        </a>
        <RenderAgainButton job={job} />
      </div>
      <TranscriptText jobId={job.id} />
    </Card>
  );
}

function TranscriptText({ jobId }: { jobId: string }) {
  const t = useQuery({
    queryKey: ['transcript', jobId],
    staleTime: Infinity,
    queryFn: async () => {
      const res = await fetch(`/app/api/v1/automation-jobs/${jobId}/transcript?format=srt`, { credentials: 'same-origin' });
      if (!res.ok) throw new Error(`The transcript could not be loaded (HTTP ${res.status}).`);
      return res.text();
    },
  });
  if (t.isPending) return <Loading label="Loading the transcript…" />;
  if (t.isError) return <ErrorState error={t.error} />;
  return (
    <details className="transcript">
      <summary>Transcript</summary>
      <pre data-testid="transcript">{t.data}</pre>
    </details>
  );
}

function Deliveries({ jobId, ended }: { jobId: string; ended: boolean }) {
  const qc = useQueryClient();
  const q = useQuery({
    queryKey: ['deliveries', jobId],
    queryFn: () => api<{ deliveries: WebhookDeliveryView[] }>('GET', `/v1/automation-jobs/${jobId}/webhook-deliveries`),
    refetchInterval: (query) => (!ended || query.state.data?.deliveries.some((d) => d.state === 'pending') ? 5000 : false),
  });
  const redeliver = useMutation({
    mutationFn: (deliveryId: string) => api('POST', `/jobs/${jobId}/webhook-deliveries/${deliveryId}/redeliver`),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['deliveries', jobId] }),
  });
  return (
    <Card title="Webhook deliveries">
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : q.data.deliveries.length === 0 ? (
        <Empty title="No webhooks">{ended ? 'This job had no webhookUrl.' : 'Sent when the job ends, if it has a webhookUrl.'}</Empty>
      ) : (
        <ul className="plain deliveries">
          {q.data.deliveries.map((d) => (
            <li key={d.id}>
              <div className="row-between">
                <span className={`badge ${d.state === 'delivered' ? 'succeeded' : d.state === 'pending' ? 'running' : 'failed'}`}>{d.state}</span>
                <button type="button" className="btn small" disabled={redeliver.isPending} onClick={() => redeliver.mutate(d.id)}>
                  Redeliver
                </button>
              </div>
              <div className="muted small break">{d.url}</div>
              <ol className="attempts">
                {d.attempts.map((a) => (
                  <li key={a.attempt}>
                    #{a.attempt} · {a.statusCode ?? a.error?.code ?? a.outcome} · {a.durationMs} ms · {ago(a.startedAt)}
                  </li>
                ))}
              </ol>
              {d.nextAttemptAt && <div className="muted small">Next attempt {when(d.nextAttemptAt)}</div>}
            </li>
          ))}
        </ul>
      )}
      <FormError error={redeliver.error} />
    </Card>
  );
}
