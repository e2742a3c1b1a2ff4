import { setTimeout as delay } from 'node:timers/promises';
import { exponentialBackoffMs } from '@captionfarm/contracts';
import { isTRPCClientError } from '@trpc/client';
import { JobAborted } from './errors.ts';

/**
 * How long a job's report to the control plane is sent again while no control plane answers it
 * (the socket closed under it: a restart, a network cut). Past this the agent gives the job up
 * quietly: by then its lease has expired and the job is queued for another attempt.
 */
const REPORT_RETRY_MS = 10 * 60_000;

/** The wait before reconnect `i` and before re-sending a report the `i`-th time: 250 ms doubling, at most 5 s. */
export const backoffMs = (i: number): number => exponentialBackoffMs(i, { baseMs: 250, maxMs: 5_000 });

/** A call the control plane never answered: the socket closed before the answer came. A server's own error has a shape. */
function unanswered(err: unknown): boolean {
  return isTRPCClientError(err) && err.shape === undefined;
}

/** Sends one of a job's reports (`what`, for the log), until it is answered, the job aborted, or the agent closed. */
export type Report = <T>(send: () => Promise<T>, signal: AbortSignal, what: string, jobId: string) => Promise<T>;

/**
 * Sends a job's report, and sends it again whenever the control plane did not answer: a report
 * in flight when its socket closed (a control plane killed mid-job) must not fail the job. The
 * wsClient reconnects (to the same URL, which a restarted or load-balanced control plane
 * answers) and sends it then. Every report is idempotent under its lease on the server
 * (agents/reports.ts: a re-sent complete answers ok, ingested trues up to the same minutes), and
 * one whose lease was lost meanwhile answers so, which stops the job quietly.
 */
export function reporter(o: { log: (msg: string, fields: { jobId: string }) => void; closed: () => boolean }): Report {
  const { log } = o;
  return async (send, signal, what, jobId) => {
    const giveUpAt = Date.now() + REPORT_RETRY_MS;
    const givenUp = (): JobAborted => {
      log(`${what}: no control plane answered for ${REPORT_RETRY_MS / 60_000} min; the job is left to its lease`, { jobId });
      return new JobAborted('lease-lost');
    };
    for (let attempt = 0; ; attempt++) {
      // A call made while the socket is down waits in the wsClient's queue for the reconnect: it
      // stops waiting when the job is aborted (cancel, shutdown) or past the give-up time.
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const stop = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(givenUp()), Math.max(0, giveUpAt - Date.now()));
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        if (signal.aborted) throw signal.reason;
        return await Promise.race([send(), stop]);
      } catch (err) {
        if (!unanswered(err) || signal.aborted || o.closed()) throw err;
        if (Date.now() >= giveUpAt) throw givenUp();
        if (attempt === 0) log(`${what}: ${(err as Error).message}; sent again once the control plane answers`, { jobId });
        await delay(backoffMs(attempt), undefined, { signal });
      } finally {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort!);
      }
    }
  };
}
