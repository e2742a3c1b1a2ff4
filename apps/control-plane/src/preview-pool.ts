import { ApiError, type PlanId } from '@captionfarm/contracts';
import { createFairShare } from './fair-share.ts';
import type { PreviewTask } from './preview-worker.ts';
import { workerPool } from './worker-threads.ts';

/**
 * Previews in flight per account, by plan. One account's previews never take more than this many
 * of the pool's threads' turns; past it the request gets 429 at once (no waiting, so a client
 * sees the limit immediately and no request holds a connection while it waits).
 */
const PREVIEW_CONCURRENCY: Record<PlanId, number> = { free: 1, starter: 2, pro: 4 };
/** Largest preview in pixels (3840x2160 either way round); a bigger frame is 422. */
const MAX_PREVIEW_PIXELS = 3840 * 2160;
/** A preview that takes longer than this on its thread is abandoned (its worker is replaced) with 503. */
const PREVIEW_TIMEOUT_MS = 20_000;
/** A preview that waited this long for a thread is answered 503 (the renderers are busy). */
const PREVIEW_WAIT_MS = 30_000;

export interface PreviewPool {
  /** Renders one frame on a worker thread; the caller's plan bounds its previews in flight. */
  render(caller: { accountId: string; plan: PlanId }, task: PreviewTask, signal?: AbortSignal): Promise<Buffer>;
  /** Frames rendered by the worker threads so far, the threads running now, and previews rendering and waiting for a thread. */
  stats(): { completed: number; threads: number; running: number; waiting: number };
  close(): Promise<void>;
}

/**
 * Template previews run on worker threads (piscina), never on the event loop: one 3840x3840
 * preview cost 0.55-0.78 s of main thread and raised other tenants' GET latency to ~1 s (issue
 * 11). The pool is bounded (threads, queue) and each account's previews in flight are capped.
 * Threads go to accounts in turns (fair-share.ts), not first come first served: piscina is handed
 * at most one preview per thread, and when one is free the waiting account with the fewest
 * rendering goes next, so another account's 4 heavy previews make a preview wait for at most one
 * of them (issue 40 item 7), while an account alone may use every thread.
 */
export function createPreviewPool(o: { threads: number }): PreviewPool {
  // Every account's in-flight cap already bounds the queue per account; maxQueue bounds it overall.
  const pool = workerPool(new URL('./preview-worker-entry.mjs', import.meta.url), o.threads, { maxQueue: o.threads * 16 });
  const turns = createFairShare({
    slots: o.threads,
    // The plan's cap below bounds an account's previews in flight; the turns only order them.
    queuePerKey: Math.max(...Object.values(PREVIEW_CONCURRENCY)),
    maxWaiting: o.threads * 16,
    full: () => new ApiError('unavailable', 'The preview renderers are busy; retry shortly.', { retryAfterSeconds: 2 }),
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
      inFlight.set(caller.accountId, mine + 1);
      const waited = AbortSignal.timeout(PREVIEW_WAIT_MS);
      let timeout: AbortSignal | undefined;
      try {
        return await turns.run(
          caller.accountId,
          async () => {
            // The render's time counts from its thread, not from the wait for one.
            timeout = AbortSignal.timeout(PREVIEW_TIMEOUT_MS);
            const out = (await pool.run(task, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout })) as ArrayBuffer;
            return Buffer.from(out);
          },
          signal ? AbortSignal.any([signal, waited]) : waited,
        );
      } catch (err) {
        if (timeout?.aborted)
          throw new ApiError('unavailable', `The preview took longer than ${PREVIEW_TIMEOUT_MS / 1000} s; try a smaller size.`, { retryAfterSeconds: 2 });
        if (!timeout && waited.aborted && !signal?.aborted)
          throw new ApiError('unavailable', 'The preview renderers are busy; retry shortly.', { retryAfterSeconds: 2 });
        throw err;
      } finally {
        const n = (inFlight.get(caller.accountId) ?? 1) - 1;
        if (n <= 0) inFlight.delete(caller.accountId);
        else inFlight.set(caller.accountId, n);
      }
    },
    stats() {
      return { completed: pool.completed, threads: pool.threads.length, ...turns.stats() };
    },
    async close() {
      await pool.destroy();
    },
  };
}
