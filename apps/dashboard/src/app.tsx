import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Navigate, NavLink, Route, Routes, useLocation, useNavigate } from 'react-router';
import { api, setCsrfToken, type DashboardSession } from './api.ts';
import { useSession } from './session.ts';
import { ErrorState, Loading } from './ui.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { InvitePage } from './pages/invite.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { KeysPage } from './pages/keys.tsx';
import { WebhookSecretPage } from './pages/webhook-secret.tsx';
import { ProfanityWordsPage } from './pages/profanity-words.tsx';
import { JobsPage } from './pages/jobs.tsx';
import { JobPage } from './pages/job.tsx';
import { NewJobPage } from './pages/new-job.tsx';
import { TemplatesPage } from './pages/templates.tsx';
import { TemplateEditorPage } from './pages/template-editor.tsx';
import { NodesPage } from './pages/admin/nodes.tsx';
import { QueuePage } from './pages/admin/queue.tsx';
import { AccountsPage } from './pages/admin/accounts.tsx';

export function App() {
  const session = useSession();
  const location = useLocation();
  if (location.pathname === '/invite') return <InvitePage />;
  if (session.isPending) return <Loading label="Starting…" />;
  if (session.isError) return <ErrorState error={session.error} retry={() => void session.refetch()} />;
  const s = session.data;
  if (!s.user) {
    return (
      <Routes>
        <Route path="*" element={<SignInPage />} />
      </Routes>
    );
  }
  const home = s.account ? '/overview' : '/admin/nodes';
  return (
    <Shell session={s}>
      <Routes>
        <Route path="/" element={<Navigate to={home} replace />} />
        {s.account && (
          <>
            <Route path="/overview" element={<OverviewPage />} />
            <Route path="/jobs" element={<JobsPage />} />
            <Route path="/jobs/new" element={<NewJobPage />} />
            <Route path="/jobs/:id" element={<JobPage />} />
            <Route path="/keys" element={<KeysPage />} />
            <Route path="/webhooks" element={<WebhookSecretPage />} />
            <Route path="/profanity" element={<ProfanityWordsPage />} />
            <Route path="/templates" element={<TemplatesPage />} />
            <Route path="/templates/new" element={<TemplateEditorPage />} />
            <Route path="/templates/:id/edit" element={<TemplateEditorPage />} />
          </>
        )}
        {s.user.admin && (
          <>
            <Route path="/admin/nodes" element={<NodesPage />} />
            <Route path="/admin/queue" element={<QueuePage />} />
            <Route path="/admin/accounts" element={<AccountsPage />} />
          </>
        )}
        <Route path="*" element={<NotFound home={home} />} />
      </Routes>
    </Shell>
  );
}

function NotFound(props: { home: string }) {
  return (
    <div className="empty">
      <strong>There is no page here.</strong>
      <NavLink to={props.home}>Go to the start page</NavLink>
    </div>
  );
}

function Shell(props: { session: DashboardSession; children: React.ReactNode }) {
  const { user, account } = props.session;
  const [open, setOpen] = useState(false);
  const qc = useQueryClient();
  const navigate = useNavigate();
  const signOut = async () => {
    await api('POST', '/sign-out').catch(() => undefined);
    setCsrfToken('');
    qc.clear();
    navigate('/', { replace: true });
    await qc.invalidateQueries({ queryKey: ['session'] });
  };
  const link = (to: string, label: string) => (
    <NavLink to={to} onClick={() => setOpen(false)} className={({ isActive }) => (isActive ? 'active' : '')}>
      {label}
    </NavLink>
  );
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <aside className={`sidebar ${open ? 'open' : ''}`}>
        <div className="brand-row">
          <span className="brand">
            <span className="logo" aria-hidden="true" />
            Captionfarm
          </span>
          <button type="button" className="btn small menu-toggle" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
            Menu
          </button>
        </div>
        <nav id="nav" aria-label="Main">
          {account && (
            <>
              <div className="nav-group">{account.name}</div>
              {link('/overview', 'Overview')}
              {link('/jobs', 'Jobs')}
              {link('/jobs/new', 'New job')}
              {link('/templates', 'Templates')}
              {link('/profanity', 'Profanity words')}
              {link('/keys', 'API keys')}
              {link('/webhooks', 'Webhook secret')}
            </>
          )}
          {user?.admin && (
            <>
              <div className="nav-group">Operator console</div>
              {link('/admin/nodes', 'Nodes')}
              {link('/admin/queue', 'Queue')}
              {link('/admin/accounts', 'Accounts')}
            </>
          )}
          <div className="nav-foot">
            <span className="muted" title={user?.email}>
              {user?.email}
            </span>
            <button type="button" className="btn small" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </nav>
      </aside>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}
