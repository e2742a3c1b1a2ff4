import { ApiError } from '@captionfarm/contracts';
import { Piscina } from 'piscina';
import { createFairShare } from './fair-share.ts';
import type { PreparedJob } from './services/job-body.ts';
import type { TranscriptResult, TranscriptTask } from './transcript-worker.ts';

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
  /** A stored transcript's words exported as the response body. */
  export(accountId: string, task: Omit<Extract<TranscriptTask, { kind: 'export' }>, 'kind'>, signal?: AbortSignal): Promise<string>;
  /** Tasks the worker thread(s) finished so far. */
  stats(): { completed: number };
  close(): Promise<void>;
}

export function createTranscriptWork(o: { threads: number }): TranscriptWork {
  const pool = new Piscina({
    filename: new URL('./transcript-worker-entry.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: o.threads,
    idleTimeout: 60_000,
  });
  const fair = createFairShare({
    slots: o.threads,
    perKey: 1,
    queuePerKey: 4,
    full: () =>
      new ApiError('rate_limited', 'This account already has 5 large transcripts in work; wait for one to finish and retry.', { retryAfterSeconds: 1 }),
  });
  const run = async (accountId: string, task: TranscriptTask, signal?: AbortSignal): Promise<TranscriptResult> =>
    fair.run(accountId, () => pool.run(task, signal ? { signal } : {}) as Promise<TranscriptResult>, signal);
  const unwrap = (r: TranscriptResult) => {
    if (r.ok) return r;
    if ('malformed' in r) throw new ApiError('invalid_request', 'The request body is not valid JSON.');
    throw new ApiError(r.error.code, r.error.message, { details: r.error.details });
  };
  return {
    async jobBody(accountId, bytes, signal) {
      const r = unwrap(await run(accountId, { kind: 'job-body', bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) }, signal));
      if (!('job' in r)) throw new Error('transcript worker: expected a job');
      return r.job;
    },
    async export(accountId, task, signal) {
      const r = unwrap(await run(accountId, { kind: 'export', ...task }, signal));
      if (!('text' in r)) throw new Error('transcript worker: expected text');
      return r.text;
    },
    stats: () => ({ completed: pool.completed }),
    close: () => pool.destroy(),
  };
}
