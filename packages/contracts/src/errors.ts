import { z } from 'zod';

/** The closed set of API error codes and their HTTP status (ARCHITECTURE.md). */
export const API_ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  upload_not_completed: 409,
  upload_already_used: 409,
  job_not_cancellable: 409,
  conflict: 409,
  /** GET .../transcript of a job that has not succeeded (yet, or ever). */
  transcript_not_available: 409,
  /** GET .../edit of a job that has not succeeded (yet, or ever), or that had no edit, hook title or profanity. */
  edit_not_available: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  limit_exceeded: 422,
  invalid_font: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal: 500,
  unavailable: 503,
} as const;
export type ApiErrorCode = keyof typeof API_ERROR_STATUS;
export const ApiErrorCodeSchema = z.enum(Object.keys(API_ERROR_STATUS) as [ApiErrorCode, ...ApiErrorCode[]]);

export const ErrorBodySchema = z.strictObject({
  error: z.strictObject({
    code: ApiErrorCodeSchema,
    message: z.string(),
    details: z.unknown().optional(),
    requestId: z.string(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** The one error type of the API. Messages say what to do next. */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly details: unknown;
  readonly retryAfterSeconds: number | undefined;
  constructor(code: ApiErrorCode, message: string, opts: { details?: unknown; retryAfterSeconds?: number } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
  get status(): number {
    return API_ERROR_STATUS[this.code];
  }
  static fromUnknown(err: unknown): ApiError {
    if (err instanceof ApiError) return err;
    return new ApiError('internal', 'An unexpected error occurred; retry later, and report the requestId if it persists.');
  }
}

/** zod issues -> a compact `details` list: [{ path: 'a.b', message }]. */
export function issuesToDetails(
  issues: readonly { path: readonly PropertyKey[]; message: string; code?: string; keys?: readonly string[] }[],
): { path: string; message: string }[] {
  return issues.flatMap((i) =>
    // An unknown key is reported at its own path, so a client sees which field to remove.
    i.code === 'unrecognized_keys' && i.keys
      ? i.keys.map((k) => ({ path: [...i.path, k].map(String).join('.'), message: 'unknown field' }))
      : [{ path: i.path.map(String).join('.'), message: i.message }],
  );
}
