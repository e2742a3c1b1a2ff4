import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { ApiFailure, api, apiImage } from '../api.ts';
import { lineError, parseReplacements, parseVocabulary } from '../recognition.ts';
import { FontPicker, parseKeywords } from '../fonts.tsx';
import { ColorField, ErrorState, Field, FormError, Loading, NumberField, PageHeader, SelectField, fieldError } from '../ui.tsx';

const FONTS = ['Montserrat', 'Poppins', 'Inter', 'Anton', 'Bebas Neue', 'Luckiest Guy', 'Playfair Display'];
const WORD_ANIMATIONS = ['none', 'appear', 'pop', 'fade', 'rise', 'typewriter'];
const ACTIVE_ANIMATIONS = ['none', 'pop', 'bounce'];
const PAGE_ANIMATIONS = ['none', 'fade', 'pop', 'slide-up'];
const WEIGHTS = [400, 500, 600, 700, 800, 900];

type Template = {
  id: string;
  name: string;
  description?: string;
  font: { family: string; weight: number; size: number; fontId?: string | null };
  fill: string;
  outline: { color: string; width: number } | null;
  position: { y: number };
  layout: { maxWordsPerLine: number; maxLines: number };
  active: { color: string | null; scale: number };
  animation: { page: string; word: string; active: string };
  emoji?: 'off' | 'auto';
  keywords?: string[];
  vocabulary?: string[];
  replacements?: { from: string; to: string }[];
  [k: string]: unknown;
};

/** The editor edits a full template (from a built-in or the account's own) and previews it live. */
export function TemplateEditorPage() {
  const { id: editId } = useParams();
  const [params] = useSearchParams();
  const from = editId ?? params.get('from') ?? 'karaoke';
  const base = useQuery({
    queryKey: ['template', from],
    queryFn: () => api<{ template: Template; builtin: boolean }>('GET', `/v1/templates/${encodeURIComponent(from)}`),
  });
  if (base.isPending) return <Loading />;
  if (base.isError) return <ErrorState error={base.error} retry={() => void base.refetch()} />;
  const start = editId ? base.data.template : { ...base.data.template, id: `my-${base.data.template.id}`, name: `My ${base.data.template.name}` };
  return <Editor key={from} initial={start} editing={editId !== undefined} />;
}

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

/** What each group of the editor's fields gets: the template, a change to it, and the API's message for a field path. */
type Draft = { t: Template; set: (patch: (x: Template) => Template) => void; fe: (path: string) => string | undefined };

function Editor({ initial, editing }: { initial: Template; editing: boolean }) {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [t, setT] = useState<Template>(initial);
  const save = useMutation({
    mutationFn: () => (editing ? api('PUT', `/templates/${encodeURIComponent(t.id)}`, t) : api('POST', '/v1/templates', t)),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['templates'] });
      await qc.invalidateQueries({ queryKey: ['preview', t.id] });
      await qc.invalidateQueries({ queryKey: ['template', t.id] });
      navigate('/templates');
    },
  });
  const set = (patch: (x: Template) => Template) => setT((x) => patch(structuredClone(x)));
  const fe = (p: string) => fieldError(save.error, p);
  const details = save.error instanceof ApiFailure ? save.error.details : [];
  const draft: Draft = { t, set, fe };
  return (
    <>
      <PageHeader title={editing ? `Edit ${initial.name}` : 'New template'} subtitle="Changes show in the preview as you type." />
      <div className="editor">
        <form
          className="card editor-form"
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <div className="form-grid">
            <Field label="Name" error={fe('name')}>
              {(id, d) => (
                <input id={id} aria-describedby={d} required maxLength={80} value={t.name} onChange={(e) => set((x) => ({ ...x, name: e.target.value }))} />
              )}
            </Field>
            <Field label="Id" hint={editing ? 'An id cannot change.' : 'kebab-case, used as templateId in the API.'} error={fe('id')}>
              {(id, d) => (
                <input id={id} aria-describedby={d} required readOnly={editing} value={t.id} onChange={(e) => set((x) => ({ ...x, id: e.target.value }))} />
              )}
            </Field>
            <LookFields draft={draft} />
            <WordFields draft={draft} details={details} />
            <AnimationFields draft={draft} />
          </div>
          <FormError error={save.error} />
          <div className="actions">
            <button type="button" className="btn" onClick={() => navigate('/templates')}>
              Cancel
            </button>
            <button type="submit" className="btn primary" disabled={save.isPending}>
              {save.isPending ? 'Saving…' : 'Save template'}
            </button>
          </div>
        </form>
        <LivePreview template={t} />
      </div>
    </>
  );
}

