import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks (https://www.standardwebhooks.com/) signing, HMAC-SHA256 (`v1`):
 * signed content = `${webhook-id}.${webhook-timestamp}.${raw body}`, key = base64-decoded
 * secret after the `whsec_` prefix, signature header = space-separated `v1,<base64>`, one per
 * active secret (two during a rotation's 24 h overlap). The HMAC itself is the `standardwebhooks`
 * package's (`Webhook.sign`); the SDK's verifyWebhook uses the same, and is the one verifier
 * (this package's tests check deliveries with it).
 */

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** How long a rotated-out secret keeps signing and verifying (ARCHITECTURE: 24 h). */
export const WEBHOOK_SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

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
