import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { PLAN_IDS } from '@captionfarm/contracts';
import { api, type AccountSummary, type KeyView, type UserView } from '../../api.ts';
import { ago, when } from '../../format.ts';
import { Card, CopyButton, Empty, Field, FormError, PageHeader, QueryRows, SelectField, Table, fieldError } from '../../ui.tsx';

export function AccountsPage() {
  const qc = useQueryClient();
  const accounts = useQuery({ queryKey: ['admin', 'accounts'], queryFn: () => api<{ accounts: AccountSummary[] }>('GET', '/admin/accounts') });
  const [name, setName] = useState('');
  const [plan, setPlan] = useState('free');
  const [selected, setSelected] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () => api<{ id: string }>('POST', '/admin/accounts', { name, plan }),
    onSuccess: async (a) => {
      setName('');
      setSelected(a.id);
      await qc.invalidateQueries({ queryKey: ['admin', 'accounts'] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <PageHeader title="Accounts" />
      <Card title="Create an account">
        <form className="inline-form" onSubmit={submit}>
          <Field label="Name" error={fieldError(create.error, 'name')}>
            {(id, d) => <input id={id} aria-describedby={d} required value={name} onChange={(e) => setName(e.target.value)} />}
          </Field>
          <SelectField label="Plan" value={plan} options={PLAN_IDS} onChange={setPlan} />
          <button type="submit" className="btn primary" disabled={create.isPending}>
            Create
          </button>
        </form>
        <FormError error={create.error} />
      </Card>
      <Card title="All accounts">
        <QueryRows query={accounts} rows={(d) => d.accounts} retry empty={<Empty title="No accounts yet" />}>
          {(rows) => (
            <Table columns={['Account', 'Plan', 'Minutes', 'Created']} actions>
              {rows.map((a) => (
                <tr key={a.id} className={selected === a.id ? 'selected' : ''}>
                  <td>
                    <strong>{a.name}</strong>
                    <div className="muted small">
                      <code>{a.id}</code>
                    </div>
                  </td>
                  <td>{a.plan}</td>
                  <td>{a.minutesBalance}</td>
                  <td>{when(a.createdAt)}</td>
                  <td className="right">
                    <button type="button" className="btn small" aria-expanded={selected === a.id} onClick={() => setSelected(selected === a.id ? null : a.id)}>
                      {selected === a.id ? 'Close' : 'Manage'}
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </QueryRows>
      </Card>
      {selected && accounts.data?.accounts.find((a) => a.id === selected) && <ManageAccount account={accounts.data.accounts.find((a) => a.id === selected)!} />}
    </>
  );
}

function ManageAccount({ account }: { account: AccountSummary }) {
  const qc = useQueryClient();
  const [plan, setPlan] = useState<string>(account.plan);
  const [minutes, setMinutes] = useState('');
  const [email, setEmail] = useState('');
  const [link, setLink] = useState<string | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: ['admin'] });
  const setPlanM = useMutation({ mutationFn: () => api('POST', `/admin/accounts/${account.id}/plan`, { plan }), onSuccess: refresh });
  const grant = useMutation({
    mutationFn: () => api('POST', `/admin/accounts/${account.id}/minutes`, { minutes: Number(minutes) }),
    onSuccess: async () => {
      setMinutes('');
      await refresh();
    },
  });
  const invite = useMutation({
    mutationFn: () => api<{ link: string }>('POST', '/admin/users/invites', { email, accountId: account.id }),
    onSuccess: async (r) => {
      setLink(r.link);
      setEmail('');
      await refresh();
    },
  });
  return (
    <Card title={`Manage ${account.name}`}>
      <div className="grid">
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            setPlanM.mutate();
          }}
        >
          <SelectField label="Plan" value={plan} options={PLAN_IDS} onChange={setPlan} />
          <button type="submit" className="btn" disabled={setPlanM.isPending}>
            Change plan
          </button>
          <FormError error={setPlanM.error} />
        </form>
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            grant.mutate();
          }}
        >
          <Field label="Grant minutes" hint="Negative takes minutes away.">
            {(id, d) => <input id={id} aria-describedby={d} inputMode="numeric" required value={minutes} onChange={(e) => setMinutes(e.target.value)} />}
          </Field>
          <button type="submit" className="btn" disabled={grant.isPending}>
            Grant
          </button>
          <FormError error={grant.error} />
        </form>
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            invite.mutate();
          }}
        >
          <Field label="Invite a member" error={fieldError(invite.error, 'email')}>
            {(id, d) => (
              <input
                id={id}
                aria-describedby={d}
                type="email"
                required
                placeholder="name@example.com"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
              />
            )}
          </Field>
          <button type="submit" className="btn" disabled={invite.isPending}>
            Invite
          </button>
          {!fieldError(invite.error, 'email') && <FormError error={invite.error} />}
        </form>
      </div>
      {link && (
        <div className="notice success" role="status">
          <p>Send this one-time link to the member (valid 72 hours):</p>
          <div className="secret-row">
            <code>{link}</code>
            <CopyButton value={link} />
          </div>
        </div>
      )}
      <Members accountId={account.id} />
      <ApiKeys accountId={account.id} />
    </Card>
  );
}

function Members({ accountId }: { accountId: string }) {
  const members = useQuery({
    queryKey: ['admin', 'users', accountId],
    queryFn: () => api<{ users: UserView[] }>('GET', `/admin/users?account=${encodeURIComponent(accountId)}`),
  });
  return (
    <>
      <h3>Members</h3>
      <QueryRows query={members} rows={(d) => d.users} empty={<Empty title="No members yet" />}>
        {(rows) => (
          <ul className="plain">
            {rows.map((u) => (
              <li key={u.id} className="row-between">
                <span>
                  {u.email}
                  {u.admin ? ' (administrator)' : ''}
                </span>
                <span className="muted small">{u.active ? `last sign-in ${ago(u.lastSignInAt)}` : 'invited'}</span>
              </li>
            ))}
          </ul>
        )}
      </QueryRows>
    </>
  );
}

function ApiKeys({ accountId }: { accountId: string }) {
  const keys = useQuery({ queryKey: ['admin', 'keys', accountId], queryFn: () => api<{ keys: KeyView[] }>('GET', `/admin/accounts/${accountId}/keys`) });
  return (
    <>
      <h3>API keys</h3>
      <QueryRows query={keys} rows={(d) => d.keys} empty={<Empty title="No keys" />}>
        {(rows) => (
          <ul className="plain">
            {rows.map((k) => (
              <li key={k.id} className="row-between">
                <span>
                  <code>{k.prefix}…</code> {k.name}
                </span>
                <span className="muted small">{k.revokedAt ? 'revoked' : `last used ${ago(k.lastUsedAt)}`}</span>
              </li>
            ))}
          </ul>
        )}
      </QueryRows>
    </>
  );
}
