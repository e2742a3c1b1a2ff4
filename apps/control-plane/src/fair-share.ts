import { ApiError } from '@captionfarm/contracts';

/**
 * Costly work shared between tenants (password hashing, font checks, previews, large transcripts):
 * a bounded number of `slots` run at once, and when more is waiting the keys (accounts, client
 * addresses) take turns (the key that started work longest ago goes first), so one key with a long queue cannot make another wait behind
 * all of it. Each key has at most `perKey` running and `queuePerKey` waiting; past that its next
 * task is refused at once (`full`, a 429 by default) instead of queued, so waiting costs no one else
 * a slot. The queue as a whole is bounded too (503).
 */
export interface FairShare {
  /** Runs `fn` in its turn; rejects without running it when the key's queue is full or `signal` aborts first. */
  run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Whether `key` is at its cap (running and waiting): its next task would be refused. */
  full(key: string): boolean;
  stats(): { running: number; waiting: number };
}

export interface FairShareOptions {
  /** What runs at once, all keys together. */
  slots: number;
  /** What one key runs at once (default: all the slots). */
  perKey?: number;
  /** What one key may have waiting (default 8). */
  queuePerKey?: number;
  /** What may wait, all keys together (default 64 x slots). */
  maxWaiting?: number;
  /** The error for a key whose queue is full (default 429 rate_limited). */
  full?: (key: string) => ApiError;
}

interface Waiter {
  start: () => void;
}

export function createFairShare(o: FairShareOptions): FairShare {
  const perKey = o.perKey ?? o.slots;
  const queuePerKey = o.queuePerKey ?? 8;
  const maxWaiting = o.maxWaiting ?? 64 * o.slots;
  const full =
    o.full ?? (() => new ApiError('rate_limited', 'Too much of this work is waiting for you already; retry when it is done.', { retryAfterSeconds: 2 }));
  let running = 0;
  let waiting = 0;
  const runningOf = new Map<string, number>();
  /** Keys with work waiting. */
  const queues = new Map<string, Waiter[]>();
  /** When each busy key last started a task (a counter): the key that waited longest goes next. */
  const lastStart = new Map<string, number>();
  let turn = 0;

  /** The waiting key to serve next: the fewest running, then the longest since it last started. */
  const pick = (): string | undefined => {
    let best: string | undefined;
    let bestRunning = 0;
    let bestLast = 0;
    for (const key of queues.keys()) {
      const r = runningOf.get(key) ?? 0;
      if (r >= perKey) continue;
      const last = lastStart.get(key) ?? 0;
      if (best === undefined || r < bestRunning || (r === bestRunning && last < bestLast)) {
        best = key;
        bestRunning = r;
        bestLast = last;
      }
    }
    return best;
  };

  const next = () => {
    while (running < o.slots) {
      const key = pick();
      if (key === undefined) return;
      const q = queues.get(key)!;
      const w = q.shift()!;
      if (q.length === 0) queues.delete(key);
      waiting--;
      w.start();
    }
  };

  return {
    run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const mine = runningOf.get(key) ?? 0;
      const execute = async (): Promise<T> => {
        running++;
        runningOf.set(key, (runningOf.get(key) ?? 0) + 1);
        lastStart.set(key, ++turn);
        try {
          return await fn();
        } finally {
          running--;
          const n = (runningOf.get(key) ?? 1) - 1;
          if (n <= 0) runningOf.delete(key);
          else runningOf.set(key, n);
          // An idle key is a newcomer again; the map holds only busy keys.
          if (n <= 0 && !queues.has(key)) lastStart.delete(key);
          next();
        }
      };
      if (running < o.slots && mine < perKey && waiting === 0) return execute();
      const q = queues.get(key) ?? [];
      if (q.length >= queuePerKey) return Promise.reject(full(key));
      if (waiting >= maxWaiting) return Promise.reject(new ApiError('unavailable', 'The server is busy; retry shortly.', { retryAfterSeconds: 2 }));
      return new Promise<T>((resolve, reject) => {
        const onAbort = () => {
          const list = queues.get(key);
          const i = list?.indexOf(w) ?? -1;
          if (i < 0) return;
          list!.splice(i, 1);
          if (list!.length === 0) {
            queues.delete(key);
            if (!runningOf.has(key)) lastStart.delete(key);
          }
          waiting--;
          reject(signal!.reason);
        };
        const w: Waiter = {
          start: () => {
            signal?.removeEventListener('abort', onAbort);
            execute().then(resolve, reject);
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        q.push(w);
        queues.set(key, q);
        waiting++;
        next();
      });
    },
    full: (key) => (runningOf.get(key) ?? 0) + (queues.get(key)?.length ?? 0) >= perKey + queuePerKey,
    stats: () => ({ running, waiting }),
  };
}
