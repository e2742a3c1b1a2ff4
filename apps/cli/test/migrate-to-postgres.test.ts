import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { COPIED_TABLES, openDatabase } from '@captionfarm/db';
import { freshTestDatabase, testDatabaseServerUrl, type TestDatabase } from '@captionfarm/db/testing';
import { createControlPlane, loadConfig, type ControlPlane } from '@captionfarm/control-plane';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFor, testLookup } from '../../control-plane/test/harness.ts';
import { runCliAsLocalAdmin } from './cli-process.ts';

// An embedded (SQLite) farm with a bit of everything, copied by the real CLI into a real
// PostgreSQL, then served from it. PostgreSQL only (CAPTIONFARM_TEST_DATABASE_URL).
const server = testDatabaseServerUrl();

describe.skipIf(!server)('captionfarm admin migrate-to-postgres', { timeout: 240_000 }, () => {
  let dataDir: string;
  let target: TestDatabase;
  let cp: ControlPlane | undefined;
  const start = async (env: Record<string, string>) => {
    cp = await createControlPlane(loadConfig({ CAPTIONFARM_DATA_DIR: dataDir, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0', ...env }), {
      lookup: testLookup,
    });
    const url = await cp.listen(0, '127.0.0.1');
    return { url, admin: apiFor(url, cp.adminToken) };
  };
  const stop = async () => {
    await cp?.close();
    cp = undefined;
  };
  const seen: { key: string; jobIds: string[]; accountId: string } = { key: '', jobIds: [], accountId: '' };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'cf-migrate-'));
    target = await freshTestDatabase();
    // The embedded farm: SQLite in the data dir.
    const { url, admin } = await start({});
    const acc = await admin('POST', '/admin/v1/accounts', { name: 'Studio', plan: 'pro' });
    seen.accountId = acc.body.id;
    seen.key = (await admin('POST', `/admin/v1/accounts/${acc.body.id}/keys`)).body.key;
    await admin('POST', `/admin/v1/accounts/${acc.body.id}/minutes`, { minutes: 7, note: 'welcome' });
    await admin('POST', '/admin/v1/agents/tokens', { name: 'gpu-1' });
    await admin('POST', '/admin/v1/users/invites', { accountId: acc.body.id, email: 'editor@studio.test' });
    const api = apiFor(url, seen.key);
    expect((await api('POST', '/v1/templates', { id: 'brand-yellow', name: 'Brand yellow', fill: '#FFD400' })).status).toBe(201);
    for (let i = 0; i < 4; i++) {
      const job = await api('POST', '/v1/automation-jobs', {
        videoUrl: 'https://v.example.com/a.mp4',
        templateId: 'brand-yellow',
        webhookUrl: 'https://hooks.example.com/cf',
      });
      expect(job.status).toBe(202);
      seen.jobIds.push(job.body.id);
    }
    // A cancelled job: a refund in the ledger and a webhook delivery.
    expect((await api('POST', `/v1/automation-jobs/${seen.jobIds[0]}/cancel`)).body.status).toBe('cancelled');
    await stop();
  });
  afterAll(async () => {
    await stop();
    await target?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('copies every table row for row; the farm then serves the same keys, jobs, ledger and templates from PostgreSQL', async () => {
    const run = await runCliAsLocalAdmin({ url: 'http://127.0.0.1:9', dataDir }, 'admin', 'migrate-to-postgres', '--to', target.url!, '--json');
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { copied: Record<string, number> };
    expect(report.copied).toMatchObject({ accounts: 1, api_keys: 1, jobs: 4, templates: 1, agent_tokens: 1, user_invites: 1 });
    expect(report.copied.webhook_deliveries).toBeGreaterThanOrEqual(1);

    // Row for row, every table.
    const src = await openDatabase({ path: path.join(dataDir, 'captionfarm.sqlite') });
    const dst = await openDatabase({ url: target.url!, poolSize: 2 });
    try {
      for (const table of COPIED_TABLES) {
        const order = table === 'job_transcripts' ? 'job_id' : 'id';
        const a = (await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by ${sql.ref(order)}`.execute(src)).rows;
        const b = (await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by ${sql.ref(order)}`.execute(dst)).rows;
        expect(b, table).toEqual(a);
        expect(report.copied[table], table).toBe(a.length);
      }
    } finally {
      await src.destroy();
      await dst.destroy();
    }

    // The same data dir (secrets, built-in store) on PostgreSQL.
    const { admin, url } = await start(target.env);
    const api = apiFor(url, seen.key);
    const list = await api('GET', '/v1/automation-jobs?limit=10');
    expect(list.status).toBe(200);
    expect(list.body.jobs.map((j: { id: string }) => j.id)).toEqual([...seen.jobIds].reverse());
    expect(list.body.jobs.at(-1).status).toBe('cancelled');
    const before = (await admin('GET', `/admin/v1/accounts/${seen.accountId}/minutes`)).body;
    // New rows after the copied ones: a job, its ledger row (an identity id past the copied ones).
    const fresh = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/b.mp4', templateId: 'brand-yellow' });
    expect(fresh.status).toBe(202);
    const after = (await admin('GET', `/admin/v1/accounts/${seen.accountId}/minutes`)).body;
    expect(after.ledger.length).toBe(before.ledger.length + 1);
    expect(after.ledger[0].jobId).toBe(fresh.body.id);
    expect((await api('GET', '/v1/automation-jobs?limit=1')).body.jobs[0].id).toBe(fresh.body.id);
    await stop();

    // A second run finds the target in use and copies nothing.
    const again = await runCliAsLocalAdmin({ url: 'http://127.0.0.1:9', dataDir }, 'admin', 'migrate-to-postgres', '--to', target.url!);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('not empty');
  });
});
