import { useRef, useState, type DragEvent } from 'react';
import { useLocation } from 'react-router';
import { ApiFailure } from '../api.ts';
import { bytes } from '../format.ts';
import { FontPicker } from '../fonts.tsx';
import { lineError, parseReplacements, parseVocabulary } from '../recognition.ts';
import { TemplatePreview, useTemplates } from '../previews.tsx';
import { Card, ErrorState, Field, FormError, Loading, PageHeader, Progress, fieldError } from '../ui.tsx';
import type { RenditionRow } from '../renditions.ts';
import { EditCard } from './new-job-edit.tsx';
import { FramingCard } from './new-job-framing.tsx';
import { useNewJobForm, type NewJobForm } from './new-job-form.ts';

const ACCEPT = '.mp4,.m4v,.mov,.webm,.mkv,.avi,video/*';

/** A section of the form: the form's state and the API's message for a field path. */
type Section = { form: NewJobForm; fe: (path: string) => string | undefined };

export function NewJobPage() {
  // A fresh form for each visit: "New job" in the menu after "Render again" starts empty.
  return <NewJobFormView key={useLocation().key} />;
}

function NewJobFormView() {
  const form = useNewJobForm();
  const fe = (p: string) => fieldError(form.error, p);
  const { busy, progress, error } = form;
  return (
    <>
      <PageHeader title="New job" subtitle="Upload a video or give an HTTPS URL, pick a look, and we burn in the captions." />
      <form onSubmit={(e) => void form.submit(e)} noValidate>
        <VideoCard form={form} fe={fe} />
        <TemplateCard form={form} fe={fe} />
        <FramingCard form={form} fe={fe} />
        <OptionsCard form={form} fe={fe} />
        <BrandCard form={form} fe={fe} />
        <WordsCard form={form} />
        <EditCard form={form} fe={fe} />
        {error instanceof ApiFailure || error instanceof Error ? <FormError error={error} /> : null}
        <div className="actions">
          <button type="submit" className="btn primary" disabled={busy}>
            {busy ? (progress !== null && progress < 100 ? 'Uploading…' : 'Creating…') : 'Create job'}
          </button>
        </div>
      </form>
    </>
  );
}

function VideoCard({ form, fe }: Section) {
  const { source, videoUrl } = form.fields;
  return (
    <Card title="Video">
      <div className="segmented" role="radiogroup" aria-label="Source">
        <label className={source === 'file' ? 'on' : ''}>
          <input type="radio" name="source" checked={source === 'file'} onChange={() => form.set({ source: 'file' })} /> Upload a file
        </label>
        <label className={source === 'url' ? 'on' : ''}>
          <input type="radio" name="source" checked={source === 'url'} onChange={() => form.set({ source: 'url' })} /> From a URL
        </label>
      </div>
      {source === 'file' ? (
        <Dropzone form={form} fe={fe} />
      ) : (
        <Field label="Video URL" hint="A public https:// address of the video file." error={fe('videoUrl')}>
          {(id, d) => (
            <input
              id={id}
              aria-describedby={d}
              type="url"
              inputMode="url"
              placeholder="https://cdn.example.com/talk.mp4"
              value={videoUrl}
              onChange={(e) => form.set({ videoUrl: e.target.value })}
            />
          )}
        </Field>
      )}
    </Card>
  );
}

function Dropzone({ form, fe }: Section) {
  const { file } = form.fields;
  const { progress } = form;
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const f = e.dataTransfer.files[0];
    if (f) form.set({ file: f });
  };
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a drop target for the mouse; the file input inside it is the keyboard's way in
    <div
      className={`dropzone ${dragging ? 'dragging' : ''}`}
      data-testid="dropzone"
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      <input ref={input} id="file-input" className="sr-only" type="file" accept={ACCEPT} onChange={(e) => form.set({ file: e.target.files?.[0] ?? null })} />
      {file ? (
        <p>
          <strong>{file.name}</strong> · {bytes(file.size)}
        </p>
      ) : (
        <p>Drag a video here (MP4, MOV, WebM, MKV, AVI), or</p>
      )}
      <button type="button" className="btn" onClick={() => input.current?.click()}>
        {file ? 'Choose another file' : 'Choose a file'}
      </button>
      {progress !== null && <Progress value={progress} label="Upload progress" />}
      {(fe('fileName') || fe('sizeBytes')) && <small className="field-error">{fe('fileName') ?? fe('sizeBytes')}</small>}
    </div>
  );
}

