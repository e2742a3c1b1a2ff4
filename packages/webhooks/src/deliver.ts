import { performance } from 'node:perf_hooks';
import { SafeFetchError, toSafeFetchError, type SafeFetchErrorCode, type SafeFetchFn } from '@captionfarm/net';
import { classifyResponse, type ResponseClass } from './retry-schedule.ts';
import { signWebhook } from './signing.ts';

/** Spec: "Any 2xx within 10 seconds is success; other statuses and timeouts are failures." */
export const WEBHOOK_DEADLINE_MS = 10_000;
export const WEBHOOK_USER_AGENT = 'Captionfarm-Webhooks/1.0';

export type DeliveryErrorCode = SafeFetchErrorCode | 'http_status';

export interface DeliveryResult {
  /** success: 2xx; gone: 410 (stop retrying); retry: anything else, including 3xx and errors. */
  outcome: ResponseClass;
  /** The receiver's status, or null when no response arrived. */
  statusCode: number | null;
  /** Why it was not a success; null on success. Safe to show to the account owner. */
  error: { code: DeliveryErrorCode; message: string } | null;
  durationMs: number;
}

export interface DeliverWebhookArgs {
  url: string;
  /** `webhook-id`: stable across retries of one delivery. */
  id: string;
  /** Unix epoch seconds of THIS attempt (`webhook-timestamp`). */
  timestamp: number;
  /** The raw JSON body, sent and signed byte for byte. */
  body: string;
  /** Active signing secrets (two during a rotation). */
  secrets: readonly string[];
  /** A safeFetch instance. */
  fetch: SafeFetchFn;
  /** Total deadline, connect to response headers. Default 10 s (the spec's). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * One signed POST attempt. Never throws for anything the receiver or the network does; those
 * become a result. Throws only for bad arguments (e.g. a malformed secret), before sending.
 */
export async function deliverWebhook(args: DeliverWebhookArgs): Promise<DeliveryResult> {
  const signed = signWebhook({
    id: args.id,
    timestamp: args.timestamp,
    body: args.body,
    secrets: args.secrets,
  });
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  try {
    const res = await args.fetch(args.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        ...signed,
      },
      body: args.body,
      timeoutMs: args.timeoutMs ?? WEBHOOK_DEADLINE_MS,
      maxBytes: 64 * 1024,
      ...(args.signal ? { signal: args.signal } : {}),
    });
    // Only the status matters; do not wait for (or download) the receiver's body.
    await res.body?.cancel().catch(() => undefined);
    const statusCode = res.status;
    const outcome = classifyResponse(statusCode);
    const durationMs = elapsed();
    if (outcome === 'success') return { outcome, statusCode, error: null, durationMs };
    if (statusCode >= 300 && statusCode <= 399) {
      const location = res.headers.get('location');
      return {
        outcome,
        statusCode,
        durationMs,
        error: {
          code: 'redirect',
          message:
            `The receiver answered HTTP ${statusCode}${location ? ` (to ${location.slice(0, 200)})` : ''}; ` +
            'redirects are not followed, configure the final URL.',
        },
      };
    }
    return {
      outcome,
      statusCode,
      durationMs,
      error: { code: 'http_status', message: `The receiver answered HTTP ${statusCode}.` },
    };
  } catch (err) {
    const e = err instanceof SafeFetchError ? err : toSafeFetchError(err);
    return {
      outcome: 'retry',
      statusCode: null,
      durationMs: elapsed(),
      error: { code: e.code, message: e.message },
    };
  }
}
