import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../api.ts';
import { TemplatePreview, useTemplates } from '../previews.tsx';
import { Card, Empty, ErrorState, FormError, Loading, PageHeader } from '../ui.tsx';

export function TemplatesPage() {
  const qc = useQueryClient();
  const templates = useTemplates();
  const remove = useMutation({
    mutationFn: (id: string) => api('DELETE', `/v1/templates/${encodeURIComponent(id)}`),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['templates'] }),
  });
  if (templates.isPending) return <Loading />;
  if (templates.isError) return <ErrorState error={templates.error} retry={() => void templates.refetch()} />;
  const builtin = templates.data.templates.filter((t) => t.builtin);
  const own = templates.data.templates.filter((t) => !t.builtin);
  return (
    <>
      <PageHeader
        title="Templates"
        subtitle="Each look previewed at 9:16 and 16:9."
        actions={
          <Link className="btn primary" to="/templates/new">
            New template
          </Link>
        }
      />
      <Card title="Your templates">
        {own.length === 0 ? (
          <Empty title="No custom templates yet">
            <Link to="/templates/new">Design one</Link> from fonts, colours and animations, with a live preview.
          </Empty>
        ) : (
          <div className="gallery wide">
            {own.map((t) => (
              <article key={t.id} className="tile">
                <div className="pair">
                  <TemplatePreview id={t.id} width={180} height={320} alt={`${t.name} at 9:16`} />
                  <TemplatePreview id={t.id} width={320} height={180} alt={`${t.name} at 16:9`} />
                </div>
                <span className="tile-name">{t.name}</span>
                <span className="muted small">
                  <code>{t.id}</code>
                </span>
                <div className="actions">
                  <Link className="btn small" to={`/templates/${t.id}/edit`}>
                    Edit
                  </Link>
                  <button
                    type="button"
                    className="btn small danger"
                    onClick={() => {
                      if (window.confirm(`Delete template ${t.name}? Queued jobs keep the copy they were created with.`)) remove.mutate(t.id);
                    }}
                  >
                    Delete
                  </button>
                </div>
              </article>
            ))}
          </div>
        )}
        <FormError error={remove.error} />
      </Card>
      <Card title="Built in">
        <div className="gallery wide">
          {builtin.map((t) => (
            <article key={t.id} className="tile">
              <div className="pair">
                <TemplatePreview id={t.id} width={180} height={320} alt={`${t.name} at 9:16`} />
                <TemplatePreview id={t.id} width={320} height={180} alt={`${t.name} at 16:9`} />
              </div>
              <span className="tile-name">{t.name}</span>
              <span className="muted small">{t.description}</span>
              <div className="actions">
                <Link className="btn small" to={`/templates/new?from=${t.id}`}>
                  Customise
                </Link>
              </div>
            </article>
          ))}
        </div>
      </Card>
    </>
  );
}
