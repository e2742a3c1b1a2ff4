/**
 * Work beside a job's main line (the audio extraction, an overlapped render), under the job's
 * signal and a stop of its own: stopped, and awaited, before the job's work dir goes.
 */
export interface SideWork {
  /** The job's signal or this work's stop, whichever fires first. */
  readonly signal: AbortSignal;
  /** Keeps `work` to be awaited by `ended` (its rejection handled here); returns it. */
  keep<T>(work: Promise<T>): Promise<T>;
  stop(): void;
  /** Resolves once the kept work has settled (after `stop`, or on its own). */
  ended(): Promise<void>;
}

export function sideWork(jobSignal: AbortSignal): SideWork {
  const stop = new AbortController();
  const kept: Promise<unknown>[] = [];
  return {
    signal: AbortSignal.any([jobSignal, stop.signal]),
    keep(work) {
      work.catch(() => undefined);
      kept.push(work);
      return work;
    },
    stop: () => stop.abort(),
    async ended() {
      for (const work of kept) await work.catch(() => undefined);
    },
  };
}
