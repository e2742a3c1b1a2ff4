import { useEffect, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, apiImage, type TemplateSummary } from './api.ts';

export function useTemplates() {
  return useQuery({ queryKey: ['templates'], queryFn: () => api<{ templates: TemplateSummary[] }>('GET', '/v1/templates') });
}

/** A template's preview image (rendered by the control plane's preview endpoint), cached per size. */
export function TemplatePreview(props: { id: string; width: number; height: number; alt: string }) {
  const q = useQuery({
    queryKey: ['preview', props.id, props.width, props.height],
    queryFn: () =>
      apiImage(`/v1/templates/${encodeURIComponent(props.id)}/preview`, { width: props.width, height: props.height, text: 'Captions that pop on every word' }),
    staleTime: Infinity,
    gcTime: 10 * 60_000,
  });
  useRevokeLater(q.data);
  return (
    <div className={`preview ${props.width > props.height ? 'landscape' : 'portrait'}`}>
      {q.data ? (
        <img src={q.data} alt={props.alt} width={props.width} height={props.height} />
      ) : q.isError ? (
        <span className="muted small">no preview</span>
      ) : (
        <span className="spinner" aria-hidden="true" />
      )}
    </div>
  );
}

/** A template's card: its previews at 9:16 and 16:9, name, a detail line and action buttons. */
export function TemplateTile(props: { template: TemplateSummary; detail: ReactNode; children: ReactNode }) {
  const t = props.template;
  return (
    <article className="tile">
      <div className="pair">
        <TemplatePreview id={t.id} width={180} height={320} alt={`${t.name} at 9:16`} />
        <TemplatePreview id={t.id} width={320} height={180} alt={`${t.name} at 16:9`} />
      </div>
      <span className="tile-name">{t.name}</span>
      <span className="muted small">{props.detail}</span>
      <div className="actions">{props.children}</div>
    </article>
  );
}

function useRevokeLater(url: string | undefined) {
  useEffect(
    () => () => {
      // Object URLs stay valid while cached; revoke only long after the component is gone.
      if (url) setTimeout(() => URL.revokeObjectURL(url), 11 * 60_000);
    },
    [url],
  );
}
