import { timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError } from './errors.ts';
import { ClientJobSchema, type Job } from './job.ts';

/** `Headers`, Node's `req.headers`, or any plain object of header names (any case) to values. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The raw request body exactly as received: re-serialized JSON fails (whitespace, key order). */
  body: string | Uint8Array;
  headers: HeadersLike;
  /** The account's signing secret (`whsec_...`); several during your own rotation. */
  secret: string | readonly string[];
  /** Largest accepted distance between webhook-timestamp and now, both ways. Default 300 s (Standard Webhooks). */
  toleranceSeconds?: number;
  /** For tests. */
  now?: Date | number;
}

export interface VerifiedWebhook extends VerifiedWebhookSignature {
  /** The job record (the same shape GET /v1/automation-jobs/:id returns). Deduplicate by `job.id`. */
  job: Job;
}

export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(' ') : v;
  }
  return undefined;
}

function checkSecret(secret: string): void {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || Buffer.from(encoded, 'base64').length === 0) {
    throw new WebhookVerificationError(
      'invalid_secret',
      'the signing secret is not "whsec_" followed by base64; copy it again from `captionfarm admin webhook-secret show`',
    );
  }
}

/** The expected signature bytes, computed by the standardwebhooks package (a Buffer body is read as UTF-8). */
function expectedSignature(secret: string, id: string, timestamp: number, body: string | Uint8Array): Buffer {
  checkSecret(secret);
  const payload = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(new Webhook(secret).sign(id, new Date(timestamp * 1000), payload).slice('v1,'.length), 'base64');
}

/** What a checked signature vouches for: the delivery and the time of this attempt. */
export interface VerifiedWebhookSignature {
  /** `webhook-id`: stable across retries of one delivery. */
  webhookId: string;
  /** `webhook-timestamp` of this attempt. */
  timestamp: Date;
}

/**
 * The signature half of verifyWebhook, for any body (the sender's own tests sign bodies that are
 * not job records): headers present, timestamp inside the tolerance, and one `v1` signature that
 * matches the raw body under one of the secrets. Throws WebhookVerificationError otherwise.
 */
export function verifyWebhookSignature(opts: VerifyWebhookOptions): VerifiedWebhookSignature {
  if (typeof opts.body !== 'string' && !(opts.body instanceof Uint8Array)) {
    throw new WebhookVerificationError(
      'invalid_payload',
      'pass the raw request body (a string or Buffer), not parsed JSON: e.g. express.raw({ type: "application/json" })',
    );
  }
  const id = header(opts.headers, 'webhook-id');
  const ts = header(opts.headers, 'webhook-timestamp');
  const sig = header(opts.headers, 'webhook-signature');
  if (!id || !ts || !sig) throw new WebhookVerificationError('missing_headers', 'the webhook-id, webhook-timestamp and webhook-signature headers are required');
  if (!/^\d{1,15}$/.test(ts)) throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not Unix seconds');
  const timestamp = Number(ts);
  const nowSeconds = Math.floor((opts.now instanceof Date ? opts.now.getTime() : (opts.now ?? Date.now())) / 1000);
  const tolerance = opts.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(nowSeconds - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `webhook-timestamp is ${nowSeconds - timestamp} s away from now (tolerance ${tolerance} s): a replay, or a clock out of sync`,
    );
  }
  const secrets = typeof opts.secret === 'string' ? [opts.secret] : opts.secret;
  const expected = secrets.map((s) => expectedSignature(s, id, timestamp, opts.body));
  const given = sig
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3), 'base64'));
  const match = given.some((g) => expected.some((e) => g.length === e.length && timingSafeEqual(g, e)));
  if (!match)
    throw new WebhookVerificationError(
      'invalid_signature',
      'no webhook-signature matches the body and secret (was the raw body changed, e.g. parsed and re-serialized?)',
    );
  return { webhookId: id, timestamp: new Date(timestamp * 1000) };
}

/**
 * Verifies a webhook delivery per Standard Webhooks (HMAC-SHA256, `v1`, computed by the
 * `standardwebhooks` package): the signed content is
 * `${webhook-id}.${webhook-timestamp}.${raw body}`, keyed by the base64-decoded secret; the
 * `webhook-signature` header lists space-separated `v1,<base64>` signatures (two while the
 * sender rotates secrets), any one matching is enough. Returns the parsed job record, or throws
 * WebhookVerificationError (answer 400 and do not act on the payload).
 */
export function verifyWebhook(opts: VerifyWebhookOptions): VerifiedWebhook {
  const signature = verifyWebhookSignature(opts);
  let json: unknown;
  try {
    json = JSON.parse(typeof opts.body === 'string' ? opts.body : Buffer.from(opts.body).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the signed body is not JSON');
  }
  const job = ClientJobSchema.safeParse(json);
  if (!job.success) throw new WebhookVerificationError('invalid_payload', 'the signed body is not a job record');
  return { job: job.data as Job, ...signature };
}
