import { exponentialBackoffMs } from '@captionfarm/contracts';
import type { z } from 'zod';
import { CaptionfarmApiError, CaptionfarmNetworkError, InvalidResponseError } from './errors.ts';
import { causeMessage, parseRetryAfter, sleep } from './util.ts';

export const SDK_VERSION = '0.1.0';

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  fetch: typeof fetch;
  /** Automatic retries of one request (see `retryable`); 0 turns them off. */
  maxRetries: number;
  /** A Retry-After longer than this is not waited for: the error is thrown instead. */
  maxRetryDelayMs: number;
  /** Per-attempt timeout of API calls (not of uploads or downloads). */
  timeoutMs: number;
  userAgent: string;
}

export interface RequestArgs<T> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  schema: z.ZodType<T>;
  signal?: AbortSignal | undefined;
  /**
   * Safe to send twice: GETs, PUTs and the (idempotent) cancel. Only these are retried after a network
   * error or a 5xx, where the first attempt may have been carried out. A 429 `rate_limited` or a
   * 503 was refused before any work, so every request retries those after Retry-After.
   */
  idempotent: boolean;
  /** Overrides TransportOptions.maxRetries for this call. */
  maxRetries?: number;
  /**
   * Accept a non-JSON success body (an image): the result is then `{ kind: 'binary', contentType,
   * bytes }`, or `{ kind: 'json', body }` (schema-checked) when the server answered JSON.
   */
  binary?: boolean;
}

export type BinaryOrJson<T> = { kind: 'binary'; contentType: string; bytes: Uint8Array } | { kind: 'json'; body: T };

const ERROR_BODY_HINT = 'not a Captionfarm API response; check CAPTIONFARM_URL / baseUrl';

/** Backoff of retries after network errors and 5xx: 0.5 s, 1 s, 2 s ... with +-25% jitter. */
const retryBackoffMs = (attempt: number): number => exponentialBackoffMs(attempt, { baseMs: 500, jitter: 0.25 });

export function createTransport(opts: TransportOptions) {
  const base = opts.baseUrl.replace(/\/+$/, '');

  async function once<T>(args: RequestArgs<T>): Promise<T> {
    const url = new URL(`${base}${args.path}`);
    for (const [k, v] of Object.entries(args.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const signal = args.signal ? AbortSignal.any([args.signal, timeout]) : timeout;
    let res: Response;
    let raw: Uint8Array;
    try {
      res = await opts.fetch(url, {
        method: args.method,
        headers: {
          authorization: `Bearer ${opts.apiKey}`,
          accept: 'application/json',
          'user-agent': opts.userAgent,
          ...(args.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(args.body !== undefined ? { body: JSON.stringify(args.body) } : {}),
        signal,
      });
      raw = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      if (args.signal?.aborted) throw args.signal.reason;
      if (timeout.aborted)
        throw new CaptionfarmNetworkError('timeout', `${args.method} ${args.path}: no answer from ${base} within ${opts.timeoutMs} ms`, { cause: err });
      throw new CaptionfarmNetworkError('network_error', `cannot reach the Captionfarm API at ${base} (${causeMessage(err)})`, { cause: err });
    }
    const contentType = res.headers.get('content-type') ?? '';
    const isJson = /^application\/([a-z0-9.+-]*\+)?json\b/i.test(contentType);
    if (res.ok && args.binary && !isJson) return { kind: 'binary', contentType, bytes: raw } as T;
    const text = new TextDecoder().decode(raw);
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const e = (json as { error?: { code?: unknown; message?: unknown; details?: unknown; requestId?: unknown } } | undefined)?.error;
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
      const retryAfterSeconds = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
      if (e && typeof e.code === 'string' && typeof e.message === 'string') {
        throw new CaptionfarmApiError({
          status: res.status,
          code: e.code,
          message: e.message,
          details: e.details,
          requestId: typeof e.requestId === 'string' ? e.requestId : (res.headers.get('x-request-id') ?? undefined),
          retryAfterSeconds,
        });
      }
      throw new CaptionfarmApiError({
        status: res.status,
        code: `http_${res.status}`,
        message: `HTTP ${res.status} ${res.statusText} from ${args.method} ${args.path} (${ERROR_BODY_HINT})`,
        retryAfterSeconds,
      });
    }
    const parsed = args.schema.safeParse(json);
    if (!parsed.success) {
      throw new InvalidResponseError(
        res.status,
        `${args.method} ${args.path} answered ${res.status} with a body that does not match the API contract ` +
          `(${parsed.error.issues[0]?.path.join('.') || 'body'}: ${parsed.error.issues[0]?.message}); ${ERROR_BODY_HINT}`,
      );
    }
    return args.binary ? ({ kind: 'json', body: parsed.data } as T) : parsed.data;
  }

  /** Whether to retry after `err`, and how long to wait first; undefined: give up. */
  function retryDelay(err: unknown, args: RequestArgs<unknown>, attempt: number): number | undefined {
    if (err instanceof CaptionfarmApiError) {
      if (err.code === 'rate_limited' || err.status === 503) {
        const ms = (err.retryAfterSeconds ?? 1) * 1000;
        return ms <= opts.maxRetryDelayMs ? ms : undefined;
      }
      return args.idempotent && err.status >= 500 ? retryBackoffMs(attempt) : undefined;
    }
    if (err instanceof CaptionfarmNetworkError) return args.idempotent ? retryBackoffMs(attempt) : undefined;
    return undefined;
  }

  return {
    baseUrl: base,
    async request<T>(args: RequestArgs<T>): Promise<T> {
      const max = args.maxRetries ?? opts.maxRetries;
      for (let attempt = 0; ; attempt++) {
        try {
          return await once(args);
        } catch (err) {
          const delay = attempt < max ? retryDelay(err, args as RequestArgs<unknown>, attempt) : undefined;
          if (delay === undefined) throw err;
          await sleep(delay, args.signal);
        }
      }
    },
  };
}
