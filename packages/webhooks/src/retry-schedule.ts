/**
 * Webhook retry schedule (ARCHITECTURE): attempts at 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
 * and a last one at 24 h, all measured from the FIRST attempt (not from the previous one), so
 * the whole schedule fits the spec's 24-hour retry window. 8 attempts in all.
 *
 * Jitter spreads retries of many deliveries that failed together (one receiver outage). It is
 * only ever subtracted: attempt n happens in
 *   [nominal_n - min(10% of (nominal_n - nominal_{n-1}), 5 min), nominal_n]
 * so attempts never run later than nominal, stay in order, and the last lands in
 * [23 h 55 min, 24 h]. Bounds per retry: 5 s -> 0.5 s, 5 min -> 29.5 s, 30 min -> 2.5 min,
 * later ones -> 5 min.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Offset of attempt n+1 (index n) from the first attempt, in ms. */
export const RETRY_OFFSETS_MS: readonly number[] = Object.freeze([0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 24 * HOUR]);

export const MAX_ATTEMPTS = RETRY_OFFSETS_MS.length;
export const RETRY_JITTER_FRACTION = 0.1;
export const RETRY_JITTER_MAX_MS = 5 * MINUTE;

/** Largest amount by which attempt `attemptNumber` (1-based, >= 2) may run early. */
export function retryJitterBoundMs(attemptNumber: number): number {
  const offset = RETRY_OFFSETS_MS[attemptNumber - 1];
  const previous = RETRY_OFFSETS_MS[attemptNumber - 2];
  if (offset === undefined || previous === undefined) return 0;
  return Math.min(RETRY_JITTER_FRACTION * (offset - previous), RETRY_JITTER_MAX_MS);
}

export interface NextAttemptArgs {
  /** Epoch ms when attempt 1 started. */
  firstAttemptAt: number;
  /** 1-based number of the attempt that just failed (1 after the first attempt). */
  attemptNumber: number;
  /** Epoch ms now. */
  now: number;
  /** Uniform [0, 1). Default Math.random; pass () => 0 for the exact nominal schedule. */
  random?: () => number;
}

/**
 * When the next attempt is due (epoch ms), or null when the schedule is exhausted. Never
 * earlier than `now`: an overdue slot (the attempt itself ran long, or the dispatcher was down)
 * runs at once, and none is skipped, so a restart loses no attempt.
 */
export function nextAttemptAt(args: NextAttemptArgs): number | null {
  const { firstAttemptAt, attemptNumber, now } = args;
  if (!Number.isInteger(attemptNumber) || attemptNumber < 1) {
    throw new RangeError('attemptNumber is the 1-based number of the attempt that just failed.');
  }
  if (attemptNumber >= MAX_ATTEMPTS) return null;
  const offset = RETRY_OFFSETS_MS[attemptNumber] as number;
  const r = Math.min(Math.max((args.random ?? Math.random)(), 0), 1);
  const jitter = Math.floor(r * retryJitterBoundMs(attemptNumber + 1));
  return Math.max(firstAttemptAt + offset - jitter, now);
}

export type ResponseClass = 'success' | 'retry' | 'gone';

/**
 * Any 2xx is success. 410 Gone means the receiver asks us to stop: no more retries. Everything
 * else is a failure to retry, including 3xx (redirects are never followed) and 1xx.
 */
export function classifyResponse(status: number): ResponseClass {
  if (status >= 200 && status <= 299) return 'success';
  if (status === 410) return 'gone';
  return 'retry';
}
