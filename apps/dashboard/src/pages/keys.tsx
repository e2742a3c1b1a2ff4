import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type KeyView } from '../api.ts';
import { ago, when } from '../format.ts';
import { Card, CopyButton, Empty, ErrorState, Field, FormError, Loading, PageHeader, fieldError } from '../ui.tsx';

export function KeysPage() {
  const qc = useQueryClient();
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => api<{ keys: KeyView[] }>('GET', '/keys') });
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ key: string; name: string } | null>(null);
  const create = useMutation({
    mutationFn: (n: string) => api<{ id: string; key: string; name: string }>('POST', '/keys', { name: n }),
    onSuccess: async (k) => {
      setCreated({ key: k.key, name: k.name });
      setName('');
      await qc.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api('POST', `/keys/${id}/revoke`),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['keys'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(name);
  };
  return (
    <>
      <PageHeader title="API keys" subtitle="Keys authenticate your code against the public API. Each key is shown once." />
      <Card title="Create a key">
        <form className="inline-form" onSubmit={submit}>
          <Field label="Name" hint="What uses it, e.g. “production server”." error={fieldError(create.error, 'name')}>
            {(id, d) => <input id={id} aria-describedby={d} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <button type="submit" className="btn primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create key'}
          </button>
        </form>
        {!fieldError(create.error, 'name') && <FormError error={create.error} />}
        {created && (
          <div className="notice success" role="status">
            <p>
              <strong>{created.name}</strong>: copy this key now. It will not be shown again.
            </p>
            <div className="secret-row">
              <code data-testid="new-key">{created.key}</code>
              <CopyButton value={created.key} />
            </div>
          </div>
        )}
      </Card>
      <Card title="Keys">
        {keys.isPending ? (
          <Loading />
        ) : keys.isError ? (
          <ErrorState error={keys.error} retry={() => void keys.refetch()} />
        ) : keys.data.keys.length === 0 ? (
          <Empty title="No keys yet">Create one above to call the API.</Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.keys.map((k) => (
                  <tr key={k.id} data-key-prefix={k.prefix}>
                    <td>{k.name ?? <span className="muted">unnamed</span>}</td>
                    <td>
                      <code>{k.prefix}…</code>
                    </td>
                    <td>{when(k.createdAt)}</td>
                    <td>{ago(k.lastUsedAt)}</td>
                    <td className="right">
                      {k.revokedAt ? (
                        <span className="badge cancelled">Revoked {when(k.revokedAt)}</span>
                      ) : (
                        <button
                          type="button"
                          className="btn small danger"
                          disabled={revoke.isPending}
                          onClick={() => {
                            if (window.confirm(`Revoke ${k.name ?? k.prefix}? Requests with it fail at once.`)) revoke.mutate(k.id);
                          }}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <FormError error={revoke.error} />
      </Card>
    </>
  );
}
