// The new-job form's "Framing and renditions" (issue 43): the reframe, the app whose buttons the
// captions keep clear of (its zones drawn over the chosen template's preview), caption placement,
// up to MAX_OUTPUTS renditions (the first is the job's own format and size), a poster and soft
// subtitles. What is sent is renditions.ts's framingOptions.
import { MAX_OUTPUTS, SAFE_AREA_REFERENCE, SAFE_AREA_ZONES, type SafeAreaName } from '@captionfarm/contracts';
import { useId } from 'react';
import { ApiFailure } from '../api.ts';
import { TemplatePreview } from '../previews.tsx';
import { rowErrorPath, SIZE_PRESETS, withRowAdded, type RenditionRow } from '../renditions.ts';
import { Card, Choice, Field } from '../ui.tsx';
import type { NewJobForm } from './new-job-form.ts';

type Section = { form: NewJobForm; fe: (path: string) => string | undefined };

/** [value, option label, hint under the select] */
const REFRAME: [string, string, string][] = [
  ['center', 'Centre', 'A size of another shape is filled and cropped around the middle.'],
  ['subject', 'Follow the speaker', 'The crop follows the face (or what stands out), shot by shot, cutting at shot changes.'],
];
const SAFE_AREA: [string, string, string][] = [
  ['none', 'None', "The frame's usual margins."],
  ['tiktok', 'TikTok', "Captions keep out of TikTok's top bar, caption block and button column."],
  ['reels', 'Instagram Reels', 'Captions keep out of the Reels interface (14% top, 35% bottom, 6% sides).'],
  ['shorts', 'YouTube Shorts', 'Captions keep out of the Shorts interface and its button column.'],
];
const PLACEMENT: [string, string, string][] = [
  ['fixed', "The template's", 'Captions sit where the template puts them.'],
  ['auto', 'Keep off faces', 'A caption page that would cover a face moves above or below it.'],
];
const POSTER: [string, string, string][] = [
  ['off', 'None', 'No poster image.'],
  ['chosen', 'Chosen for me', 'A JPEG frame with its caption, picked by faces and stillness.'],
  ['at', 'At a time', 'A JPEG frame with its caption, at the second you give.'],
];
const SUBTITLES: [string, string, string][] = [
  ['burn', 'Burned in', 'Captions in the picture.'],
  ['track', 'Subtitle track only', 'A track players can switch on (mov_text in MP4, WebVTT in WebM); nothing burned.'],
  ['both', 'Both', 'Burned in, and a subtitle track.'],
];
const ZONE_APP: Record<Exclude<SafeAreaName, 'none'>, string> = { tiktok: 'TikTok', reels: 'Reels', shorts: 'Shorts' };

export function FramingCard({ form, fe }: Section) {
  const { reframe, safeArea, placement, poster, posterAt, subtitles, overlay, templateId } = form.fields;
  const noPicture = overlay ? 'An overlay is the captions alone: one rendition, no reframe, poster or subtitle track.' : undefined;
  return (
    <Card title="Framing and renditions">
      <div className="form-grid">
        <Choice
          label="Reframe"
          value={reframe}
          options={REFRAME}
          disabled={overlay}
          hint={noPicture}
          error={fe('reframe')}
          onChange={(v) => form.set({ reframe: v })}
        />
        <Choice label="Safe area" value={safeArea} options={SAFE_AREA} error={fe('safeArea')} onChange={(v) => form.set({ safeArea: v })} />
        <Choice label="Caption placement" value={placement} options={PLACEMENT} error={fe('placement')} onChange={(v) => form.set({ placement: v })} />
        <Choice
          label="Subtitles"
          value={subtitles}
          options={SUBTITLES}
          disabled={overlay}
          error={fe('subtitles')}
          onChange={(v) => form.set({ subtitles: v })}
        />
        <Choice label="Poster" value={poster} options={POSTER} disabled={overlay} error={fe('poster')} onChange={(v) => form.set({ poster: v })} />
        {poster === 'at' && !overlay && (
          <Field label="Poster at (seconds)" hint="Seconds into the output." error={fe('poster.at')}>
            {(id, d) => (
              <input id={id} aria-describedby={d} type="number" min={0} step={0.1} value={posterAt} onChange={(e) => form.set({ posterAt: e.target.value })} />
            )}
          </Field>
        )}
      </div>
      {safeArea !== 'none' && safeArea in ZONE_APP && <SafeAreaPreview templateId={templateId} safeArea={safeArea as keyof typeof ZONE_APP} />}
      <Renditions form={form} fe={fe} />
    </Card>
  );
}

