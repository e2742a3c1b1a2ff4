import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../../control-plane/test/harness.ts';
import { cliPiped } from './cli-process.ts';

let h: Harness;
let env: Record<string, string>;
let ids: string[];
let api: Awaited<ReturnType<Harness['account']>>['api'];
beforeAll(async () => {
  h = await startHarness();
  const a = await h.account('pro');
  api = a.api;
  env = { CAPTIONFARM_URL: h.url, CAPTIONFARM_API_KEY: a.key };
  ids = [];
  for (let i = 0; i < 23; i++)
    ids.push((await api('POST', '/v1/automation-jobs', { videoUrl: `https://cdn.example.com/${i}.mp4`, templateId: 'karaoke' })).body.id);
});
afterAll(() => h.close());

describe('captionfarm jobs', () => {
  it('list: the newest 20 as a table, a hint that there are more; --limit 0 pages through all', async () => {
    const [table, all] = await Promise.all([cliPiped(['jobs', 'list'], env), cliPiped(['jobs', 'list', '--limit', '0', '--json'], env)]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+PHASE\s+PERCENT\s+TEMPLATE\s+FORMAT\s+CREATEDAT\s+FAILURE$/);
    expect(lines.slice(1, 21).map((l) => l.split(/\s+/)[0])).toEqual([...ids].reverse().slice(0, 20));
    expect(lines[1]).toMatch(/queued\s+queued\s+-\s+karaoke\s+mp4\s+\S+Z\s+-$/);
    expect(lines.at(-1)).toBe('(newest 20 shown; --limit N for more, --limit 0 for all)');

    expect(all.code, all.stderr).toBe(0);
    expect((JSON.parse(all.stdout) as { id: string }[]).map((j) => j.id)).toEqual([...ids].reverse());
  });

  it('get and cancel, as text and --json; cancel is idempotent', async () => {
    const id = ids[0]!;
    const got = await cliPiped(['jobs', 'get', id], env);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(new RegExp(`^id\\s+${id}$`, 'm'));
    expect(got.stdout).toMatch(/^status\s+queued$/m);
    expect(got.stdout).toMatch(/^failureCode\s+-$/m);

    const cancelled = await cliPiped(['jobs', 'cancel', id], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`cancelled job ${id} (its reserved minutes were refunded)\n`);
    const again = await cliPiped(['jobs', 'cancel', id, '--json'], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id, status: 'cancelled', phase: 'cancelled' });
    expect(JSON.parse((await cliPiped(['jobs', 'get', id, '--json'], env)).stdout).status).toBe('cancelled');
  });

  it('errors print the API error code', async () => {
    const { accountId, key } = await h.account('free');
    await h.admin('POST', `/accounts/${accountId}/minutes`, { minutes: -30 });
    const failed = (await (await h.account('free')).api('GET', '/v1/automation-jobs')).body;
    expect(failed.jobs).toEqual([]);
    const job = await fetch(`${h.url}/v1/automation-jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ videoUrl: 'https://cdn.example.com/x.mp4', templateId: 'karaoke' }),
    }).then((r) => r.json() as Promise<{ id: string; status: string }>);
    expect(job.status).toBe('queued'); // the spec's 202; the job fails with no minutes right after
    const own = { CAPTIONFARM_URL: h.url, CAPTIONFARM_API_KEY: key };
    const [notCancellable, missing, shownFailed] = await Promise.all([
      cliPiped(['jobs', 'cancel', job.id], own),
      cliPiped(['jobs', 'get', ids[1]!], own), // another account's job
      cliPiped(['jobs', 'get', job.id], own),
    ]);
    expect(notCancellable.code).toBe(1);
    expect(notCancellable.stderr).toMatch(/^captionfarm: job_not_cancellable: Job .* already failed.*\(HTTP 409, request req_/);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^captionfarm: not_found: No job .*\(HTTP 404/);
    expect(shownFailed.stdout).toMatch(/^failureCode\s+automation-minutes-exhausted$/m);
  });

  it('usage errors exit 2', async () => {
    const [noId, badLimit, unknown] = await Promise.all([
      cliPiped(['jobs', 'get'], env),
      cliPiped(['jobs', 'list', '--limit', 'lots'], env),
      cliPiped(['jobs', 'delete', 'x'], env),
    ]);
    expect([noId.code, badLimit.code, unknown.code]).toEqual([2, 2, 2]);
    expect(noId.stderr).toContain('give exactly one job ID');
    expect(badLimit.stderr).toContain('--limit must be a whole number');
    expect(unknown.stderr).toContain('unknown jobs command "delete"');
  });
});