/** Font, size, position, colours and layout. */
function LookFields({ draft: { t, set, fe } }: { draft: Draft }) {
  return (
    <>
      <SelectField label="Font" value={t.font.family} options={FONTS} onChange={(v) => set((x) => ({ ...x, font: { ...x.font, family: v } }))} />
      <Field label="Uploaded font" hint="Replaces the font and weight above." error={fe('font.fontId')}>
        {(id, d) => (
          <FontPicker id={id} describedBy={d} value={t.font.fontId ?? null} onChange={(fontId) => set((x) => ({ ...x, font: { ...x.font, fontId } }))} />
        )}
      </Field>
      <SelectField label="Weight" value={t.font.weight} options={WEIGHTS} onChange={(v) => set((x) => ({ ...x, font: { ...x.font, weight: Number(v) } }))} />
      <NumberField
        label={`Size: ${t.font.size}% of the short side`}
        error={fe('font.size')}
        type="range"
        min={2}
        max={14}
        step={0.5}
        value={t.font.size}
        onChange={(v) => set((x) => ({ ...x, font: { ...x.font, size: v } }))}
      />
      <NumberField
        label={`Position: ${Math.round(t.position.y * 100)}% from the top`}
        type="range"
        min={0}
        max={1}
        step={0.01}
        value={t.position.y}
        onChange={(v) => set((x) => ({ ...x, position: { ...x.position, y: v } }))}
      />
      <ColorField label="Text colour" error={fe('fill')} value={t.fill} onChange={(v) => set((x) => ({ ...x, fill: v }))} />
      <ColorField label="Spoken word colour" value={t.active.color ?? t.fill} onChange={(v) => set((x) => ({ ...x, active: { ...x.active, color: v } }))} />
      <ColorField
        label="Outline colour"
        value={t.outline?.color ?? '#000000'}
        onChange={(v) => set((x) => ({ ...x, outline: { width: x.outline?.width ?? 0.08, color: v } }))}
      />
      <NumberField
        label={`Outline width: ${t.outline?.width ?? 0} em`}
        type="range"
        min={0}
        max={0.3}
        step={0.01}
        value={t.outline?.width ?? 0}
        onChange={(v) => set((x) => ({ ...x, outline: v === 0 ? null : { color: x.outline?.color ?? '#000000', width: v } }))}
      />
      <NumberField
        label="Words per line"
        error={fe('layout.maxWordsPerLine')}
        min={1}
        max={20}
        value={t.layout.maxWordsPerLine}
        onChange={(v) => set((x) => ({ ...x, layout: { ...x.layout, maxWordsPerLine: v } }))}
      />
      <NumberField
        label="Lines"
        error={fe('layout.maxLines')}
        min={1}
        max={4}
        value={t.layout.maxLines}
        onChange={(v) => set((x) => ({ ...x, layout: { ...x.layout, maxLines: v } }))}
      />
    </>
  );
}

