import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks (https://www.standardwebhooks.com/) signing, HMAC-SHA256 (`v1`):
 * signed content = `${webhook-id}.${webhook-timestamp}.${raw body}`, key = base64-decoded
 * secret after the `whsec_` prefix, signature header = space-separated `v1,<base64>`, one per
 * active secret (two during a rotation's 24 h overlap). The HMAC itself is the `standardwebhooks`
 * package's (`Webhook.sign`); the SDK's verifier uses the same.
 */

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** How long a rotated-out secret keeps signing and verifying (ARCHITECTURE: 24 h). */
export const WEBHOOK_SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Receivers refuse timestamps further than this from their clock (Standard Webhooks: 5 min). */
export const DEFAULT_TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** A delivery id (`webhook-id`): `msg_` + 22 base64url chars (128 random bits), no dots. */
export function generateWebhookId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** Our own check first, for a clear message (standardwebhooks would decode garbage silently). */
function validateSecret(secret: string): void {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new TypeError('A webhook secret is whsec_ followed by base64.');
  }
  if (Buffer.from(encoded, 'base64').length === 0) throw new TypeError('A webhook secret must not be empty.');
}

function validateId(id: string): void {
  if (id === '' || /[\s.]/.test(id)) {
    throw new TypeError('webhook-id must be non-empty, without dots or whitespace.');
  }
}

/**
 * The base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` (no `v1,` prefix), by standardwebhooks.
 * It takes a string or a Buffer (read as UTF-8: our bodies are JSON text).
 */
export function computeSignature(args: { id: string; timestamp: number; body: string | Uint8Array; secret: string }): string {
  validateSecret(args.secret);
  const payload = typeof args.body === 'string' ? args.body : Buffer.from(args.body.buffer, args.body.byteOffset, args.body.byteLength);
  return new Webhook(args.secret).sign(args.id, new Date(args.timestamp * 1000), payload).slice('v1,'.length);
}

export interface SignWebhookArgs {
  /** Stable across retries of one delivery. */
  id: string;
  /** Unix epoch SECONDS of this attempt (each retry is signed afresh with its own time). */
  timestamp: number;
  /** The exact bytes sent as the request body. */
  body: string | Uint8Array;
  /** Active secrets, newest first; one `v1,` signature each. */
  secrets: readonly string[];
}

export function signWebhook(args: SignWebhookArgs): WebhookHeaders {
  validateId(args.id);
  if (!Number.isSafeInteger(args.timestamp) || args.timestamp < 0) {
    throw new TypeError('webhook-timestamp is whole Unix seconds.');
  }
  if (args.secrets.length === 0) throw new TypeError('At least one webhook secret is needed.');
  const signatures = args.secrets.map((secret) => `v1,${computeSignature({ id: args.id, timestamp: args.timestamp, body: args.body, secret })}`);
  return {
    'webhook-id': args.id,
    'webhook-timestamp': String(args.timestamp),
    'webhook-signature': signatures.join(' '),
  };
}

export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  for (const [key, value] of Object.entries(record)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

export type VerifyResult =
  | { ok: true; id: string; timestamp: number }
  | {
      ok: false;
      reason: 'missing_headers' | 'bad_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'no_matching_signature';
    };

export interface VerifyWebhookArgs {
  /** The RAW request body, exactly as received (re-serialised JSON will not verify). */
  body: string | Uint8Array;
  headers: HeaderSource;
  /** Secrets to accept (current and, during rotation, previous). */
  secrets: readonly string[];
  /** Receiver's clock in ms; default Date.now(). */
  now?: number;
  toleranceSeconds?: number;
}

/** For receivers (tests, the SDK): checks headers, timestamp window and any `v1` signature. */
export function verifyWebhook(args: VerifyWebhookArgs): VerifyResult {
  const id = header(args.headers, 'webhook-id');
  const timestampText = header(args.headers, 'webhook-timestamp');
  const signatureText = header(args.headers, 'webhook-signature');
  if (!id || !timestampText || !signatureText) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,15}$/.test(timestampText)) return { ok: false, reason: 'bad_timestamp' };
  const timestamp = Number(timestampText);
  const nowSeconds = Math.floor((args.now ?? Date.now()) / 1000);
  const tolerance = args.toleranceSeconds ?? DEFAULT_TIMESTAMP_TOLERANCE_SECONDS;
  if (nowSeconds - timestamp > tolerance) return { ok: false, reason: 'timestamp_too_old' };
  if (timestamp - nowSeconds > tolerance) return { ok: false, reason: 'timestamp_too_new' };
  const passed = signatureText
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3)));
  for (const secret of args.secrets) {
    const expected = Buffer.from(computeSignature({ id, timestamp, body: args.body, secret }));
    if (passed.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected))) {
      return { ok: true, id, timestamp };
    }
  }
  return { ok: false, reason: 'no_matching_signature' };
}

/**
 * The secrets to sign with now: the current one, plus the previous one while it is inside its
 * 24 h overlap. A pure helper for the control plane's `secretsFor(accountId)`.
 */
export function activeWebhookSecrets(args: { current: string; previous?: { secret: string; rotatedAt: number } | null; now: number }): string[] {
  const prev = args.previous;
  if (prev && args.now - prev.rotatedAt < WEBHOOK_SECRET_ROTATION_OVERLAP_MS) {
    return [args.current, prev.secret];
  }
  return [args.current];
}
