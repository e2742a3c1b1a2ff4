import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliverWebhook, WEBHOOK_DEADLINE_MS } from '../src/deliver.ts';
import { createSafeFetch, type SafeFetch, type SafeFetchFn } from '@captionfarm/net';
import { generateWebhookSecret } from '../src/signing.ts';
import { createFakeLookup } from '../../net/test/helpers/fake-dns.ts';
import { startReceiver, type Receiver } from '../../net/test/helpers/receiver.ts';
import { createTestCertificates, TEST_HOSTNAME, type TestCertificates } from '../../net/test/helpers/test-ca.ts';

let certs: TestCertificates;
let receiver: Receiver;
let fetch: SafeFetch;
const secret = generateWebhookSecret();
const body = JSON.stringify({ id: 'job_123', status: 'failed', failureCode: 'render-failed', failureReason: 'x' });
const now = (): number => Math.floor(Date.now() / 1000);
const url = (): string => `https://${TEST_HOSTNAME}:${receiver.port}/hooks/captionfarm`;

beforeAll(async () => {
  certs = await createTestCertificates();
  receiver = await startReceiver(certs, (_req, res) => res.end());
  fetch = createSafeFetch({ allowLoopbackForTests: true, ca: certs.ca, lookup: createFakeLookup() });
});
beforeEach(() => receiver.setHandler((_req, res) => res.writeHead(204).end()));
afterAll(async () => {
  await fetch?.close();
  await receiver?.close();
  certs?.cleanup();
});

describe('deliverWebhook', () => {
  it('POSTs the raw body with Standard Webhooks headers the official library verifies', async () => {
    let verified: unknown;
    receiver.setHandler((req, res) => {
      verified = new Webhook(secret).verify(req.body, req.headers as Record<string, string>);
      res.writeHead(200).end('thanks');
    });
    const before = receiver.requests.length;
    const result = await deliverWebhook({ url: url(), id: 'msg_1', timestamp: now(), body, secrets: [secret], fetch });
    expect(result).toMatchObject({ outcome: 'success', statusCode: 200, error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const req = receiver.requests[before]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hooks/captionfarm');
    expect(req.body).toBe(body);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['webhook-id']).toBe('msg_1');
    expect(verified).toEqual(JSON.parse(body));
  });

  it('treats any 2xx as success', async () => {
    for (const status of [201, 202, 204, 299]) {
      receiver.setHandler((_req, res) => res.writeHead(status).end());
      expect((await deliverWebhook({ url: url(), id: 'msg_2', timestamp: now(), body, secrets: [secret], fetch })).outcome).toBe('success');
    }
  });

  it('a 500 is a failure to retry', async () => {
    receiver.setHandler((_req, res) => res.writeHead(500).end('boom'));
    const result = await deliverWebhook({ url: url(), id: 'msg_3', timestamp: now(), body, secrets: [secret], fetch });
    expect(result).toMatchObject({ outcome: 'retry', statusCode: 500, error: { code: 'http_status' } });
  });

  it('a 410 says stop', async () => {
    receiver.setHandler((_req, res) => res.writeHead(410).end());
    expect(await deliverWebhook({ url: url(), id: 'msg_4', timestamp: now(), body, secrets: [secret], fetch })).toMatchObject({
      outcome: 'gone',
      statusCode: 410,
    });
  });

  it('a 3xx is a failure and is not followed', async () => {
    receiver.setHandler((req, res) => {
      if (req.url === '/moved') res.writeHead(200).end();
      else res.writeHead(308, { location: `https://${TEST_HOSTNAME}:${receiver.port}/moved` }).end();
    });
    const before = receiver.requests.length;
    const result = await deliverWebhook({ url: url(), id: 'msg_5', timestamp: now(), body, secrets: [secret], fetch });
    expect(result).toMatchObject({ outcome: 'retry', statusCode: 308, error: { code: 'redirect' } });
    expect(result.error?.message).toContain('/moved');
    expect(receiver.requests.length).toBe(before + 1);
  });

  it('a receiver slower than the deadline is a timeout failure', async () => {
    // It never answers: only the deadline can end this delivery (the test times out otherwise).
    receiver.setHandler(() => undefined);
    const result = await deliverWebhook({ url: url(), id: 'msg_6', timestamp: now(), body, secrets: [secret], fetch, timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: 'retry', statusCode: null, error: { code: 'timeout' } });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
  });

  it('succeeds on headers without waiting for a slow body', async () => {
    receiver.setHandler((_req, res) => {
      res.writeHead(200);
      res.write('start'); // never ends
    });
    // The body never ends, so waiting for it would end in the deadline's timeout, not a success.
    const result = await deliverWebhook({ url: url(), id: 'msg_7', timestamp: now(), body, secrets: [secret], fetch, timeoutMs: 1000 });
    expect(result).toMatchObject({ outcome: 'success', statusCode: 200, error: null });
  });

  it('uses the 10 s spec deadline by default and signs each attempt with its own timestamp', async () => {
    const seen: Array<{ timeoutMs: number | undefined; headers: Record<string, string> }> = [];
    const spy: SafeFetchFn = async (u, init) => {
      seen.push({ timeoutMs: init?.timeoutMs, headers: init?.headers as Record<string, string> });
      return fetch(u, init);
    };
    await deliverWebhook({ url: url(), id: 'msg_8', timestamp: 1_700_000_000, body, secrets: [secret], fetch: spy });
    await deliverWebhook({ url: url(), id: 'msg_8', timestamp: 1_700_000_005, body, secrets: [secret], fetch: spy });
    expect(WEBHOOK_DEADLINE_MS).toBe(10_000);
    expect(seen[0]!.timeoutMs).toBe(10_000);
    expect(seen.map((s) => s.headers['webhook-id'])).toEqual(['msg_8', 'msg_8']);
    expect(seen.map((s) => s.headers['webhook-timestamp'])).toEqual(['1700000000', '1700000005']);
    expect(seen[0]!.headers['webhook-signature']).not.toBe(seen[1]!.headers['webhook-signature']);
  });

  it('a blocked or unreachable URL is a failure to retry, never a throw', async () => {
    const connections = receiver.connections;
    const blocked = await deliverWebhook({ url: 'https://private.example.com/', id: 'msg_9', timestamp: now(), body, secrets: [secret], fetch });
    expect(blocked).toMatchObject({ outcome: 'retry', statusCode: null, error: { code: 'blocked_address' } });
    const refused = await deliverWebhook({ url: `https://${TEST_HOSTNAME}:1/`, id: 'msg_9', timestamp: now(), body, secrets: [secret], fetch });
    expect(refused).toMatchObject({ outcome: 'retry', statusCode: null, error: { code: 'network' } });
    expect(receiver.connections).toBe(connections);
  });
});
