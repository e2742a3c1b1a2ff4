// The cut list the agent will make of a job's words with the new-job form's settings (issue 42),
// planned in the page by the agent's own planner (@captionfarm/edit) on the same words. The agent
// also has the audio (voiced sounds between words, which `fillers` cuts and which widen a kept
// word) and the video's frame rate (here 30 fps): its cuts can differ by those, as the note says.
// Loaded lazily by new-job-edit.tsx.
import { useMemo } from 'react';
import type { EditPlan, FillerMode, SilencePace } from '@captionfarm/contracts';
import { planEdit } from '@captionfarm/edit';
import { clock, REASON_LABEL, span } from '../edit-cuts.ts';
import type { RenderAgain } from '../render-again.ts';

interface Preview {
  plan: EditPlan | null;
  error: string | null;
}

/** The cut list the agent will make of these words with the form's settings (30 fps: a job's rate is known only at ingest). */
function previewOf(from: RenderAgain, silences: string, fillers: string, zoom: boolean): Preview {
  try {
    const { plan } = planEdit({
      words: from.transcript.words,
      sourceSeconds: from.sourceSeconds,
      fps: 30,
      language: from.transcript.language,
      edit: {
        silences: (from.keep ? 'off' : silences) as SilencePace,
        fillers: (from.keep ? 'off' : fillers) as FillerMode,
        zoom: zoom ? 'emphasis' : 'off',
        keep: from.keep,
      },
      profanity: 'off',
      profanityWords: [],
    });
    return { plan, error: null };
  } catch (err) {
    return { plan: null, error: err instanceof Error ? err.message : String(err) };
  }
}

export function CutPreview({ from, silences, fillers, zoom }: { from: RenderAgain; silences: string; fillers: string; zoom: boolean }) {
  const preview = useMemo(() => previewOf(from, silences, fillers, zoom), [from, silences, fillers, zoom]);
  if (preview.error !== null) {
    return (
      <p className="form-error" role="alert">
        This edit cannot be made of these words: {preview.error}
      </p>
    );
  }
  const plan = preview.plan as EditPlan;
  return (
    <section className="cut-preview" aria-label="Cut preview" data-testid="cut-preview">
      <h3>Cut preview</h3>
      <p>
        <strong data-testid="preview-output">{span(plan.outputSeconds)}</strong> of {span(plan.sourceSeconds)}:{' '}
        {plan.cuts.length === 0 ? 'nothing is cut.' : `${plan.cuts.length} ${plan.cuts.length === 1 ? 'cut' : 'cuts'}.`}
      </p>
      {plan.cuts.length > 0 && (
        <ol className="cut-list">
          {plan.cuts.map((c) => (
            <li key={`${c.start}-${c.end}`}>
              <span className="mono">{clock(c.start)}</span> · {span(c.end - c.start)} · {REASON_LABEL[c.reason]}
              {c.text ? <q>{c.text}</q> : null}
            </li>
          ))}
        </ol>
      )}
      {from.keep === null && (
        <p className="muted small">
          Planned from the words alone at 30 fps. The agent also hears the audio and cuts on the video's own frames: its cuts can be a few hundredths off these,
          and with fillers on it also cuts short sounds between words that no word covers.
        </p>
      )}
    </section>
  );
}
