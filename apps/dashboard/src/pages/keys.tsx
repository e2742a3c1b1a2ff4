import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type KeyView } from '../api.ts';
import { ago, when } from '../format.ts';
import { Card, ConfirmButton, CopyButton, Empty, Field, FormError, PageHeader, QueryRows, Table, fieldError } from '../ui.tsx';

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
        <QueryRows query={keys} rows={(d) => d.keys} retry empty={<Empty title="No keys yet">Create one above to call the API.</Empty>}>
          {(rows) => (
            <Table columns={['Name', 'Prefix', 'Created', 'Last used']} actions>
              {rows.map((k) => (
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
                      <ConfirmButton
                        className="btn small danger"
                        disabled={revoke.isPending}
                        confirm={`Revoke ${k.name ?? k.prefix}? Requests with it fail at once.`}
                        onConfirm={() => revoke.mutate(k.id)}
                      >
                        Revoke
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </QueryRows>
        <FormError error={revoke.error} />
      </Card>
    </>
  );
}
