// The new-job form's "Edit for shorts" (issue 42): silences and fillers cut, punch-in zoom, a hook
// title, profanity; and, for a job rendered again from its words, the cut list those settings give
// (cut-preview.tsx, loaded only then: with the planner come its profanity lists, a 41 KB chunk).
import { lazy, Suspense } from 'react';
import { Link } from 'react-router';
import type { RenderAgain } from '../render-again.ts';
import { Card, Choice, Field, Loading } from '../ui.tsx';
import type { NewJobForm } from './new-job-form.ts';

const CutPreview = lazy(() => import('./cut-preview.tsx').then((m) => ({ default: m.CutPreview })));

type Section = { form: NewJobForm; fe: (path: string) => string | undefined };

/** [value, option label, hint under the select] */
const SILENCES: [string, string, string][] = [
  ['off', 'Off', 'Every pause stays.'],
  ['natural', 'Natural', 'Pauses over 0.8 s become 0.3 s.'],
  ['fast', 'Fast', 'Pauses over 0.4 s become 0.15 s.'],
  ['extra-fast', 'Extra fast', 'Pauses over 0.2 s become 0.08 s.'],
];
const FILLERS: [string, string, string][] = [
  ['off', 'Off', 'Every word stays.'],
  ['safe', 'Safe', 'Cuts um, uh (in the language spoken), immediate repeats and short sounds between words.'],
  ['aggressive', 'Aggressive', 'Also cuts "like", "you know", "I mean".'],
];
const PROFANITY: [string, string, string][] = [
  ['off', 'Off', 'Words as spoken.'],
  ['mask', 'Mask', 'f*** in the captions and the exports.'],
  ['bleep', 'Bleep', 'Masked, and a tone over the word.'],
];

export function EditCard({ form, fe }: Section) {
  const { silences, fillers, zoom, hookText, hookSeconds, profanity, from } = form.fields;
  const byKeep = from?.keep ? 'The cut list of the job you render again gives the cuts.' : undefined;
  return (
    <Card title="Edit for shorts">
      {from && <RenderAgainNote form={form} fe={fe} />}
      <div className="form-grid">
        <Choice
          label="Cut silences"
          value={silences}
          options={SILENCES}
          disabled={!!byKeep}
          hint={byKeep}
          error={fe('edit.silences')}
          onChange={(v) => form.set({ silences: v })}
        />
        <Choice
          label="Cut fillers"
          value={fillers}
          options={FILLERS}
          disabled={!!byKeep}
          error={fe('edit.fillers')}
          onChange={(v) => form.set({ fillers: v })}
        />
        <Field
          label="Hook title"
          hint="A headline over the first seconds, where the captions are not. Empty: none."
          error={fe('hookTitle.text') ?? fe('hookTitle')}
        >
          {(id, d) => <input id={id} aria-describedby={d} maxLength={120} value={hookText} onChange={(e) => form.set({ hookText: e.target.value })} />}
        </Field>
        <Field label="Hook seconds" hint="0.5 to 10." error={fe('hookTitle.seconds')}>
          {(id, d) => (
            <input
              id={id}
              aria-describedby={d}
              type="number"
              min={0.5}
              max={10}
              step={0.5}
              value={hookSeconds}
              onChange={(e) => form.set({ hookSeconds: e.target.value })}
            />
          )}
        </Field>
        <Choice label="Profanity" value={profanity} options={PROFANITY} error={fe('profanity')} onChange={(v) => form.set({ profanity: v })} />
        <label className="check">
          <input type="checkbox" checked={zoom} onChange={(e) => form.set({ zoom: e.target.checked })} /> Punch-in zoom on emphasised words (the captions are
          never zoomed)
        </label>
      </div>
      <p className="muted small">
        Profanity uses the language's word list and <Link to="/profanity">your own words</Link>.
      </p>
      {(fe('edit') || fe('edit.zoom')) && <small className="field-error">{fe('edit') ?? fe('edit.zoom')}</small>}
      {from && (
        <Suspense fallback={<Loading label="Planning the cuts…" />}>
          <CutPreview from={from} silences={form.fields.silences} fillers={form.fields.fillers} zoom={form.fields.zoom} />
        </Suspense>
      )}
    </Card>
  );
}

/** The job this one renders again: its words go back as the transcript; its cut list, if it had one, may be dropped for the pace. */
function RenderAgainNote({ form, fe }: Section) {
  const from = form.fields.from as RenderAgain;
  return (
    <div className="notice" data-testid="render-again">
      <p>
        Rendering again job <Link to={`/jobs/${from.jobId}`}>{from.jobId.slice(0, 8)}</Link> with its {from.transcript.words.length} words
        {from.keep ? ` and its cut list (${from.keep.length} ranges kept)` : ''}. Choose the same video again above: the times are in its seconds.
      </p>
      <div className="actions">
        {from.keep && (
          <button type="button" className="btn small" onClick={() => form.set({ from: { ...from, keep: null } })}>
            Cut by pace and fillers instead
          </button>
        )}
        <button type="button" className="btn small" onClick={() => form.set({ from: null })}>
          Recognize the speech again instead
        </button>
      </div>
      {(fe('edit.keep') || fe('transcript')) && <small className="field-error">{fe('edit.keep') ?? fe('transcript')}</small>}
    </div>
  );
}