function Renditions({ form, fe }: Section) {
  const rows = form.fields.renditions;
  const { overlay } = form.fields;
  const setRow = (i: number, patch: Partial<RenditionRow>) => form.set({ renditions: rows.map((r, j) => (j === i ? { ...r, ...patch } : r)) });
  const full = rows.length >= MAX_OUTPUTS;
  // A message about the list itself (a row's own shows at its row).
  const general = form.error instanceof ApiFailure ? form.error.details.find((d) => d.path === 'outputs')?.message : undefined;
  return (
    <fieldset className="renditions">
      <legend>Renditions</legend>
      <p className="muted small">
        Up to {MAX_OUTPUTS} sizes from one job, rendered together: one recognition, one decode, minutes charged once. The first is the job's own video.
      </p>
      {rows.map((row, i) => (
        <RenditionFields
          // Rows are added and removed at the end or by index; the index is the row's name.
          // biome-ignore lint/suspicious/noArrayIndexKey: a row has no identity but its place
          key={i}
          index={i}
          row={row}
          overlay={overlay}
          error={fe(rowErrorPath(rows.length, i))}
          invalid={(what) => !!fe(`${rowErrorPath(rows.length, i)}${rows.length > 1 || what !== 'resolution' ? `.${what}` : ''}`)}
          onChange={(patch) => setRow(i, patch)}
          onRemove={i > 0 ? () => form.set({ renditions: rows.filter((_, j) => j !== i) }) : undefined}
        />
      ))}
      <div className="actions">
        <button type="button" className="btn small" disabled={full || overlay} onClick={() => form.set({ renditions: withRowAdded(rows) })}>
          Add a rendition
        </button>
        {full && <span className="muted small">At most {MAX_OUTPUTS} renditions a job.</span>}
      </div>
      {general && <small className="field-error">{general}</small>}
    </fieldset>
  );
}

function RenditionFields(props: {
  index: number;
  row: RenditionRow;
  overlay: boolean;
  error: string | undefined;
  /** Whether the API's message is about this part of the row (its size, format or reframe). */
  invalid: (what: 'resolution' | 'format' | 'reframe') => boolean;
  onChange: (patch: Partial<RenditionRow>) => void;
  onRemove: (() => void) | undefined;
}) {
  const { index: i, row, overlay } = props;
  const id = useId();
  const name = `Rendition ${i + 1}`;
  const control = (what: string) => {
    const part = what === 'format' || what === 'reframe' ? what : 'resolution';
    return {
      id: `${id}-${what}`,
      'aria-describedby': props.error ? `${id}-err` : undefined,
      'aria-invalid': props.invalid(part) || undefined,
      // An overlay has one rendition: the others stay as set, not sent, until it is turned off.
      disabled: overlay && (i > 0 || what === 'reframe'),
    };
  };
  return (
    <div className="rendition" data-testid="rendition">
      <span className="rendition-name">{i === 0 ? `${i + 1} · the job's` : i + 1}</span>
      <div className="field">
        <label htmlFor={`${id}-size`}>
          <span className="sr-only">{name} </span>Size
        </label>
        <select {...control('size')} value={row.size} onChange={(e) => props.onChange({ size: e.target.value })}>
          <option value="">As the source</option>
          {SIZE_PRESETS.map((p) => (
            <option key={p} value={p}>
              {p.replace('x', '×')}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </div>
      {row.size === 'custom' && (
        <>
          <div className="field narrow">
            <label htmlFor={`${id}-width`}>
              <span className="sr-only">{name} </span>Width
            </label>
            <input {...control('width')} inputMode="numeric" value={row.width} onChange={(e) => props.onChange({ width: e.target.value })} />
          </div>
          <div className="field narrow">
            <label htmlFor={`${id}-height`}>
              <span className="sr-only">{name} </span>Height
            </label>
            <input {...control('height')} inputMode="numeric" value={row.height} onChange={(e) => props.onChange({ height: e.target.value })} />
          </div>
        </>
      )}
      <div className="field">
        <label htmlFor={`${id}-format`}>
          <span className="sr-only">{name} </span>Format
        </label>
        <select {...control('format')} value={row.format} onChange={(e) => props.onChange({ format: e.target.value })}>
          <option value="mp4" disabled={overlay}>
            MP4 (H.264)
          </option>
          <option value="webm">{overlay ? 'WebM (VP9 with alpha)' : 'WebM (VP9)'}</option>
          {i === 0 && (
            <option value="mov" disabled={!overlay}>
              MOV (ProRes 4444 with alpha, overlay only)
            </option>
          )}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-reframe`}>
          <span className="sr-only">{name} </span>Reframe
        </label>
        <select {...control('reframe')} value={row.reframe} onChange={(e) => props.onChange({ reframe: e.target.value })}>
          <option value="">As the job</option>
          <option value="center">Centre</option>
          <option value="subject">Follow the speaker</option>
        </select>
      </div>
      {props.onRemove && (
        <button type="button" className="btn small" aria-label={`Remove rendition ${i + 1}`} onClick={props.onRemove}>
          Remove
        </button>
      )}
      {props.error && (
        <small id={`${id}-err`} className="field-error rendition-error">
          {props.error}
        </small>
      )}
    </div>
  );
}

/** The chosen template's 9:16 preview with the app's interface zones shaded (SAFE_AREA_ZONES, drawn in its 1080x1920 frame and scaled with it). */
function SafeAreaPreview(props: { templateId: string; safeArea: keyof typeof ZONE_APP }) {
  const app = ZONE_APP[props.safeArea];
  const { width, height } = SAFE_AREA_REFERENCE;
  return (
    <figure className="safe-area-preview" data-testid="safe-area-preview">
      <div className="safe-area-frame">
        <TemplatePreview id={props.templateId} width={180} height={320} alt={`The template at 9:16 with ${app}'s zones`} />
        <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" aria-hidden="true">
          {SAFE_AREA_ZONES[props.safeArea].map((z) => (
            <rect key={`${z.x},${z.y},${z.width},${z.height}`} x={z.x} y={z.y} width={z.width} height={z.height} data-testid="safe-zone" />
          ))}
        </svg>
      </div>
      <figcaption className="muted small">Shaded: where {app}'s buttons and text sit. The captions keep out of them.</figcaption>
    </figure>
  );
}