/** Keywords, the account's default vocabulary and replacements, and emoji. */
function WordFields({ draft: { t, set, fe }, details }: { draft: Draft; details: readonly { path: string; message: string }[] }) {
  // Typed as text (commas and all), from the template as opened; the template gets the parsed list.
  const [keywordText, setKeywordText] = useState((t.keywords ?? []).join(', '));
  // The account's default vocabulary and replacements for jobs made with this template (a job's own replace them).
  const [vocabularyText, setVocabularyText] = useState((t.vocabulary ?? []).join('\n'));
  const [replacementsText, setReplacementsText] = useState((t.replacements ?? []).map((r) => `${r.from} => ${r.to}`).join('\n'));
  return (
    <>
      <Field label="Keywords" hint="Always emphasised, comma-separated." error={fe('keywords')}>
        {(id, d) => (
          <input
            id={id}
            aria-describedby={d}
            value={keywordText}
            onChange={(e) => {
              setKeywordText(e.target.value);
              set((x) => ({ ...x, keywords: parseKeywords(e.target.value) }));
            }}
          />
        )}
      </Field>
      <Field
        label="Vocabulary"
        hint="Names and terms the recognizer should expect, one a line (at most 100). A job's own vocabulary replaces this one."
        error={lineError(details, 'vocabulary', parseVocabulary(vocabularyText).lines)}
      >
        {(id, d) => (
          <textarea
            id={id}
            aria-describedby={d}
            rows={3}
            value={vocabularyText}
            onChange={(e) => {
              setVocabularyText(e.target.value);
              set((x) => ({ ...x, vocabulary: parseVocabulary(e.target.value).values }));
            }}
          />
        )}
      </Field>
      <Field
        label="Replacements"
        hint={'"from => to", one a line: whole words, any case; nothing after => removes them. A job\'s own replacements replace these.'}
        error={parseReplacements(replacementsText).problems[0] ?? lineError(details, 'replacements', parseReplacements(replacementsText).lines)}
      >
        {(id, d) => (
          <textarea
            id={id}
            aria-describedby={d}
            rows={3}
            value={replacementsText}
            onChange={(e) => {
              setReplacementsText(e.target.value);
              set((x) => ({ ...x, replacements: parseReplacements(e.target.value).values }));
            }}
          />
        )}
      </Field>
      <label className="check">
        <input type="checkbox" checked={t.emoji === 'auto'} onChange={(e) => set((x) => ({ ...x, emoji: e.target.checked ? 'auto' : 'off' }))} /> Emoji: one per
        page, from its words
      </label>
    </>
  );
}

function AnimationFields({ draft: { t, set } }: { draft: Draft }) {
  return (
    <>
      <SelectField
        label="Word animation"
        value={t.animation.word}
        options={WORD_ANIMATIONS}
        onChange={(v) => set((x) => ({ ...x, animation: { ...x.animation, word: v } }))}
      />
      <SelectField
        label="Spoken word animation"
        value={t.animation.active}
        options={ACTIVE_ANIMATIONS}
        onChange={(v) => set((x) => ({ ...x, animation: { ...x.animation, active: v } }))}
      />
      <SelectField
        label="Page animation"
        value={t.animation.page}
        options={PAGE_ANIMATIONS}
        onChange={(v) => set((x) => ({ ...x, animation: { ...x.animation, page: v } }))}
      />
    </>
  );
}

/** The template rendered by the control plane as it is edited (debounced), in either aspect. */
function LivePreview({ template }: { template: Template }) {
  const [aspect, setAspect] = useState<'portrait' | 'landscape'>('portrait');
  const debounced = useDebounced(template, 350);
  const size = aspect === 'portrait' ? { width: 360, height: 640 } : { width: 640, height: 360 };
  const preview = useQuery({
    queryKey: ['live-preview', debounced, aspect],
    queryFn: () => apiImage('/template-preview', { template: debounced, ...size }),
    placeholderData: (prev) => prev,
    staleTime: Infinity,
    gcTime: 30_000,
  });
  return (
    <section className="card editor-preview" aria-label="Live preview">
      <div className="segmented" role="radiogroup" aria-label="Aspect">
        <label className={aspect === 'portrait' ? 'on' : ''}>
          <input type="radio" name="aspect" checked={aspect === 'portrait'} onChange={() => setAspect('portrait')} /> 9:16
        </label>
        <label className={aspect === 'landscape' ? 'on' : ''}>
          <input type="radio" name="aspect" checked={aspect === 'landscape'} onChange={() => setAspect('landscape')} /> 16:9
        </label>
      </div>
      <div className={`preview big ${aspect}`} aria-busy={preview.isFetching}>
        {preview.data ? (
          <img src={preview.data} alt="Live preview of the template" data-testid="live-preview" />
        ) : preview.isError ? (
          <ErrorState error={preview.error} />
        ) : (
          <Loading label="Rendering…" />
        )}
      </div>
      {preview.isError && preview.data && <p className="field-error small">The last change is not valid: {preview.error.message}</p>}
    </section>
  );
}
