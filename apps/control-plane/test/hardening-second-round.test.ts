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
