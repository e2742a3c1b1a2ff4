import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, setCsrfToken } from '../api.ts';
import { useSession } from '../session.ts';
import { ErrorState, Field, FormError, Loading, fieldError } from '../ui.tsx';
import { when } from '../format.ts';

/** /invite#TOKEN: the token stays in the fragment (never sent to the server with the page). */
export function InvitePage() {
  const token = window.location.hash.slice(1);
  const session = useSession();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const info = useQuery({
    queryKey: ['invite', token],
    enabled: token.length > 0 && session.isSuccess,
    queryFn: () => api<{ email: string; expiresAt: string }>('POST', '/invite/info', { token }),
  });
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (password !== confirm) {
      setError(new Error('The two passwords differ.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ csrfToken: string }>('POST', '/invite/accept', { token, password });
      setCsrfToken(r.csrfToken);
      window.history.replaceState(null, '', '/');
      await qc.invalidateQueries({ queryKey: ['session'] });
      navigate('/', { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  let body;
  if (!token) body = <ErrorState error={new Error('This link has no invite token; open the whole link you were sent.')} />;
  else if (session.isPending || info.isPending) body = <Loading />;
  else if (info.isError) body = <ErrorState error={info.error} />;
  else
    body = (
      <form onSubmit={(e) => void submit(e)}>
        <p>
          Choose a password for <strong>{info.data.email}</strong>. This link works once, until {when(info.data.expiresAt)}.
        </p>
        <Field
          label="New password"
          hint="At least 10 characters, more than your email address; a passphrase of a few words works well."
          error={fieldError(error, 'password')}
        >
          {(id, d) => (
            <input
              id={id}
              aria-describedby={d}
              type="password"
              autoComplete="new-password"
              required
              minLength={10}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <Field label="Repeat the password">
          {(id) => <input id={id} type="password" autoComplete="new-password" required value={confirm} onChange={(e) => setConfirm(e.target.value)} />}
        </Field>
        <FormError error={error} />
        <button type="submit" className="btn primary" disabled={busy}>
          {busy ? 'Saving…' : 'Set password and sign in'}
        </button>
      </form>
    );
  return (
    <div className="auth">
      <div className="card auth-card">
        <span className="brand">
          <span className="logo" aria-hidden="true" />
          Captionfarm
        </span>
        <h1>Welcome</h1>
        {body}
      </div>
    </div>
  );
}
