import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api, setCsrfToken } from '../api.ts';
import { Field, FormError } from '../ui.tsx';

export function SignInPage() {
  const qc = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ csrfToken: string }>('POST', '/sign-in', { email, password });
      setCsrfToken(r.csrfToken);
      await qc.invalidateQueries({ queryKey: ['session'] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="auth">
      <form className="card auth-card" onSubmit={(e) => void submit(e)} aria-labelledby="signin-title">
        <span className="brand">
          <span className="logo" aria-hidden="true" />
          Captionfarm
        </span>
        <h1 id="signin-title">Sign in</h1>
        <Field label="Email">
          {(id) => <input id={id} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Field label="Password">
          {(id) => <input id={id} type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />}
        </Field>
        <FormError error={error} />
        <button type="submit" className="btn primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="muted small">No account yet? An administrator invites you with a one-time link.</p>
      </form>
    </div>
  );
}
