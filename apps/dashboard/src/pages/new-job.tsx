import type { UploadRecord } from '@captionfarm/contracts';
import { useRef, useState, type DragEvent, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ApiFailure, putWithProgress, type JobRecord } from '../api.ts';
import { bytes } from '../format.ts';
import { FontPicker, parseKeywords } from '../fonts.tsx';
import { lineError, parseReplacements, parseVocabulary } from '../recognition.ts';
import { TemplatePreview, useTemplates } from '../previews.tsx';
import { Card, ErrorState, Field, FormError, Loading, PageHeader, Progress, fieldError } from '../ui.tsx';

const ACCEPT = '.mp4,.m4v,.mov,.webm,.mkv,.avi,video/*';

export function NewJobPage() {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const templates = useTemplates();
  const [source, setSource] = useState<'file' | 'url'>('file');
  const [file, setFile] = useState<File | null>(null);
  const [videoUrl, setVideoUrl] = useState('');
  const [templateId, setTemplateId] = useState('karaoke');
  const [format, setFormat] = useState('mp4');
  const [quality, setQuality] = useState('high');
  const [width, setWidth] = useState('');
  const [height, setHeight] = useState('');
  const [language, setLanguage] = useState('');
  const [webhookUrl, setWebhookUrl] = useState('');
  const [overlay, setOverlay] = useState(false);
  const [fontId, setFontId] = useState<string | null>(null);
  const [emoji, setEmoji] = useState(false);
  const [keywords, setKeywords] = useState('');
  const [vocabulary, setVocabulary] = useState('');
  const [replacements, setReplacements] = useState('');
  const [dragging, setDragging] = useState(false);
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const f = e.dataTransfer.files[0];
    if (f) setFile(f);
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const options: Record<string, unknown> = { templateId, format, quality };
      if (width || height) options.resolution = { width: Number(width), height: Number(height) };
      if (language) options.language = language;
      if (webhookUrl) options.webhookUrl = webhookUrl;
      if (overlay) options.overlay = true;
      // Only what the user set: the rest of the look is the template's.
      const style: Record<string, unknown> = {};
      if (fontId) style.font = { fontId };
      if (emoji) style.emoji = 'auto';
      const words = parseKeywords(keywords);
      if (words.length > 0) style.keywords = words;
      if (Object.keys(style).length > 0) options.style = style;
      // Empty: the template's defaults (a custom template may have them); given, they replace them.
      const terms = parseVocabulary(vocabulary);
      const fixes = parseReplacements(replacements);
      if (fixes.problems.length > 0) throw new Error(fixes.problems[0]);
      if (terms.values.length > 0) options.vocabulary = terms.values;
      if (fixes.values.length > 0) options.replacements = fixes.values;
      let job: JobRecord;
      if (source === 'file') {
        if (!file) throw new Error('Choose or drop a video file first.');
        const up = await api<UploadRecord>('POST', '/v1/automation-jobs/uploads', { fileName: file.name, sizeBytes: file.size });
        setProgress(0);
        // Straight to the store's presigned URL: the bytes never pass through the API.
        await putWithProgress(up.uploadUrl, file, (f) => setProgress(f * 100));
        job = await api<JobRecord>('POST', '/v1/automation-jobs', { uploadId: up.uploadId, ...options });
      } else {
        job = await api<JobRecord>('POST', '/v1/automation-jobs', { videoUrl, ...options });
      }
      await qc.invalidateQueries({ queryKey: ['jobs'] });
      navigate(`/jobs/${job.id}`);
    } catch (err) {
      setError(err);
      setProgress(null);
    } finally {
      setBusy(false);
    }
  };

  const fe = (p: string) => fieldError(error, p);
  const details = error instanceof ApiFailure ? error.details : [];
  return (
    <>
      <PageHeader title="New job" subtitle="Upload a video or give an HTTPS URL, pick a look, and we burn in the captions." />
      <form onSubmit={(e) => void submit(e)} noValidate>
        <Card title="Video">
          <div className="segmented" role="radiogroup" aria-label="Source">
            <label className={source === 'file' ? 'on' : ''}>
              <input type="radio" name="source" checked={source === 'file'} onChange={() => setSource('file')} /> Upload a file
            </label>
            <label className={source === 'url' ? 'on' : ''}>
              <input type="radio" name="source" checked={source === 'url'} onChange={() => setSource('url')} /> From a URL
            </label>
          </div>
          {source === 'file' ? (
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
              <input ref={input} id="file-input" className="sr-only" type="file" accept={ACCEPT} onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
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
                  onChange={(e) => setVideoUrl(e.target.value)}
                />
              )}
            </Field>
          )}
        </Card>

        <Card title="Template">
          {templates.isPending ? (
            <Loading />
          ) : templates.isError ? (
            <ErrorState error={templates.error} retry={() => void templates.refetch()} />
          ) : (
            <div className="gallery" role="radiogroup" aria-label="Template">
              {templates.data.templates.map((t) => (
                <label key={t.id} className={`tile ${templateId === t.id ? 'selected' : ''}`}>
                  <input type="radio" name="template" className="sr-only" value={t.id} checked={templateId === t.id} onChange={() => setTemplateId(t.id)} />
                  <TemplatePreview id={t.id} width={180} height={320} alt="" />
                  <span className="tile-name">{t.name}</span>
                </label>
              ))}
            </div>
          )}
          {fe('templateId') && <small className="field-error">{fe('templateId')}</small>}
        </Card>

        <Card title="Options">
          <div className="form-grid">
            <Field label="Format">
              {(id) => (
                <select id={id} value={format} onChange={(e) => setFormat(e.target.value)}>
                  <option value="mp4" disabled={overlay}>
                    MP4 (H.264)
                  </option>
                  <option value="webm">{overlay ? 'WebM (VP9 with alpha)' : 'WebM (VP9)'}</option>
                  <option value="mov" disabled={!overlay}>
                    MOV (ProRes 4444 with alpha, overlay only)
                  </option>
                </select>
              )}
            </Field>
            <Field label="Quality">
              {(id) => (
                <select id={id} value={quality} onChange={(e) => setQuality(e.target.value)}>
                  <option value="high">High</option>
                  <option value="medium">Medium</option>
                  <option value="low">Low</option>
                </select>
              )}
            </Field>
            <Field label="Width" hint="Empty: as the source." error={fe('resolution.width') ?? fe('resolution')}>
              {(id, d) => <input id={id} aria-describedby={d} inputMode="numeric" value={width} onChange={(e) => setWidth(e.target.value)} />}
            </Field>
            <Field label="Height" error={fe('resolution.height')}>
              {(id, d) => <input id={id} aria-describedby={d} inputMode="numeric" value={height} onChange={(e) => setHeight(e.target.value)} />}
            </Field>
            <Field label="Language" hint="Two letters, e.g. en. Empty: detected." error={fe('language')}>
              {(id, d) => <input id={id} aria-describedby={d} maxLength={2} value={language} onChange={(e) => setLanguage(e.target.value)} />}
            </Field>
            <Field label="Webhook URL" hint="Optional: https:// address told when the job ends." error={fe('webhookUrl')}>
              {(id, d) => <input id={id} aria-describedby={d} type="url" value={webhookUrl} onChange={(e) => setWebhookUrl(e.target.value)} />}
            </Field>
          </div>
        </Card>

        <Card title="Brand">
          <div className="form-grid">
            <Field label="Font" hint="Your own TTF, OTF or WOFF2, checked when uploaded." error={fe('style.font.fontId') ?? fe('style.font')}>
              {(id, d) => <FontPicker id={id} describedBy={d} value={fontId} onChange={setFontId} />}
            </Field>
            <Field label="Keywords" hint="Always emphasised, comma-separated (whole words, any case)." error={fe('style.keywords')}>
              {(id, d) => (
                <input id={id} aria-describedby={d} placeholder="launch, free trial" value={keywords} onChange={(e) => setKeywords(e.target.value)} />
              )}
            </Field>
            <label className="check">
              <input type="checkbox" checked={emoji} onChange={(e) => setEmoji(e.target.checked)} /> Emoji: one per caption page, picked from its words
            </label>
            <label className="check">
              <input
                type="checkbox"
                checked={overlay}
                onChange={(e) => {
                  setOverlay(e.target.checked);
                  // An overlay needs alpha (mov or webm); a burned video is mp4 or webm.
                  if (e.target.checked && format === 'mp4') setFormat('mov');
                  if (!e.target.checked && format === 'mov') setFormat('mp4');
                }}
              />{' '}
              Transparent overlay: only the captions, for your editor
            </label>
          </div>
          {(fe('overlay') || fe('format') || fe('style')) && <small className="field-error">{fe('overlay') ?? fe('format') ?? fe('style')}</small>}
        </Card>

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
                  onChange={(e) => setVocabulary(e.target.value)}
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
                  onChange={(e) => setReplacements(e.target.value)}
                />
              )}
            </Field>
          </div>
        </Card>
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
