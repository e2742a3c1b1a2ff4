import { ApiError, type ErrorBody } from '@captionfarm/contracts';
import type { ErrorRequestHandler, Response } from 'express';

function sendError(res: Response, err: ApiError): void {
  const requestId = String(res.locals.requestId ?? '');
  const body: ErrorBody = {
    error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}), requestId },
  };
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
  res.status(err.status).json(body);
}

/**
 * The code of a "no space left" error (SQLite's SQLITE_FULL, or ENOSPC from the file system) in
 * `err` or its causes; undefined for anything else. By code, never by message text.
 */
function diskFull(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'SQLITE_FULL' || code === 'ENOSPC') return code;
  }
  return undefined;
}

/** body-parser's own errors -> our codes; anything unknown -> 500 internal (logged). */
export function errorHandler(log: (msg: string, extra?: unknown) => void): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    let apiErr: ApiError;
    const type = (err as { type?: string }).type;
    if (err instanceof ApiError) apiErr = err;
    else if (type === 'entity.too.large') apiErr = new ApiError('payload_too_large', 'The request body is too large.');
    else if (type === 'entity.parse.failed') apiErr = new ApiError('invalid_request', 'The request body is not valid JSON.');
    else if (type === 'encoding.unsupported' || type === 'charset.unsupported') apiErr = new ApiError('unsupported_media_type', 'Send the body as UTF-8 JSON.');
    else if (type === 'request.aborted') apiErr = new ApiError('invalid_request', 'The request was aborted.');
    // The router decodes path parameters; malformed percent-encoding (`%E0%A4%A`) is the client's.
    else if (err instanceof URIError)
      apiErr = new ApiError('invalid_request', 'The URL path has malformed percent-encoding; encode path segments with encodeURIComponent.');
    else if (diskFull(err)) {
      log('disk full', err);
      apiErr = new ApiError('unavailable', `The server's disk is full (${diskFull(err)}); retry later.`, { retryAfterSeconds: 30 });
    } else {
      log('unhandled error', err);
      apiErr = ApiError.fromUnknown(err);
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    sendError(res, apiErr);
  };
}
