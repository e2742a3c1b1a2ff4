import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, startHarness, type Harness } from './harness.ts';

// Issue 40 (hardening, second round): limits key on what the attacker controls, and a stranger's
// attempts cost no password hash. The harness trusts loopback as a proxy, so each test plays
// clients at distinct addresses with X-Forwarded-For, as a reverse proxy would send it.
let h: Harness;
const logged: { msg: string; extra: unknown }[] = [];
beforeAll(async () => {
  h = await startHarness(
    { CAPTIONFARM_TRUSTED_PROXIES: 'loopback' },
    { signInLimits: { perAccount: 3, perIp: 10 }, log: (msg, extra) => logged.push({ msg, extra }) },
  );
});
afterAll(() => h.close());

/** A browser-like client of /app/api behind the proxy, at `address`: cookies, Origin, CSRF token. */
class Browser {
  cookies = new Map<string, string>();
  csrf = '';
  constructor(readonly address: string) {}
  async call(method: string, p: string, body?: unknown) {
    const headers: Record<string, string> = { 'x-forwarded-for': this.address };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (method !== 'GET') {
      headers.origin = h.url;
      headers['x-csrf-token'] = this.csrf;
    }
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${h.url}/app/api${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    for (const c of res.headers.getSetCookie()) {
      const [k, v] = c.split(';')[0]!.split('=') as [string, string];
      if (v === '' || /Max-Age=0/.test(c)) this.cookies.delete(k);
      else this.cookies.set(k, v);
    }
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined, headers: res.headers };
  }
  async start() {
    this.csrf = (await this.call('GET', '/session')).body.csrfToken;
    return this;
  }
  async signIn(email: string, password: string) {
    const r = await this.call('POST', '/sign-in', { email, password });
    if (r.status === 200) this.csrf = r.body.csrfToken;
    return r;
  }
}

/** Limits count in fixed one-minute windows: a count that must land in one window starts with 20 s of it left at least. */
async function freshMinute() {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await new Promise((r) => setTimeout(r, left + 50));
}

async function invite(email: string, accountId: string) {
  const inv = await h.admin('POST', '/users/invites', { email, accountId });
  expect(inv.status).toBe(201);
  return new URL(inv.body.link).hash.slice(1);
}

async function member(address: string, accountId: string, email: string, password = 'correct horse battery') {
  const b = await new Browser(address).start();
  const accepted = await b.call('POST', '/invite/accept', { token: await invite(email, accountId), password });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  b.csrf = accepted.body.csrfToken;
  return b;
}

describe('API keys and tokens: a valid credential is answered whatever its address did', () => {
  it('25 failed API keys from one address leave a valid key from that address answered 200; its wrong keys get 429', async () => {
    const { key } = await h.account('free', 'Neighbour');
    await freshMinute();
    const from = { 'x-forwarded-for': '198.51.100.25' };
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await apiFor(h.url, `cf_live_wrong${i}`)('GET', '/v1/templates', undefined, from)).status);
    // 20 failures a minute (the default) are 401; past them the address's wrong keys are 429.
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
    expect((await apiFor(h.url, key)('GET', '/v1/templates', undefined, from)).status).toBe(200);
    // The hot route (GET job) and the admin API too.
    expect((await apiFor(h.url, key)('GET', '/v1/automation-jobs/00000000-0000-4000-8000-000000000000', undefined, from)).status).toBe(404);
    expect((await apiFor(h.url, h.cp.adminToken)('GET', '/admin/v1/accounts', undefined, from)).status).toBe(200);
    // Another address's wrong key is still a plain 401.
    expect((await apiFor(h.url, 'cf_live_wrong')('GET', '/v1/templates', undefined, { 'x-forwarded-for': '198.51.100.26' })).status).toBe(401);
  });

  it('X-Forwarded-For counts only from a trusted proxy: a client cannot pick a fresh address per guess', async () => {
    const direct = await startHarness({}, {});
    try {
      const statuses: number[] = [];
      await freshMinute();
      for (let i = 0; i < 22; i++)
        statuses.push((await apiFor(direct.url, 'cf_live_wrong')('GET', '/v1/templates', undefined, { 'x-forwarded-for': `203.0.113.${i}` })).status);
      expect(statuses.slice(20)).toEqual([429, 429]);
    } finally {
      await direct.close();
    }
  });
});

