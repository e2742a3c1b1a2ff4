import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBodySchema } from '@captionfarm/contracts';
import { ensureDashboardBuilt } from '../../dashboard/test/build.ts';
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
