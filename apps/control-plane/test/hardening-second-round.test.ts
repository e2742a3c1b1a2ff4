import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema } from '@captionfarm/contracts';
import { ensureDashboardBuilt } from '../../dashboard/test/build.ts';
import { loadConfig } from '../src/index.ts';
import { startHarness, type Harness } from './harness.ts';

// Issue 40, second round: what an attacker/careless-client probe measured on main.
let h: Harness;
beforeAll(async () => {
  await ensureDashboardBuilt();
  h = await startHarness();
});
afterAll(() => h.close());

describe('operator-console pages (item 9)', () => {
  it('a reload of /admin/nodes, /admin/queue or /admin/accounts serves the page with its headers; /admin/v1 stays the API', async () => {
    for (const page of ['/admin/nodes', '/admin/queue', '/admin/accounts']) {
      const res = await fetch(`${h.url}${page}`, { headers: { accept: 'text/html' } });
      expect(res.status, page).toBe(200);
      expect(res.headers.get('content-type'), page).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy'), page).toContain("script-src 'self'");
      expect(res.headers.get('x-frame-options'), page).toBe('DENY');
      expect(await res.text(), page).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    }
    // The admin API answers JSON even to a browser that asks for HTML.
    const api = await fetch(`${h.url}/admin/v1/nodes`, { headers: { accept: 'text/html' } });
    expect(api.status).toBe(401);
    expect(ErrorBodySchema.parse(await api.json()).error.code).toBe('unauthenticated');
    expect((await h.admin('GET', '/nodes')).status).toBe(200);
  });
});

