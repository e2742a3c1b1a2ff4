import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createControlPlane, loadConfig, type ControlPlane } from '@captionfarm/control-plane';
import { freshTestDatabase, type TestDatabase } from '@captionfarm/db/testing';
import { createTestCertificates, type TestCertificates } from '../../../packages/net/test/helpers/test-ca.ts';
import { startReceiver, type Receiver } from '../../../packages/net/test/helpers/receiver.ts';
import { apiFor, testLookup, until, type Api } from '../../control-plane/test/harness.ts';
import { adminWebhooksHandlers } from '../src/commands/admin-webhooks.ts';
import { requestJson } from '../src/http.ts';
import { runCliAsLocalAdmin } from './cli-process.ts';

let certs: TestCertificates;
let dataDir: string;
let testDb: TestDatabase | undefined;
let cp: ControlPlane;
let url: string;
let receiver: Receiver;
let api: Api;
let templateId: string;

// A control plane built with the test-only loopback switch (a config object, never env), and a
// real HTTPS receiver on loopback that the webhooks go to.
beforeAll(async () => {
  certs = await createTestCertificates();
  dataDir = await mkdtemp(path.join(tmpdir(), 'cf-cli-wh-'));
  testDb = await freshTestDatabase();
  const config = {
    ...loadConfig({ CAPTIONFARM_DATA_DIR: dataDir, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0', ...testDb.env }),
    unsafeTestNetwork: { allowLoopback: true as const, ca: certs.ca },
  };
  cp = await createControlPlane(config, { lookup: testLookup, webhookTimings: { pollIntervalMs: 20 } });
  url = await cp.listen(0, '127.0.0.1');
  receiver = await startReceiver(certs, (_req, res) => {
    res.writeHead(200).end();
  });
  const admin = apiFor(url, cp.adminToken);
  const account = await admin('POST', '/admin/v1/accounts', { name: 'cli hooks', plan: 'pro' });
  const key = await admin('POST', `/admin/v1/accounts/${account.body.id}/keys`);
  api = apiFor(url, key.body.key);
  templateId = (await api('GET', '/v1/templates')).body.templates[0].id;
});
afterAll(async () => {
  await receiver?.close();
  await cp?.close();
  await testDb?.drop();
  await rm(dataDir, { recursive: true, force: true });
  certs?.cleanup();
});

const cli = (...args: string[]) => runCliAsLocalAdmin({ url, dataDir }, ...args);

async function deliveredJob(): Promise<{ jobId: string; deliveryId: string }> {
  const before = receiver.requests.length;
  const created = await api('POST', '/v1/automation-jobs', {
    videoUrl: 'https://videos.example.com/a.mp4',
    templateId,
    webhookUrl: `https://127.0.0.1:${receiver.port}/hook`,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  expect((await api('POST', `/v1/automation-jobs/${created.body.id}/cancel`)).status).toBe(200);
  await receiver.waitForRequests(before + 1, 15_000);
  const d = await until(
    async () => {
      const res = await api('GET', `/v1/automation-jobs/${created.body.id}/webhook-deliveries`);
      return res.body.deliveries.find((x: { state: string }) => x.state === 'delivered');
    },
    15_000,
    'delivered',
  );
  return { jobId: created.body.id, deliveryId: d.id };
}

describe('captionfarm admin webhooks', () => {
  it("lists a job's deliveries with their attempts, as JSON and as a table", async () => {
    const { jobId, deliveryId } = await deliveredJob();
    const listed = await cli('admin', 'webhooks', 'list', '--job', jobId, '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const deliveries = JSON.parse(listed.stdout) as {
      id: string;
      jobId: string;
      state: string;
      attempts: { attempt: number; statusCode: number; outcome: string }[];
    }[];
    expect(deliveries).toEqual([expect.objectContaining({ id: deliveryId, jobId, state: 'delivered', attemptCount: 1 })]);
    expect(deliveries[0]!.attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, outcome: 'success' })]);

    const human = await cli('admin', 'webhooks', 'list', '--job', jobId);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`${deliveryId}  delivered`);
    expect(human.stdout).toMatch(/^ATTEMPT\s+STARTEDAT\s+STATUS\s+OUTCOME/m);
    expect(human.stdout).toMatch(/^1\s+\S+\s+200\s+success/m);
  });

  it('redelivers by job: the receiver gets the same webhook-id and body again', async () => {
    const { jobId, deliveryId } = await deliveredJob();
    const first = receiver.requests.at(-1)!;
    const count = receiver.requests.length;
    const out = await cli('admin', 'webhooks', 'redeliver', '--job', jobId, '--json');
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ id: deliveryId, state: 'pending' });
    const [again] = (await receiver.waitForRequests(count + 1, 15_000)).slice(count);
    expect(again!.headers['webhook-id']).toBe(deliveryId);
    expect(again!.body).toBe(first.body);
    const d = await until(
      async () => {
        const res = await api('GET', `/v1/automation-jobs/${jobId}/webhook-deliveries`);
        const x = res.body.deliveries[0];
        return x.state === 'delivered' && x.attemptCount === 2 ? x : undefined;
      },
      15_000,
      'redelivered',
    );
    expect(d.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2]);
  });

  it('redelivers by delivery id (the --delivery handler)', async () => {
    const { deliveryId } = await deliveredJob();
    const count = receiver.requests.length;
    const call = (method: string, p: string, body?: unknown) => requestJson({ url, method, path: `/admin/v1${p}`, token: cp.adminToken, body });
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      await adminWebhooksHandlers['webhooks redeliver']!({ values: { delivery: deliveryId }, call, json: false });
      expect(String(write.mock.calls[0]?.[0])).toContain(`re-queued ${deliveryId} (same webhook-id)`);
    } finally {
      write.mockRestore();
    }
    await receiver.waitForRequests(count + 1, 15_000);
    expect(receiver.requests.at(-1)!.headers['webhook-id']).toBe(deliveryId);
  });

  it('explains mistakes in one line with a non-zero exit', async () => {
    const missing = await cli('admin', 'webhooks', 'list');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--job is required');

    const plain = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://videos.example.com/b.mp4', templateId });
    const none = await cli('admin', 'webhooks', 'redeliver', '--job', plain.body.id);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`job ${plain.body.id} has no webhook delivery`);
    const empty = await cli('admin', 'webhooks', 'list', '--job', plain.body.id);
    expect(empty.stdout).toContain('(no webhook deliveries');

    const call = (method: string, p: string, body?: unknown) => requestJson({ url, method, path: `/admin/v1${p}`, token: cp.adminToken, body });
    await expect(adminWebhooksHandlers['webhooks redeliver']!({ values: {}, call, json: true })).rejects.toThrow(/exactly one of --job or --delivery/);
    await expect(adminWebhooksHandlers['webhooks redeliver']!({ values: { delivery: 'msg_nope' }, call, json: true })).rejects.toThrow(
      /not_found: No webhook delivery msg_nope/,
    );
  });
});
