import { ApiError, type PlanId } from '@captionfarm/contracts';
import { Piscina } from 'piscina';
import type { PreviewTask } from './preview-worker.ts';

/**
 * Previews in flight per account, by plan. One account's previews never take more than this many
 * of the pool's threads' turns; past it the request gets 429 at once (no waiting, so a client
 * sees the limit immediately and no request holds a connection while it waits).
 */
const PREVIEW_CONCURRENCY: Record<PlanId, number> = { free: 1, starter: 2, pro: 4 };
/** Largest preview in pixels (3840x2160 either way round); a bigger frame is 422. */
const MAX_PREVIEW_PIXELS = 3840 * 2160;
/** A preview that takes longer than this is abandoned (its worker is replaced) with 503. */
const PREVIEW_TIMEOUT_MS = 20_000;

export interface PreviewPool {
  /** Renders one frame on a worker thread; the caller's plan bounds its previews in flight. */
  render(caller: { accountId: string; plan: PlanId }, task: PreviewTask, signal?: AbortSignal): Promise<Buffer>;
  /** Frames rendered by the worker threads so far, and the threads running now. */
  stats(): { completed: number; threads: number };
  close(): Promise<void>;
}

/**
 * Template previews run on worker threads (piscina), never on the event loop: one 3840x3840
 * preview cost 0.55-0.78 s of main thread and raised other tenants' GET latency to ~1 s (issue
 * 11). The pool is bounded (threads, queue) and each account's previews in flight are capped.
 */
export function createPreviewPool(o: { threads: number }): PreviewPool {
  const pool = new Piscina({
    filename: new URL('./preview-worker-entry.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: o.threads,
    idleTimeout: 60_000,
    // Every account's in-flight cap already bounds the queue per account; this bounds it overall.
    maxQueue: o.threads * 16,
  });
  const inFlight = new Map<string, number>();
  return {
    async render(caller, task, signal) {
      if (task.width * task.height > MAX_PREVIEW_PIXELS) {
        throw new ApiError('limit_exceeded', `A preview is at most ${MAX_PREVIEW_PIXELS} pixels (3840x2160); this one is ${task.width}x${task.height}.`, {
          details: [{ path: 'width', message: `width x height at most ${MAX_PREVIEW_PIXELS}` }],
        });
      }
      const limit = PREVIEW_CONCURRENCY[caller.plan];
      const mine = inFlight.get(caller.accountId) ?? 0;
      if (mine >= limit) {
        throw new ApiError(
          'rate_limited',
          `The ${caller.plan} plan renders at most ${limit} preview${limit === 1 ? '' : 's'} at a time; wait for one to finish.`,
          { retryAfterSeconds: 1 },
        );
      }
      if (pool.queueSize >= pool.options.maxQueue) {
        throw new ApiError('unavailable', 'The preview renderers are busy; retry shortly.', { retryAfterSeconds: 2 });
      }
      inFlight.set(caller.accountId, mine + 1);
      const timeout = AbortSignal.timeout(PREVIEW_TIMEOUT_MS);
      try {
        const out = (await pool.run(task, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout })) as ArrayBuffer;
        return Buffer.from(out);
      } catch (err) {
        if (timeout.aborted)
          throw new ApiError('unavailable', `The preview took longer than ${PREVIEW_TIMEOUT_MS / 1000} s; try a smaller size.`, { retryAfterSeconds: 2 });
        throw err;
      } finally {
        const n = (inFlight.get(caller.accountId) ?? 1) - 1;
        if (n <= 0) inFlight.delete(caller.accountId);
        else inFlight.set(caller.accountId, n);
      }
    },
    stats() {
      return { completed: pool.completed, threads: pool.threads.length };
    },
    async close() {
      await pool.destroy();
    },
  };
}
