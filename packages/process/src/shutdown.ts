/**
 * A command's shutdown signals, with one rule for all of them: the first signal asks for an
 * orderly stop, any later one for a hard one (a second Ctrl-C when the first is taking too long).
 * `captionfarm serve`, `captionfarm-agent` and `captionfarm burn` each say what the two are.
 */

export interface ShutdownHandlers {
  /** The signals listened to; default SIGINT and SIGTERM. */
  signals?: readonly NodeJS.Signals[];
  /** The first signal: stop in order (drain, cancel, close). */
  first: (signal: NodeJS.Signals) => void;
  /** Every signal after the first (unless it is a repeat, below): stop now. */
  second: (signal: NodeJS.Signals) => void;
  /**
   * Signals within this many ms of the first count as that one (ignored). Run through `npm run`,
   * one Ctrl-C arrives more than once within milliseconds: the terminal signals the whole
   * process group and npm forwards it. Default: none ignored.
   */
  repeatsWithinMs?: number;
}

/** Listens for the shutdown signals until the returned function is called. */
export function onShutdown(handlers: ShutdownHandlers): () => void {
  const signals = handlers.signals ?? ['SIGINT', 'SIGTERM'];
  let firstAt: number | null = null;
  const listener = (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (firstAt === null) {
      firstAt = now;
      handlers.first(signal);
    } else if (handlers.repeatsWithinMs === undefined || now - firstAt > handlers.repeatsWithinMs) {
      handlers.second(signal);
    }
  };
  for (const signal of signals) process.on(signal, listener);
  return () => {
    for (const signal of signals) process.off(signal, listener);
  };
}