describe('dashboard sign-in and invites', () => {
  it('a made-up invite token is refused before any password hash, and the address is limited after 10', async () => {
    const before = h.cp.services.passwords.stats().hashed;
    const b = await new Browser('198.51.100.40').start();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => b.call('POST', '/invite/accept', { token: `cfi_made_up_token_${i}`, password: 'a long enough password' })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(404));
    expect(h.cp.services.passwords.stats().hashed).toBe(before);
    await b.call('POST', '/invite/info', { token: 'cfi_made_up_token_8' });
    await b.call('POST', '/invite/accept', { token: 'cfi_made_up_token_9', password: 'a long enough password' });
    const limited = await b.call('POST', '/invite/accept', { token: 'cfi_made_up_token_10', password: 'a long enough password' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address is not limited by it.
    const other = await new Browser('198.51.100.41').start();
    expect((await other.call('POST', '/invite/info', { token: 'cfi_made_up_token_11' })).status).toBe(404);
  });

  it('one address floods sign-in: one hash runs and two wait at most, the rest are refused at once (429); another address still signs in', {
    timeout: 120_000,
  }, async () => {
    const { accountId } = await h.account('free', 'Flood');
    await member('198.51.100.50', accountId, 'flooded@example.com');
    const stranger = await new Browser('198.51.100.51').start();
    const flood = Promise.all(Array.from({ length: 8 }, (_, i) => stranger.signIn(`nobody${i}@example.com`, 'not the password')));
    const owner = await new Browser('198.51.100.52').start();
    expect((await owner.signIn('flooded@example.com', 'correct horse battery')).status).toBe(200);
    const statuses = (await flood).map((r) => r.status);
    // 3 when the stranger's turn was free, 2 when the owner's hash held the slot as they arrived.
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(2);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  });

  it('wrong passwords lock that email out from that address only; the owner signs in from another; each failure is logged', { timeout: 120_000 }, async () => {
    const { accountId } = await h.account('free', 'Lockout');
    await member('198.51.100.60', accountId, 'operator@example.com');
    const attacker = await new Browser('198.51.100.61').start();
    for (let i = 0; i < 3; i++) expect((await attacker.signIn('operator@example.com', 'wrong password!')).status).toBe(401);
    const locked = await attacker.signIn('operator@example.com', 'correct horse battery');
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('rate_limited');
    const owner = await new Browser('198.51.100.62').start();
    expect((await owner.signIn('operator@example.com', 'correct horse battery')).status).toBe(200);
    const lines = logged.filter((l) => l.msg === 'dashboard sign-in failed' && (l.extra as { ip: string }).ip === '198.51.100.61');
    expect(lines).toHaveLength(3);
    expect(lines[0]!.extra).toMatchObject({ email: 'operator@example.com' });
    expect(JSON.stringify(lines)).not.toContain('wrong password');
  });

  it('refuses blank, one-character, email-like and common passwords with a details path', { timeout: 120_000 }, async () => {
    const { accountId } = await h.account('free', 'Passwords');
    const token = await invite('marie.curie@example.com', accountId);
    const b = await new Browser('198.51.100.70').start();
    for (const password of [' '.repeat(10), '\u200b'.repeat(12), 'aaaaaaaaaaaa', 'marie.curie@example.com', 'Marie.Curie1', 'Password123', 'qwertyuiop']) {
      const r = await b.call('POST', '/invite/accept', { token, password });
      expect(r.status, password).toBe(400);
      expect(r.body.error.details[0].path).toBe('password');
    }
    expect((await b.call('POST', '/invite/accept', { token, password: 'radium and polonium' })).status).toBe(200);
  });
});

describe('the dashboard counts against the plan', () => {
  it("a free member's /app/api/v1 calls share the account's 60 requests a minute with its API keys", { timeout: 120_000 }, async () => {
    const { accountId, api } = await h.account('free', 'Counted');
    const b = await member('198.51.100.80', accountId, 'counted@example.com');
    await freshMinute();
    const first = await b.call('GET', '/v1/templates');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    for (let i = 0; i < 40; i++) await b.call('GET', '/v1/templates');
    // 41 from the dashboard: the key's next request is the 42nd of the account's minute.
    const viaKey = await api('GET', '/v1/templates');
    expect(viaKey.headers.get('x-ratelimit-remaining')).toBe('18');
    let last = first;
    for (let i = 0; i < 19 && last.status !== 429; i++) last = await b.call('GET', '/v1/templates');
    expect(last.status).toBe(429);
    expect(last.body.error.code).toBe('rate_limited');
  });
});
