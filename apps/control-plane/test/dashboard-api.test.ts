import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.ts';
import { ensureDashboardBuilt } from '../../dashboard/test/build.ts';
import { runCliAsLocalAdmin } from '../../cli/test/cli-process.ts';

// Each sign-in runs scrypt (32 MiB, p=3): ~0.2 s on a quiet core, seconds on a loaded shared machine.
let h: Harness;
beforeAll(async () => {
  await ensureDashboardBuilt();
  h = await startHarness({}, { signInLimits: { perAccount: 3, perIp: 1000 } });
});
afterAll(() => h.close());

/** A browser-like client of /app/api: keeps cookies, sends Origin and the CSRF token. */
class Browser {
  cookies = new Map<string, string>();
  csrf = '';
  constructor(readonly origin = h.url) {}
  async call(method: string, p: string, body?: unknown, o: { origin?: string | null; csrf?: string | null } = {}) {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const origin = o.origin === undefined ? this.origin : o.origin;
    if (origin && method !== 'GET') headers.origin = origin;
    const csrf = o.csrf === undefined ? this.csrf : o.csrf;
    if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${h.url}/app/api${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const [k, v] = pair!.split('=') as [string, string];
      if (v === '' || /Max-Age=0/.test(c)) this.cookies.delete(k);
      else this.cookies.set(k, v);
    }
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined, headers: res.headers };
  }
  async start() {
    const s = await this.call('GET', '/session');
    this.csrf = s.body.csrfToken;
    return s;
  }
  async signIn(email: string, password: string) {
    await this.start();
    const r = await this.call('POST', '/sign-in', { email, password });
    if (r.status === 200) this.csrf = r.body.csrfToken;
    return r;
  }
}

async function member(accountId: string, email: string, password = 'correct horse battery') {
  const inv = await h.admin('POST', '/users/invites', { email, accountId });
  expect(inv.status).toBe(201);
  const b = new Browser();
  await b.start();
  const token = new URL(inv.body.link).hash.slice(1);
  const accepted = await b.call('POST', '/invite/accept', { token, password });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  b.csrf = accepted.body.csrfToken;
  return b;
}

