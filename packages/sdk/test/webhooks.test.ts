import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook } from '@captionfarm/webhooks';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError, verifyWebhook, type Job } from '../src/index.ts';
import { jobRecord } from './job-record.ts';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const other = `whsec_${randomBytes(32).toString('base64')}`;
const job = jobRecord({
  id: '0b3c2a9e-4f1d-4b7a-9d5e-2c8f6a1b3e4d',
  status: 'failed',
  phase: 'failed',
  quotedSeconds: 42,
  failureReason: 'Unsere Quelle antwortete 404 — “nicht gefunden” ✓',
  failureCode: 'source-unreachable',
  createdAt: '2026-03-01T12:00:00.000Z',
});
// The exact bytes a sender might emit: spacing and key order a re-serialization would not keep.
const body = JSON.stringify(job, null, 1).replace('"id"', '"id" ');
const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';

/** Headers as the standardwebhooks reference library signs them. */
function signed(opts: { secrets?: string[]; at?: Date; payload?: string } = {}): Record<string, string> {
  const at = opts.at ?? new Date();
  const sigs = (opts.secrets ?? [secret]).map((s) => new Webhook(s).sign(id, at, opts.payload ?? body));
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': sigs.join(' ') };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).code;
  }
  return 'accepted';
}

describe('verifyWebhook against signatures made by the standardwebhooks library', () => {
  it('accepts a valid delivery and returns the parsed job record', () => {
    const headers = signed();
    const v = verifyWebhook({ body, headers, secret });
    expect(v.job).toEqual(job);
    expect(v.webhookId).toBe(id);
    expect(v.timestamp.getTime()).toBe(Number(headers['webhook-timestamp']) * 1000);
    // The library agrees on the same input.
    expect(new Webhook(secret).verify(body, headers)).toEqual(job);
  });

  it('accepts Buffer bodies, Headers objects, Node header records of any case, and a secret without prefix', () => {
    const headers = signed();
    expect(verifyWebhook({ body: Buffer.from(body), headers: new Headers(headers), secret }).job.id).toBe(job.id);
    const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook({ body: new Uint8Array(Buffer.from(body)), headers: shouting, secret: secret.slice(6) }).job.id).toBe(job.id);
  });

  it('accepts any one of several signatures (the sender during a secret rotation) and several own secrets', () => {
    expect(code(() => verifyWebhook({ body, headers: signed({ secrets: [other, secret] }), secret }))).toBe('accepted');
    expect(code(() => verifyWebhook({ body, headers: signed({ secrets: [secret] }), secret: [other, secret] }))).toBe('accepted');
  });

  it.each([
    ['another secret', () => verifyWebhook({ body, headers: signed(), secret: other }), 'invalid_signature'],
    ['a changed body', () => verifyWebhook({ body: body.replace('42', '43'), headers: signed(), secret }), 'invalid_signature'],
    ['re-serialized JSON', () => verifyWebhook({ body: JSON.stringify(JSON.parse(body)), headers: signed(), secret }), 'invalid_signature'],
    ['a changed webhook-id', () => verifyWebhook({ body, headers: { ...signed(), 'webhook-id': 'msg_other' }, secret }), 'invalid_signature'],
    [
      'a v1a (asymmetric) entry only',
      () => verifyWebhook({ body, headers: { ...signed(), 'webhook-signature': signed()['webhook-signature']!.replace('v1,', 'v1a,') }, secret }),
      'invalid_signature',
    ],
    ['a signature of other length', () => verifyWebhook({ body, headers: { ...signed(), 'webhook-signature': 'v1,AAAA' }, secret }), 'invalid_signature'],
    [
      'a timestamp 6 minutes old',
      () => verifyWebhook({ body, headers: signed({ at: new Date(Date.now() - 6 * 60_000) }), secret }),
      'timestamp_out_of_tolerance',
    ],
    [
      'a timestamp 6 minutes ahead',
      () => verifyWebhook({ body, headers: signed({ at: new Date(Date.now() + 6 * 60_000) }), secret }),
      'timestamp_out_of_tolerance',
    ],
    ['a timestamp that is not a number', () => verifyWebhook({ body, headers: { ...signed(), 'webhook-timestamp': '12:00' }, secret }), 'invalid_timestamp'],
    ['no signature header', () => verifyWebhook({ body, headers: { 'webhook-id': id, 'webhook-timestamp': '1' }, secret }), 'missing_headers'],
    ['a parsed body', () => verifyWebhook({ body: JSON.parse(body) as string, headers: signed(), secret }), 'invalid_payload'],
    ['a signed body that is not a job', () => verifyWebhook({ body: '{"hello":1}', headers: signed({ payload: '{"hello":1}' }), secret }), 'invalid_payload'],
    ['a malformed secret', () => verifyWebhook({ body, headers: signed(), secret: 'whsec_***' }), 'invalid_secret'],
  ])('rejects %s', (_name, fn, expected) => {
    expect(code(fn)).toBe(expected);
  });

  it('rejects exactly what the reference library rejects on timestamps near the tolerance', () => {
    for (const ageSeconds of [-299, -301, 0, 299, 301]) {
      const headers = signed({ at: new Date(Date.now() - ageSeconds * 1000) });
      const ours = code(() => verifyWebhook({ body, headers, secret })) === 'accepted';
      let theirs = true;
      try {
        new Webhook(secret).verify(body, headers);
      } catch {
        theirs = false;
      }
      expect({ ageSeconds, ours }).toEqual({ ageSeconds, ours: theirs });
    }
  });

  it("verifies what the control plane's own signer (@captionfarm/webhooks) sends, during a rotation too", () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signWebhook({ id, timestamp, body, secrets: [other, secret] });
    expect(verifyWebhook({ body, headers: { ...headers }, secret }).job.id).toBe(job.id);
    expect(verifyWebhook({ body, headers: { ...headers }, secret: other }).job.id).toBe(job.id);
  });

  it('keeps unknown failure codes and new fields of a newer server', () => {
    const newer = JSON.stringify({ ...job, failureCode: 'gpu-on-fire', region: 'eu' });
    const v = verifyWebhook({ body: newer, headers: signed({ payload: newer }), secret });
    expect(v.job.failureCode).toBe('gpu-on-fire');
    expect((v.job as Job & { region?: string }).region).toBe('eu');
  });

  it('works in a real HTTP receiver reading the raw body', async () => {
    const results: string[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          const { job: j } = verifyWebhook({ body: Buffer.concat(chunks), headers: req.headers, secret });
          results.push(`${j.id} ${j.failureCode}`);
          res.writeHead(204).end();
        } catch (err) {
          results.push((err as WebhookVerificationError).code);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    try {
      const ok = await fetch(url, { method: 'POST', headers: { ...signed(), 'content-type': 'application/json' }, body });
      const bad = await fetch(url, { method: 'POST', headers: { ...signed({ secrets: [other] }), 'content-type': 'application/json' }, body });
      expect([ok.status, bad.status]).toEqual([204, 400]);
      expect(results).toEqual([`${job.id} source-unreachable`, 'invalid_signature']);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
