import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshTestDatabase, type TestDatabase } from '@captionfarm/db/testing';
import { createControlPlane, loadConfig, type ControlPlane } from '../../../apps/control-plane/src/index.ts';
import { apiFor, testLookup, until } from '../../../apps/control-plane/test/harness.ts';
import { createTestCertificates, type TestCertificates } from '../../net/test/helpers/test-ca.ts';
import { WebhookVerificationError, createClient, verifyWebhook, type Job } from '../src/index.ts';

/**
 * The README's express receiver, for real: a control plane on loopback delivers a job's webhook
 * over HTTPS (test CA) to an express app with express.raw(), which verifies it with the SDK.
 */
let certs: TestCertificates;
let cp: ControlPlane;
let dataDir: string;
let testDb: TestDatabase;
let url: string;
beforeAll(async () => {
  certs = await createTestCertificates();
  dataDir = await mkdtemp(path.join(tmpdir(), 'cf-sdk-hooks-'));
  testDb = await freshTestDatabase();
  const config = Object.freeze({
    ...loadConfig({ CAPTIONFARM_DATA_DIR: dataDir, CAPTIONFARM_LOG: 'silent', CAPTIONFARM_EMBEDDED_AGENT: '0', ...testDb.env }),
    unsafeTestNetwork: { allowLoopback: true as const, ca: certs.ca },
  });
  cp = await createControlPlane(config, { lookup: testLookup, webhookTimings: { pollIntervalMs: 20 } });
  url = await cp.listen(0, '127.0.0.1');
});
afterAll(async () => {
  await cp.close();
  await testDb.drop();
  certs.cleanup();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a webhook from the control plane, verified by the README receiver', () => {
  it('verifies the delivery of a cancelled job and rejects a forged one', async () => {
    const admin = apiFor(url, cp.adminToken);
    const account = (await admin('POST', '/admin/v1/accounts', { name: 'hooks', plan: 'pro' })).body as { id: string };
    const { key } = (await admin('POST', `/admin/v1/accounts/${account.id}/keys`)).body as { key: string };
    const { secret } = (await admin('GET', `/admin/v1/accounts/${account.id}/webhook-secret`)).body as { secret: string };

    const received: Job[] = [];
    const rejected: string[] = [];
    const app = express();
    app.post('/captionfarm', express.raw({ type: '*/*' }), (req, res) => {
      let job: Job;
      try {
        ({ job } = verifyWebhook({ body: req.body as Buffer, headers: req.headers, secret }));
      } catch (err) {
        if (err instanceof WebhookVerificationError) {
          rejected.push(err.code);
          res.status(400).send(err.code);
          return;
        }
        throw err;
      }
      res.status(204).end();
      if (!received.some((j) => j.id === job.id)) received.push(job);
    });
    const server = createServer({ key: certs.key, cert: certs.cert }, app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const hookUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/captionfarm`;
    try {
      const client = createClient({ baseUrl: url, apiKey: key });
      const job = await client.createJob({ videoUrl: 'https://cdn.example.com/talk.mp4', templateId: 'karaoke', webhookUrl: hookUrl });
      const cancelled = await client.cancelJob(job.id);
      const [delivered] = await until(async () => (received.length > 0 ? received : undefined), 15_000, 'the webhook');
      expect(delivered).toEqual(cancelled);

      const forged = await new Promise<number>((resolve, reject) => {
        const req = request(
          hookUrl,
          {
            method: 'POST',
            ca: certs.ca,
            headers: {
              'webhook-id': 'msg_x',
              'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
              'webhook-signature': 'v1,AAAA',
              'content-type': 'application/json',
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(cancelled));
      });
      expect(forged).toBe(400);
      expect(rejected).toEqual(['invalid_signature']);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