describe('dashboard sessions', () => {
  it('an invite sets a password once; the session cookie is HttpOnly and SameSite=Lax; sign-out ends it on the server', { timeout: 180_000 }, async () => {
    const { accountId } = await h.account('starter', 'Acme');
    const inv = await h.admin('POST', '/users/invites', { email: 'Ana@Example.com', accountId });
    expect(inv.body.link).toMatch(new RegExp(`^${h.url}/invite#cfi_`));
    expect(new Date(inv.body.expiresAt).getTime() - Date.now()).toBeGreaterThan(71.9 * 3600_000);
    const token = new URL(inv.body.link).hash.slice(1);

    const b = new Browser();
    await b.start();
    expect((await b.call('POST', '/invite/info', { token })).body.email).toBe('ana@example.com');
    const short = await b.call('POST', '/invite/accept', { token, password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.error.details[0].path).toBe('password');
    const ok = await b.call('POST', '/invite/accept', { token, password: 'a long enough password' });
    expect(ok.status).toBe(200);
    const setCookie = ok.headers.getSetCookie().find((c) => c.startsWith('cf_session='))!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).not.toMatch(/Secure/); // plain http on loopback
    b.csrf = ok.body.csrfToken;
    expect((await b.call('POST', '/invite/accept', { token, password: 'a long enough password' })).status).toBe(404);

    const other = new Browser();
    expect((await other.signIn('ana@example.com', 'a long enough password')).status).toBe(200);
    const session = await other.call('GET', '/session');
    expect(session.body.user.email).toBe('ana@example.com');
    expect(session.body.account.id).toBe(accountId);
    const stolen = new Map(other.cookies);
    expect((await other.call('POST', '/sign-out')).status).toBe(204);
    // The old cookie, replayed, no longer works: the session ended on the server.
    const replay = new Browser();
    replay.cookies = stolen;
    expect((await replay.call('GET', '/keys')).status).toBe(401);
    expect((await replay.call('GET', '/session')).body.user).toBeNull();
  });

  it('refuses a cross-origin POST and a POST without the CSRF token', { timeout: 180_000 }, async () => {
    const { accountId } = await h.account('free', 'Csrf');
    const b = await member(accountId, 'csrf@example.com');
    expect((await b.call('POST', '/keys', { name: 'x' }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await b.call('POST', '/keys', { name: 'x' }, { origin: null })).status).toBe(403);
    expect((await b.call('POST', '/keys', { name: 'x' }, { csrf: null })).status).toBe(403);
    expect((await b.call('POST', '/keys', { name: 'x' }, { csrf: 'wrong' })).status).toBe(403);
    expect((await b.call('GET', '/keys')).body.keys).toHaveLength(1); // the key from h.account only
    expect((await b.call('POST', '/keys', { name: 'x' })).status).toBe(201);
  });

  it('rate-limits sign-in per account: after the limit even the right password is refused with 429', { timeout: 180_000 }, async () => {
    const { accountId } = await h.account('free', 'Limits');
    await member(accountId, 'limited@example.com', 'the right password');
    const b = new Browser();
    for (let i = 0; i < 3; i++) expect((await b.signIn('limited@example.com', 'wrong password!')).status).toBe(401);
    const locked = await b.signIn('limited@example.com', 'the right password');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(locked.body.error.code).toBe('rate_limited');
  });

  it("a member of another account sees none of this account's jobs, keys or secret through the JSON routes", async () => {
    const a = await h.account('starter', 'A');
    const bAcc = await h.account('starter', 'B');
    const alice = await member(a.accountId, 'alice@a.example');
    const bob = await member(bAcc.accountId, 'bob@b.example');
    const aKeys = (await alice.call('GET', '/keys')).body.keys as { id: string; prefix: string }[];
    const aSecret = (await alice.call('GET', '/webhook-secret')).body.secret as string;
    const bobKeys = await bob.call('GET', '/keys');
    expect(JSON.stringify(bobKeys.body)).not.toContain(aKeys[0]!.prefix);
    expect((await bob.call('GET', '/webhook-secret')).body.secret).not.toBe(aSecret);
    expect((await bob.call('POST', `/keys/${aKeys[0]!.id}/revoke`)).status).toBe(404);
    // Alice's key still works.
    expect((await a.api('GET', '/v1/automation-jobs')).status).toBe(200);
    // Bob cannot see or cancel a job of A (404, exactly like a missing one), nor list it.
    const up = await a.api('POST', '/v1/automation-jobs/uploads', { fileName: 'a.mp4', sizeBytes: 10 });
    expect(up.status).toBe(201);
    const job = await a.api('POST', '/v1/automation-jobs', { videoUrl: 'https://videos.example.com/a.mp4', templateId: 'karaoke' });
    expect(job.status).toBe(202);
    expect((await alice.call('GET', `/v1/automation-jobs/${job.body.id}`)).status).toBe(200);
    expect((await bob.call('GET', `/v1/automation-jobs/${job.body.id}`)).status).toBe(404);
    expect((await bob.call('POST', `/v1/automation-jobs/${job.body.id}/cancel`)).status).toBe(404);
    expect((await bob.call('GET', `/v1/automation-jobs/${job.body.id}/webhook-deliveries`)).status).toBe(404);
    expect((await bob.call('GET', '/jobs')).body.jobs).toEqual([]);
    expect((await alice.call('GET', '/jobs?status=queued')).body.jobs.map((j: { id: string }) => j.id)).toEqual([job.body.id]);
    expect((await alice.call('GET', '/jobs?status=succeeded')).body.jobs).toEqual([]);
    // Members are not administrators.
    expect((await bob.call('GET', '/admin/accounts')).status).toBe(403);
    expect((await bob.call('GET', '/admin/nodes')).status).toBe(403);
  });

  it('serves the pages with a strict CSP and falls back to index.html for client routes', async () => {
    const res = await fetch(`${h.url}/jobs/some-id`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    expect(html).not.toMatch(/<script>(?!<\/script>)/);
    expect((await fetch(`${h.url}/v1/nope`)).status).toBe(401);
    expect((await fetch(`${h.url}/assets/missing.js`)).status).toBe(404);
  });
});

describe('session expiry', () => {
  it('ends a session after 2 h idle, and after 24 h even when active', { timeout: 180_000 }, async () => {
    let t = Date.parse('2026-03-02T08:00:00.000Z');
    const clock = await startHarness({}, { now: () => new Date(t) });
    try {
      const a = await clock.admin('POST', '/accounts', { name: 'Clock', plan: 'free' });
      const inv = await clock.admin('POST', '/users/invites', { email: 'clock@example.com', accountId: a.body.id });
      const b = new Browser(clock.url);
      const call = (m: string, p: string, body?: unknown) =>
        fetch(`${clock.url}/app/api${p}`, {
          method: m,
          headers: {
            cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
            origin: clock.url,
            'x-csrf-token': b.csrf,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        });
      const accept = await call('POST', '/invite/accept', { token: new URL(inv.body.link).hash.slice(1), password: 'tick tock timepiece' });
      expect(accept.status).toBe(403); // no CSRF token yet: the page first asks /session
      const s = await fetch(`${clock.url}/app/api/session`);
      b.cookies.set('cf_csrf', /cf_csrf=([^;]+)/.exec(s.headers.get('set-cookie')!)![1]!);
      b.csrf = ((await s.json()) as { csrfToken: string }).csrfToken;
      const ok = await call('POST', '/invite/accept', { token: new URL(inv.body.link).hash.slice(1), password: 'tick tock timepiece' });
      expect(ok.status).toBe(200);
      b.cookies.set('cf_session', /cf_session=([^;]+)/.exec(ok.headers.get('set-cookie')!)![1]!);
      t += 2 * 3600_000 - 60_000;
      expect((await call('GET', '/keys')).status).toBe(200);
      t += 2 * 3600_000 - 60_000; // 1 min short of idle since the last request
      expect((await call('GET', '/keys')).status).toBe(200);
      t += 2 * 3600_000 + 1000;
      expect((await call('GET', '/keys')).status).toBe(401);

      const again = await call('POST', '/sign-in', { email: 'clock@example.com', password: 'tick tock timepiece' });
      expect(again.status).toBe(200);
      b.cookies.set('cf_session', /cf_session=([^;]+)/.exec(again.headers.get('set-cookie')!)![1]!);
      for (let i = 0; i < 23; i++) {
        t += 3600_000;
        expect((await call('GET', '/keys')).status).toBe(200);
      }
      t += 3600_000;
      expect((await call('GET', '/keys')).status).toBe(401);
    } finally {
      await clock.close();
    }
  });
});

describe('captionfarm admin users', () => {
  const cli = (...args: string[]) => runCliAsLocalAdmin({ url: h.url, dataDir: h.dataDir }, ...args);

  it('invites (a one-time link), lists and removes members; removal ends their sessions', { timeout: 180_000 }, async () => {
    const { accountId } = await h.account('free', 'Cli');
    const inv = await cli('admin', 'users', 'invite', '--account', accountId, '--email', 'cli@example.com');
    expect(inv.code, inv.stderr).toBe(0);
    const link = /^(http\S+\/invite#cfi_\S+)$/m.exec(inv.stdout)?.[1];
    expect(link).toBeDefined();
    const b = new Browser();
    await b.start();
    expect((await b.call('POST', '/invite/accept', { token: new URL(link!).hash.slice(1), password: 'password from cli' })).status).toBe(200);

    const admin = await cli('admin', 'users', 'invite', '--email', 'ops@example.com', '--admin', '--json');
    expect(JSON.parse(admin.stdout).user).toMatchObject({ admin: true, accountId: null, active: false });
    expect((await cli('admin', 'users', 'invite', '--email', 'nobody@example.com')).code).toBe(2);

    const listed = JSON.parse((await cli('admin', 'users', 'list', '--account', accountId, '--json')).stdout) as { email: string; active: boolean }[];
    expect(listed).toEqual([expect.objectContaining({ email: 'cli@example.com', active: true })]);
    expect((await b.call('GET', '/keys')).status).toBe(200);
    expect((await cli('admin', 'users', 'remove', '--user', 'cli@example.com')).code).toBe(0);
    expect((await b.call('GET', '/keys')).status).toBe(401);
  });
});
