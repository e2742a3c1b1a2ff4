// The secrets module alone: the control plane's index loads the whole server (seconds of start-up).
import { readAdminToken } from '@captionfarm/control-plane/secrets';
import type { CliEnv } from '../env.ts';
import { requestJson } from '../http.ts';
import { CliError, UsageError, print, table } from '../output.ts';

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** Runs one admin command's handler against the admin API (`--url`, else CAPTIONFARM_URL) with the admin token. */
export async function runAdmin(handler: AdminHandler, values: Record<string, unknown>, env: CliEnv): Promise<void> {
  const url = (typeof values.url === 'string' ? values.url : env.url).replace(/\/+$/, '');
  const token = env.adminToken ?? readAdminToken(env.dataDir);
  if (!token) {
    throw new CliError(
      `no admin token: set CAPTIONFARM_ADMIN_TOKEN, or run this where CAPTIONFARM_DATA_DIR (${env.dataDir}) holds the embedded control plane's data.`,
    );
  }
  const call = (method: string, path: string, body?: unknown) => requestJson({ url, method, path: `/admin/v1${path}`, token, body });
  await handler({ values, call, json: values.json === true });
}

export type AdminHandler = (ctx: {
  values: Record<string, unknown>;
  call: (method: string, path: string, body?: unknown) => Promise<unknown>;
  json: boolean;
}) => Promise<void>;

