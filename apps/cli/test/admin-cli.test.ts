import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../../control-plane/test/harness.ts';
import { runCliAsLocalAdmin } from './cli-process.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const cli = (...args: string[]) => runCliAsLocalAdmin({ url: h.url, dataDir: h.dataDir }, ...args);

// Each call starts a real CLI process (tsx): a few seconds each on a loaded 2-core machine.
describe('captionfarm admin', { timeout: 240_000 }, () => {
  it('manages an account end to end with --json output', async () => {
    const created = await cli('admin', 'accounts', 'create', '--name', 'Acme Films', '--plan', 'starter', '--json');
    expect(created.code, created.stderr).toBe(0);
    const { id } = JSON.parse(created.stdout) as { id: string };
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const key = JSON.parse((await cli('admin', 'keys', 'create', '--account', id, '--json')).stdout) as { key: string; id: string };
    expect(key.key).toMatch(/^cf_live_[0-9A-Za-z]{43}$/);
    const res = await fetch(`${h.url}/v1/automation-jobs`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(res.status).toBe(200);

    const listed = JSON.parse((await cli('admin', 'accounts', 'list', '--json')).stdout) as { id: string; plan: string; minutesBalance: number }[];
    expect(listed.find((a) => a.id === id)).toMatchObject({ plan: 'starter', minutesBalance: 300 });

    expect((await cli('admin', 'minutes', 'grant', '--account', id, '--minutes', '45', '--json')).code).toBe(0);
    const shown = JSON.parse((await cli('admin', 'minutes', 'show', '--account', id, '--json')).stdout) as { balance: number; ledger: { kind: string }[] };
    expect(shown.balance).toBe(345);
    expect(shown.ledger.map((l) => l.kind)).toEqual(['grant', 'monthly_reset']);

    expect((await cli('admin', 'accounts', 'set-plan', '--account', id, '--plan', 'pro', '--json')).code).toBe(0);
    expect((await h.admin('GET', `/accounts/${id}`)).body.plan).toBe('pro');

    const keys = JSON.parse((await cli('admin', 'keys', 'list', '--account', id, '--json')).stdout) as {
      id: string;
      prefix: string;
      revokedAt: string | null;
    }[];
    expect(keys).toHaveLength(1);
    expect(key.key.startsWith(keys[0]!.prefix)).toBe(true);
    expect(JSON.stringify(keys)).not.toContain(key.key);
    expect((await cli('admin', 'keys', 'revoke', '--key', key.id, '--json')).code).toBe(0);
    expect((await fetch(`${h.url}/v1/automation-jobs`, { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(401);

    const secret = JSON.parse((await cli('admin', 'webhook-secret', 'show', '--account', id, '--json')).stdout) as { secret: string };
    expect(secret.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const rotated = JSON.parse((await cli('admin', 'webhook-secret', 'rotate', '--account', id, '--json')).stdout) as { secret: string; previous: string };
    expect(rotated.previous).toBe(secret.secret);
    expect(rotated.secret).not.toBe(secret.secret);
    const after = JSON.parse((await cli('admin', 'webhook-secret', 'show', '--account', id, '--json')).stdout) as { secret: string; previous: string };
    expect(after).toMatchObject({ secret: rotated.secret, previous: secret.secret });
  });

  it('prints human-readable tables without --json', async () => {
    await cli('admin', 'accounts', 'create', '--name', 'Table Co');
    const out = await cli('admin', 'accounts', 'list');
    expect(out.stdout).toMatch(/^ID\s+NAME\s+PLAN\s+MINUTESBALANCE/m);
    expect(out.stdout).toContain('Table Co');
  });

  it('explains errors in one line with a non-zero exit', async () => {
    const missing = await cli('admin', 'accounts', 'create', '--json');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--name is required');
    const badPlan = await cli('admin', 'accounts', 'create', '--name', 'x', '--plan', 'gold');
    expect(badPlan.code).toBe(1);
    expect(badPlan.stderr).toContain('invalid_request');
    const unknown = await cli('admin', 'minutes', 'show', '--account', '00000000-0000-4000-8000-000000000000');
    expect(unknown.stderr).toContain('not_found');
    const down = await runCliAsLocalAdmin({ url: 'http://127.0.0.1:9', dataDir: h.dataDir }, 'admin', 'accounts', 'list');
    expect(down.code).not.toBe(0);
    expect(down.stderr).toContain('cannot reach the control plane');
  });
});
