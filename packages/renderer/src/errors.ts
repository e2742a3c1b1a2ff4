/**
 * The renderer's one error type. `code` is a closed set that maps one-to-one onto the job
 * failure codes of the public spec, so the agent can fail a job with `error.code` as is.
 */
export type RenderErrorCode = 'render-failed' | 'output-larger-than-source' | 'source-unreadable' | 'ingest-failed';

export class RenderError extends Error {
  override readonly name = 'RenderError';
  readonly code: RenderErrorCode;
  /** The last lines ffmpeg or ffprobe wrote to stderr, when a child process failed. */
  readonly stderrTail: string;

  constructor(code: RenderErrorCode, message: string, options: { stderrTail?: string; cause?: unknown } = {}) {
    const tail = options.stderrTail?.trim() ?? '';
    super(tail ? `${message}\n--- stderr (tail) ---\n${tail}` : message, { cause: options.cause });
    this.code = code;
    this.stderrTail = tail;
  }
}

/** The rejection of every renderer promise whose AbortSignal fired: a DOMException named AbortError, as fetch does. */
export function abortError(signal: AbortSignal): DOMException {
  const reason: unknown = signal.reason;
  if (reason instanceof DOMException && reason.name === 'AbortError') return reason;
  return new DOMException('The render was aborted', 'AbortError');
}
