import { ApiError } from '@captionfarm/contracts';
import { createFairShare } from './fair-share.ts';
import type { PreparedJob } from './jobs/body.ts';
import type { TranscriptResult, TranscriptTask } from './transcript-worker.ts';
import { workerPool } from './worker-threads.ts';

/**
 * Large transcripts, off the event loop: a job body over the inline size is parsed and validated
 * on a worker thread, and long transcripts are exported (JSON, SRT, VTT) there. On main an 8 MiB
 * body with 20,000 words held the event loop 145-250 ms, an SRT export of it 350-500 ms: one pro
 * account sending 4 at a time raised another account's GET job from 3 ms to 300-390 ms. Accounts
 * take turns on the thread(s) (fair-share.ts), each with one task running and four waiting; a
 * fifth is refused at once with 429.
 */
export interface TranscriptWork {
  /** A create body as received (raw bytes), parsed and validated: 400 for malformed JSON or an invalid job. */
  jobBody(accountId: string, bytes: Buffer, signal?: AbortSignal): Promise<PreparedJob>;
  /** The 429 a job body of this account would get now, or undefined (check it before reading the body). */
  refusal(accountId: string): ApiError | undefined;
  /** A stored transcript's words exported: the response body's bytes (UTF-8). */
  export(accountId: string, task: Omit<Extract<TranscriptTask, { kind: 'export' }>, 'kind'>, signal?: AbortSignal): Promise<Buffer>;
  /** Tasks the worker thread(s) finished so far. */
  stats(): { completed: number };
  close(): Promise<void>;
}

export function createTranscriptWork(o: { threads: number }): TranscriptWork {
  const pool = workerPool(new URL('./transcript-worker-entry.mjs', import.meta.url), o.threads);
  const busy = () =>
    new ApiError('rate_limited', 'This account already has 5 large transcripts in work; wait for one to finish and retry.', { retryAfterSeconds: 1 });
  const fair = createFairShare({ slots: o.threads, perKey: 1, queuePerKey: 4, full: busy });
  const run = async (accountId: string, task: TranscriptTask, signal?: AbortSignal, transferList?: ArrayBuffer[]): Promise<TranscriptResult> =>
    fair.run(
      accountId,
      () => pool.run(task, { ...(signal ? { signal } : {}), ...(transferList ? { transferList } : {}) }) as Promise<TranscriptResult>,
      signal,
    );
  const unwrap = (r: TranscriptResult) => {
    if (r instanceof ArrayBuffer || r.ok) return r;
    if ('malformed' in r) throw new ApiError('invalid_request', 'The request body is not valid JSON.');
    throw new ApiError(r.error.code, r.error.message, { details: r.error.details });
  };
  return {
    refusal: (accountId) => (fair.full(accountId) ? busy() : undefined),
    async jobBody(accountId, bytes, signal) {
      // The body's bytes move to the worker (a body of its own buffer, as express.raw gives a large
      // one, is transferred, not copied).
      const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const r = unwrap(await run(accountId, { kind: 'job-body', bytes: view }, signal, whole ? [bytes.buffer as ArrayBuffer] : undefined));
      if (r instanceof ArrayBuffer) throw new Error('transcript worker: expected a job');
      return r.job;
    },
    async export(accountId, task, signal) {
      const r = unwrap(await run(accountId, { kind: 'export', ...task }, signal));
      if (!(r instanceof ArrayBuffer)) throw new Error('transcript worker: expected bytes');
      return Buffer.from(r);
    },
    stats: () => ({ completed: pool.completed }),
    close: () => pool.destroy(),
  };
}