describe('text fields (item 13)', () => {
  const word = (text: string) => ({ videoUrl: 'https://videos.example.com/a.mp4', templateId: 'karaoke', transcript: { words: [{ text, start: 0, end: 1 }] } });

  it('refuses transcript words with C1 controls, only zero-width characters or a lone surrogate, and transcript.language "zz", with 400 and a details path', async () => {
    const { api } = await h.account('pro', 'texts');
    const refused = async (body: unknown, path: string) => {
      const res = await api('POST', '/v1/automation-jobs', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const err = ErrorBodySchema.parse(res.body).error;
      expect(err.code).toBe('invalid_request');
      expect((err.details as { path: string }[]).map((d) => d.path)).toContain(path);
    };
    for (const text of ['a\u0085b', 'x\u009b31m', '\u200b\u200b', '\u200d\ufeff\u2060', 'a\ud800', '\udc00'])
      await refused(word(text), 'transcript.words.0.text');
    await refused({ ...word('hello'), transcript: { language: 'zz', words: [{ text: 'hello', start: 0, end: 1 }] } }, 'transcript.language');
    // What the recognizer writes and exports stays accepted: punctuation and symbols alone, emoji, a joined emoji.
    for (const text of ['♪', '—', '🔥', '👩\u200d💻', 'héllo']) expect((await api('POST', '/v1/automation-jobs', word(text))).status, text).toBe(202);
  });

  it('refuses template names with NUL, newline or ESC, or only invisible characters, with 400 and a details path', async () => {
    const { api } = await h.account('pro', 'names');
    for (const [i, name] of ['a\u0000b', 'two\nlines', '\u001b[31mred', '\u200b', 'bad\ud800'].entries()) {
      const res = await api('POST', '/v1/templates', { id: `bad-name-${i}`, name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      const err = ErrorBodySchema.parse(res.body).error;
      expect(err.code).toBe('invalid_request');
      expect((err.details as { path: string }[]).map((d) => d.path)).toContain('name');
    }
    expect((await api('POST', '/v1/templates', { id: 'good-name', name: '  Brand 🔥  ' })).body.template.name).toBe('Brand 🔥');
  });
});

describe('route labels in /metrics (item 14)', () => {
  /** captionfarm_http_request_duration_seconds_count by "METHOD route status". */
  async function httpCounts(): Promise<Map<string, number>> {
    const text = await (await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${h.cp.adminToken}` } })).text();
    const counts = new Map<string, number>();
    for (const m of text.matchAll(/^captionfarm_http_request_duration_seconds_count\{method="([^"]+)",route="([^"]*)",status="(\d+)"\} (\d+)$/gm)) {
      counts.set(`${m[1]} ${m[2]} ${m[3]}`, Number(m[4]));
    }
    return counts;
  }
  /** The one label that the request `send` added a count to. */
  async function labelOf(send: () => Promise<Response | { status: number }>): Promise<string> {
    const before = await httpCounts();
    await send();
    const after = await httpCounts();
    const added = [...after].filter(([k, n]) => n !== (before.get(k) ?? 0) && !k.includes(' /metrics ')).map(([k]) => k);
    expect(added).toHaveLength(1);
    return added[0]!;
  }

  it("an error answer has its route's label, mount point included; a refusal before routing has its mount's", async () => {
    const { api, key } = await h.account('pro', 'metrics');
    const job = (await api('POST', '/v1/automation-jobs', { videoUrl: 'https://videos.example.com/m.mp4', templateId: 'karaoke' })).body;
    const missing = '00000000-0000-4000-8000-000000000000';
    const auth = { authorization: `Bearer ${key}` };
    // Express serves these (a query string keeps them off the hot path): success and error, one label.
    expect(await labelOf(() => api('GET', `/v1/automation-jobs/${job.id}?x=1`))).toBe('GET /v1/automation-jobs/:id 200');
    expect(await labelOf(() => api('GET', `/v1/automation-jobs/${missing}?x=1`))).toBe('GET /v1/automation-jobs/:id 404');
    expect(await labelOf(() => api('POST', '/v1/automation-jobs?x=1', { videoUrl: 'https://videos.example.com/m.mp4', templateId: 'nope' }))).toBe(
      'POST /v1/automation-jobs 400',
    );
    // The hot path (http/hot-routes.ts) labels as Express does.
    expect(await labelOf(() => api('GET', `/v1/automation-jobs/${missing}`))).toBe('GET /v1/automation-jobs/:id 404');
    expect(await labelOf(() => api('POST', '/v1/automation-jobs', { videoUrl: 'https://videos.example.com/m.mp4', templateId: 'nope' }))).toBe(
      'POST /v1/automation-jobs 400',
    );
    // Refused before routing: 401, 415, 413.
    expect(await labelOf(() => fetch(`${h.url}/v1/automation-jobs`))).toBe('GET /v1/* 401');
    expect(await labelOf(() => fetch(`${h.url}/v1/templates`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'x' }))).toBe(
      'POST /v1/* 415',
    );
    const big = JSON.stringify({ id: 'big', name: 'x'.repeat(200_000) });
    expect(await labelOf(() => fetch(`${h.url}/v1/templates`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: big }))).toBe(
      'POST /v1/* 413',
    );
    // A create's body is read as bytes and parsed in its route, on either path: no JSON is the route's 400.
    for (const path of ['/v1/automation-jobs', '/v1/automation-jobs?x=1']) {
      expect(await labelOf(() => fetch(`${h.url}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"a":' }))).toBe(
        'POST /v1/automation-jobs 400',
      );
    }
    expect(await labelOf(() => fetch(`${h.url}/admin/v1/accounts`))).toBe('GET /admin/v1/* 401');
    // No session: refused in /app/api's session checks, or in /app/api/v1's (the deepest mount reached).
    expect(await labelOf(() => fetch(`${h.url}/app/api/v1/automation-jobs`))).toMatch(/^GET \/app\/api(\/v1)?\/\* 401$/);
  });

  it("the dashboard's copy of the public routes keeps /app/api/v1 in its error answers' label", async () => {
    const { accountId } = await h.account('pro', 'metrics-dashboard');
    const invite = await h.admin('POST', '/users/invites', { email: 'metrics@example.com', accountId });
    expect(invite.status).toBe(201);
    const session = await fetch(`${h.url}/app/api/session`);
    const cookie = session.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const { csrfToken } = (await session.json()) as { csrfToken: string };
    const accepted = await fetch(`${h.url}/app/api/invite/accept`, {
      method: 'POST',
      headers: { cookie, origin: h.url, 'x-csrf-token': csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ token: new URL(invite.body.link).hash.slice(1), password: 'correct horse battery' }),
    });
    expect(accepted.status).toBe(200);
    const member = accepted.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const get = (p: string) => fetch(`${h.url}/app/api${p}`, { headers: { cookie: member } });
    expect(await labelOf(() => get('/v1/automation-jobs'))).toBe('GET /app/api/v1/automation-jobs 200');
    expect(await labelOf(() => get('/v1/automation-jobs/00000000-0000-4000-8000-000000000000'))).toBe('GET /app/api/v1/automation-jobs/:id 404');
  });
});

describe('__proto__ inside a style (item 15c)', () => {
  it('is refused with 400 and its details path, as at the top level', async () => {
    const { api } = await h.account('pro', 'proto');
    const job = '{"videoUrl":"https://videos.example.com/p.mp4","templateId":"karaoke"';
    const refused = async (p: string, body: string, path: string) => {
      const res = await api('POST', p, body, { 'content-type': 'application/json' });
      expect(res.status, body).toBe(400);
      const err = ErrorBodySchema.parse(res.body).error;
      expect(err.code).toBe('invalid_request');
      expect(err.details).toContainEqual({ path, message: 'unknown field' });
    };
    await refused('/v1/automation-jobs', `${job},"__proto__":{"fill":"#000000"}}`, '__proto__');
    await refused('/v1/automation-jobs', `${job},"style":{"__proto__":{"fill":"#000000"}}}`, 'style.__proto__');
    await refused('/v1/automation-jobs', `${job},"style":{"font":{"__proto__":{"size":3}}}}`, 'style.font.__proto__');
    await refused('/v1/templates/karaoke/preview', '{"style":{"__proto__":{"fill":"#000000"}}}', 'style.__proto__');
    expect((await api('POST', '/v1/automation-jobs', `${job},"style":{"fill":"#000000"}}`, { 'content-type': 'application/json' })).status).toBe(202);
  });
});