function TemplateCard({ form, fe }: Section) {
  const templates = useTemplates();
  const { templateId } = form.fields;
  return (
    <Card title="Template">
      {templates.isPending ? (
        <Loading />
      ) : templates.isError ? (
        <ErrorState error={templates.error} retry={() => void templates.refetch()} />
      ) : (
        <div className="gallery" role="radiogroup" aria-label="Template">
          {templates.data.templates.map((t) => (
            <label key={t.id} className={`tile ${templateId === t.id ? 'selected' : ''}`}>
              <input
                type="radio"
                name="template"
                className="sr-only"
                value={t.id}
                checked={templateId === t.id}
                onChange={() => form.set({ templateId: t.id })}
              />
              <TemplatePreview id={t.id} width={180} height={320} alt="" />
              <span className="tile-name">{t.name}</span>
            </label>
          ))}
        </div>
      )}
      {fe('templateId') && <small className="field-error">{fe('templateId')}</small>}
    </Card>
  );
}

function OptionsCard({ form, fe }: Section) {
  const { quality, language, webhookUrl } = form.fields;
  return (
    <Card title="Options">
      <div className="form-grid">
        <Field label="Quality">
          {(id) => (
            <select id={id} value={quality} onChange={(e) => form.set({ quality: e.target.value })}>
              <option value="high">High</option>
              <option value="medium">Medium</option>
              <option value="low">Low</option>
            </select>
          )}
        </Field>
        <Field label="Language" hint="Two letters, e.g. en. Empty: detected." error={fe('language')}>
          {(id, d) => <input id={id} aria-describedby={d} maxLength={2} value={language} onChange={(e) => form.set({ language: e.target.value })} />}
        </Field>
        <Field label="Webhook URL" hint="Optional: https:// address told when the job ends." error={fe('webhookUrl')}>
          {(id, d) => <input id={id} aria-describedby={d} type="url" value={webhookUrl} onChange={(e) => form.set({ webhookUrl: e.target.value })} />}
        </Field>
      </div>
    </Card>
  );
}

function BrandCard({ form, fe }: Section) {
  const { fontId, keywords, emoji, overlay, renditions } = form.fields;
  const [first, ...more] = renditions as [RenditionRow, ...RenditionRow[]];
  // An overlay needs alpha (mov or webm); a burned video is mp4 or webm. The job's format is its first rendition's.
  const withFormat = (format: string) => form.set({ renditions: [{ ...first, format }, ...more] });
  return (
    <Card title="Brand">
      <div className="form-grid">
        <Field label="Font" hint="Your own TTF, OTF or WOFF2, checked when uploaded." error={fe('style.font.fontId') ?? fe('style.font')}>
          {(id, d) => <FontPicker id={id} describedBy={d} value={fontId} onChange={(v) => form.set({ fontId: v })} />}
        </Field>
        <Field label="Keywords" hint="Always emphasised, comma-separated (whole words, any case)." error={fe('style.keywords')}>
          {(id, d) => (
            <input id={id} aria-describedby={d} placeholder="launch, free trial" value={keywords} onChange={(e) => form.set({ keywords: e.target.value })} />
          )}
        </Field>
        <label className="check">
          <input type="checkbox" checked={emoji} onChange={(e) => form.set({ emoji: e.target.checked })} /> Emoji: one per caption page, picked from its words
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={overlay}
            onChange={(e) => {
              const on = e.target.checked;
              form.set({ overlay: on });
              if (on && first.format === 'mp4') withFormat('mov');
              if (!on && first.format === 'mov') withFormat('mp4');
            }}
          />{' '}
          Transparent overlay: only the captions, for your editor
        </label>
      </div>
      {(fe('overlay') || fe('format') || fe('style')) && <small className="field-error">{fe('overlay') ?? fe('format') ?? fe('style')}</small>}
    </Card>
  );
}

function WordsCard({ form }: { form: NewJobForm }) {
  const { vocabulary, replacements } = form.fields;
  const details = form.error instanceof ApiFailure ? form.error.details : [];
  return (
    <Card title="Words">
      <div className="form-grid">
        <Field
          label="Vocabulary"
          hint="Names, brands and jargon the speech recognizer should expect, one a line (up to 100). Empty: the template's."
          error={lineError(details, 'vocabulary', parseVocabulary(vocabulary).lines)}
        >
          {(id, d) => (
            <textarea
              id={id}
              aria-describedby={d}
              rows={4}
              placeholder={'Captionfarm\nKubernetes'}
              value={vocabulary}
              onChange={(e) => form.set({ vocabulary: e.target.value })}
            />
          )}
        </Field>
        <Field
          label="Replacements"
          hint="Fix recognized words, one a line as from => to (whole words, any case; nothing after => removes them). Empty: the template's."
          error={lineError(details, 'replacements', parseReplacements(replacements).lines)}
        >
          {(id, d) => (
            <textarea
              id={id}
              aria-describedby={d}
              rows={4}
              placeholder={'caption farm => Captionfarm\num =>'}
              value={replacements}
              onChange={(e) => form.set({ replacements: e.target.value })}
            />
          )}
        </Field>
      </div>
    </Card>
  );
}
