import type { ServerResponse } from 'node:http';
import { ApiError, type ErrorBody } from '@captionfarm/contracts';
import type { ErrorRequestHandler } from 'express';

/** A JSON answer, as Express's res.json writes it (the same headers), on a plain node:http response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** The documented error body (with Retry-After when the error has one). */
export function sendError(res: ServerResponse, err: ApiError, requestId: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body: ErrorBody = {
    error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}), requestId },
  };
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
  sendJson(res, err.status, body);
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

/** What a failed request answers: body-parser's own errors -> our codes; anything unknown -> 500 internal (logged). */
export function toApiError(err: unknown, log: (msg: string, extra?: unknown) => void): ApiError {
  if (err instanceof ApiError) return err;
  const type = (err as { type?: string } | null)?.type;
  if (type === 'entity.too.large') return new ApiError('payload_too_large', 'The request body is too large.');
  if (type === 'entity.parse.failed') return new ApiError('invalid_request', 'The request body is not valid JSON.');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new ApiError('unsupported_media_type', 'Send the body as UTF-8 JSON.');
  if (type === 'request.aborted') return new ApiError('invalid_request', 'The request was aborted.');
  // The router decodes path parameters; malformed percent-encoding (`%E0%A4%A`) is the client's.
  if (err instanceof URIError)
    return new ApiError('invalid_request', 'The URL path has malformed percent-encoding; encode path segments with encodeURIComponent.');
  const full = diskFull(err);
  if (full) {
    log('disk full', err);
    return new ApiError('unavailable', `The server's disk is full (${full}); retry later.`, { retryAfterSeconds: 30 });
  }
  log('unhandled error', err);
  return ApiError.fromUnknown(err);
}

/** The Express error handler: the error body of toApiError's verdict. */
export function errorHandler(log: (msg: string, extra?: unknown) => void): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    sendError(res, toApiError(err, log), String(res.locals.requestId ?? ''));
  };
}