describe('Host allowlist of the dashboard API (item 15b)', () => {
  /** A request naming any Host (fetch will not send one of our choosing). */
  function call(url: string, o: { method?: string; host: string; headers?: Record<string, string>; body?: unknown }) {
    return new Promise<{ status: number; body: any; cookies: string[] }>((resolve, reject) => {
      const body = o.body === undefined ? undefined : JSON.stringify(o.body);
      const req = request(
        url,
        { method: o.method ?? 'GET', headers: { host: o.host, ...(body ? { 'content-type': 'application/json' } : {}), ...o.headers } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            text += d;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: /json/.test(res.headers['content-type'] ?? '') ? JSON.parse(text) : text,
              cookies: res.headers['set-cookie'] ?? [],
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
  const cookieOf = (cookies: string[]) => cookies.map((c) => c.split(';')[0]).join('; ');

  it('a DNS-rebinding page (Host evil.example, its own Origin) cannot sign in: 403 forbidden; loopback names and IP literals can', async () => {
    const { accountId } = await h.account('pro', 'rebinding');
    const invite = await h.admin('POST', '/users/invites', { email: 'rebind@example.com', accountId });
    const port = new URL(h.url).port;
    const legit = await call(`${h.url}/app/api/session`, { host: `127.0.0.1:${port}` });
    const accepted = await call(`${h.url}/app/api/invite/accept`, {
      method: 'POST',
      host: `127.0.0.1:${port}`,
      headers: { cookie: cookieOf(legit.cookies), origin: h.url, 'x-csrf-token': legit.body.csrfToken },
      body: { token: new URL(invite.body.link).hash.slice(1), password: 'correct horse battery' },
    });
    expect(accepted.status).toBe(200);

    // The attacker's page at http://evil.example:PORT, its name now resolving to this server.
    const evil = `evil.example:${port}`;
    const session = await call(`${h.url}/app/api/session`, { host: evil });
    expect(session.status).toBe(403);
    expect(ErrorBodySchema.parse(session.body).error.code).toBe('forbidden');
    const signIn = await call(`${h.url}/app/api/sign-in`, {
      method: 'POST',
      host: evil,
      headers: { cookie: cookieOf(legit.cookies), origin: `http://${evil}`, 'x-csrf-token': legit.body.csrfToken },
      body: { email: 'rebind@example.com', password: 'correct horse battery' },
    });
    expect(signIn.status).toBe(403);
    expect(ErrorBodySchema.parse(signIn.body).error.code).toBe('forbidden');

    for (const host of [`localhost:${port}`, `app.localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, '10.1.2.3', 'LOCALHOST.']) {
      expect((await call(`${h.url}/app/api/session`, { host })).status, host).toBe(200);
    }
    // The pages too (they would only fail on their first API call).
    const page = (host: string) => call(`${h.url}/jobs`, { host, headers: { accept: 'application/json, text/html' } });
    expect((await page(evil)).status).toBe(403);
    expect((await page(`localhost:${port}`)).status).toBe(200);
    const again = await call(`${h.url}/app/api/session`, { host: `localhost:${port}` });
    const signedIn = await call(`${h.url}/app/api/sign-in`, {
      method: 'POST',
      host: `localhost:${port}`,
      headers: { cookie: cookieOf(again.cookies), origin: `http://localhost:${port}`, 'x-csrf-token': again.body.csrfToken },
      body: { email: 'rebind@example.com', password: 'correct horse battery' },
    });
    expect(signedIn.status).toBe(200);
  });

  it("with CAPTIONFARM_PUBLIC_URL, its host and CAPTIONFARM_ALLOWED_HOSTS' names are answered, other names refused", async () => {
    // Its URL is the public one: listen on a port chosen here, to reach it directly.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const other = await startHarness({
      PORT: String(port),
      CAPTIONFARM_PUBLIC_URL: 'https://captions.example.com',
      CAPTIONFARM_ALLOWED_HOSTS: 'cf.internal, Backup.Example.org',
    });
    try {
      for (const [host, status] of [
        ['captions.example.com', 200],
        ['cf.internal:8080', 200],
        ['backup.example.org', 200],
        ['127.0.0.1', 200],
        ['captions.example.com.evil.example', 403],
        ['evil.example', 403],
      ] as const) {
        expect((await call(`http://127.0.0.1:${port}/app/api/session`, { host })).status, host).toBe(status);
      }
    } finally {
      await other.close();
    }
    expect(() => loadConfig({ CAPTIONFARM_ALLOWED_HOSTS: 'a b.example' })).toThrow(/CAPTIONFARM_ALLOWED_HOSTS/);
  });
});
