/**
 * The closed set of outbound-request error codes. Callers branch on `code`, never on message
 * text. Messages say what went wrong and what to do next; they may be shown to API users (a
 * rejected webhookUrl, a failed delivery in a dashboard), so they never contain secrets.
 */
export type SafeFetchErrorCode =
  /** The URL does not parse. */
  | 'invalid_url'
  /** Scheme other than https. */
  | 'not_https'
  /** `https://user:pass@host/`: credentials in URLs are refused. */
  | 'credentials_in_url'
  /** The host is, or resolves to, a non-public address (loopback, private, link-local, ...). */
  | 'blocked_address'
  /** The name does not resolve (NXDOMAIN, resolver timeout, ...). */
  | 'dns_failed'
  /** The response body (or its declared Content-Length) exceeds `maxBytes`. */
  | 'too_large'
  /** Connect, headers, idle body or total deadline exceeded. */
  | 'timeout'
  /** The receiver answered 3xx. Redirects are never followed; this code marks the failure. */
  | 'redirect'
  /** Connection refused/reset, TLS failure, protocol error. */
  | 'network'
  /** The caller's AbortSignal fired. */
  | 'aborted';

export class SafeFetchError extends Error {
  override readonly name = 'SafeFetchError';
  readonly code: SafeFetchErrorCode;

  constructor(code: SafeFetchErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isSafeFetchError(err: unknown): err is SafeFetchError {
  return err instanceof SafeFetchError;
}

/** Walks an error's `cause` chain (undici wraps everything in `TypeError: fetch failed`). */
function findInCauseChain<T>(err: unknown, pick: (e: unknown) => e is T): T | undefined {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current !== undefined && current !== null && !seen.has(current)) {
    if (pick(current)) return current;
    seen.add(current);
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);

/** Maps anything thrown by undici/node during a request to a SafeFetchError. */
export function toSafeFetchError(err: unknown): SafeFetchError {
  const own = findInCauseChain(err, isSafeFetchError);
  if (own) return own;
  const withCode = findInCauseChain(
    err,
    (e): e is { code: string; message?: string } => typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string',
  );
  const code = withCode?.code;
  const detail = withCode?.message ?? (err instanceof Error ? err.message : String(err));
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new SafeFetchError('timeout', `The request timed out (${detail}).`, { cause: err });
  }
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
    return new SafeFetchError('too_large', 'The response is larger than allowed.', { cause: err });
  }
  if (code !== undefined && DNS_CODES.has(code)) {
    return new SafeFetchError('dns_failed', `The host name does not resolve (${code}).`, {
      cause: err,
    });
  }
  return new SafeFetchError('network', `The request failed: ${detail}`, { cause: err });
}
