/** How `exponentialBackoffMs` grows: `baseMs` doubling each attempt, at most `maxMs`, optionally spread by `jitter`. */
export interface BackoffOptions {
  /** The delay of attempt 0, in ms. */
  baseMs: number;
  /** The ceiling of every delay, jitter included (default: none). */
  maxMs?: number;
  /** Spread of the delay as a fraction of it: 0.25 is +-25% (default 0, no jitter). */
  jitter?: number;
  /** Uniform [0, 1) for the jitter (default Math.random). */
  random?: () => number;
}

/**
 * The one exponential backoff: the wait before retry `attempt` (from 0, or whatever the caller
 * counts from) is `baseMs * 2^attempt`, times a random factor in [1 - jitter, 1 + jitter), at
 * most `maxMs`, rounded to whole ms. Reconnects, re-sent reports and retried requests use it with
 * their own numbers.
 */
export function exponentialBackoffMs(attempt: number, opts: BackoffOptions): number {
  const { baseMs, maxMs = Number.POSITIVE_INFINITY, jitter = 0 } = opts;
  let ms = baseMs * 2 ** attempt;
  if (jitter > 0) ms *= 1 - jitter + (opts.random ?? Math.random)() * (2 * jitter);
  return Math.round(Math.min(ms, maxMs));
}