const enc = encodeURIComponent;
/** The admin commands by their words after `admin` (`agents token` is `agents token create`). */
export const adminHandlers: Record<string, AdminHandler> = {
  'accounts create': async ({ values, call, json }) => {
    const out = await call('POST', '/accounts', { name: need(values, 'name'), plan: (values.plan as string | undefined) ?? 'free' });
    print(out, json, (a: { id: string; plan: string }) => `created account ${a.id} (${a.plan})`);
  },
  'accounts list': async ({ call, json }) => {
    const out = (await call('GET', '/accounts')) as { accounts: Record<string, unknown>[] };
    print(json ? out.accounts : out, json, (o: typeof out) => table(o.accounts, ['id', 'name', 'plan', 'minutesBalance', 'createdAt']));
  },
  'accounts set-plan': async ({ values, call, json }) => {
    const out = await call('POST', `/accounts/${enc(need(values, 'account'))}/plan`, { plan: need(values, 'plan') });
    print(out, json, (a: { id: string; plan: string }) => `account ${a.id} is now on ${a.plan}`);
  },
  'minutes grant': async ({ values, call, json }) => {
    const minutes = Number(need(values, 'minutes'));
    if (!Number.isInteger(minutes)) throw new UsageError('--minutes must be an integer');
    const out = await call('POST', `/accounts/${enc(need(values, 'account'))}/minutes`, { minutes, ...(values.note ? { note: values.note } : {}) });
    print(out, json, (o: { balance: number }) => `granted ${minutes} minutes; balance ${o.balance}`);
  },
  'minutes show': async ({ values, call, json }) => {
    const out = (await call('GET', `/accounts/${enc(need(values, 'account'))}/minutes`)) as {
      balance: number;
      plan: string;
      ledger: Record<string, unknown>[];
    };
    print(
      out,
      json,
      (o: typeof out) => `balance: ${o.balance} minutes (${o.plan})\n\n${table(o.ledger, ['id', 'kind', 'minutes', 'jobId', 'note', 'createdAt'])}`,
    );
  },
  'keys create': async ({ values, call, json }) => {
    const out = await call('POST', `/accounts/${enc(need(values, 'account'))}/keys`);
    print(out, json, (k: { key: string; id: string }) => `${k.key}\n(key id ${k.id}; this is the only time the key is shown)`);
  },
  'keys list': async ({ values, call, json }) => {
    const out = (await call('GET', `/accounts/${enc(need(values, 'account'))}/keys`)) as { keys: Record<string, unknown>[] };
    print(json ? out.keys : out, json, (o: typeof out) => table(o.keys, ['id', 'prefix', 'createdAt', 'revokedAt', 'lastUsedAt']));
  },
  'keys revoke': async ({ values, call, json }) => {
    const out = await call('POST', `/keys/${enc(need(values, 'key'))}/revoke`);
    print(out, json, () => `revoked key ${String(values.key)}`);
  },
  'webhook-secret show': async ({ values, call, json }) => {
    const out = await call('GET', `/accounts/${enc(need(values, 'account'))}/webhook-secret`);
    print(out, json, (o: { secret: string; previous: string | null; previousExpiresAt: string | null }) =>
      o.previous ? `${o.secret}\n(previous secret valid until ${o.previousExpiresAt}: ${o.previous})` : o.secret,
    );
  },
  'agents token': async ({ values, call, json }) => {
    const out = await call('POST', '/agents/tokens', values.name ? { name: values.name } : {});
    print(out, json, (t: { token: string; id: string }) => `${t.token}\n(token id ${t.id}; this is the only time the token is shown)`);
  },
  'agents token list': async ({ call, json }) => {
    const out = (await call('GET', '/agents/tokens')) as { tokens: { nodes: { name: string }[] }[] };
    print(json ? out.tokens : out, json, (o: typeof out) =>
      table(
        o.tokens.map((t) => ({ ...t, nodes: t.nodes.map((n) => n.name).join(', ') })),
        ['id', 'name', 'prefix', 'createdAt', 'revokedAt', 'nodes'],
      ),
    );
  },
  'agents token revoke': async ({ values, call, json }) => {
    const out = await call('POST', `/agents/tokens/${enc(need(values, 'token'))}/revoke`);
    print(out, json, (t: { id: string; prefix: string; nodes: { name: string }[] }) =>
      [
        `revoked agent token ${t.id} (${t.prefix}...)`,
        t.nodes.length > 0 ? `its nodes are disconnected, their jobs queued again: ${t.nodes.map((n) => n.name).join(', ')}` : 'no node used it',
      ].join('\n'),
    );
  },
  'nodes list': async ({ call, json }) => {
    const out = (await call('GET', '/nodes')) as { nodes: Record<string, unknown>[] };
    print(json ? out.nodes : out, json, (o: typeof out) =>
      table(
        o.nodes.map((n) => ({ ...n, jobs: (n.currentJobs as unknown[]).length, gpu: (n.capabilities as { gpu: boolean }).gpu ? 'yes' : 'no' })),
        ['id', 'name', 'state', 'jobs', 'gpu', 'lastHeartbeatAt'],
      ),
    );
  },
  'nodes show': async ({ values, call }) => {
    print(await call('GET', `/nodes/${enc(need(values, 'node'))}`), true);
  },
  'nodes drain': async ({ values, call, json }) => {
    const out = await call('POST', `/nodes/${enc(need(values, 'node'))}/drain`);
    print(out, json, (n: { name: string }) => `draining ${n.name}: it finishes its current jobs and leases no new ones`);
  },
  'nodes undrain': async ({ values, call, json }) => {
    const out = await call('POST', `/nodes/${enc(need(values, 'node'))}/undrain`);
    print(out, json, (n: { name: string }) => `${n.name} leases jobs again`);
  },
  'users invite': async ({ values, call, json }) => {
    const admin = values.admin === true;
    const account = typeof values.account === 'string' && values.account !== '' ? values.account : null;
    if (!account && !admin) throw new UsageError('--account is required (only --admin users may belong to no account)');
    const out = await call('POST', '/users/invites', { email: need(values, 'email'), accountId: account, admin });
    print(
      out,
      json,
      (o: { link: string; expiresAt: string; user: { email: string } }) =>
        `${o.link}\n(one-time link for ${o.user.email} to set a password; valid until ${o.expiresAt})`,
    );
  },
  'users list': async ({ values, call, json }) => {
    const account = typeof values.account === 'string' ? `?account=${enc(values.account)}` : '';
    const out = (await call('GET', `/users${account}`)) as { users: Record<string, unknown>[] };
    print(json ? out.users : out, json, (o: typeof out) =>
      table(
        o.users.map((u) => ({ ...u, role: u.admin ? 'admin' : 'member', status: u.active ? 'active' : 'invited' })),
        ['id', 'email', 'accountId', 'role', 'status', 'lastSignInAt'],
      ),
    );
  },
  'users remove': async ({ values, call, json }) => {
    const out = await call('DELETE', `/users/${enc(need(values, 'user'))}`);
    print(out, json, (u: { email: string }) => `removed ${u.email}; their sessions have ended`);
  },
  'queue show': async ({ call, json }) => {
    const out = (await call('GET', '/queue')) as {
      byStatus: Record<string, number>;
      oldestQueued: { id: string; ageSeconds: number } | null;
      runningPerNode: Record<string, unknown>[];
      webhookBacklog: { pending: number };
    };
    print(out, json, (o: typeof out) =>
      [
        Object.entries(o.byStatus)
          .map(([k, v]) => `${k}: ${v}`)
          .join('  '),
        o.oldestQueued ? `oldest waiting: ${o.oldestQueued.id} (${o.oldestQueued.ageSeconds} s)` : 'nothing waiting',
        `webhook backlog: ${o.webhookBacklog.pending} pending`,
        table(o.runningPerNode, ['nodeName', 'nodeId', 'running']),
      ].join('\n'),
    );
  },
  'webhook-secret rotate': async ({ values, call, json }) => {
    const out = await call('POST', `/accounts/${enc(need(values, 'account'))}/webhook-secret/rotate`);
    print(out, json, (o: { secret: string; previousExpiresAt: string }) => `${o.secret}\n(the previous secret keeps signing until ${o.previousExpiresAt})`);
  },
};
