import type { ApiErrorCode } from '@captionfarm/contracts';

/**
 * Every error the SDK throws is a CaptionfarmError with a machine-readable `code`: branch on the
 * code (or on the subclass), never on the message text.
 */
export class CaptionfarmError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CaptionfarmError';
    this.code = code;
  }
}

/**
 * The API rejected a request: HTTP status, the error body's `code` (`invalid_request`,
 * `unauthenticated`, `not_found`, `upload_not_completed`, `rate_limited`, ...), its message and
 * details, the `requestId` to report, and `Retry-After` in seconds when the server sent one.
 * Codes a newer server adds arrive unchanged.
 */
export class CaptionfarmApiError extends CaptionfarmError {
  declare readonly code: ApiErrorCode | (string & {});
  readonly status: number;
  readonly details: unknown;
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  constructor(args: {
    status: number;
    code: string;
    message: string;
    details?: unknown;
    requestId?: string | undefined;
    retryAfterSeconds?: number | undefined;
  }) {
    super(args.code, args.message);
    this.name = 'CaptionfarmApiError';
    this.status = args.status;
    this.details = args.details;
    this.requestId = args.requestId;
    this.retryAfterSeconds = args.retryAfterSeconds;
  }
}

/** The service could not be reached (connection refused, DNS, reset, timeout): code `network_error` or `timeout`. */
export class CaptionfarmNetworkError extends CaptionfarmError {
  constructor(code: 'network_error' | 'timeout', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'CaptionfarmNetworkError';
  }
}

/**
 * The object store refused the upload PUT (code `upload_rejected`): `status` is its HTTP status
 * (403 for a size other than the signed `sizeBytes`, or an expired or altered URL) and
 * `storageCode` the S3 error code from its XML body, when there was one.
 */
export class UploadRejectedError extends CaptionfarmError {
  readonly status: number;
  readonly storageCode: string | undefined;
  constructor(args: { status: number; storageCode?: string | undefined; message: string }) {
    super('upload_rejected', args.message);
    this.name = 'UploadRejectedError';
    this.status = args.status;
    this.storageCode = args.storageCode;
  }
}

/** A response that is not what the API contract says (code `invalid_response`): a proxy in the way, or a wrong base URL. */
export class InvalidResponseError extends CaptionfarmError {
  readonly status: number;
  constructor(status: number, message: string) {
    super('invalid_response', message);
    this.name = 'InvalidResponseError';
    this.status = status;
  }
}

export type WebhookVerificationCode =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_payload'
  | 'invalid_secret';

/** A webhook delivery that must be rejected (answer it with 400): see `code` for why. */
export class WebhookVerificationError extends CaptionfarmError {
  declare readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string) {
    super(code, message);
    this.name = 'WebhookVerificationError';
  }
}

/** True when `err` is an API rejection, optionally with one of the given codes. */
export function isApiError(err: unknown, ...codes: (ApiErrorCode | (string & {}))[]): err is CaptionfarmApiError {
  return err instanceof CaptionfarmApiError && (codes.length === 0 || codes.includes(err.code));
}

/**
 * One line for logs and terminals: `code: message` plus the HTTP status and requestId of an API
 * rejection (the requestId is what to report), or the plain message of any other error.
 */
export function describeError(err: unknown): string {
  if (err instanceof CaptionfarmApiError) {
    const where = [err.status ? `HTTP ${err.status}` : '', err.requestId ? `request ${err.requestId}` : ''].filter(Boolean).join(', ');
    return `${err.code}: ${err.message}${where ? ` (${where})` : ''}`;
  }
  if (err instanceof CaptionfarmError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
