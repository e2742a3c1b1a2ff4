import { deleteLeaseReplies, deleteRateWindows, type Db } from '@captionfarm/db';

export interface Sweeps {
  /** One pass: each sweeper in turn; the first failure ends the pass. */
  sweep(): Promise<void>;
  /** A pass every `intervalSeconds`, failures logged (the timer does not hold the process). */
  start(): void;
  /** Stops the timer (a pass under way goes on). */
  close(): void;
}

export function createSweeps(d: {
  /** In the order they run. */
  sweepers: ReadonlyArray<() => Promise<unknown>>;
  intervalSeconds: number;
  log: (msg: string, extra?: unknown) => void;
}): Sweeps {
  let timer: NodeJS.Timeout | undefined;
  async function sweep(): Promise<void> {
    for (const sweeper of d.sweepers) await sweeper();
  }
  return {
    sweep,
    start() {
      timer = setInterval(() => {
        sweep().catch((err) => d.log('sweep failed', err));
      }, d.intervalSeconds * 1000);
      timer.unref();
    },
    close() {
      if (timer) clearInterval(timer);
    },
  };
}

/** Rate windows and lease answers past their use (a window lasts a minute; a lease is re-sent within seconds). */
export async function deleteSpentRows(db: Db, now: () => Date): Promise<void> {
  const t = now().getTime();
  await deleteRateWindows(db, new Date(t - 5 * 60_000).toISOString());
  await deleteLeaseReplies(db, new Date(t - 60 * 60_000).toISOString());
}
