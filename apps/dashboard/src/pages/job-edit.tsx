// The job page's edit (issue 42): for a succeeded job that was edited, the cut list its agent made
// (GET .../edit), each cut with a "Keep this" toggle, and "Render again with these cuts", which
// opens the new-job form with the job's words and the keep-ranges with those cuts put back. A job
// that was not edited offers "Edit and render again": its words, with the form's edit.
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import type { JobEdit, JobOutputs, TranscriptRecord } from '@captionfarm/contracts';
import { api, type JobRecord } from '../api.ts';
import { clock, keepWithRestored, keptSeconds, REASON_LABEL, span } from '../edit-cuts.ts';
import { renderAgainOf, type RenderAgain } from '../render-again.ts';
import { Card, ErrorState, Loading, Table } from '../ui.tsx';

/**
 * The job's words as JSON. An edited job's words carry their output times (outputStart), which is
 * how the page knows to ask for the edit: GET .../edit answers 409 for a job without one, and a
 * 409 on every view of every other job would be noise in the console and the request log.
 */
function useTranscript(jobId: string) {
  return useQuery({
    queryKey: ['transcript-json', jobId],
    staleTime: Infinity,
    queryFn: () => api<TranscriptRecord>('GET', `/v1/automation-jobs/${jobId}/transcript`),
  });
}

/** Its renditions and framing, for "Render again" (the Renditions card's query: one request for both). */
function useOutputs(jobId: string) {
  return useQuery({
    queryKey: ['outputs', jobId],
    staleTime: 5 * 60_000,
    queryFn: () => api<JobOutputs>('GET', `/v1/automation-jobs/${jobId}/outputs`),
  });
}

function isEdited(t: TranscriptRecord | undefined): boolean {
  return t?.words.some((w) => w.outputStart !== undefined) ?? false;
}

function useRenderAgain(): (r: RenderAgain) => void {
  const navigate = useNavigate();
  return (renderAgain) => navigate('/jobs/new', { state: { renderAgain } });
}

/** "Edit and render again" for a succeeded job that was not edited (an edited one has its Edit panel). */
export function RenderAgainButton({ job }: { job: JobRecord }) {
  const transcript = useTranscript(job.id);
  const outputs = useOutputs(job.id);
  const go = useRenderAgain();
  if (!transcript.data || isEdited(transcript.data)) return null;
  const t = transcript.data;
  return (
    <button type="button" className="btn" onClick={() => go(renderAgainOf(job, t, null, outputs.data))}>
      Edit and render again
    </button>
  );
}

export function EditPanel({ job }: { job: JobRecord }) {
  const transcript = useTranscript(job.id);
  const edited = isEdited(transcript.data);
  const edit = useQuery({
    queryKey: ['edit', job.id],
    staleTime: Infinity,
    enabled: edited,
    queryFn: () => api<JobEdit>('GET', `/v1/automation-jobs/${job.id}/edit`),
  });
  if (!edited || !transcript.data) return null;
  return (
    <Card title="Edit" className="span-3">
      {edit.isPending ? (
        <Loading label="Loading the cut list…" />
      ) : edit.isError ? (
        <ErrorState error={edit.error} retry={() => void edit.refetch()} />
      ) : (
        <CutList job={job} transcript={transcript.data} edit={edit.data} />
      )}
    </Card>
  );
}

function CutList(props: { job: JobRecord; transcript: TranscriptRecord; edit: JobEdit }) {
  const { plan, hookTitle } = props.edit;
  const [kept, setKept] = useState<ReadonlySet<number>>(new Set());
  const outputs = useOutputs(props.job.id);
  const go = useRenderAgain();
  const toggle = (i: number, on: boolean) => {
    const next = new Set(kept);
    if (on) next.add(i);
    else next.delete(i);
    setKept(next);
  };
  const keep = keepWithRestored(
    plan.keep,
    plan.cuts.filter((_, i) => kept.has(i)),
  );
  return (
    <>
      <p data-testid="edit-summary">
        Output <strong>{span(plan.outputSeconds)}</strong> of a <strong>{span(plan.sourceSeconds)}</strong> source: {plan.cuts.length}{' '}
        {plan.cuts.length === 1 ? 'cut' : 'cuts'}, {plan.zooms.length} {plan.zooms.length === 1 ? 'zoom' : 'zooms'}, {plan.bleeps.length}{' '}
        {plan.bleeps.length === 1 ? 'bleep' : 'bleeps'}
        {hookTitle ? `, hook title "${hookTitle.text}" for ${hookTitle.seconds} s` : ''}.
      </p>
      {plan.cuts.length > 0 && (
        <Table columns={['At', 'Length', 'Reason', 'Words', 'Keep this']} className="cuts">
          {plan.cuts.map((c, i) => (
            <tr key={`${c.start}-${c.end}`} data-testid="cut">
              <td className="mono">{clock(c.start)}</td>
              <td>{span(c.end - c.start)}</td>
              <td>{REASON_LABEL[c.reason]}</td>
              <td>{c.text ?? <span className="muted">no words</span>}</td>
              <td>
                <input type="checkbox" aria-label={`Keep the cut at ${clock(c.start)}`} checked={kept.has(i)} onChange={(e) => toggle(i, e.target.checked)} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <div className="actions">
        <button type="button" className="btn primary" onClick={() => go(renderAgainOf(props.job, props.transcript, { job: props.edit, keep }, outputs.data))}>
          Render again with these cuts
        </button>
        {kept.size > 0 && (
          <span className="muted" data-testid="edit-changed">
            {kept.size} {kept.size === 1 ? 'cut' : 'cuts'} kept: the output would last {span(keptSeconds(keep))}.
          </span>
        )}
      </div>
    </>
  );
}
