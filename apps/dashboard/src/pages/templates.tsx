import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../api.ts';
import { TemplateTile, useTemplates } from '../previews.tsx';
import { Card, ConfirmButton, Empty, ErrorState, FormError, Loading, PageHeader } from '../ui.tsx';

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
              <TemplateTile key={t.id} template={t} detail={<code>{t.id}</code>}>
                <Link className="btn small" to={`/templates/${t.id}/edit`}>
                  Edit
                </Link>
                <ConfirmButton
                  className="btn small danger"
                  confirm={`Delete template ${t.name}? Queued jobs keep the copy they were created with.`}
                  onConfirm={() => remove.mutate(t.id)}
                >
                  Delete
                </ConfirmButton>
              </TemplateTile>
            ))}
          </div>
        )}
        <FormError error={remove.error} />
      </Card>
      <Card title="Built in">
        <div className="gallery wide">
          {builtin.map((t) => (
            <TemplateTile key={t.id} template={t} detail={t.description}>
              <Link className="btn small" to={`/templates/new?from=${t.id}`}>
                Customise
              </Link>
            </TemplateTile>
          ))}
        </div>
      </Card>
    </>
  );
}
