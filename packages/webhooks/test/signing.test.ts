import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { activeWebhookSecrets, generateWebhookId, generateWebhookSecret, signWebhook, WEBHOOK_SECRET_ROTATION_OVERLAP_MS } from '../src/signing.ts';
// The one verifier is the SDK's; its signature half takes bodies that are not job records.
import { verifyWebhookSignature, type VerifyWebhookOptions } from '../../sdk/src/webhooks.ts';

const body = '{"id":"job_1","status":"succeeded","outputUrl":null,"n":1.50,"text":"ünïcødé ✓"}';
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** The SDK's verdict: 'ok', or the WebhookVerificationError's code. */
function verdict(opts: VerifyWebhookOptions): string {
  try {
    verifyWebhookSignature(opts);
    return 'ok';
  } catch (err) {
    return (err as { code: string }).code;
  }
}

function handSignature(secret: string, id: string, timestamp: number, payload: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`, 'utf8').digest('base64');
}

describe('generateWebhookSecret / generateWebhookId', () => {
  it('makes whsec_ + base64 of 32 random bytes', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(() => new Webhook(a)).not.toThrow();
  });

  it('makes dot-free unique ids', () => {
    const id = generateWebhookId();
    expect(id).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(generateWebhookId()).not.toBe(id);
  });
});

describe('signWebhook', () => {
  it('matches the Standard Webhooks reference vector', () => {
    // From the Standard Webhooks / Svix documentation.
    const headers = signWebhook({
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    });
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs id.timestamp.body, verified by hand and by the official library', () => {
    const secret = generateWebhookSecret();
    const ts = nowSeconds();
    const headers = signWebhook({ id: 'msg_abc', timestamp: ts, body, secrets: [secret] });
    expect(headers['webhook-id']).toBe('msg_abc');
    expect(headers['webhook-timestamp']).toBe(String(ts));
    expect(headers['webhook-signature']).toBe(`v1,${handSignature(secret, 'msg_abc', ts, body)}`);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(verifyWebhookSignature({ body, headers: { ...headers }, secret })).toEqual({ webhookId: 'msg_abc', timestamp: new Date(ts * 1000) });
  });

  it('signs bytes and strings identically', () => {
    const secret = generateWebhookSecret();
    const a = signWebhook({ id: 'msg_1', timestamp: 1, body, secrets: [secret] });
    const b = signWebhook({ id: 'msg_1', timestamp: 1, body: Buffer.from(body, 'utf8'), secrets: [secret] });
    expect(a).toEqual(b);
  });

  it('during a rotation signs with both secrets; each verifies alone', () => {
    const current = generateWebhookSecret();
    const previous = generateWebhookSecret();
    const headers = signWebhook({ id: 'msg_rot', timestamp: nowSeconds(), body, secrets: [current, previous] });
    const parts = headers['webhook-signature'].split(' ');
    expect(parts).toHaveLength(2);
    expect(parts.every((p) => p.startsWith('v1,'))).toBe(true);
    for (const secret of [current, previous]) {
      expect(() => new Webhook(secret).verify(body, { ...headers })).not.toThrow();
      expect(verdict({ body, headers: { ...headers }, secret })).toBe('ok');
    }
    expect(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers })).toThrow();
  });

  it('refuses bad arguments before anything is sent', () => {
    const secret = generateWebhookSecret();
    expect(() => signWebhook({ id: 'a.b', timestamp: 1, body, secrets: [secret] })).toThrow(TypeError);
    expect(() => signWebhook({ id: 'msg', timestamp: 1.5, body, secrets: [secret] })).toThrow(TypeError);
    expect(() => signWebhook({ id: 'msg', timestamp: 1, body, secrets: [] })).toThrow(TypeError);
    expect(() => signWebhook({ id: 'msg', timestamp: 1, body, secrets: ['whsec_'] })).toThrow(TypeError);
    expect(() => signWebhook({ id: 'msg', timestamp: 1, body, secrets: ['whsec_not base64!'] })).toThrow(TypeError);
  });
});

describe('verification rejects tampering (official library and the SDK)', () => {
  const secret = generateWebhookSecret();
  const fresh = (): Record<string, string> => ({ ...signWebhook({ id: 'msg_t', timestamp: nowSeconds(), body, secrets: [secret] }) });

  it('tampered body', () => {
    const headers = fresh();
    const tampered = body.replace('succeeded', 'failed');
    expect(() => new Webhook(secret).verify(tampered, headers)).toThrow(/signature/i);
    expect(verdict({ body: tampered, headers, secret })).toBe('invalid_signature');
    // Re-serialised JSON (whitespace/key order) also fails: the raw body is what is signed.
    const reserialised = JSON.stringify(JSON.parse(body), null, 1);
    expect(verdict({ body: reserialised, headers, secret })).not.toBe('ok');
  });

  it('tampered timestamp', () => {
    const headers = fresh();
    headers['webhook-timestamp'] = String(Number(headers['webhook-timestamp']) - 1);
    expect(() => new Webhook(secret).verify(body, headers)).toThrow(/signature/i);
    expect(verdict({ body, headers, secret })).toBe('invalid_signature');
  });

  it('tampered id', () => {
    const headers = fresh();
    headers['webhook-id'] = 'msg_other';
    expect(() => new Webhook(secret).verify(body, headers)).toThrow();
    expect(verdict({ body, headers, secret })).not.toBe('ok');
  });

  it('old and future timestamps (replay window 5 min)', () => {
    const old = { ...signWebhook({ id: 'msg_o', timestamp: nowSeconds() - 6 * 60, body, secrets: [secret] }) };
    expect(() => new Webhook(secret).verify(body, old)).toThrow(/too old/i);
    expect(verdict({ body, headers: old, secret })).toBe('timestamp_out_of_tolerance');
    const future = { ...signWebhook({ id: 'msg_f', timestamp: nowSeconds() + 6 * 60, body, secrets: [secret] }) };
    expect(() => new Webhook(secret).verify(body, future)).toThrow(/too new/i);
    expect(verdict({ body, headers: future, secret })).toBe('timestamp_out_of_tolerance');
    // With an injected clock, the same old delivery verifies at its own time.
    expect(verdict({ body, headers: old, secret, now: (nowSeconds() - 6 * 60) * 1000 })).toBe('ok');
  });

  it('missing or malformed headers', () => {
    const headers = fresh();
    expect(verdict({ body, headers: { ...headers, 'webhook-signature': '' }, secret })).not.toBe('ok');
    expect(verdict({ body, headers: { 'webhook-id': 'x' }, secret })).toBe('missing_headers');
    expect(verdict({ body, headers: { ...headers, 'webhook-timestamp': '12e3' }, secret })).toBe('invalid_timestamp');
    expect(verdict({ body, headers: { ...headers, 'webhook-signature': headers['webhook-signature']!.replace('v1,', 'v2,') }, secret })).not.toBe('ok');
  });

  it('accepts signatures made by the official library, any header casing, Headers objects', () => {
    const wh = new Webhook(secret);
    const ts = nowSeconds();
    const signature = wh.sign('msg_lib', new Date(ts * 1000), body);
    const raw = { 'Webhook-Id': 'msg_lib', 'WEBHOOK-TIMESTAMP': String(ts), 'webhook-signature': `v1,bogus ${signature}` };
    expect(verdict({ body, headers: raw, secret })).toBe('ok');
    const h = new Headers(raw);
    expect(verdict({ body: Buffer.from(body), headers: h, secret: [generateWebhookSecret(), secret] })).toBe('ok');
  });
});

describe('activeWebhookSecrets', () => {
  it('keeps the previous secret for 24 h after rotation', () => {
    const rotatedAt = 1_000_000;
    const previous = { secret: 'whsec_b2xk', rotatedAt };
    expect(activeWebhookSecrets({ current: 'whsec_bmV3', previous, now: rotatedAt })).toEqual(['whsec_bmV3', 'whsec_b2xk']);
    expect(activeWebhookSecrets({ current: 'whsec_bmV3', previous, now: rotatedAt + WEBHOOK_SECRET_ROTATION_OVERLAP_MS - 1 })).toHaveLength(2);
    expect(activeWebhookSecrets({ current: 'whsec_bmV3', previous, now: rotatedAt + WEBHOOK_SECRET_ROTATION_OVERLAP_MS })).toEqual(['whsec_bmV3']);
    expect(activeWebhookSecrets({ current: 'whsec_bmV3', now: 0 })).toEqual(['whsec_bmV3']);
  });
});
